// What batching buys: N NOPs submitted one per io_uring_enter, then in
// batches of B (one io_uring_enter per batch).  A NOP does no I/O, so the
// time per operation is the ring's own cost plus its share of the system call.
//
//     example_nop_batch [COUNT] [BATCH]      (defaults: 100000 and 32)
//
// Every NOP's completion is checked (each user_data exactly once).
#include <uringkit/ops/ops.hpp>
#include <uringkit/ring/ring.hpp>
#include <uringkit/sys/error.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using namespace uringkit;

struct Result {
    std::uint64_t enters;
    double ns_per_op;
    bool complete;  // every user_data seen exactly once
};

Result run(Ring& ring, unsigned count, unsigned batch) {
    std::vector<std::uint8_t> seen(count, 0);  // allocated before the timed loop
    const std::uint64_t enters_before = ring.enter_calls();
    bool ok = true;
    const auto start = std::chrono::steady_clock::now();
    for (unsigned done = 0; done < count;) {
        const unsigned n = count - done < batch ? count - done : batch;
        for (unsigned i = 0; i < n; ++i) ring.prepare(op::Nop{}).user_data(done + i);
        if (ring.submit_and_wait(n) < 0) return {0, 0, false};
        unsigned reaped = 0;
        while (reaped < n) {
            reaped += ring.for_each_completion([&](const Completion& c) {
                if (c.res != 0 || c.user_data >= count || seen[c.user_data]++) ok = false;
            });
            if (reaped < n && ring.submit_and_wait(1) < 0) return {0, 0, false};
        }
        done += n;
    }
    const auto ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start);
    for (std::uint8_t s : seen) ok = ok && s == 1;
    return {ring.enter_calls() - enters_before, ns.count() / count, ok};
}

}  // namespace

int main(int argc, char** argv) {
    const unsigned count =
        argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10)) : 100000;
    const unsigned batch =
        argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 32;
    if (count == 0 || batch == 0 || batch > 4096) {
        std::fprintf(stderr, "usage: example_nop_batch [COUNT>0] [BATCH 1..4096]\n");
        return 2;
    }
    try {
        Ring ring(batch);  // the SQ holds a whole batch
        std::printf("%-10s %10s %16s %10s\n", "batch", "NOPs", "io_uring_enter", "ns/op");
        for (unsigned b : {1U, batch}) {
            const Result r = run(ring, count, b);
            if (!r.complete) {
                std::fprintf(stderr, "example_nop_batch: a NOP was lost, repeated or failed\n");
                return 1;
            }
            std::printf("%-10u %10u %16llu %10.1f\n", b, count,
                        static_cast<unsigned long long>(r.enters), r.ns_per_op);
        }
    } catch (const RingError& e) {
        std::fprintf(stderr, "example_nop_batch: %s\n", e.what());
        return 3;
    }
    return 0;
}
