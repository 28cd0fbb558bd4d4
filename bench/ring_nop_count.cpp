// ring_nop_count RING BATCH ITERATIONS
//
// The same NOP loop as ring_nop_bench, a fixed number of times, for counting
// user-space instructions with callgrind: unlike time, the count does not
// depend on what else the machine is doing.  Run it twice with different
// ITERATIONS and divide the difference by the extra NOPs, which cancels
// process start-up and ring setup:
//
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null ring_nop_count uringkit 32 2000
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null ring_nop_count uringkit 32 4000
//   Ir per NOP = (Ir(4000) - Ir(2000)) / (2000 * 32)
//
// RING is uringkit or liburing (when built with it).  Kernel time is not in
// the count: it is the same kernel work for both rings.
#include "nop_round.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
using nop_round::kEntries;

int run_uringkit(unsigned batch, long iterations, std::uint64_t& sum) {
    uringkit::Ring ring(kEntries);
    for (long it = 0; it < iterations; ++it)
        if (!nop_round::uringkit_round(ring, batch, sum)) return 1;
    return 0;
}

#ifdef URINGKIT_HAVE_LIBURING
int run_liburing(unsigned batch, long iterations, std::uint64_t& sum) {
    io_uring ring;
    if (io_uring_queue_init(kEntries, &ring, 0) < 0) return 1;
    int rc = 0;
    for (long it = 0; it < iterations && rc == 0; ++it)
        if (!nop_round::liburing_round(ring, batch, sum)) rc = 1;
    io_uring_queue_exit(&ring);
    return rc;
}
#endif
}  // namespace

int main(int argc, char** argv) {
    const long iterations = argc == 4 ? std::atol(argv[3]) : 0;
    const long batch = argc == 4 ? std::atol(argv[2]) : 0;
    if (iterations <= 0 || batch <= 0 || batch > kEntries) {
        std::fprintf(stderr, "usage: ring_nop_count uringkit|liburing BATCH(1-%u) ITERATIONS\n",
                     kEntries);
        return 2;
    }
    std::uint64_t sum = 0;
    int rc;
    if (std::strcmp(argv[1], "uringkit") == 0) {
        rc = run_uringkit(static_cast<unsigned>(batch), iterations, sum);
#ifdef URINGKIT_HAVE_LIBURING
    } else if (std::strcmp(argv[1], "liburing") == 0) {
        rc = run_liburing(static_cast<unsigned>(batch), iterations, sum);
#endif
    } else {
        std::fprintf(stderr, "ring_nop_count: unknown ring '%s': use uringkit or liburing\n",
                     argv[1]);
        return 2;
    }
    if (rc != 0) {
        std::fprintf(stderr, "ring_nop_count: %s failed\n", argv[1]);
        return 1;
    }
    // Printed so the loop cannot be optimised away: the sum of user_data.
    std::printf("%llu\n", static_cast<unsigned long long>(sum));
    return 0;
}
