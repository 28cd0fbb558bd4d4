// File operations awaited from coroutines, each checked by its effect on the
// file system (bytes, sizes, modes, names), not only by its result: openat,
// openat2, close, read/write, readv/writev, read_fixed/write_fixed, fsync,
// fdatasync, sync_file_range, fallocate, ftruncate, fadvise, statx,
// mkdirat, renameat, linkat, symlinkat, unlinkat, splice.  An opcode this
// kernel lacks gives -EOPNOTSUPP and async::unsupported() names the release.
#include "uring_test_support.hpp"
#include "uringkit/async/loop.hpp"
#include "uringkit/ops/fs.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

using namespace uringkit;

namespace {

class AsyncFileOps : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-aops-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override {
        const std::string cmd = "rm -rf '" + dir_ + "'";
        (void)std::system(cmd.c_str());
    }
    std::string path(const char* name) const { return dir_ + "/" + name; }
    static std::string slurp(const std::string& p) {
        std::string s;
        const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
        char buf[4096];
        ssize_t n;
        while (fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0)
            s.append(buf, static_cast<std::size_t>(n));
        if (fd >= 0) ::close(fd);
        return s;
    }
    template <class F>
    auto run(F&& body) {
        return loop_.block_on(body());
    }

    std::string dir_;
    Ring ring_{32};
    async::Loop loop_{ring_};
};

TEST_F(AsyncFileOps, OpenWriteReadCloseAndTheVectoredForms) {
    const std::string p = path("data");
    auto t = [&]() -> async::Task<std::string> {
        const async::Result fd = co_await loop_.submit(
            op::OpenAt(AT_FDCWD, p.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640));
        if (!fd.ok()) co_return "open " + fd.error().message();
        const File f = Fd{fd.res};
        co_await loop_.write(f, "hello ", 6, 0);
        char a[] = "vectored ", b[] = "world";
        iovec out[2] = {{a, 9}, {b, 5}};
        const async::Result w = co_await loop_.submit(op::Writev(f, out, 2, 6));
        if (w.res != 14) co_return "writev " + std::to_string(w.res);
        char x[6] = {}, y[14] = {};
        iovec in[2] = {{x, 6}, {y, 14}};
        const async::Result r = co_await loop_.submit(op::Readv(f, in, 2, 0));
        if (r.res != 20) co_return "readv " + std::to_string(r.res);
        char z[20] = {};
        const async::Result r2 = co_await loop_.read(f, z, sizeof z, 0);
        if (r2.res != 20 || std::string(z, 20) != std::string(x, 6) + std::string(y, 14))
            co_return "read differs";
        const async::Result c = co_await loop_.close(f);
        if (c.res != 0) co_return "close " + std::to_string(c.res);
        if (::fcntl(fd.res, F_GETFD) != -1) co_return "still open after close";
        co_return std::string(z, 20);
    };
    EXPECT_EQ(run(t), "hello vectored world");
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    EXPECT_EQ(st.st_mode & 0777, 0640u & ~mask);
}

TEST_F(AsyncFileOps, OpenAt2RefusesASymlinkWhenAsked) {
    ::symlink("/etc/hostname", path("link").c_str());
    open_how how{};
    how.flags = O_RDONLY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS;
    const std::string p = path("link");
    const async::Result r = run([&]() -> async::Task<async::Result> {
        co_return co_await loop_.submit(op::OpenAt2(AT_FDCWD, p.c_str(), &how));
    });
    EXPECT_EQ(r.res, -ELOOP) << "RESOLVE_NO_SYMLINKS not applied";
    how.resolve = 0;
    const async::Result ok = run([&]() -> async::Task<async::Result> {
        co_return co_await loop_.submit(op::OpenAt2(AT_FDCWD, p.c_str(), &how));
    });
    ASSERT_GE(ok.res, 0);
    ::close(ok.res);
}

TEST_F(AsyncFileOps, FixedBuffersFromARegisteredPool) {
    const std::string p = path("fixed");
    const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    alignas(4096) static char pool[2][4096];
    iovec regs[2] = {{pool[0], sizeof pool[0]}, {pool[1], sizeof pool[1]}};
    ring_.register_buffers(regs);
    for (int i = 0; i < 4096; ++i) pool[0][i] = static_cast<char>(i * 7);
    auto t = [&]() -> async::Task<bool> {
        const async::Result w = co_await loop_.submit(op::WriteFixed(Fd{fd}, pool[0], 4096, 0, 0));
        const async::Result r = co_await loop_.submit(op::ReadFixed(Fd{fd}, pool[1], 4096, 0, 1));
        co_return w.res == 4096 && r.res == 4096;
    };
    EXPECT_TRUE(run(t));
    EXPECT_EQ(std::string(pool[0], 4096), std::string(pool[1], 4096));
    ring_.unregister_buffers();
    ::close(fd);
}

