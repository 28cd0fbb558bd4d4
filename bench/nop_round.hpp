// One round of the NOP loop that ring_nop_bench times and ring_nop_count
// counts: `batch` NOPs prepared, one submit-and-wait, every CQE reaped.  In
// one place so that the two programs measure the same code, on our ring and
// on liburing's.  Each returns false when io_uring_enter fails.
#pragma once

#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"

#ifdef URINGKIT_HAVE_LIBURING
#include <liburing.h>
#endif

#include <cstdint>

namespace nop_round {

// The same ring size and flags (none) for both rings.
constexpr unsigned kEntries = 64;

// always_inline: each round is compiled into its caller's loop, for both
// rings alike; left to the compiler, liburing's larger round stayed a call
// and gained 24 instructions per NOP that are not liburing's.

[[gnu::always_inline]] inline bool uringkit_round(uringkit::Ring& ring, unsigned batch,
                                                  std::uint64_t& sum) {
    for (unsigned i = 0; i < batch; ++i) ring.prepare(uringkit::op::Nop{}).user_data(i);
    if (ring.submit_and_wait(batch) < 0) return false;
    unsigned seen = 0;
    while (seen < batch)
        seen +=
            ring.for_each_completion([&](const uringkit::Completion& c) { sum += c.user_data; });
    return true;
}

#ifdef URINGKIT_HAVE_LIBURING
[[gnu::always_inline]] inline bool liburing_round(io_uring& ring, unsigned batch,
                                                  std::uint64_t& sum) {
    for (unsigned i = 0; i < batch; ++i) {
        io_uring_sqe* sqe = io_uring_get_sqe(&ring);
        io_uring_prep_nop(sqe);
        io_uring_sqe_set_data64(sqe, i);
    }
    if (io_uring_submit_and_wait(&ring, batch) < 0) return false;
    unsigned seen = 0;
    while (seen < batch) {
        io_uring_cqe* cqe;
        unsigned head, n = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            sum += cqe->user_data;
            ++n;
        }
        io_uring_cq_advance(&ring, n);
        seen += n;
    }
    return true;
}
#endif

}  // namespace nop_round
