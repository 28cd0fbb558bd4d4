// The smallest program on the installed uringkit: one batch of two requests
// (a NOP and a write to stdout), one system call, both completions checked.
#include <uringkit/ops/ops.hpp>
#include <uringkit/ring/ring.hpp>
#include <uringkit/sys/error.hpp>

#include <cstdio>
#include <cstring>

int main() {
    using namespace uringkit;
    static const char message[] = "hello from an installed uringkit\n";
    try {
        Ring ring(4);
        ring.prepare(op::Nop{}).user_data(1);
        // Offset -1: the file position, so stdout may be a pipe, a file or a terminal.
        ring.prepare(op::Write(Fd{1}, message, sizeof message - 1, ~0ULL)).user_data(2);
        const int submitted = ring.submit_and_wait(2);
        if (submitted < 0) {
            std::fprintf(stderr, "consumer: io_uring_enter: %s\n", std::strerror(-submitted));
            return 1;
        }
        Completion done[2];
        unsigned got = 0;
        while (got < 2) {
            got += ring.copy_completions({done + got, 2 - got});
            if (got < 2 && ring.submit_and_wait(1) < 0) return 1;
        }
        int status = 0;
        for (const Completion& c : done) {
            const int expected = c.user_data == 1 ? 0 : static_cast<int>(sizeof message - 1);
            if (c.res != expected) {
                std::fprintf(stderr, "consumer: request %llu: res %d, expected %d\n",
                             static_cast<unsigned long long>(c.user_data), c.res, expected);
                status = 1;
            }
        }
        return status;
    } catch (const RingError& e) {
        // Setup failures say which call failed and what the errno usually means.
        std::fprintf(stderr, "consumer: %s\n", e.what());
        return 3;
    }
}
