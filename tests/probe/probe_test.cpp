// `uringkit probe` and the probe layer: the report must agree with what the
// kernel says through other paths, and faults injected into a real process
// (a seccomp filter, a tiny RLIMIT_MEMLOCK without CAP_IPC_LOCK, a tmpfs with
// no polling) must come out as the named reason, not as a pass.
#include "probe/probe.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/uapi.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
using uringkit::probe::Outcome;

struct Child {
    int status = -1;  // exit status, or 128+signal
    std::string out;
    std::string err;
};

std::string slurp(int fd) {
    std::string s;
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        s.append(buf, static_cast<std::size_t>(n));
    }
    return s;
}

// Runs argv in a child; `before_exec` runs in the child first (fault injection).
Child run(std::vector<std::string> argv, const std::function<void()>& before_exec = {}) {
    char out_tmpl[] = "/tmp/uringkit-probe-out-XXXXXX";
    char err_tmpl[] = "/tmp/uringkit-probe-err-XXXXXX";
    const int out = ::mkstemp(out_tmpl), err = ::mkstemp(err_tmpl);
    ::unlink(out_tmpl);
    ::unlink(err_tmpl);
    Child r;
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out, 1);
        ::dup2(err, 2);
        if (before_exec) before_exec();
        std::vector<char*> args;
        for (auto& a : argv) args.push_back(a.data());
        args.push_back(nullptr);
        ::execv(args[0], args.data());
        std::_Exit(127);
    }
    int ws = 0;
    ::waitpid(pid, &ws, 0);
    r.status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
    ::lseek(out, 0, SEEK_SET);
    ::lseek(err, 0, SEEK_SET);
    r.out = slurp(out);
    r.err = slurp(err);
    ::close(out);
    ::close(err);
    return r;
}

json parse(const Child& r) {
    try {
        return json::parse(r.out);
    } catch (const json::exception& e) {
        ADD_FAILURE() << "probe --json printed invalid JSON: " << e.what() << "\n"
                      << r.out << r.err;
        return json::object();
    }
}

// A private directory for the file trials, removed with what is left in it.
class TempDir {
public:
    TempDir() {
        char tmpl[] = "/tmp/uringkit-probe-test-XXXXXX";
        path_ = ::mkdtemp(tmpl);
    }
    ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
    const std::string& path() const { return path_; }
    // Entries other than . and ..
    int entries() const {
        const Child r = run({"/bin/sh", "-c", "ls -A '" + path_ + "' | wc -l"});
        return std::atoi(r.out.c_str());
    }

private:
    std::string path_;
};

const std::set<std::string> kTrialNames = {"nop",
                                           "sqpoll",
                                           "iopoll",
                                           "defer_taskrun",
                                           "registered_buffers",
                                           "read_fixed",
                                           "multishot_accept",
                                           "provided_buffer_ring",
                                           "multishot_recv",
                                           "registered_ring_fd",
                                           "direct_openat",
                                           "big_ring",
                                           "hybrid_iopoll"};

const json* trial(const json& j, const std::string& name) {
    for (const json& t : j.at("trials"))
        if (t.at("name") == name) return &t;
    return nullptr;
}

TEST(ProbeCli, JsonAgreesWithTheKernel) {
    TempDir dir;
    const Child r = run({URINGKIT_CLI, "probe", "--json", "--dir", dir.path()});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const json j = parse(r);
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j.at("schema"), 2);
    EXPECT_TRUE(j.at("usable").get<bool>());
    EXPECT_TRUE(j.at("setup").at("ok").get<bool>());
    EXPECT_EQ(j.at("dir"), dir.path());

    utsname u{};
    ASSERT_EQ(::uname(&u), 0);
    EXPECT_EQ(j.at("kernel").at("release"), u.release);

    // Features and opcodes: the same answers this process gets from its own ring.
    uringkit::Ring ring(4);
    EXPECT_EQ(j.at("features").at("mask").get<std::uint32_t>(), ring.features());
    std::vector<std::string> names;
    for (unsigned bit = 0; bit < 32; ++bit) {
        if (!((ring.features() >> bit) & 1)) continue;
        if (const char* n = uringkit::sys::feature_name(bit)) names.emplace_back(n);
    }
    EXPECT_EQ(j.at("features").at("names").get<std::vector<std::string>>(), names);

    const uringkit::OpcodeSupport ops = ring.probe_opcodes();
    EXPECT_EQ(j.at("opcodes").at("last_op").get<unsigned>(), ops.last_op());
    std::vector<unsigned> expected, reported;
    for (unsigned op = 0; op < 256; ++op)
        if (ops.supported(op)) expected.push_back(op);
    for (const json& o : j.at("opcodes").at("supported")) {
        reported.push_back(o.at("code").get<unsigned>());
        if (const char* n = uringkit::sys::opcode_name(o.at("code").get<unsigned>())) {
            EXPECT_EQ(o.at("name"), n);
        }
    }
    EXPECT_EQ(reported, expected);
    for (const json& o : j.at("opcodes").at("unsupported"))
        EXPECT_FALSE(ops.supported(o.at("code").get<unsigned>())) << o;

    // Every trial is reported, with a known result; none fails on a working kernel.
    std::set<std::string> seen;
    for (const json& t : j.at("trials")) {
        seen.insert(t.at("name").get<std::string>());
        const std::string result = t.at("result");
        EXPECT_TRUE(result == "ok" || result == "unsupported") << t.dump();
        EXPECT_FALSE(t.at("detail").get<std::string>().empty()) << t.dump();
        if (result == "ok") {
            EXPECT_TRUE(t.at("errno").is_null()) << t.dump();
        }
    }
    EXPECT_EQ(seen, kTrialNames);
    // The basics every kernel with a working io_uring_setup has.
    EXPECT_EQ(trial(j, "nop")->at("result"), "ok");
    // The trials clean up after themselves.
    EXPECT_EQ(dir.entries(), 0);
}

