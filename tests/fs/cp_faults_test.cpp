// `uringkit cp` under injected faults: EFBIG from RLIMIT_FSIZE, ENOSPC on a
// 1 MiB tmpfs in a private mount namespace, a source truncated by another
// thread in the middle of the copy, a FUSE file system whose close fails,
// and io_uring forbidden by seccomp.  Each
// failure is one line naming the file, the offset and the errno, with its
// exit status; no temporary is left and an existing destination is unchanged.
#include "files_test_support.hpp"

#include "fs/copy.hpp"
#include "tools/memlock_limit.hpp"
#include "tools/refuse_o_direct.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include <array>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace {

using namespace files_test;

void limit_file_size() {
    ::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead of killing us
    const rlimit lim{1 << 20, 1 << 20};
    ::setrlimit(RLIMIT_FSIZE, &lim);
}

// A new destination: nothing is left.  An existing one with --atomic: left
// as it was.  (Without --atomic an existing file is written in place, as by
// cp, and keeps what was written before the error.)
TEST(CpFaults, FileSizeLimitGivesEfbigExitFiveNothingHalfWritten) {
    Scratch s;
    write_file(s / "src", random_bytes(3 << 20, 1));
    write_file(s / "dst", "the old destination");
    for (bool ring : {true, false}) {
        for (const char* target : {"new", "dst"}) {
            std::vector<std::string> a{URINGKIT_CLI, "cp", "--bs", "256k", s / "src", s / target};
            if (std::string(target) == "dst") a.insert(a.begin() + 2, "--atomic");
            if (!ring) a.insert(a.begin(), NO_URING);
            const Child r = run(a, {}, limit_file_size);
            EXPECT_EQ(r.status, 1) << r.err;
            const std::string line = r.err.substr(r.err.rfind("uringkit cp: " + s / ""));
            EXPECT_EQ(count(line, "\n"), 1u) << r.err;
            // Named by the destination the user gave, not the temporary.
            EXPECT_NE(line.find(s / target + ": write at offset 1048576: File too large"),
                      std::string::npos)
                << line;
            EXPECT_NE(line.find("(errno 27)"), std::string::npos) << line;
            EXPECT_EQ(read_file(s / "dst"), "the old destination");
            EXPECT_FALSE(stdfs::exists(s.dir / "new"));
            EXPECT_TRUE(temporaries(s.dir).empty()) << temporaries(s.dir).front();
        }
    }
}

// One file of the tree cannot be written: everything else is copied, the
// failure is one line, status 1 (as coreutils).  With --atomic no tree appears at all.
TEST(CpFaults, TreeThatHitsTheLimitCopiesTheRestOrWithAtomicNothing) {
    Scratch s;
    stdfs::create_directories(s.dir / "t" / "sub");
    for (int i = 0; i < 40; ++i)
        write_file(s / ("t/f" + std::to_string(i)), random_bytes(3000, static_cast<unsigned>(i)));
    write_file(s / "t/sub/huge", random_bytes(2 << 20, 9));
    write_file(s / "t/sub/zz-after", "after the failure");
    const Child r = run({URINGKIT_CLI, "cp", "-r", s / "t", s / "copy"}, {}, limit_file_size);
    EXPECT_EQ(r.status, 1) << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
    EXPECT_NE(r.err.find(s / "copy/sub/huge: write at offset"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(errno 27)"), std::string::npos) << r.err;
    for (int i = 0; i < 40; ++i)
        EXPECT_EQ(read_file(s / ("copy/f" + std::to_string(i))),
                  read_file(s / ("t/f" + std::to_string(i))));
    EXPECT_EQ(read_file(s / "copy/sub/zz-after"), "after the failure");
    EXPECT_FALSE(stdfs::exists(s.dir / "copy/sub/huge"));
    EXPECT_TRUE(temporaries(s.dir).empty());

    const Child atomic =
        run({URINGKIT_CLI, "cp", "-r", "--atomic", s / "t", s / "copy2"}, {}, limit_file_size);
    EXPECT_EQ(atomic.status, 1) << atomic.err;
    EXPECT_NE(atomic.err.find("(errno 27)"), std::string::npos) << atomic.err;
    EXPECT_NE(atomic.err.find("with --atomic a tree that could not be copied whole is removed"),
              std::string::npos)
        << atomic.err;
    EXPECT_FALSE(stdfs::exists(s.dir / "copy2"));
    EXPECT_TRUE(temporaries(s.dir).empty());
}

// A 1 MiB tmpfs at `mnt` in a private mount namespace (it goes away with
// the namespace), for a forked child.  As root that needs only unshare;
// without CAP_SYS_ADMIN (or `as_nobody`, which drops to nobody first) it
// also makes a user namespace, where an ordinary user may mount a tmpfs.
// Exits 99 when neither works here.
void private_small_tmpfs(const std::string& mnt, bool as_nobody) {
    // setuid clears the dumpable flag, which leaves /proc/self (uid_map) to root.
    if (as_nobody && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 ||
                      ::setuid(65534) != 0 || ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0))
        ::_exit(99);
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    if (::unshare(CLONE_NEWNS) != 0) {
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) ::_exit(99);
        auto put = [](const char* file, const std::string& text) {
            const int fd = ::open(file, O_WRONLY);
            const bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) ==
                                           static_cast<ssize_t>(text.size());
            if (fd >= 0) ::close(fd);
            if (!ok) ::_exit(99);
        };
        put("/proc/self/setgroups", "deny");
        put("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1");
        put("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1");
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0)
        ::_exit(99);
}

