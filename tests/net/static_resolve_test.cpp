// serve --root's path safety is the kernel's: every request path, decoded
// once, is opened with openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS) under
// the root.  A secret planted beside the root must never be opened, whatever
// the encoding or the symlink; a FIFO opens without blocking and is refused.
#include <gtest/gtest.h>

#include "net/static_files.hpp"
#include "uring_test_support.hpp"
#include "uringkit/async/loop.hpp"
#include "uringkit/ops/fs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using namespace uringkit::net;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMarker = "uringkit-secret-7f3a9c";

class StaticResolve : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-resolve-XXXXXX";
        ASSERT_NE(::mkdtemp(tmpl), nullptr);
        base_ = tmpl;
        fs::create_directory(base_ / "root");
        fs::create_directory(base_ / "root" / "dir");
        std::ofstream(base_ / "secret") << kMarker;
        std::ofstream(base_ / "root" / "file.txt") << "inside";
        fs::create_symlink(base_ / "secret", base_ / "root" / "abs");
        fs::create_symlink("../secret", base_ / "root" / "rel");
        fs::create_symlink("/proc/self/root", base_ / "root" / "magic");
        fs::create_symlink("file.txt", base_ / "root" / "inner");
        ASSERT_EQ(::mkfifo((base_ / "root" / "fifo").c_str(), 0644), 0);
        root_fd_ = ::open((base_ / "root").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ASSERT_GE(root_fd_, 0);
        // openat2 is 5.6; an older kernel has no safe resolution to test.
        const auto probe = open_beneath(root_fd_, "file.txt", {});
        if (probe.error == ENOSYS) GTEST_SKIP() << "no openat2 (Linux 5.6)";
        ::close(probe.fd);
    }
    void TearDown() override {
        if (root_fd_ >= 0) ::close(root_fd_);
        fs::remove_all(base_);
    }

    // Opens what `target` names and returns the file's bytes ("" if refused).
    std::string fetch(std::string_view target, ResolveOptions o = {}, int* error = nullptr) {
        const auto path = decode_target(target);
        if (!path) return "";
        auto f = open_beneath(root_fd_, *path, o);
        if (error) *error = f.error;
        if (f.fd < 0) return "";
        std::string out;
        if (f.kind == FileKind::Regular) {
            char buf[256];
            const auto n = ::read(f.fd, buf, sizeof buf);
            if (n > 0) out.assign(buf, static_cast<std::size_t>(n));
        }
        ::close(f.fd);
        return out;
    }

    fs::path base_;
    int root_fd_ = -1;
};

TEST_F(StaticResolve, NothingOutsideTheRootIsEverOpened) {
    // The plant is real: a plain openat through the same links reaches the secret.
    for (const char* p : {"abs", "rel", "../secret"}) {
        const int fd = ::openat(root_fd_, p, O_RDONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0) << p;
        char buf[64] = {};
        EXPECT_GT(::read(fd, buf, sizeof buf - 1), 0);
        EXPECT_EQ(std::string_view(buf), kMarker) << p;
        ::close(fd);
    }
    for (const char* t : {"/..", "/../secret", "/%2e%2e/secret", "/%2f..%2fsecret", "/..%2fsecret",
                          "/dir/../../secret", "/abs", "/rel", "/magic/etc/passwd", "/magic",
                          "/secret%00.txt", "/%2Ftmp", "//etc/passwd"}) {
        for (const auto o : {ResolveOptions{}, ResolveOptions{true, true}}) {
            int err = 0;
            const auto body = fetch(t, o, &err);
            EXPECT_EQ(body.find(kMarker), std::string::npos) << t;
            EXPECT_TRUE(body.empty()) << t;
        }
    }
    int err = 0;
    fetch("/../secret", {}, &err);
    EXPECT_EQ(err, EXDEV);
    EXPECT_EQ(open_error_status(err), 404);
    fetch("/magic/etc/passwd", {}, &err);
    EXPECT_TRUE(err == ELOOP || err == EXDEV) << err;
    fetch("/abs", {}, &err);
    EXPECT_EQ(err, EXDEV);  // every absolute symlink, wherever it points
}

// The io_uring engine opens with IORING_OP_OPENAT2 and the same open_how:
// the kernel must refuse the same paths with the same errors.
TEST_F(StaticResolve, TheRingRefusesTheSamePaths) {
    uringkit::Ring ring{8};
    uringkit::async::Loop loop{ring};
    const open_how how = file_open_how({});
    const auto open_on_ring = [&](const std::string& p) {
        return loop
            .block_on([&]() -> uringkit::async::Task<uringkit::async::Result> {
                co_return co_await loop.submit(uringkit::op::OpenAt2(root_fd_, p.c_str(), &how));
            }())
            .res;
    };
    for (const char* t : {"/../secret", "/%2e%2e/secret", "/..%2fsecret", "/abs", "/rel",
                          "/magic/etc/passwd", "/file.txt", "/inner", "/missing"}) {
        const auto path = decode_target(t);
        ASSERT_TRUE(path) << t;
        const int res = open_on_ring(*path);
        const auto direct = open_beneath(root_fd_, *path, {});
        if (res == -EINVAL || res == -EOPNOTSUPP) GTEST_SKIP() << "no IORING_OP_OPENAT2";
        EXPECT_EQ(res < 0 ? -res : 0, direct.error) << t;
        if (res >= 0) ::close(res);
        if (direct.fd >= 0) ::close(direct.fd);
    }
}

TEST_F(StaticResolve, SymlinkInsideTheRootWorksUnlessRefused) {
    EXPECT_EQ(fetch("/inner"), "inside");
    int err = 0;
    EXPECT_EQ(fetch("/inner", {.no_symlinks = true}, &err), "");
    EXPECT_EQ(err, ELOOP);
    EXPECT_EQ(fetch("/file.txt", {.no_symlinks = true, .no_xdev = true}), "inside");
}

TEST_F(StaticResolve, FifoOpensWithoutBlockingAndIsNotAFile) {
    // O_NONBLOCK: a FIFO with no writer opens at once; it must never be read.
    const auto f = open_beneath(root_fd_, "fifo", {});
    ASSERT_GE(f.fd, 0) << f.error;
    EXPECT_EQ(f.kind, FileKind::Other);
    ::close(f.fd);
}

TEST_F(StaticResolve, KindsAndMeta) {
    auto f = open_beneath(root_fd_, "", {});
    ASSERT_GE(f.fd, 0);
    EXPECT_EQ(f.kind, FileKind::Directory);
    ::close(f.fd);
    f = open_beneath(root_fd_, "file.txt", {});
    ASSERT_GE(f.fd, 0);
    EXPECT_EQ(f.kind, FileKind::Regular);
    EXPECT_EQ(f.meta.size, 6u);
    struct stat st {};
    ASSERT_EQ(::fstat(f.fd, &st), 0);
    EXPECT_EQ(f.meta.ino, st.st_ino);
    EXPECT_EQ(f.meta.mtime_sec, st.st_mtim.tv_sec);
    ::close(f.fd);
    EXPECT_EQ(open_beneath(root_fd_, "missing", {}).error, ENOENT);
}

}  // namespace
