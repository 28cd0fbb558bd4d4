// Zero-copy send (IORING_OP_SEND_ZC, 6.0).  It completes twice: first with
// the result (IORING_CQE_F_MORE set), then with IORING_CQE_F_NOTIF once the
// kernel no longer reads the buffer.  The buffer must live until that second
// completion; Loop::submit() resumes only then.
#pragma once

#include "uringkit/ops/ops.hpp"

namespace uringkit::op {

using SendZc = BasicSend<IORING_OP_SEND_ZC>;

}  // namespace uringkit::op
