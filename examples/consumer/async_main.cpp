// The smallest coroutine program on the installed uringkit::async: a chain
// of a NOP and a write to stdout (one submission), awaited from a coroutine.
#include <uringkit/async/loop.hpp>
#include <uringkit/sys/error.hpp>

#include <cstdio>

namespace {

uringkit::async::Task<int> hello(uringkit::async::Loop& loop) {
    using namespace uringkit;
    static const char message[] = "hello from an installed uringkit::async\n";
    // Offset -1: the file position, so stdout may be a pipe, a file or a terminal.
    const auto [nop, write] =
        co_await loop.chain(op::Nop{}, op::Write(Fd{1}, message, sizeof message - 1, ~0ULL));
    if (nop.res != 0 || write.res != static_cast<int>(sizeof message - 1)) {
        std::fprintf(stderr, "async_consumer: nop %d, write %d\n", nop.res, write.res);
        co_return 1;
    }
    co_return 0;
}

}  // namespace

int main() {
    try {
        uringkit::Ring ring(4);
        uringkit::async::Loop loop(ring);
        return loop.block_on(hello(loop));
    } catch (const uringkit::RingError& e) {
        std::fprintf(stderr, "async_consumer: %s\n", e.what());
        return 3;
    }
}
