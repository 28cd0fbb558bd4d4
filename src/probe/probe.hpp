// What io_uring can do on this machine, found out by trying it.
//
// Version numbers lie in both directions: distributions backport io_uring
// fixes, container runtimes forbid it with seccomp on new kernels, sysctls
// switch it off, and whether IOPOLL works depends on the block device, not the
// kernel.  So the probe creates rings and runs real requests (a read through a
// registered buffer, a multishot accept on loopback, ...) and checks the data
// they return.  Each trial ends ok, unsupported (the kernel, file system or
// limits refuse it, with the errno that said so) or failed (it was accepted
// but misbehaved: wrong data, an unexpected error, no completion).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace uringkit::probe {

enum class Outcome { ok, unsupported, failed };
const char* outcome_name(Outcome o) noexcept;  // "ok", "unsupported", "failed"

struct Trial {
    std::string name;     // stable identifier for scripts: "sqpoll", "read_fixed", ...
    std::string summary;  // what was tried, for people
    Outcome outcome = Outcome::failed;
    int err = 0;         // positive errno when it did not succeed and one was returned
    std::string detail;  // what happened: the data checked, or why it did not work
};

// Why io_uring_setup failed, told apart by reading the sysctl and this
// process's seccomp mode rather than by guessing from the errno alone.
enum class SetupBlock {
    none,             // io_uring_setup works
    sysctl_disabled,  // kernel.io_uring_disabled = 2
    sysctl_group,     // kernel.io_uring_disabled = 1 and we are not in kernel.io_uring_group
    seccomp,          // a seccomp filter answers the system call (container, systemd unit)
    not_built,        // ENOSYS without a seccomp filter: CONFIG_IO_URING=n
    memlock,          // ENOMEM: ring memory over RLIMIT_MEMLOCK (kernels before 5.12)
    other,            // any other errno (an LSM policy, ...)
};
const char* setup_block_name(SetupBlock b) noexcept;  // "none", "sysctl_disabled", ...

struct Report {
    // ---- the environment -----------------------------------------------------
    std::string kernel_release;  // uname -r
    std::string machine;         // uname -m
    // /proc/sys/kernel/io_uring_disabled (6.6+); empty where the kernel has no such sysctl.
    std::optional<int> io_uring_disabled;
    // Seccomp mode from /proc/self/status: 0 none, 1 strict, 2 filter.
    std::optional<int> seccomp_mode;
    // RLIMIT_MEMLOCK in bytes; empty means unlimited.
    std::optional<std::uint64_t> memlock_soft;
    std::optional<std::uint64_t> memlock_hard;
    // CAP_IPC_LOCK in the effective set: registered memory is not charged to RLIMIT_MEMLOCK.
    bool cap_ipc_lock = false;
    std::string dir;  // where file trials created their temporary file

    // ---- io_uring_setup ---------------------------------------------------
    bool setup_ok = false;
    int setup_err = 0;  // positive errno when setup failed
    SetupBlock setup_block = SetupBlock::none;
    std::string setup_reason;  // one sentence for people; empty when setup works

    // ---- what the kernel reports (valid when setup_ok) -----------------------
    std::uint32_t features = 0;
    // IORING_REGISTER_PROBE (5.6): empty when the kernel has no opcode probe.
    std::optional<unsigned> last_op;
    std::vector<unsigned> opcodes;  // supported opcodes, ascending
    int opcode_probe_err = 0;       // errno when IORING_REGISTER_PROBE failed

    // ---- the trials (empty when setup failed) --------------------------------
    std::vector<Trial> trials;

    // A ring can be set up and a NOP goes round it.  Setup alone is not
    // enough: a sandbox may allow io_uring_setup and refuse io_uring_enter.
    bool usable() const noexcept;
    const Trial* trial(const std::string& name) const noexcept;
};

struct Options {
    // Directory for the temporary files of the file trials (IOPOLL needs the
    // file system and device the user cares about).  Empty: the current
    // directory when it is writable, else $TMPDIR, else /tmp.
    std::string dir;
    // A block device for the device trials (IOPOLL, NVMe passthrough), only
    // read; empty: those trials are left out.
    std::string dev;
};

// Runs every check.  Never throws for what the kernel refuses (that is a
// result); throws std::system_error only when the host itself is broken
// (uname fails).
Report run(const Options& options = {});

// 0 when a test file can be created and written in `dir`, else the errno that
// refused it.  Checked before the trials, so a directory no file can be made
// in (/proc, a read-only mount) is named as the problem instead of failing
// every file trial.  Nothing is left behind.
int check_dir(const std::string& dir);

// Human-readable table (plain, aligned; fits 100 columns).
std::string format_table(const Report& report);

// The report as JSON for scripts; the schema is in docs/probe.md.
std::string to_json(const Report& report, int indent = 2);

// "EINVAL" for EINVAL; "errno 1234" for values without a name.
std::string errno_name(int err);

}  // namespace uringkit::probe
