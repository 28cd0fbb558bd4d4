// Memory an SQE names belongs to the kernel until that SQE's CQE arrives.
// When the ring fails with requests in flight (io_uring_enter refused for
// good), those CQEs may never be reaped, and closing the ring does not wait
// for the requests: the kernel may still write into their buffers.  Such
// memory is handed here instead of being freed.
#pragma once

#include <cstddef>
#include "uringkit/cxx20.hpp"

namespace uringkit {

// Never frees `memory` (nullptr is ignored).  It stays reachable from a
// process-wide list, so leak checkers see the choice was deliberate.
void keep_for_kernel(void* memory) noexcept;
// How many blocks were kept so far in this process.
std::size_t kept_for_kernel() noexcept;

}  // namespace uringkit