TEST(CpFaults, FullFileSystemGivesEnospc) {
    for (const bool as_nobody : {false, true}) {
        SCOPED_TRACE(as_nobody ? "as nobody, in a user namespace" : "as the test's user");
        Scratch s;
        write_file(s / "src", random_bytes(3 << 20, 2));
        stdfs::create_directory(s.dir / "mnt");
        stdfs::permissions(s.dir, stdfs::perms::all);  // nobody reaches src and mnt
        stdfs::permissions(s / "src", stdfs::perms::all);
        // Copy onto the full tmpfs, then list what is left there.
        const std::string script = std::string(URINGKIT_CLI) + " cp '" + (s / "src") + "' '" +
                                   (s / "mnt") + "/dst'; rc=$?; echo; ls -A '" + (s / "mnt") +
                                   "'; exit $rc";
        const Child r =
            run({"sh", "-c", script}, {}, [&] { private_small_tmpfs(s / "mnt", as_nobody); });
        if (r.status == 99) {
            if (as_nobody)
                GTEST_SKIP()
                    << "an ordinary user cannot mount a tmpfs here (user namespaces are off: "
                       "see /proc/sys/user/max_user_namespaces)";
            GTEST_SKIP()
                << "cannot mount a small tmpfs here (needs CAP_SYS_ADMIN, or a user namespace)";
        }
        EXPECT_EQ(r.status, 1) << r.err;
        EXPECT_NE(r.err.find("No space left on device (errno 28)"), std::string::npos) << r.err;
        EXPECT_NE(r.err.find("write at offset"), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "\n") << "left on the full file system: " << r.out;
    }
}

