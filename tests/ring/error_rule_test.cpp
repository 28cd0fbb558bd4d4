// One error rule per layer (docs/library.md, "Errors"): RingError, with its
// io_uring advice, only for a failed io_uring call (setup, register, enter,
// the rings' mmap); a bad argument is std::invalid_argument and any other
// failed system call a plain std::system_error naming it; the hot path
// returns -errno; nothing throws from a completion handler.  The first
// versions threw RingError for a BufferRing count that is not a power of
// two, for the mmap of buffer memory and for fcntl, and the async loop a
// bare std::system_error for a failed io_uring_enter.
#include "uring_test_support.hpp"
#include "uringkit/async/loop.hpp"
#include "uringkit/ring/buffer_ring.hpp"
#include "uringkit/sys/error.hpp"
#include "uringkit/sys/sanitizers.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <system_error>

using namespace uringkit;

namespace {

template <class F>
std::string thrown_kind(F&& f) {
    try {
        f();
    } catch (const RingError& e) {
        return std::string("RingError: ") + e.what();
    } catch (const std::system_error& e) {
        return std::string("system_error: ") + e.what();
    } catch (const std::invalid_argument& e) {
        return std::string("invalid_argument: ") + e.what();
    }
    return "nothing";
}

bool starts(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

TEST(ErrorRule, ABadArgumentIsNotARingError) {
    Ring ring(4);
    const std::string k = thrown_kind([&] { BufferRing(ring, 1, 3, 64); });
    EXPECT_TRUE(starts(k, "invalid_argument: ")) << k;
    const std::string z = thrown_kind([&] { BufferRing(ring, 1, 4, 0); });
    EXPECT_TRUE(starts(z, "invalid_argument: ")) << z;
}

// Memory the process maps for itself is not an io_uring call: an address
// space too small for it (RLIMIT_AS) is a system_error naming the mmap.
TEST(ErrorRule, AFailedMmapOfBufferMemoryIsASystemError) {
#if URINGKIT_ASAN || URINGKIT_TSAN
    GTEST_SKIP() << "a sanitizer's shadow memory does not fit under RLIMIT_AS";
#endif
    Ring ring(4);
    async::Loop loop(ring);
    rlimit old{};
    ASSERT_EQ(::getrlimit(RLIMIT_AS, &old), 0);
    rlimit tight = old;
    tight.rlim_cur = 4ull << 30;  // 4 GiB: the test's own mappings fit, 8 GiB of buffers do not
    ASSERT_EQ(::setrlimit(RLIMIT_AS, &tight), 0);
    const std::string fixed = thrown_kind([&] { loop.register_fixed_buffers(8, 1u << 30); });
    const std::string provided = thrown_kind([&] { BufferRing(ring, 2, 8192, 1u << 20); });
    ::setrlimit(RLIMIT_AS, &old);
    EXPECT_TRUE(starts(fixed, "system_error: ") && fixed.find("mmap") != std::string::npos)
        << fixed;
    EXPECT_TRUE(starts(provided, "system_error: ") && provided.find("mmap") != std::string::npos)
        << provided;
}

// A failed io_uring call is a RingError naming it, from the async loop too.
TEST(ErrorRule, AFailedEnterInTheLoopIsARingError) {
    Ring ring(4);
    async::Loop loop(ring);
    const int fd = ring.fd();
    const int saved = ::dup(fd);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    ASSERT_GE(::dup2(null, fd), 0);
    ::close(null);
    loop.spawn([](async::Loop& l) -> async::Task<void> { co_await l.nop(); }(loop));
    const std::string k = thrown_kind([&] { loop.run(); });
    ::dup2(saved, fd);
    ::close(saved);
    EXPECT_TRUE(starts(k, "RingError: io_uring_enter")) << k;
}

}  // namespace
