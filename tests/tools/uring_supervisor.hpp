// A seccomp user-notification supervisor for the io_uring system calls.
//
// A plain seccomp filter sees only a system call's registers.  What an older
// kernel refuses often lives in memory the registers point to: the setup
// flags inside io_uring_params, the opcode and flags of each SQE.  Here the
// filter hands io_uring_setup, io_uring_enter and io_uring_register to a
// supervisor (SECCOMP_RET_USER_NOTIF, Linux 5.0; CONTINUE 5.5), which reads
// the caller's memory with process_vm_readv and answers:
//   - io_uring_setup with a flag in `refuse_setup_flags`: EINVAL, what a
//     kernel older than the flag says (its io_uring_setup rejects every bit
//     it does not know);
//   - io_uring_enter submitting a RECV/RECVMSG with IORING_RECV_MULTISHOT
//     (with `refuse_multishot_recv`): the SQE gets a recv flag no kernel
//     knows before the kernel reads it, so the kernel itself completes it
//     with -EINVAL, as 5.19 does for the multishot bit it lacks;
//   - io_uring_enter from its (fail_enter_after + 1)th call on, or once
//     trip() was called: `enter_errno`, and io_uring_register fails the same
//     way from then on (a ring that fails for good);
//   - anything else: SECCOMP_USER_NOTIF_FLAG_CONTINUE, the real call.
//
// The filter binds the thread that installs it and the threads (and
// children) it creates afterwards.  The supervisor is a thread of the same
// process (UringSupervisor) or the parent of an exec'd command
// (serve_uring_notifications, used by no_uring).
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

struct UringFaults {
    unsigned refuse_setup_flags = 0;
    bool refuse_multishot_recv = false;
    long fail_enter_after = -1;  // < 0: never by count
    int enter_errno = EIO;
};

// What the supervisor did, for tests to check that the fault was really met.
struct UringFaultCounts {
    std::atomic<unsigned long> enter_calls{0}, setups_refused{0}, recvs_refused{0}, calls_failed{0};
    std::atomic<bool> tripped{false};
};

