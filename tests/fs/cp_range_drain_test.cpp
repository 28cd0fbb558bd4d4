// A large file's read -> write pairs (the range copier) when the ring fails
// while a read is still in the kernel.  The source lives on a FUSE file
// system whose first read answers only when the test says so
// (tools/held_read_fs.py), as a stalled network file system would: the
// read sits in an io-wq worker.  Then io_uring_enter and io_uring_register
// start failing for good (a seccomp user-notification supervisor).  copy()
// must come back in bounded time, say that reads and writes are still in
// the kernel, and keep the buffer they name: when the file system answers,
// the worker copies the data into it with nobody left to reap the
// completion.  Under ASan a buffer the copier freed is watched, and a write
// the kernel makes into one fails the test with ASan's report.
#include "files_test_support.hpp"
#include "tools/freed_watch.hpp"
#include "tools/older_kernel.hpp"

#include "fs/copy.hpp"
#include "uringkit/ring/kernel_owned.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include <atomic>
#include <thread>

namespace {

using namespace files_test;

constexpr unsigned long kFuseMagic = 0x65735546;
constexpr std::size_t kFileSize = 1 << 20;

// The FUSE file system, mounted at `mnt` until the object goes.
struct HeldReadFs {
    Spawned fs;
    std::string mnt, error;
    bool mounted = false;

    HeldReadFs(const std::string& mountpoint, const std::string& reading,
               const std::string& release)
        : mnt(mountpoint) {
        if (::access("/usr/bin/python3", X_OK) != 0) {
            error = "needs /usr/bin/python3 for the FUSE file system";
            return;
        }
        if (run({"/usr/bin/python3", "-c", "import fusepy"}).status != 0) {
            error = "needs Debian's python3-fusepy (and libfuse2) for the FUSE file system";
            return;
        }
        if (::access("/dev/fuse", R_OK | W_OK) != 0) {
            error = "no usable /dev/fuse here";
            return;
        }
        fs = spawn(
            {"/usr/bin/python3", HELD_READ_FS, mnt, std::to_string(kFileSize), reading, release});
        auto up = [&] {
            struct statfs sf {};
            return ::statfs(mnt.c_str(), &sf) == 0 &&
                   static_cast<unsigned long>(sf.f_type) == kFuseMagic;
        };
        mounted =
            wait_until([&] { return up() || ::waitpid(fs.pid, nullptr, WNOHANG) == fs.pid; }) &&
            up();
        if (!mounted) error = "the FUSE file system could not be mounted here: " + drain_fd(fs.err);
    }
    ~HeldReadFs() {
        if (fs.pid < 0) return;
        if (mounted) ::umount2(mnt.c_str(), MNT_DETACH);
        ::kill(fs.pid, SIGTERM);
        ::waitpid(fs.pid, nullptr, 0);
    }
};

TEST(CpRangeDrain, RingFailingWithAReadInTheKernelKeepsItsBuffer) {
    Scratch s;
    stdfs::create_directories(s.dir / "mnt");
    const std::string reading = s / "reading", release = s / "release";
    HeldReadFs fuse(s / "mnt", reading, release);
    if (!fuse.error.empty()) GTEST_SKIP() << fuse.error;
    struct sigaction wake {
    }, old_usr1{};
    wake.sa_handler = [](int) {};  // no SA_RESTART: a wait returns EINTR
    ::sigaction(SIGUSR1, &wake, &old_usr1);

    const std::size_t kept_before = uringkit::kept_for_kernel();
    // The copier's buffer for this file: 4 pairs of 256 KiB.
    freed_watch::install(kFileSize);
    std::atomic<UringSupervisor*> sup{nullptr};
    std::atomic<bool> copied{false}, may_exit{false};
    std::string setup_error, errors;
    uringkit::fs::CopyResult result;
    std::thread copier([&] {
        // As on 6.0 (no DEFER_TASKRUN), as the chain's test does: the
        // supervisor describes that kernel; the read's data is copied by the
        // io-wq worker either way.
        UringFaults faults;
        older_kernel_faults("6.0", faults);
        UringSupervisor supervisor(faults);
        if (!supervisor.error().empty()) {
            setup_error = supervisor.error();
            copied = true;
            return;
        }
        sup = &supervisor;
        uringkit::fs::CopyOptions o;
        o.engine = uringkit::fs::ByteEngine::ring;  // no copy_file_range: the ring's pairs
        o.reflink = uringkit::fs::Reflink::never;
        uringkit::fs::CopySink sink;
        sink.error = [&](std::string_view m) { errors += std::string(m) + "\n"; };
        freed_watch::armed = true;
        result = uringkit::fs::copy(std::vector<std::string>{s / "mnt/src"}, s / "copy", o, sink);
        freed_watch::armed = false;
        copied = true;
        while (!may_exit) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    auto finish = [&] {
        { std::ofstream{release}; }
        may_exit = true;
        copier.join();  // its exit cancels what its ring still holds
        ::sigaction(SIGUSR1, &old_usr1, nullptr);
        freed_watch::uninstall();
    };
    // The file system holds the first read.
    const bool held = wait_until([&] { return copied || stdfs::exists(reading); });
    if (!setup_error.empty()) {
        finish();
        GTEST_SKIP() << setup_error;
    }
    if (!held || copied) {
        finish();
        FAIL() << "no read was held ("
               << (copied ? "copy returned first: " + errors : "the file system saw none") << ")";
    }
    // From now on the ring fails; the signal ends the copier's wait.
    sup.load()->trip();
    ::pthread_kill(copier.native_handle(), SIGUSR1);
    if (!wait_until([&] { return copied.load(); })) {
        finish();
        FAIL() << "copy() did not return after the ring failed (it waits on the held read)";
    }
    EXPECT_EQ(result.status, uringkit::fs::CopyStatus::failure) << result.message;
    EXPECT_NE(errors.find("io_uring_enter"), std::string::npos) << errors;
    EXPECT_NE(errors.find("still in the kernel, their buffers are kept"), std::string::npos)
        << errors;
    EXPECT_GT(uringkit::kept_for_kernel(), kept_before) << "the buffer the reads name was not kept";
    EXPECT_FALSE(stdfs::exists(s.dir / "copy")) << "a half-written copy was left";

    // The file system answers: the worker copies the data into the buffer.
    // Freed, that buffer would now be written by the kernel.
    { std::ofstream{release}; }
    freed_watch::expect_untouched(
        [](const std::function<bool()>& done) { return wait_until(done); });
    finish();
}

}  // namespace