TEST_F(AsyncFileOps, SyncsSizesAndAdvice) {
    const std::string p = path("sized");
    const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    auto t = [&]() -> async::Task<std::string> {
        const auto r = co_await loop_.chain(op::Write(Fd{fd}, "0123456789", 10, 0),
                                            op::Fsync(Fd{fd}).datasync(),
                                            op::SyncFileRange(Fd{fd}, 0, 10, SYNC_FILE_RANGE_WRITE),
                                            op::Fadvise(Fd{fd}, 0, 10, POSIX_FADV_DONTNEED));
        for (const auto& x : r)
            if (x.res < 0) co_return "chain " + x.error().message();
        if ((co_await loop_.fsync(Fd{fd})).res != 0) co_return "fsync";
        const async::Result fa = co_await loop_.submit(op::Fallocate(Fd{fd}, 0, 0, 65536));
        if (fa.res != 0) co_return "fallocate " + fa.error().message();
        struct stat st {};
        ::fstat(fd, &st);
        if (st.st_size != 65536) co_return "fallocate size " + std::to_string(st.st_size);
        const async::Result tr = co_await loop_.submit(op::Ftruncate(Fd{fd}, 4));
        if (tr.res == -EOPNOTSUPP) co_return "ftruncate refused";
        if (tr.res != 0) co_return "ftruncate " + tr.error().message();
        co_return "ok";
    };
    const std::string r = run(t);
    // Everything before the ftruncate ran and was checked; a refusal is a
    // skip only on a kernel without the opcode.
    if (r == "ftruncate refused") REQUIRE_OP(ring_, op::Ftruncate::code);
    EXPECT_EQ(r, "ok");
    EXPECT_EQ(slurp(p), "0123");
    ::close(fd);
}

TEST_F(AsyncFileOps, StatxAndTheDirectoryOperations) {
    const std::string d = path("sub"), f = path("sub/a"), g = path("sub/b"), h = path("hard"),
                      s = path("soft");
    auto t = [&]() -> async::Task<std::string> {
        if ((co_await loop_.submit(op::MkdirAt(AT_FDCWD, d.c_str(), 0750))).res != 0)
            co_return "mkdirat";
        const async::Result fd = co_await loop_.submit(
            op::OpenAt(AT_FDCWD, f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        if (!fd.ok()) co_return "openat";
        co_await loop_.write(Fd{fd.res}, "abc", 3, 0);
        co_await loop_.close(Fd{fd.res});
        if ((co_await loop_.submit(op::RenameAt(AT_FDCWD, f.c_str(), AT_FDCWD, g.c_str()))).res !=
            0)
            co_return "renameat";
        if ((co_await loop_.submit(op::LinkAt(AT_FDCWD, g.c_str(), AT_FDCWD, h.c_str()))).res != 0)
            co_return "linkat";
        if ((co_await loop_.submit(op::SymlinkAt(g.c_str(), AT_FDCWD, s.c_str()))).res != 0)
            co_return "symlinkat";
        struct statx sx {};
        const async::Result st =
            co_await loop_.submit(op::Statx(AT_FDCWD, h.c_str(), 0, STATX_SIZE | STATX_NLINK, &sx));
        if (st.res != 0 || sx.stx_size != 3 || sx.stx_nlink != 2)
            co_return "statx of the hard link";
        if ((co_await loop_.submit(op::UnlinkAt(AT_FDCWD, g.c_str()))).res != 0)
            co_return "unlinkat";
        co_return "ok";
    };
    EXPECT_EQ(run(t), "ok");
    EXPECT_EQ(slurp(h), "abc");
    char target[256] = {};
    ASSERT_GT(::readlink(s.c_str(), target, sizeof target), 0);
    EXPECT_EQ(std::string(target), g);
    EXPECT_NE(::access(g.c_str(), F_OK), 0) << "unlinkat left the file";
    struct stat st {};
    ASSERT_EQ(::stat(d.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
}

TEST_F(AsyncFileOps, SpliceMovesAFileThroughAPipe) {
    const std::string src = path("src"), dst = path("dst");
    std::string data(50000, '\0');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31 + 3);
    {
        const int fd = ::open(src.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
        ::close(fd);
    }
    const int in = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
    const int out = ::open(dst.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    int p[2];
    ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
    auto t = [&]() -> async::Task<std::int64_t> {
        std::int64_t off = 0;
        while (off < static_cast<std::int64_t>(data.size())) {
            // Exactly what is left: a short splice would end the chain (-ECANCELED).
            const auto n = static_cast<std::uint32_t>(
                std::min<std::int64_t>(16384, static_cast<std::int64_t>(data.size()) - off));
            const auto r = co_await loop_.chain(op::Splice(in, off, Fd{p[1]}, -1, n),
                                                op::Splice(p[0], -1, Fd{out}, off, n));
            if (r[0].res != static_cast<int>(n) || r[1].res != r[0].res) co_return -1;
            off += r[0].res;
        }
        co_return off;
    };
    EXPECT_EQ(run(t), static_cast<std::int64_t>(data.size()));
    EXPECT_TRUE(slurp(dst) == data);
    ::close(in);
    ::close(out);
    ::close(p[0]);
    ::close(p[1]);
}

struct Bogus {
    static constexpr std::uint8_t code = 250;  // no kernel has it
    void prepare(io_uring_sqe& s) const noexcept { s.opcode = code; }
};

TEST_F(AsyncFileOps, AnOpcodeTheKernelLacksIsNamed) {
    const async::Result r =
        run([&]() -> async::Task<async::Result> { co_return co_await loop_.submit(Bogus{}); });
    EXPECT_EQ(r.res, -EOPNOTSUPP);
    EXPECT_EQ(loop_.in_flight(), 0u);
    EXPECT_EQ(async::unsupported(op::Ftruncate::code),
              "ftruncate: not supported by this kernel (io_uring has it from Linux 6.9)");
    EXPECT_EQ(async::unsupported(250), "opcode 250: not supported by this kernel");
}

}  // namespace
