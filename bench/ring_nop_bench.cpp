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
#include "nop_round.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {

using nop_round::kEntries;

void set_counters(benchmark::State& state, unsigned batch) {
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * batch);
    // CPU seconds per NOP (the reporter prints it with an SI prefix: "95.2n").
    // CPU time rather than wall time: on a shared machine it leaves out the
    // time this thread spent preempted.
    state.counters["per_op"] = benchmark::Counter(
        static_cast<double>(batch),
        benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// ---- uringkit ----------------------------------------------------------------

void BM_uringkit_nop(benchmark::State& state) {
    const auto batch = static_cast<unsigned>(state.range(0));
    uringkit::Ring ring(kEntries);
    std::uint64_t sum = 0;
    for (auto _ : state) {
        if (!nop_round::uringkit_round(ring, batch, sum)) {
            state.SkipWithError("submit_and_wait failed");
            break;
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
        if (!nop_round::liburing_round(ring, batch, sum)) {
            state.SkipWithError("io_uring_submit_and_wait failed");
            break;
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
