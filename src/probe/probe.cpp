#include "probe/probe.hpp"

#include "trials.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string_view>
#include <system_error>
#include <vector>

namespace uringkit::probe {
namespace {

std::optional<long long> read_number(const char* path) {
    std::ifstream in(path);
    long long v = 0;
    if (in >> v) return v;
    return std::nullopt;
}

// A "Key:\tvalue" line of /proc/self/status.
std::optional<std::string> status_field(std::string_view key) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 &&
            line[key.size()] == ':') {
            const auto start = line.find_first_not_of(" \t", key.size() + 1);
            return start == std::string::npos ? std::string() : line.substr(start);
        }
    }
    return std::nullopt;
}

bool has_capability(unsigned cap) {
    const auto eff = status_field("CapEff");
    if (!eff) return false;
    const unsigned long long bits = std::strtoull(eff->c_str(), nullptr, 16);
    return (bits >> cap) & 1;
}

// kernel.io_uring_disabled = 1 lets members of kernel.io_uring_group create rings.
bool in_io_uring_group() {
    const auto gid = read_number("/proc/sys/kernel/io_uring_group");
    if (!gid || *gid < 0) return false;
    if (static_cast<long long>(::getegid()) == *gid) return true;
    const int n = ::getgroups(0, nullptr);
    if (n <= 0) return false;
    std::vector<gid_t> groups(static_cast<std::size_t>(n));
    const int m = ::getgroups(n, groups.data());
    return std::any_of(groups.begin(), groups.begin() + std::max(m, 0),
                       [&](gid_t g) { return static_cast<long long>(g) == *gid; });
}

constexpr unsigned kCapIpcLock = 14;  // <linux/capability.h>
constexpr unsigned kCapSysAdmin = 21;

// Tells apart the reasons io_uring_setup fails, from what the process can see.
void diagnose(Report& r) {
    const int err = r.setup_err;
    const bool filtered = r.seccomp_mode.value_or(0) != 0;
    const int disabled = r.io_uring_disabled.value_or(0);
    switch (err) {
        case EPERM:
            if (disabled == 2) {
                r.setup_block = SetupBlock::sysctl_disabled;
                r.setup_reason =
                    "kernel.io_uring_disabled is 2: io_uring is switched off for every "
                    "process (sysctl -w kernel.io_uring_disabled=0 turns it on)";
            } else if (disabled == 1 && !in_io_uring_group() && !has_capability(kCapSysAdmin)) {
                r.setup_block = SetupBlock::sysctl_group;
                r.setup_reason =
                    "kernel.io_uring_disabled is 1: only members of kernel.io_uring_group "
                    "or CAP_SYS_ADMIN may create rings";
            } else if (filtered) {
                r.setup_block = SetupBlock::seccomp;
                r.setup_reason =
                    "a seccomp filter on this process forbids io_uring (a container "
                    "runtime's default profile or a systemd SystemCallFilter); allow "
                    "io_uring_setup/enter/register in that profile";
            } else {
                r.setup_block = SetupBlock::other;
                r.setup_reason =
                    "EPERM with the sysctl allowing io_uring and no seccomp filter: a "
                    "security module (SELinux, AppArmor) policy likely denies it";
            }
            break;
        case ENOSYS:
            if (filtered) {
                r.setup_block = SetupBlock::seccomp;
                r.setup_reason =
                    "ENOSYS under a seccomp filter: the filter answers io_uring_setup as "
                    "if it did not exist (a container or sandbox profile)";
            } else {
                r.setup_block = SetupBlock::not_built;
                r.setup_reason =
                    "ENOSYS: this kernel was built without io_uring (CONFIG_IO_URING=n)";
            }
            break;
        case ENOMEM:
            r.setup_block = SetupBlock::memlock;
            // Without CAP_IPC_LOCK the ring memory is charged to RLIMIT_MEMLOCK
            // (seen on 6.18 with a limit of 0; older kernels did the same).
            r.setup_reason = r.cap_ipc_lock
                                 ? "ENOMEM: the kernel could not allocate the rings"
                                 : "ENOMEM: without CAP_IPC_LOCK the rings' memory is charged to "
                                   "RLIMIT_MEMLOCK; raise it with `ulimit -l`";
            break;
        default:
            r.setup_block = SetupBlock::other;
            r.setup_reason = explain("io_uring_setup", err);
            break;
    }
}