TEST(ProbeCli, TableNamesEveryTrial) {
    TempDir dir;
    const Child r = run({URINGKIT_CLI, "probe", "--dir", dir.path()});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    for (const std::string& name : kTrialNames)
        EXPECT_NE(r.out.find("\n" + name + " "), std::string::npos) << name;
    EXPECT_NE(r.out.find("io_uring is usable here"), std::string::npos) << r.out;
    for (std::size_t start = 0; start < r.out.size();) {
        const std::size_t end = r.out.find('\n', start);
        EXPECT_LE(end - start, 100U) << "line too wide: " << r.out.substr(start, end - start);
        start = end + 1;
    }
}

TEST(ProbeCli, SeccompEpermExitsThreeAndSaysSo) {
    const Child r = run({NO_URING, URINGKIT_CLI, "probe"});
    EXPECT_EQ(r.status, 3) << r.out << r.err;
    EXPECT_NE(r.out.find("EPERM"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("seccomp filter"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("NOT usable"), std::string::npos) << r.out;

    const Child j = run({NO_URING, URINGKIT_CLI, "probe", "--json"});
    EXPECT_EQ(j.status, 3);
    const json doc = parse(j);
    EXPECT_FALSE(doc.at("usable").get<bool>());
    EXPECT_EQ(doc.at("setup").at("errno_name"), "EPERM");
    EXPECT_EQ(doc.at("setup").at("block"), "seccomp");
    EXPECT_EQ(doc.at("seccomp"), 2);
    EXPECT_TRUE(doc.at("trials").empty());
}

// A sandbox that allows io_uring_setup and refuses io_uring_enter (EPERM from
// the first call, as a seccomp profile can): a ring can be made, nothing
// goes round it.  That is not usable (status 3), whatever setup says.
TEST(ProbeCli, SetupWithoutEnterIsNotUsable) {
    const std::vector<std::string> refused = {NO_URING, "--fail-enter-after", "0",    "--errno",
                                              "1",      URINGKIT_CLI,         "probe"};
    const Child r = run(refused);
    EXPECT_EQ(r.status, 3) << r.out << r.err;
    const std::size_t setup = r.out.find("\nio_uring_setup ");
    ASSERT_NE(setup, std::string::npos) << r.out;
    EXPECT_NE(r.out.substr(setup, r.out.find('\n', setup + 1) - setup).find("works"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("NOT usable"), std::string::npos) << r.out;

    std::vector<std::string> as_json = refused;
    as_json.push_back("--json");
    const Child j = run(as_json);
    EXPECT_EQ(j.status, 3);
    const json doc = parse(j);
    EXPECT_FALSE(doc.at("usable").get<bool>());
    EXPECT_TRUE(doc.at("setup").at("ok").get<bool>());
    for (const json& t : doc.at("trials")) {
        if (t.at("name") != "nop") continue;
        EXPECT_NE(t.at("result"), "ok") << t.dump();
    }
}

TEST(ProbeCli, EnosysIsNamed) {
    const Child r = run({NO_URING, "--errno", "38", URINGKIT_CLI, "probe"});
    EXPECT_EQ(r.status, 3) << r.out << r.err;
    EXPECT_NE(r.out.find("ENOSYS"), std::string::npos) << r.out;

    const Child j = run({NO_URING, "--errno", "38", URINGKIT_CLI, "probe", "--json"});
    EXPECT_EQ(j.status, 3);
    const json doc = parse(j);
    EXPECT_EQ(doc.at("setup").at("errno"), 38);
    EXPECT_EQ(doc.at("setup").at("errno_name"), "ENOSYS");
}

// Registered buffers are pinned and charged to RLIMIT_MEMLOCK unless the
// process has CAP_IPC_LOCK: take the capability away (bounding set, so exec
// cannot give it back) and allow 32 KiB, which the probe's 64 KiB buffer
// exceeds on its own.  (With 64 KiB the buffer fit exactly on 6.1, which
// does not charge the rings themselves; 6.18 does.)
TEST(ProbeCli, TinyMemlockMakesRegisteredBuffersUnsupported) {
    TempDir dir;
    const Child r = run({URINGKIT_CLI, "probe", "--json", "--dir", dir.path()}, [] {
        ::prctl(PR_CAPBSET_DROP, 14 /* CAP_IPC_LOCK */, 0, 0,
                0);  // fails harmlessly when unprivileged
        const rlimit rl{32 * 1024, 32 * 1024};
        if (::setrlimit(RLIMIT_MEMLOCK, &rl) != 0) std::_Exit(126);
    });
    ASSERT_NE(r.status, 126) << "setrlimit failed";
    const json j = parse(r);
    if (j.value("memlock", json::object()).value("cap_ipc_lock", false))
        GTEST_SKIP() << "could not drop CAP_IPC_LOCK, so RLIMIT_MEMLOCK does not apply";
    if (!j.value("usable", false))
        GTEST_SKIP() << "this kernel charges the ring itself over 32 KiB: " << j.at("setup").dump();
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(j.at("memlock").at("soft_bytes"), 32 * 1024);
    const json* reg = trial(j, "registered_buffers");
    ASSERT_NE(reg, nullptr);
    EXPECT_EQ(reg->at("result"), "unsupported") << reg->dump();
    EXPECT_EQ(reg->at("errno_name"), "ENOMEM") << reg->dump();
    EXPECT_NE(reg->at("detail").get<std::string>().find("RLIMIT_MEMLOCK 32 KiB"), std::string::npos)
        << reg->dump();
    const json* fixed = trial(j, "read_fixed");
    ASSERT_NE(fixed, nullptr);
    EXPECT_EQ(fixed->at("result"), "unsupported") << fixed->dump();
}

TEST(ProbeCli, BadDirIsRefusedWithStatusFour) {
    const Child r = run({URINGKIT_CLI, "probe", "--dir", "/nonexistent/uringkit"});
    EXPECT_EQ(r.status, 4);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("--dir /nonexistent/uringkit: not a directory"), std::string::npos)
        << r.err;

    const Child f = run({URINGKIT_CLI, "probe", "--dir", "/etc/hostname"});
    EXPECT_EQ(f.status, 4);
    EXPECT_NE(f.err.find("not a directory"), std::string::npos) << f.err;
}

TEST(ProbeCli, DevThatIsNoBlockDeviceIsStatusFour) {
    for (const char* dev : {"/dev/null", "/nonexistent/nvme0n1"}) {
        const Child r = run({URINGKIT_CLI, "probe", "--dev", dev});
        EXPECT_EQ(r.status, 4) << dev;
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_NE(r.err.find(std::string("--dev ") + dev + ": "), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
}

// On an NVMe namespace with poll queues (make test-kernels' emulated drive,
// named by URINGKIT_TEST_NVME) the device trials read it by polling and by
// passthrough, each checked against an O_DIRECT pread.
TEST(ProbeCli, DevTrialsReadTheNvmeDrive) {
    const char* dev = std::getenv("URINGKIT_TEST_NVME");
    if (!dev || !*dev)
        GTEST_SKIP() << "URINGKIT_TEST_NVME names no NVMe namespace (make test-kernels sets it)";
    const Child r = run({URINGKIT_CLI, "probe", "--json", "--dev", dev});
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = parse(r);
    for (const char* name : {"big_ring", "iopoll_device", "nvme_passthrough"}) {
        const json* t = trial(j, name);
        ASSERT_NE(t, nullptr) << name;
        EXPECT_EQ(t->at("result"), "ok") << t->dump();
    }
}

// A directory where no file can be created fails before any trial: /proc
// (root passes access(W_OK) there), and a directory the user may not write.
TEST(ProbeCli, DirWhereNoFileCanBeCreatedIsStatusFour) {
    const Child r = run({URINGKIT_CLI, "probe", "--json", "--dir", "/proc"});
    EXPECT_EQ(r.status, 4);
    EXPECT_TRUE(r.out.empty()) << "no trial ran: " << r.out;
    EXPECT_NE(r.err.find("cannot create a test file in /proc: "), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

    if (::geteuid() != 0) GTEST_SKIP() << "the unprivileged case needs root to drop to nobody";
    TempDir dir;
    ASSERT_EQ(::chmod(dir.path().c_str(), 0755), 0);
    const Child n = run({URINGKIT_CLI, "probe", "--dir", dir.path()}, [] {
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) std::_Exit(126);
    });
    EXPECT_EQ(n.status, 4) << n.err;
    EXPECT_NE(n.err.find("cannot create a test file in " + dir.path() + ": Permission denied"),
              std::string::npos)
        << n.err;
    EXPECT_TRUE(n.out.empty()) << n.out;
    EXPECT_EQ(dir.entries(), 0);
}

TEST(ProbeCli, HelpDocumentsTheExitStatuses) {
    const Child r = run({URINGKIT_CLI, "probe", "--help"});
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("3     io_uring cannot be set up here"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("--json"), std::string::npos);
    EXPECT_NE(r.out.find("--dir"), std::string::npos);
}

// ---- the library layer directly -----------------------------------------------

TEST(ProbeLibrary, TrialsCheckDataAndReportConsistently) {
    TempDir dir;
    uringkit::probe::Options o;
    o.dir = dir.path();
    const uringkit::probe::Report r = uringkit::probe::run(o);
    ASSERT_TRUE(r.usable()) << r.setup_reason;
    std::set<std::string> names;
    for (const auto& t : r.trials) {
        names.insert(t.name);
        EXPECT_NE(t.outcome, Outcome::failed) << t.name << ": " << t.detail;
        if (t.outcome == Outcome::ok) {
            EXPECT_EQ(t.err, 0) << t.name;
        }
    }
    EXPECT_EQ(names, kTrialNames);
    // read_fixed depends on registered buffers, multishot recv on the buffer ring.
    if (r.trial("registered_buffers")->outcome != Outcome::ok) {
        EXPECT_NE(r.trial("read_fixed")->outcome, Outcome::ok);
    }
    if (r.trial("provided_buffer_ring")->outcome != Outcome::ok) {
        EXPECT_NE(r.trial("multishot_recv")->outcome, Outcome::ok);
    }

    const json j = json::parse(uringkit::probe::to_json(r));
    ASSERT_EQ(j.at("trials").size(), r.trials.size());
    for (std::size_t i = 0; i < r.trials.size(); ++i) {
        EXPECT_EQ(j.at("trials")[i].at("name"), r.trials[i].name);
        EXPECT_EQ(j.at("trials")[i].at("result"),
                  uringkit::probe::outcome_name(r.trials[i].outcome));
    }
    const std::string table = uringkit::probe::format_table(r);
    for (const auto& t : r.trials) EXPECT_NE(table.find(t.name), std::string::npos);
    EXPECT_EQ(dir.entries(), 0);
}

// tmpfs has no block device, so polled I/O cannot work there: the trial must
// say unsupported with the errno, never ok and never failed.
TEST(ProbeLibrary, IopollOnTmpfsIsUnsupportedWithTheErrno) {
    struct statfs s {};
    if (::statfs("/dev/shm", &s) != 0 || static_cast<unsigned long>(s.f_type) != 0x01021994UL ||
        ::access("/dev/shm", W_OK) != 0)
        GTEST_SKIP() << "no writable tmpfs at /dev/shm";
    uringkit::probe::Options o;
    o.dir = "/dev/shm";
    const uringkit::probe::Report r = uringkit::probe::run(o);
    ASSERT_TRUE(r.usable());
    const auto* t = r.trial("iopoll");
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->outcome, Outcome::unsupported) << t->detail;
    EXPECT_TRUE(t->err == EOPNOTSUPP || t->err == EINVAL) << t->err << ": " << t->detail;
    EXPECT_NE(t->detail.find("tmpfs"), std::string::npos) << t->detail;
}

TEST(ProbeLibrary, ErrnoNames) {
    EXPECT_EQ(uringkit::probe::errno_name(EPERM), "EPERM");
    EXPECT_EQ(uringkit::probe::errno_name(-ENOSYS), "ENOSYS");
    EXPECT_EQ(uringkit::probe::errno_name(4000), "errno 4000");
}

}  // namespace