namespace uring_supervisor_detail {

// A recv flag no kernel defines: its prep rejects unknown flags with -EINVAL.
constexpr std::uint16_t kUnknownRecvFlag = 1u << 15;

inline bool read_remote(pid_t pid, std::uint64_t addr, void* out, std::size_t n) {
    iovec local{out, n}, remote{reinterpret_cast<void*>(addr), n};
    return ::process_vm_readv(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}
inline bool write_remote(pid_t pid, std::uint64_t addr, const void* in, std::size_t n) {
    iovec local{const_cast<void*>(in), n}, remote{reinterpret_cast<void*>(addr), n};
    return ::process_vm_writev(pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

// Every SQE array the task has mapped (the io_uring mapping at offset
// IORING_OFF_SQES): multishot recvs in any slot get the unknown flag.
// Slots already consumed are rewritten whole by their next prepare, so
// marking them changes nothing.
inline unsigned refuse_multishot_recvs(pid_t pid) {
    unsigned refused = 0;
    FILE* maps = std::fopen(("/proc/" + std::to_string(pid) + "/maps").c_str(), "re");
    if (!maps) return 0;
    char line[512];
    while (std::fgets(line, sizeof line, maps)) {
        unsigned long long begin = 0, end = 0, offset = 0;
        char perms[8] = {};
        if (std::sscanf(line, "%llx-%llx %7s %llx", &begin, &end, perms, &offset) != 4) continue;
        if (offset != IORING_OFF_SQES || !std::strstr(line, "io_uring")) continue;
        std::vector<io_uring_sqe> sqes((end - begin) / sizeof(io_uring_sqe));
        if (!read_remote(pid, begin, sqes.data(), sqes.size() * sizeof(io_uring_sqe))) continue;
        for (std::size_t i = 0; i < sqes.size(); ++i) {
            const io_uring_sqe& s = sqes[i];
            if ((s.opcode != IORING_OP_RECV && s.opcode != IORING_OP_RECVMSG) ||
                !(s.ioprio & IORING_RECV_MULTISHOT))
                continue;
            const std::uint16_t marked = s.ioprio | kUnknownRecvFlag;
            if (write_remote(pid, begin + i * sizeof(io_uring_sqe) + offsetof(io_uring_sqe, ioprio),
                             &marked, sizeof marked))
                ++refused;
        }
    }
    std::fclose(maps);
    return refused;
}

// The answer to one notification; true when the call is failed with `err`.
inline bool decide(const seccomp_notif& req, const UringFaults& f, UringFaultCounts& counts,
                   int& err) {
    const int nr = req.data.nr;
    if (nr == __NR_io_uring_setup && f.refuse_setup_flags) {
        io_uring_params p{};
        if (read_remote(req.pid, req.data.args[1], &p, sizeof p) &&
            (p.flags & f.refuse_setup_flags)) {
            ++counts.setups_refused;
            err = EINVAL;
            return true;
        }
        return false;
    }
    if (nr == __NR_io_uring_enter) {
        const unsigned long n = ++counts.enter_calls;
        if (f.fail_enter_after >= 0 && n > static_cast<unsigned long>(f.fail_enter_after))
            counts.tripped = true;
        if (counts.tripped) {
            ++counts.calls_failed;
            err = f.enter_errno;
            return true;
        }
        if (f.refuse_multishot_recv && static_cast<unsigned>(req.data.args[1]) != 0)
            counts.recvs_refused += refuse_multishot_recvs(req.pid);
        return false;
    }
    if (nr == __NR_io_uring_register && counts.tripped) {
        ++counts.calls_failed;
        err = f.enter_errno;
        return true;
    }
    return false;
}

}  // namespace uring_supervisor_detail

// Installs the filter on the calling thread; the listener fd, or -1 with errno.
inline int install_uring_notify_filter() {
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_enter, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_register, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
    };
    sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return static_cast<int>(
        ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
}

// Answers notifications on `listener` until every task it supervises is
// gone or `stop_fd` (if >= 0) becomes readable.
inline void serve_uring_notifications(int listener, const UringFaults& f, UringFaultCounts& counts,
                                      int stop_fd = -1) {
    seccomp_notif_sizes sizes{};
    if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) return;
    std::vector<unsigned char> req_buf(
        std::max<std::size_t>(sizes.seccomp_notif, sizeof(seccomp_notif)));
    std::vector<unsigned char> resp_buf(
        std::max<std::size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp)));
    for (;;) {
        pollfd p[2] = {{listener, POLLIN, 0}, {stop_fd, POLLIN, 0}};
        if (::poll(p, stop_fd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (stop_fd >= 0 && p[1].revents) return;
        if (!(p[0].revents & POLLIN)) {
            if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL)) return;  // no task left
            continue;
        }
        std::memset(req_buf.data(), 0, req_buf.size());  // the kernel wants it zeroed
        auto* req = reinterpret_cast<seccomp_notif*>(req_buf.data());
        if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
            if (errno == EINTR || errno == ENOENT) continue;  // the task went away meanwhile
            return;
        }
        int err = 0;
        const bool fail = uring_supervisor_detail::decide(*req, f, counts, err);
        std::memset(resp_buf.data(), 0, resp_buf.size());
        auto* resp = reinterpret_cast<seccomp_notif_resp*>(resp_buf.data());
        resp->id = req->id;
        if (fail)
            resp->error = -err;
        else
            resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
        (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);  // ENOENT: the task is gone
    }
}

// The supervisor as a thread of this process.  Construct it on the thread
// to supervise: the filter binds that thread and what it creates later.
class UringSupervisor {
public:
    explicit UringSupervisor(const UringFaults& f) : faults_(f) {
        listener_ = install_uring_notify_filter();
        if (listener_ < 0) {
            error_ = std::string("seccomp user notification: ") + std::strerror(errno);
            return;
        }
        stop_ = ::eventfd(0, EFD_CLOEXEC);
        // The filter binds this new thread too; it makes no io_uring call.
        thread_ =
            std::thread([this] { serve_uring_notifications(listener_, faults_, counts_, stop_); });
    }
    ~UringSupervisor() {
        if (thread_.joinable()) {
            const std::uint64_t one = 1;
            (void)!::write(stop_, &one, sizeof one);
            thread_.join();
        }
        // Calls notified after this fail with ENOSYS: supervise only threads
        // that are done with io_uring by now.
        if (listener_ >= 0) ::close(listener_);
        if (stop_ >= 0) ::close(stop_);
    }
    UringSupervisor(const UringSupervisor&) = delete;
    UringSupervisor& operator=(const UringSupervisor&) = delete;

    // Empty when installed; else why not (for GTEST_SKIP).
    const std::string& error() const noexcept { return error_; }
    // From now on io_uring_enter and io_uring_register fail with enter_errno.
    void trip() noexcept { counts_.tripped = true; }
    const UringFaultCounts& counts() const noexcept { return counts_; }

private:
    UringFaults faults_;
    UringFaultCounts counts_;
    int listener_ = -1, stop_ = -1;
    std::string error_;
    std::thread thread_;
};
