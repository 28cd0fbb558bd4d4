// The copier when the ring itself fails, and what a failed small-file chain
// leaves in the fixed-file table.
//  - io_uring_enter fails from its Nth call on (strace's error injection):
//    the copy ends in bounded time with one line saying how many operations
//    the kernel still holds (their buffers are kept, never freed under the
//    kernel), status 1, no temporary and no half-written file left.
//  - copy() as a library call when the ring fails with a chain still held
//    by the kernel (its open waits on a file lease): the buffers the chain
//    reads into are kept, never freed, so the kernel's late write lands in
//    memory nobody else owns.  Under ASan the freed blocks are watched, and a
//    write the kernel makes into one ends the test with ASan's report.
//  - a chain cut short by a failed write (RLIMIT_FSIZE) leaves its closes
//    -ECANCELED: its two fixed slots are emptied before the failure is
//    reported, so neither the source nor the unlinked destination stays open
//    in the ring (read from the ring's /proc fdinfo at that moment).
#include "files_test_support.hpp"
#include "tools/freed_watch.hpp"
#include "tools/older_kernel.hpp"

#include "fs/copy.hpp"
#include "uringkit/ring/kernel_owned.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <regex>
#include <thread>

namespace {

using namespace files_test;

TEST(CpRingFaults, EnterFailingMidCopyEndsWithoutFreeingWhatTheKernelHolds) {
    if (!have_program("strace")) GTEST_SKIP() << "needs strace to inject io_uring_enter failures";
    no_leak_check_in_traced_children();
    Scratch s;
    write_file(s / "big", random_bytes(16 << 20, 1));
    stdfs::create_directories(s.dir / "t");
    for (int i = 0; i < 20; ++i)
        write_file(s / ("t/f" + std::to_string(i)), random_bytes(3000, static_cast<unsigned>(i)));
    struct Case {
        std::vector<std::string> args;
        // The first enter calls succeed.  For the tree the failure may land in
        // the statx batch or in the chains, depending on how fast the kernel
        // completes the statx: either way one line, status 1, nothing half-written.
        const char* when;
        std::string dst;
    };
    const Case cases[] = {
        {{URINGKIT_CLI, "cp", "--engine", "ring", "--qd", "2", s / "big", s / "out"},
         "3+",
         s / "out"},
        {{URINGKIT_CLI, "cp", "-r", "--copy-threads", "0", "--inflight", "4", s / "t", s / "copy"},
         "4+",
         s / "copy"},
    };
    for (const Case& c : cases) {
        std::vector<std::string> a{"timeout",
                                   "-s",
                                   "KILL",
                                   "60",
                                   "strace",
                                   "-f",
                                   "-qq",
                                   "-o",
                                   "/dev/null",
                                   "-e",
                                   "trace=io_uring_enter",
                                   "-e",
                                   std::string("inject=io_uring_enter:error=EIO:when=") + c.when};
        a.insert(a.end(), c.args.begin(), c.args.end());
        const Child r = run(a);
        ASSERT_NE(r.status, 128 + SIGKILL) << "the copy hung (spun) after io_uring_enter failed";
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err.find("Input/output error"), std::string::npos) << r.err;
        EXPECT_TRUE(temporaries(s.dir).empty()) << temporaries(s.dir).front();
        if (c.dst == s / "out") {
            EXPECT_NE(r.err.find("still in the kernel, their buffers are kept"), std::string::npos)
                << r.err;
            EXPECT_FALSE(stdfs::exists(c.dst)) << "a half-written new file was left";
        } else if (stdfs::exists(c.dst)) {  // absent when the failure came during the statx batch
            for (const auto& e : stdfs::directory_iterator(c.dst))
                EXPECT_EQ(read_file(e.path().string()),
                          read_file(s / ("t/" + e.path().filename().string())))
                    << "half-written: " << e.path();
        }
    }
}

