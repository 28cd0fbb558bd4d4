// Registered buffers lent by the loop (async/fixed_buffers.hpp): the bytes a
// write_fixed put in a file are the bytes a read_fixed and pread(2) get back,
// the buffer travels with the operation and comes back with its result, a
// take() waits while every buffer is lent, and misuse is refused.  The
// lifetime rule (a buffer stays lent until its operation's final completion
// even when the coroutine is gone) is in async_lifetime_test.cpp.
#include "uringkit/async/loop.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

using namespace uringkit;

namespace {

class AsyncFixedBuffers : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-afixed-XXXXXX";
        fd_ = ::mkostemp(tmpl, O_CLOEXEC);
        ASSERT_GE(fd_, 0);
        ::unlink(tmpl);
    }
    void TearDown() override {
        if (fd_ >= 0) ::close(fd_);
    }
    // Block `i`'s bytes: distinct per block and per offset inside it.
    static std::string pattern(std::size_t i, std::size_t n) {
        std::string s(n, '\0');
        for (std::size_t k = 0; k < n; ++k) s[k] = static_cast<char>((k * 31 + i * 131 + 7) & 0xff);
        return s;
    }
    static std::string text(const async::FixedBuffer& b) {
        return {reinterpret_cast<const char*>(b.data()), b.size()};
    }

    int fd_ = -1;
    Ring ring_{32};
    async::Loop loop_{ring_};
};

TEST_F(AsyncFixedBuffers, WriteThenReadGivesTheSameBytesAsPread) {
    async::FixedBufferPool& pool = loop_.register_fixed_buffers(4, 8192);
    ASSERT_EQ(pool.count(), 4u);
    ASSERT_EQ(pool.buffer_size(), 8192u);
    constexpr std::size_t kBlocks = 16;
    constexpr std::size_t kBlock = 8192;
    // 16 blocks written by 16 coroutines through 4 buffers, then each read
    // back by another coroutine: most take() calls wait for a buffer.
    auto write_block = [&](std::size_t i) -> async::Task<int> {
        async::FixedBuffer b = co_await pool.take();
        const std::string want = pattern(i, kBlock);
        std::memcpy(b.data(), want.data(), want.size());
        b.resize(want.size());
        auto [w, back] = co_await loop_.write_fixed(Fd{fd_}, std::move(b), i * kBlock);
        if (!back || back.size() != kBlock) co_return -1000;  // the buffer did not come back whole
        co_return w.res;
    };
    auto read_block = [&](std::size_t i) -> async::Task<int> {
        async::FixedBuffer b = co_await pool.take();
        std::memset(b.data(), 0, b.capacity());
        auto [r, got] = co_await loop_.read_fixed(Fd{fd_}, std::move(b), i * kBlock);
        if (!r.ok()) co_return r.res;
        co_return text(got) == pattern(i, kBlock) ? r.res : -2000;
    };
    auto all = [&]() -> async::Task<std::vector<int>> {
        std::vector<int> results(2 * kBlocks, -3000);
        auto write_one = [&](std::size_t i) -> async::Task<void> {
            results[i] = co_await write_block(i);
        };
        auto read_one = [&](std::size_t i) -> async::Task<void> {
            results[kBlocks + i] = co_await read_block(i);
        };
        for (std::size_t i = 0; i < kBlocks; ++i) loop_.spawn(write_one(i));
        while (loop_.live_tasks() > 0) co_await loop_.nop();  // every write is done
        for (std::size_t i = 0; i < kBlocks; ++i) loop_.spawn(read_one(i));
        while (loop_.live_tasks() > 0) co_await loop_.nop();
        co_return results;
    };
    const std::vector<int> results = loop_.block_on(all());
    for (std::size_t i = 0; i < kBlocks; ++i) {
        EXPECT_EQ(results[i], static_cast<int>(kBlock)) << "write_fixed of block " << i;
        EXPECT_EQ(results[kBlocks + i], static_cast<int>(kBlock))
            << "read_fixed of block " << i << " (-2000: other bytes)";
    }
    // The file, read without io_uring.
    std::string file(kBlocks * kBlock, '\0');
    ASSERT_EQ(::pread(fd_, file.data(), file.size(), 0), static_cast<ssize_t>(file.size()));
    for (std::size_t i = 0; i < kBlocks; ++i)
        EXPECT_TRUE(file.compare(i * kBlock, kBlock, pattern(i, kBlock)) == 0)
            << "block " << i << " on disk";
    EXPECT_EQ(pool.available(), 4u) << "every buffer came back";
    EXPECT_EQ(loop_.in_flight(), 0u);
}

TEST_F(AsyncFixedBuffers, AShortReadSizesTheBuffer) {
    async::FixedBufferPool& pool = loop_.register_fixed_buffers(1, 4096);
    ASSERT_EQ(::pwrite(fd_, "tail of file", 12, 0), 12);
    auto t = [&]() -> async::Task<std::string> {
        auto [r, b] = co_await loop_.read_fixed(Fd{fd_}, pool.try_take(), 0);
        if (r.res != 12) co_return "res " + std::to_string(r.res);
        auto [eof, b2] = co_await loop_.read_fixed(Fd{fd_}, std::move(b), 12);
        if (eof.res != 0 || b2.size() != 0) co_return "at the end: res " + std::to_string(eof.res);
        co_return "ok";
    };
    EXPECT_EQ(loop_.block_on(t()), "ok");
    EXPECT_EQ(pool.available(), 1u);
}

TEST_F(AsyncFixedBuffers, MisuseIsRefused) {
    async::FixedBufferPool& pool = loop_.register_fixed_buffers(1, 100);
    EXPECT_EQ(pool.buffer_size() % static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), 0u)
        << "page-aligned sizes";
    EXPECT_THROW(loop_.register_fixed_buffers(1, 4096), std::logic_error) << "one pool per loop";
    async::FixedBuffer held = pool.try_take();
    ASSERT_TRUE(held);
    EXPECT_FALSE(pool.try_take()) << "every buffer is lent";
    auto t = [&]() -> async::Task<int> {
        auto [r, b] = co_await loop_.read_fixed(Fd{fd_}, async::FixedBuffer(), 0);  // no buffer
        co_return r.res;
    };
    EXPECT_EQ(loop_.block_on(t()), -EINVAL);
    held.reset();
    EXPECT_EQ(pool.available(), 1u);

    Ring other(8);
    async::Loop second(other);
    EXPECT_THROW(second.register_fixed_buffers(0, 4096), std::invalid_argument);
    EXPECT_THROW(second.register_fixed_buffers(70000, 4096), std::invalid_argument);
}

TEST_F(AsyncFixedBuffers, AWaitingTakerDestroyedWithTheLoopGivesItsBufferBack) {
    // A take() that was handed a buffer but not resumed yet when the loop
    // ends: the buffer goes back, nothing is resumed.
    async::Loop* loop = new async::Loop(ring_);
    async::FixedBufferPool& pool = loop->register_fixed_buffers(1, 4096);
    int resumed = 0;
    async::FixedBuffer held = pool.try_take();
    loop->spawn([](async::FixedBufferPool& p, int& out) -> async::Task<void> {
        async::FixedBuffer b = co_await p.take();
        ++out;
    }(pool, resumed));
    held.reset();  // handed to the waiter; its NOP is queued
    delete loop;   // drains the NOP, destroys the waiter without resuming it
    EXPECT_EQ(resumed, 0);
}

}  // namespace
