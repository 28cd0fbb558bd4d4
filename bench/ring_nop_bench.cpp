// The ring's own cost per operation: a NOP does no work in the kernel, so the
// time per NOP is the submit + reap path plus io_uring_enter itself.  Each
// loop runs through uringkit's Ring and, where liburing is installed, through
// liburing with the same ring size and flags, so the two are compared in the
// same process on the same kernel.
//
//   build/bench/ring_nop_bench --benchmark_repetitions=10
//       --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//   (one command line)
//
// per_op is the figure to compare: CPU time per NOP completed.
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/ring.hpp"

#include <benchmark/benchmark.h>

#ifdef URINGKIT_HAVE_LIBURING
#include <liburing.h>
#endif

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

constexpr unsigned kEntries = 64;

void set_counters(benchmark::State& state, unsigned batch) {
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * batch);
    // CPU seconds per NOP (the reporter prints it with an SI prefix: "95.2n").
    // CPU time rather than wall time: on a shared machine it leaves out the
    // time this thread spent preempted.
    state.counters["per_op"] = benchmark::Counter(
        static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// ---- uringkit ----------------------------------------------------------------

void BM_uringkit_nop(benchmark::State& state) {
    const auto batch = static_cast<unsigned>(state.range(0));
    uringkit::Ring ring(kEntries);
    std::uint64_t sum = 0;
    for (auto _ : state) {
        for (unsigned i = 0; i < batch; ++i) ring.prepare(uringkit::op::Nop{}).user_data(i);
        if (ring.submit_and_wait(batch) < 0) {
            state.SkipWithError("submit_and_wait failed");
            break;
        }
        unsigned seen = 0;
        while (seen < batch) {
            seen += ring.for_each_completion([&](const uringkit::Completion& c) { sum += c.user_data; });
        }
    }
    benchmark::DoNotOptimize(sum);
    set_counters(state, batch);
}

// ---- liburing ----------------------------------------------------------------

#ifdef URINGKIT_HAVE_LIBURING
void BM_liburing_nop(benchmark::State& state) {
    const auto batch = static_cast<unsigned>(state.range(0));
    io_uring ring;
    if (io_uring_queue_init(kEntries, &ring, 0) < 0) {
        state.SkipWithError("io_uring_queue_init failed");
        return;
    }
    std::uint64_t sum = 0;
    for (auto _ : state) {
        for (unsigned i = 0; i < batch; ++i) {
            io_uring_sqe* sqe = io_uring_get_sqe(&ring);
            io_uring_prep_nop(sqe);
            io_uring_sqe_set_data64(sqe, i);
        }
        if (io_uring_submit_and_wait(&ring, batch) < 0) {
            state.SkipWithError("io_uring_submit_and_wait failed");
            break;
        }
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
    }
    benchmark::DoNotOptimize(sum);
    io_uring_queue_exit(&ring);
    set_counters(state, batch);
}
#endif

}  // namespace

BENCHMARK(BM_uringkit_nop)->Arg(1)->Arg(32);
#ifdef URINGKIT_HAVE_LIBURING
BENCHMARK(BM_liburing_nop)->Arg(1)->Arg(32);
#endif

BENCHMARK_MAIN();