// A small file that grows after the walk's statx: the chain's STATX after
// the read sees it and the file is reported, as on the large-file path,
// never copied short with status 0.  strace stops cp (SIGSTOP injected) at
// the mkdir of the file's directory, which comes after the walk and before
// any chain; the test appends to the file and lets cp go on.
TEST(CpRingFaults, SmallFileThatGrewAfterTheWalkIsReported) {
    if (!have_program("strace"))
        GTEST_SKIP() << "needs strace to stop cp between the walk and the copy";
    no_leak_check_in_traced_children();
    Scratch s;
    stdfs::create_directories(s.dir / "t" / "sub");
    write_file(s / "t/sub/grows", random_bytes(3000, 1));
    write_file(s / "t/sub/stays", random_bytes(2000, 2));
    Spawned tracer = spawn({"strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=mkdirat", "-e",
                            "inject=mkdirat:signal=SIGSTOP:when=2", URINGKIT_CLI, "cp", "-r",
                            "--copy-threads", "0", s / "t", s / "copy"});
    pid_t cp = -1;
    auto stopped = [&] {
        const std::string stat = read_file("/proc/" + std::to_string(cp) + "/stat");
        const auto paren = stat.rfind(')');
        return paren != std::string::npos && paren + 2 < stat.size() &&
               (stat[paren + 2] == 't' || stat[paren + 2] == 'T');
    };
    // Once copy/sub exists and cp is stopped, it has made no system call
    // since that mkdir: the walk is done, no chain has started.
    ASSERT_TRUE(wait_until([&] {
        return (cp = child_of(tracer.pid)) > 0 && stdfs::exists(s.dir / "copy/sub") && stopped();
    }));
    {
        std::ofstream f(s / "t/sub/grows", std::ios::app | std::ios::binary);
        f << "appended";
    }
    int status = 0;
    for (;;) {  // SIGCONT until it ends (the stop may come just after this)
        ::kill(cp, SIGCONT);
        const pid_t w = ::waitpid(tracer.pid, &status, WNOHANG);
        ASSERT_GE(w, 0);
        if (w == tracer.pid) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::string err = drain_fd(tracer.err);
    ASSERT_TRUE(WIFEXITED(status)) << err;
    EXPECT_EQ(WEXITSTATUS(status), 1) << err;
    EXPECT_EQ(err, "uringkit cp: " + s / "t/sub/grows" +
                       ": changed size while being copied (3000 -> 3008 bytes)\n");
    EXPECT_FALSE(stdfs::exists(s.dir / "copy/sub/grows"));
    EXPECT_EQ(read_file(s / "copy/sub/stays"), read_file(s / "t/sub/stays"));
}

// ---- memory freed under the kernel ---------------------------------------------

// The ring fails (io_uring_enter and io_uring_register refused for good, by
// a seccomp user-notification supervisor) while a small file's chain is
// held in the kernel: its first step, the open of the source, waits for the
// test's write lease on that file to be given up.  copy() must return
// without waiting for ever, say that operations are still in the kernel,
// and keep the buffers they name: once the lease goes the kernel reads the
// file into them, with nobody left to reap the completion.  The ring itself
// stays alive meanwhile, as it does for a caller whose registered ring fd
// could not be unregistered; it goes when the copying thread exits.
TEST(CpRingFaults, RingFailingWithAChainInTheKernelKeepsItsBuffers) {
    Scratch s;
    stdfs::create_directories(s.dir / "t");
    const std::string data = random_bytes(3000, 7);
    write_file(s / "t/f", data);
    // The lease: an open of the file by anyone else waits until it is given up.
    struct sigaction ignore {
    }, old_io{}, wake{}, old_usr1{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGIO, &ignore, &old_io);  // the lease break's notice
    wake.sa_handler = [](int) {};          // no SA_RESTART: a wait returns EINTR
    ::sigaction(SIGUSR1, &wake, &old_usr1);
    const int held = ::open((s / "t/f").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(held, 0);
    if (::fcntl(held, F_SETLEASE, F_WRLCK) != 0) {
        ::close(held);
        GTEST_SKIP() << "F_SETLEASE: " << std::strerror(errno);
    }

    const std::size_t kept_before = uringkit::kept_for_kernel();
    // Only the copier's small-file buffer is watched: one slot, 64 KiB of
    // data and the 4 KiB for its statx (kSmallBlock in src/fs).
    freed_watch::install(64 * 1024 + 4096);
    std::atomic<UringSupervisor*> sup{nullptr};
    std::atomic<bool> copied{false}, may_exit{false};
    std::string setup_error;
    uringkit::fs::CopyResult result;
    std::string errors;
    std::thread copier([&] {
        // Setup as on 6.0, without DEFER_TASKRUN: on a deferred ring the
        // kernel would go on with the chain only inside the dead ring's next
        // enter; on this one it goes on by itself once the open is let through.
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
        o.recursive = true;
        o.copy_threads = 0;  // the chains, not the read -> write pool
        o.inflight = 1;
        uringkit::fs::CopySink sink;
        sink.error = [&](std::string_view m) { errors += std::string(m) + "\n"; };
        freed_watch::armed = true;
        result = uringkit::fs::copy(std::vector<std::string>{s / "t"}, s / "copy", o, sink);
        freed_watch::armed = false;
        copied = true;
        while (!may_exit) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    auto finish = [&] {
        ::fcntl(held, F_SETLEASE, F_UNLCK);
        may_exit = true;
        copier.join();  // its exit cancels what its ring still holds
        ::close(held);
        ::sigaction(SIGIO, &old_io, nullptr);
        ::sigaction(SIGUSR1, &old_usr1, nullptr);
        freed_watch::uninstall();
    };
    // The chain's open of t/f has reached the lease: the kernel is breaking it.
    const bool breaking =
        wait_until([&] { return copied || ::fcntl(held, F_GETLEASE) != F_WRLCK; });
    if (!setup_error.empty()) {
        finish();
        GTEST_SKIP() << setup_error;
    }
    if (!breaking || copied) {
        finish();
        FAIL() << "the chain never waited on the lease ("
               << (copied ? "copy returned first" : "no lease break") << ")";
    }
    // From now on the ring fails; the signal ends the copier's wait for the chain.
    sup.load()->trip();
    ::pthread_kill(copier.native_handle(), SIGUSR1);
    if (!wait_until([&] { return copied.load(); })) {
        finish();
        FAIL() << "copy() did not return after the ring failed (it waits on the held chain)";
    }
    EXPECT_EQ(result.status, uringkit::fs::CopyStatus::failure) << result.message;
    EXPECT_NE(errors.find("Input/output error"), std::string::npos) << errors;
    EXPECT_NE(errors.find("still in the kernel"), std::string::npos) << errors;
    EXPECT_GT(uringkit::kept_for_kernel(), kept_before)
        << "the buffers the chain names were not kept";

    // Give the lease up: the held open goes on and the chain reads t/f into
    // its buffer.  Freed, that buffer would now be written by the kernel.
    ::fcntl(held, F_SETLEASE, F_UNLCK);
    freed_watch::expect_untouched(
        [](const std::function<bool()>& done) { return wait_until(done); });
    finish();
}

// Registered files of this process's io_uring instances, as /proc lists
// them (fdinfo prints every occupied slot as "N: path").
std::size_t occupied_fixed_slots() {
    std::size_t n = 0;
    for (const auto& e : stdfs::directory_iterator("/proc/self/fd")) {
        std::error_code ec;
        const auto target = stdfs::read_symlink(e.path(), ec);
        if (ec || target.string() != "anon_inode:[io_uring]") continue;
        const std::string info = read_file("/proc/self/fdinfo/" + e.path().filename().string());
        const auto files = info.find("UserFiles:");
        const auto bufs = info.find("UserBufs:");
        if (files == std::string::npos) continue;
        const std::string table =
            info.substr(files, bufs == std::string::npos ? std::string::npos : bufs - files);
        static const std::regex slot("\\n\\s*[0-9]+: ");
        n += static_cast<std::size_t>(std::distance(
            std::sregex_iterator(table.begin(), table.end(), slot), std::sregex_iterator()));
    }
    return n;
}

TEST(CpRingFaults, FailedChainEmptiesItsFixedSlots) {
    Scratch s;
    stdfs::create_directories(s.dir / "t");
    for (int i = 0; i < 3; ++i)
        write_file(s / ("t/f" + std::to_string(i)), random_bytes(3000, static_cast<unsigned>(i)));
    // In a child: RLIMIT_FSIZE is the whole process's.
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        const rlimit lim{1000, 1000};
        ::setrlimit(RLIMIT_FSIZE, &lim);
        uringkit::fs::CopyOptions o;
        o.recursive = true;
        o.copy_threads = 0;  // the chains, not the read -> write pool
        o.inflight = 1;      // one chain at a time: at a failure no other holds slots
        std::string seen;
        uringkit::fs::CopySink sink;
        sink.error = [&](std::string_view m) {
            seen += std::to_string(occupied_fixed_slots()) + " " + std::string(m) + "\n";
        };
        const auto r = uringkit::fs::copy(std::vector<std::string>{s / "t"}, s / "copy", o, sink);
        if (!r.used_ring) seen = "skip: no io_uring\n";
        (void)!::write(pipefd[1], seen.data(), seen.size());
        ::_exit(0);
    }
    ::close(pipefd[1]);
    std::string report;
    char buf[4096];
    for (ssize_t n; (n = ::read(pipefd[0], buf, sizeof buf)) > 0;)
        report.append(buf, static_cast<std::size_t>(n));
    ::close(pipefd[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (report.rfind("skip", 0) == 0) GTEST_SKIP() << report;
    EXPECT_EQ(count(report, "\n"), 3u) << report;
    EXPECT_EQ(count(report, "File too large"), 3u) << report;
    EXPECT_EQ(count("\n" + report, "\n0 "), 3u)
        << "slots still occupied when the failure was reported:\n"
        << report;
    for (int i = 0; i < 3; ++i) EXPECT_FALSE(stdfs::exists(s.dir / ("copy/f" + std::to_string(i))));
}

}  // namespace