// Written in place, an existing file needs no room for a second copy; with
// --atomic it does, and the failure says so.  (A 1 MiB tmpfs in a private
// mount namespace, holding a 600 KiB destination.)
TEST(CpFaults, InPlaceNeedsNoRoomForASecondCopyAtomicSaysItDoes) {
    Scratch s;
    write_file(s / "src", random_bytes(600 << 10, 8));
    stdfs::create_directory(s.dir / "mnt");
    const std::string mnt = s / "mnt";
    const std::string script = "head -c 614400 /dev/zero > '" + mnt + "/dst' && " + URINGKIT_CLI +
                               " cp --atomic '" + (s / "src") + "' '" + mnt +
                               "/dst'; echo atomic=$?; " + URINGKIT_CLI + " cp '" + (s / "src") +
                               "' '" + mnt + "/dst'; echo in-place=$?; cmp '" + (s / "src") +
                               "' '" + mnt + "/dst' && echo same; ls -A '" + mnt + "'";
    const Child r = run({"sh", "-c", script}, {}, [&] {
        if (::unshare(CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            ::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=1m") != 0)
            ::_exit(99);
    });
    if (r.status == 99)
        GTEST_SKIP() << "cannot mount a small tmpfs here (needs CAP_SYS_ADMIN and unshare)";
    EXPECT_EQ(r.out, "atomic=1\nin-place=0\nsame\ndst\n") << r.err;
    EXPECT_NE(
        r.err.find("No space left on device (errno 28) (--atomic writes a complete second copy"),
        std::string::npos)
        << r.err;
    EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
}

// close(2) is where NFS, CIFS and FUSE report a failed write-back: its
// result is checked (strace injects EIO, then ENOSPC, into the close of
// the destination).
TEST(CpFaults, CloseFailureOfTheDestinationIsReported) {
    if (!have_program("strace")) GTEST_SKIP() << "needs strace to inject the close failure";
    no_leak_check_in_traced_children();
    Scratch s;
    write_file(s / "src", random_bytes(300000, 9));
    for (const auto& [err, status] : {std::pair{"EIO", 1}, std::pair{"ENOSPC", 1}}) {
        write_file(s / "dst",
                   "old");  // existing: written in place, so its path names the descriptor
        const Child r = run({"strace", "-qq", "-o", "/dev/null", "-P", s / "dst", "-e",
                             "trace=close", "-e", std::string("inject=close:error=") + err,
                             URINGKIT_CLI, "cp", s / "src", s / "dst"});
        EXPECT_EQ(r.status, status) << r.err;
        EXPECT_NE(r.err.find(s / "dst" + ": close: "), std::string::npos) << r.err;
        EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
    }
}

// A file system whose close(2) fails, as NFS, CIFS and FUSE report a failed
// write-back or an exceeded quota at close (->flush): a FUSE file system in
// memory (tools/flush_fail_fs.py) fails every flush with ENOSPC.  cp names
// the file and close, exits 1, and leaves neither the file nor a temporary,
// for a file and for a tree (whose small files would take the chains, whose
// fixed-slot closes never call ->flush, on a file system without it).
TEST(CpFaults, FlushFailingAtCloseOnFuseIsReported) {
    if (::access("/usr/bin/python3", X_OK) != 0)
        GTEST_SKIP() << "needs /usr/bin/python3 for the FUSE file system";
    if (run({"/usr/bin/python3", "-c", "import fusepy"}).status != 0)
        GTEST_SKIP() << "needs Debian's python3-fusepy (and libfuse2) for the FUSE file system";
    if (::access("/dev/fuse", R_OK | W_OK) != 0) GTEST_SKIP() << "no usable /dev/fuse here";
    Scratch s;
    stdfs::create_directories(s.dir / "mnt");
    stdfs::create_directories(s.dir / "t" / "sub");
    write_file(s / "src", random_bytes(300000, 3));
    write_file(s / "t/a", random_bytes(3000, 4));
    write_file(s / "t/sub/b", random_bytes(100, 5));
    Spawned fs = spawn({"/usr/bin/python3", FLUSH_FAIL_FS, s / "mnt", std::to_string(ENOSPC)});
    constexpr unsigned long kFuseMagic = 0x65735546;
    auto mounted = [&] {
        struct statfs sf {};
        return ::statfs((s / "mnt").c_str(), &sf) == 0 &&
               static_cast<unsigned long>(sf.f_type) == kFuseMagic;
    };
    if (!wait_until([&] { return mounted() || ::waitpid(fs.pid, nullptr, WNOHANG) == fs.pid; }) ||
        !mounted()) {
        ::kill(fs.pid, SIGKILL);
        ::waitpid(fs.pid, nullptr, 0);
        GTEST_SKIP() << "the FUSE file system could not be mounted here: " << drain_fd(fs.err);
    }
    const Child one = run({URINGKIT_CLI, "cp", s / "src", s / "mnt/copy"});
    const Child tree = run({URINGKIT_CLI, "cp", "-r", s / "t", s / "mnt/tree"});
    std::vector<std::string> left;
    for (const auto& e : stdfs::recursive_directory_iterator(s.dir / "mnt"))
        if (!e.is_directory()) left.push_back(e.path().string());
    ::umount2((s / "mnt").c_str(), MNT_DETACH);
    ::waitpid(fs.pid, nullptr, 0);

    EXPECT_EQ(one.status, 1) << one.err;
    EXPECT_EQ(one.err,
              "uringkit cp: " + s / "mnt/copy" + ": close: No space left on device (errno 28)\n");
    EXPECT_EQ(tree.status, 1) << tree.err;
    EXPECT_NE(tree.err.find(s / "mnt/tree/a" + ": close: No space left on device"),
              std::string::npos)
        << tree.err;
    EXPECT_NE(tree.err.find(s / "mnt/tree/sub/b" + ": close: No space left on device"),
              std::string::npos)
        << tree.err;
    EXPECT_EQ(count(tree.err, "\n"), 2u) << tree.err;
    EXPECT_TRUE(left.empty()) << "left on the file system: " << left.front();
}

// The source shrinks while it is copied: a second thread truncates it after
// the first block is done (the progress hook waits until it has), so the
// fault lands mid-copy every run.
TEST(CpFaults, SourceTruncatedWhileCopiedIsAnErrorNotAShortCopy) {
    using uringkit::fs::SourceReads;
    for (const auto& [fallback, reads] :
         {std::pair{false, SourceReads::page_cache}, std::pair{false, SourceReads::direct},
          std::pair{true, SourceReads::page_cache}}) {
        Scratch s;
        write_file(s / "src", random_bytes(8 << 20, 3));
        write_file(s / "dst", "old");
        std::mutex m;
        std::condition_variable cv;
        bool asked = false, done = false;
        std::thread truncater([&] {
            std::unique_lock lock(m);
            cv.wait(lock, [&] { return asked; });
            EXPECT_EQ(::truncate((s / "src").c_str(), 1 << 20), 0);
            done = true;
            cv.notify_all();
        });
        uringkit::fs::CopyOptions o;
        o.block_size = 256 * 1024;
        o.qd = 2;
        o.direct_read_qd = 2;
        o.direct_read_block_size = 256 * 1024;
        o.source_reads = reads;
        o.force_fallback = fallback;
        o.atomic = true;  // the existing destination is replaced only by a complete copy
        o.on_progress = [&](std::uint64_t) {
            std::unique_lock lock(m);
            if (asked) return;
            asked = true;
            cv.notify_all();
            cv.wait(lock, [&] { return done; });
        };
        const uringkit::fs::CopyResult r =
            uringkit::fs::copy(std::vector<std::string>{s / "src"}, s / "dst", o);
        truncater.join();
        EXPECT_EQ(r.status, uringkit::fs::CopyStatus::failure) << r.message;
        EXPECT_NE(r.message.find(s / "src"), std::string::npos) << r.message;
        EXPECT_TRUE(r.message.find("shrank") != std::string::npos ||
                    r.message.find("changed size") != std::string::npos)
            << r.message;
        EXPECT_EQ(read_file(s / "dst"), "old");
        EXPECT_TRUE(temporaries(s.dir).empty());
    }
}

// A file system without O_DIRECT (injected: every open with O_DIRECT fails
// with EINVAL).  Asked for direct reads, cp says so once and copies through
// the cache; left to choose, it says nothing.
TEST(CpFaults, SourceRefusingODirectIsCopiedThroughTheCache) {
    Scratch s;
    stdfs::create_directory(s / "out");
    write_file(s / "a", random_bytes(300000, 1));
    write_file(s / "b", random_bytes(9 << 20, 2));
    const bool cold = evict_from_page_cache(s / "b");
    const Child asked =
        run({URINGKIT_CLI, "cp", "--source-reads", "direct", s / "a", s / "b", s / "out"}, {},
            [] { refuse_o_direct(); });
    ASSERT_EQ(asked.status, 0) << asked.err;
    EXPECT_EQ(asked.err.find('\n'), asked.err.size() - 1) << "one line: " << asked.err;
    EXPECT_NE(asked.err.find("does not allow O_DIRECT"), std::string::npos) << asked.err;
    EXPECT_EQ(read_file(s / "out/a"), read_file(s / "a"));
    EXPECT_EQ(read_file(s / "out/b"), read_file(s / "b"));

    const Child chosen =
        run({URINGKIT_CLI, "cp", s / "b", s / "out/b2"}, {}, [] { refuse_o_direct(); });
    ASSERT_EQ(chosen.status, 0) << chosen.err;
    if (!cold)
        std::printf("note: %s stayed in the page cache; the automatic choice took the cache path\n",
                    (s / "b").c_str());
    EXPECT_EQ(chosen.err, "");
    EXPECT_EQ(read_file(s / "out/b2"), read_file(s / "b"));
}

// As an ordinary user with Debian's default RLIMIT_MEMLOCK (8 MiB) the
// 16 MiB of O_DIRECT read buffers cannot be registered: large files then use
// plain reads and writes, small files keep their registered buffers, and
// every byte arrives either way.
TEST(CpFaults, MemlockLimitBelowTheBuffersStillCopies) {
    Scratch s;
    stdfs::create_directories(s / "tree/sub");
    for (int i = 0; i < 40; ++i)
        write_file(s / ("tree/sub/f" + std::to_string(i)), random_bytes(1000u * i, i));
    write_file(s / "tree/big", random_bytes((9 << 20) + 1, 7));
    evict_from_page_cache(s /
                          "tree/big");  // so the large file takes the O_DIRECT path where it can
    const Child r = run({URINGKIT_CLI, "cp", "-r", "--summary", s / "tree", s / "copy"}, {}, [] {
        if (const char* why = limit_memlock_without_ipc_lock(8 << 20)) {
            std::fprintf(stderr, "SKIP %s\n", why);
            ::_exit(99);
        }
    });
    if (r.status == 99) GTEST_SKIP() << r.err;
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(s / "copy/big"), read_file(s / "tree/big"));
    for (int i = 0; i < 40; ++i)
        EXPECT_EQ(read_file(s / ("copy/sub/f" + std::to_string(i))),
                  read_file(s / ("tree/sub/f" + std::to_string(i))));
}

// cp -r caps the calling thread's io-wq workers while it runs.  io-wq is
// the thread's, shared by all its rings, so the copy must put the limits
// back: a caller's own ring on the same thread reads the same limits after
// the copy as before it.
TEST(CpFaults, TreeCopyPutsTheThreadsWorkerLimitsBack) {
    Scratch s;
    stdfs::create_directories(s / "tree");
    for (int i = 0; i < 20; ++i)
        write_file(s / ("tree/f" + std::to_string(i)), random_bytes(100u * i, i));
    // GTEST_SKIP only skips from the test's own thread: the worker says why
    // and the test skips after the join.
    std::string skip;
    std::thread t(
        [&] {
            uringkit::Ring ring(8);
            std::array<unsigned, 2> before{};
            try {
                before = ring.set_iowq_max_workers(0, 0);  // 0, 0 only reads them
            } catch (const uringkit::RingError& e) {
                skip = std::string("needs Linux 5.15: ") + e.what();
                return;
            }
            if (before[0] == 0) {
                skip = "this thread has no io-wq yet to read limits from";
                return;
            }
            uringkit::fs::CopyOptions o;
            o.recursive = true;
            o.kernel_workers = 1;
            const auto r = uringkit::fs::copy(std::vector<std::string>{s / "tree"}, s / "copy", o);
            ASSERT_EQ(r.status, uringkit::fs::CopyStatus::ok) << r.message;
            EXPECT_EQ(r.files, 20u);
            const auto after = ring.set_iowq_max_workers(0, 0);
            EXPECT_EQ(after[0], before[0]);
            EXPECT_EQ(after[1], before[1]);
            EXPECT_NE(before[0], 1u)
                << "the default should differ from the copy's limit, or this proves nothing";
        });
    t.join();
    if (!skip.empty()) GTEST_SKIP() << skip;
    for (int i = 0; i < 20; ++i)
        EXPECT_EQ(read_file(s / ("copy/f" + std::to_string(i))),
                  read_file(s / ("tree/f" + std::to_string(i))));
}

TEST(CpFaults, WithoutIoUringSameBytesSaidOnce) {
    Scratch s;
    stdfs::create_directories(s.dir / "t" / "d");
    for (int i = 0; i < 30; ++i)
        write_file(s / ("t/d/f" + std::to_string(i)),
                   random_bytes(static_cast<std::size_t>(i) * 1000, 5));
    write_file(s / "t/big", random_bytes(1 << 20, 6));
    // EPERM, ENOSYS for every io_uring call; and io_uring_setup allowed with
    // io_uring_enter refused (EPERM), as some sandboxes do: the same fallback.
    const std::vector<std::vector<std::string>> without = {
        {NO_URING, "--errno", "1"},
        {NO_URING, "--errno", "38"},
        {NO_URING, "--fail-enter-after", "0", "--errno", "1"}};
    for (std::size_t i = 0; i < without.size(); ++i) {
        const std::string dst = s / ("copy" + std::to_string(i));
        std::vector<std::string> args = without[i];
        args.insert(args.end(), {URINGKIT_CLI, "cp", "-r", s / "t", dst});
        const Child r = run(args);
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(count(r.err, "io_uring unavailable"), 1u) << r.err;
        EXPECT_EQ(count(r.err, "\n"), 1u) << r.err;
        for (const auto& e : stdfs::recursive_directory_iterator(s.dir / "t"))
            if (e.is_regular_file()) {
                EXPECT_EQ(read_file(e.path().string()),
                          read_file(dst + "/" + e.path().lexically_relative(s.dir / "t").string()));
            }
    }
}

}  // namespace
