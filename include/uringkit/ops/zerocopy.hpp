// Zero-copy send (IORING_OP_SEND_ZC, 6.0).  It completes twice: first with
// the result (IORING_CQE_F_MORE set), then with IORING_CQE_F_NOTIF once the
// kernel no longer reads the buffer.  The buffer must live until that second
// completion; Loop::submit() resumes only then.
#pragma once

#include "uringkit/ops/ops.hpp"

namespace uringkit::op {

class SendZc {
public:
    static constexpr std::uint8_t code = IORING_OP_SEND_ZC;
    SendZc(File f, const void* buf, std::uint32_t len, int flags = 0) noexcept
        : f_(f), buf_(buf), len_(len), msg_flags_(flags) {}
    void prepare(io_uring_sqe& s) const noexcept {
        detail::rw(s, code, f_, buf_, len_, 0);
        s.msg_flags = static_cast<std::uint32_t>(msg_flags_);
    }

private:
    File f_;
    const void* buf_;
    std::uint32_t len_;
    int msg_flags_;
};

}  // namespace uringkit::op