std::string default_dir() {
    if (::access(".", W_OK) == 0) {
        char cwd[4096];
        if (::getcwd(cwd, sizeof cwd)) return cwd;
    }
    if (const char* t = std::getenv("TMPDIR"); t && *t) return t;
    return "/tmp";
}

}  // namespace

const char* outcome_name(Outcome o) noexcept {
    switch (o) {
        case Outcome::ok:
            return "ok";
        case Outcome::unsupported:
            return "unsupported";
        case Outcome::failed:
            return "failed";
    }
    return "failed";
}

const char* setup_block_name(SetupBlock b) noexcept {
    switch (b) {
        case SetupBlock::none:
            return "none";
        case SetupBlock::sysctl_disabled:
            return "sysctl_disabled";
        case SetupBlock::sysctl_group:
            return "sysctl_group";
        case SetupBlock::seccomp:
            return "seccomp";
        case SetupBlock::not_built:
            return "not_built";
        case SetupBlock::memlock:
            return "memlock";
        case SetupBlock::other:
            return "other";
    }
    return "other";
}

const Trial* Report::trial(const std::string& name) const noexcept {
    for (const Trial& t : trials)
        if (t.name == name) return &t;
    return nullptr;
}

bool Report::usable() const noexcept {
    const Trial* nop = trial("nop");
    return setup_ok && nop && nop->outcome == Outcome::ok;
}

std::string errno_name(int err) {
    if (err < 0) err = -err;
    if (const char* n = ::strerrorname_np(err)) return n;
    return "errno " + std::to_string(err);
}

Report run(const Options& options) {
    Report r;
    utsname u{};
    if (::uname(&u) != 0) throw std::system_error(errno, std::system_category(), "uname");
    r.kernel_release = u.release;
    r.machine = u.machine;
    // The sysctl appeared in 6.6; older kernels have no file (and no such switch).
    if (const auto v = read_number("/proc/sys/kernel/io_uring_disabled"))
        r.io_uring_disabled = static_cast<int>(*v);
    if (const auto s = status_field("Seccomp")) r.seccomp_mode = std::atoi(s->c_str());
    rlimit rl{};
    if (::getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
        if (rl.rlim_cur != RLIM_INFINITY) r.memlock_soft = rl.rlim_cur;
        if (rl.rlim_max != RLIM_INFINITY) r.memlock_hard = rl.rlim_max;
    }
    r.cap_ipc_lock = has_capability(kCapIpcLock);
    r.dir = options.dir.empty() ? default_dir() : options.dir;

    try {
        Ring ring(8);
        r.setup_ok = true;
        r.features = ring.features();
        try {
            const OpcodeSupport ops = ring.probe_opcodes();
            r.last_op = ops.last_op();
            for (unsigned op = 0; op < 256; ++op)
                if (ops.supported(op)) r.opcodes.push_back(op);
        } catch (const RingError& e) {
            r.opcode_probe_err = e.code().value();  // EINVAL before 5.6: no opcode probe
        }
    } catch (const RingError& e) {
        r.setup_ok = false;
        r.setup_err = e.code().value();
        if (std::string_view(e.call()) == "io_uring_setup") {
            diagnose(r);
        } else {
            r.setup_block = SetupBlock::other;
            r.setup_reason = e.what();
        }
        return r;
    }
    detail::run_trials(r.dir, options.dev, r.trials);
    return r;
}

}  // namespace uringkit::probe
