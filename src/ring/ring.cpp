#include "uringkit/ring/ring.hpp"

#include "uringkit/sys/error.hpp"
#include "uringkit/sys/syscall.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <utility>

namespace uringkit {

std::uint64_t detail::next_thread_token() noexcept {
    static std::atomic<std::uint64_t> last{0};
    return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

namespace {

template <class T>
T* at(void* base, std::uint32_t offset) noexcept {
    return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

void* map_ring(int fd, std::size_t size, off_t offset) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, offset);
    if (p == MAP_FAILED) {
        const int err = errno;
        throw RingError("mmap of the io_uring rings", err);
    }
    return p;
}

std::uint32_t setup_flags_of(const RingOptions& o) noexcept {
    std::uint32_t f = o.extra_flags;
    if (o.cq_entries) f |= IORING_SETUP_CQSIZE;
    if (o.sqpoll) f |= IORING_SETUP_SQPOLL;
    if (o.sqpoll && o.sq_thread_cpu >= 0) f |= IORING_SETUP_SQ_AFF;
    if (o.iopoll) f |= IORING_SETUP_IOPOLL;
    if (o.single_issuer) f |= IORING_SETUP_SINGLE_ISSUER;
    if (o.defer_taskrun) f |= IORING_SETUP_DEFER_TASKRUN;
    if (o.coop_taskrun) f |= IORING_SETUP_COOP_TASKRUN;
    if (o.taskrun_flag) f |= IORING_SETUP_TASKRUN_FLAG;
    if (o.submit_all) f |= IORING_SETUP_SUBMIT_ALL;
    if (o.clamp) f |= IORING_SETUP_CLAMP;
    if (o.attach_wq >= 0) f |= IORING_SETUP_ATTACH_WQ;
    return f;
}

}  // namespace

RingOptions single_thread_options(unsigned cq_entries) noexcept {
    RingOptions o;
    o.cq_entries = cq_entries;
    o.single_issuer = true;
    o.defer_taskrun = true;
    o.register_ring_fd = true;
    // Deferred completion work waits for our next enter; with this flag the
    // kernel raises IORING_SQ_TASKRUN when there is some, so a reap that does
    // not wait enters only then (and not on every peek, which would defeat
    // the deferral).
    o.taskrun_flag = true;
    return o;
}

Ring Ring::create(unsigned entries, RingOptions options) {
    try {
        return Ring(entries, options);
    } catch (const RingError& e) {
        if (e.code().value() != EINVAL || !(options.single_issuer || options.defer_taskrun)) throw;
    }
    options.single_issuer = options.defer_taskrun = false;
    // TASKRUN_FLAG alone is EINVAL: it needs COOP_TASKRUN or DEFER_TASKRUN.
    if (!options.coop_taskrun) options.taskrun_flag = false;
    return Ring(entries, options);
}

Ring::Ring(unsigned entries, const RingOptions& options) {
    // These change the layout of the SQEs, CQEs or of the rings' memory,
    // which every line of this class assumes (64-byte SQEs, 16-byte CQEs,
    // rings mapped from the ring fd).
    if (options.extra_flags & IORING_SETUP_SQE128)
        throw RingError("RingOptions::extra_flags: IORING_SETUP_SQE128 (128-byte SQEs) is not supported", EINVAL);
    if (options.extra_flags & IORING_SETUP_CQE32)
        throw RingError("RingOptions::extra_flags: IORING_SETUP_CQE32 (32-byte CQEs) is not supported", EINVAL);
    if (options.extra_flags & (IORING_SETUP_NO_MMAP | IORING_SETUP_REGISTERED_FD_ONLY))
        throw RingError("RingOptions::extra_flags: IORING_SETUP_NO_MMAP (rings in memory of ours) is not supported", EINVAL);
    io_uring_params p{};
    p.flags = setup_flags_of(options);
    p.cq_entries = options.cq_entries;
    p.sq_thread_idle = options.sq_thread_idle_ms;
    p.sq_thread_cpu = options.sq_thread_cpu >= 0 ? static_cast<unsigned>(options.sq_thread_cpu) : 0;
    p.wq_fd = options.attach_wq >= 0 ? static_cast<unsigned>(options.attach_wq) : 0;

    const int fd = sys::io_uring_setup(entries, &p);
    if (fd < 0) throw RingError("io_uring_setup", -fd);
    fd_ = enter_fd_ = fd;
    features_ = p.features;
    setup_flags_ = p.flags;

    try {
        sq_.ring_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
        cq_.ring_size = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
        if (features_ & IORING_FEAT_SINGLE_MMAP) {
            sq_.ring_size = cq_.ring_size = std::max(sq_.ring_size, cq_.ring_size);
            sq_.ring_ptr = cq_.ring_ptr = map_ring(fd, sq_.ring_size, IORING_OFF_SQ_RING);
        } else {
            sq_.ring_ptr = map_ring(fd, sq_.ring_size, IORING_OFF_SQ_RING);
            cq_.ring_ptr = map_ring(fd, cq_.ring_size, IORING_OFF_CQ_RING);
        }
        sq_.sqes_size = p.sq_entries * sizeof(io_uring_sqe);
        sq_.sqes = static_cast<io_uring_sqe*>(map_ring(fd, sq_.sqes_size, IORING_OFF_SQES));
    } catch (...) {
        release();
        throw;
    }

    sq_.khead = at<unsigned>(sq_.ring_ptr, p.sq_off.head);
    sq_.ktail = at<unsigned>(sq_.ring_ptr, p.sq_off.tail);
    sq_.kflags = at<unsigned>(sq_.ring_ptr, p.sq_off.flags);
    sq_.kdropped = at<unsigned>(sq_.ring_ptr, p.sq_off.dropped);
    sq_.mask = *at<unsigned>(sq_.ring_ptr, p.sq_off.ring_mask);
    sq_.entries = *at<unsigned>(sq_.ring_ptr, p.sq_off.ring_entries);
    sq_.tail = *sq_.ktail;
    // The SQ index array maps ring slots to SQE slots.  We always use slot i
    // for SQE i, so fill it once here and never touch it on the hot path.
    // With IORING_SETUP_NO_SQARRAY (6.6) there is no array (its offset is 0,
    // the ring header) and the kernel already takes SQE i from slot i.
    if (!(p.flags & IORING_SETUP_NO_SQARRAY)) {
        unsigned* array = at<unsigned>(sq_.ring_ptr, p.sq_off.array);
        for (unsigned i = 0; i < sq_.entries; ++i) array[i] = i;
    }

    cq_.khead = at<unsigned>(cq_.ring_ptr, p.cq_off.head);
    cq_.ktail = at<unsigned>(cq_.ring_ptr, p.cq_off.tail);
    cq_.koverflow = at<unsigned>(cq_.ring_ptr, p.cq_off.overflow);
    cq_.mask = *at<unsigned>(cq_.ring_ptr, p.cq_off.ring_mask);
    cq_.entries = *at<unsigned>(cq_.ring_ptr, p.cq_off.ring_entries);
    cq_.cqes = at<io_uring_cqe>(cq_.ring_ptr, p.cq_off.cqes);

    if (options.register_ring_fd) {
        // The registration belongs to this thread's io_uring context: entering
        // from another thread with the index would fail, which is why it is an
        // option.  Kernels before 5.18 say EINVAL; then we keep the plain fd.
        io_uring_rsrc_update up{};
        up.offset = ~0U;  // let the kernel pick a slot
        up.data = static_cast<__u64>(fd);
        if (sys::io_uring_register(fd, IORING_REGISTER_RING_FDS, &up, 1) == 1) {
            enter_fd_ = static_cast<int>(up.offset);
            enter_flags_ = IORING_ENTER_REGISTERED_RING;
            owner_ = detail::this_thread_token();
        }
    }
}

Ring::Ring(Ring&& other) noexcept { *this = std::move(other); }

Ring& Ring::operator=(Ring&& other) noexcept {
    if (this != &other) {
        release();
        fd_ = std::exchange(other.fd_, -1);
        enter_fd_ = std::exchange(other.enter_fd_, -1);
        enter_flags_ = std::exchange(other.enter_flags_, 0);
        owner_ = std::exchange(other.owner_, 0);
        features_ = other.features_;
        setup_flags_ = other.setup_flags_;
        enter_calls_ = other.enter_calls_;
        sq_ = std::exchange(other.sq_, SubmissionQueue{});
        cq_ = std::exchange(other.cq_, CompletionQueue{});
    }
    return *this;
}

Ring::~Ring() { release(); }

bool Ring::unregister_ring_fd() noexcept {
    if (!(enter_flags_ & IORING_ENTER_REGISTERED_RING)) return true;
    // The index names a slot in the creating thread's table: here, on
    // another thread, it would remove whatever ring this thread keeps there.
    if (detail::this_thread_token() != owner_) return false;
    io_uring_rsrc_update up{};
    up.offset = static_cast<__u32>(enter_fd_);
    sys::io_uring_register(fd_, IORING_UNREGISTER_RING_FDS, &up, 1);
    enter_flags_ = 0;
    enter_fd_ = fd_;
    owner_ = 0;
    return true;
}

void Ring::release() noexcept {
    // A registered ring fd holds a reference to the ring until unregistered
    // or until its thread exits; drop it so close() really frees the ring.
    // On another thread that cannot be done: the ring then lives until the
    // creating thread exits (see unregister_ring_fd()).
    (void)unregister_ring_fd();
    enter_flags_ = 0;
    owner_ = 0;
    if (sq_.sqes) ::munmap(sq_.sqes, sq_.sqes_size);
    if (cq_.ring_ptr && cq_.ring_ptr != sq_.ring_ptr) ::munmap(cq_.ring_ptr, cq_.ring_size);
    if (sq_.ring_ptr) ::munmap(sq_.ring_ptr, sq_.ring_size);
    sq_ = SubmissionQueue{};
    cq_ = CompletionQueue{};
    if (fd_ >= 0) ::close(fd_);
    fd_ = enter_fd_ = -1;
}

// A relative wait timeout carried through IORING_ENTER_EXT_ARG, with the
// absolute deadline it stands for: when a signal interrupts the wait, the next
// enter waits only for what is left, so periodic signals cannot extend (or,
// faster than the timeout, livelock) the wait.
struct Ring::TimedWait {
    std::chrono::steady_clock::time_point deadline;
    __kernel_timespec ts{};
    sys::getevents_arg arg{};  // arm() fills all but min_wait_usec (0 unless batching)

    // Sets the timeout to what is left (zero once the deadline has passed, so
    // a zero timeout still submits and polls once); false when nothing is left.
    bool arm() noexcept {
        auto left = deadline - std::chrono::steady_clock::now();
        const bool some_left = left > std::chrono::nanoseconds::zero();
        if (!some_left) left = std::chrono::nanoseconds::zero();
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        ts.tv_sec = static_cast<long long>(ns / 1'000'000'000);
        ts.tv_nsec = static_cast<long long>(ns % 1'000'000'000);
        arg.sigmask = 0;
        arg.sigmask_sz = _NSIG / 8;
        arg.ts = reinterpret_cast<std::uintptr_t>(&ts);
        return some_left;
    }
};

int Ring::enter(unsigned wait_nr, unsigned flags, TimedWait* timed) noexcept {
    // Publish everything prepared since the last call with one release store:
    // the kernel's acquire load of the tail then sees whole SQEs.
    if (barrier::load_relaxed(sq_.ktail) != sq_.tail) barrier::store_release(sq_.ktail, sq_.tail);
    const unsigned to_submit = sq_.tail - barrier::load_acquire(sq_.khead);

    bool need_enter = (flags & IORING_ENTER_GETEVENTS) != 0;
    const bool sqpoll = setup_flags_ & IORING_SETUP_SQPOLL;
    if (sqpoll) {
        // The poll thread consumes the SQ by itself; enter only to wake it.
        // The full fence orders our tail store before the NEED_WAKEUP load
        // (see barrier.hpp): without it the thread can sleep unseen.
        if (to_submit) {
            barrier::full_fence();
            if (barrier::load_relaxed(sq_.kflags) & IORING_SQ_NEED_WAKEUP) {
                flags |= IORING_ENTER_SQ_WAKEUP;
                need_enter = true;
            }
        }
    } else if (to_submit) {
        need_enter = true;
    }
    if (!(flags & IORING_ENTER_GETEVENTS) && (needs_flush() || polls_on_reap())) {
        flags |= IORING_ENTER_GETEVENTS;
        need_enter = true;
    }
    if (!need_enter) return static_cast<int>(to_submit);
    if (timed) return enter_slow(kNotEntered, to_submit, wait_nr, flags, timed);

    // The usual case, kept short: one enter that submits everything and, when
    // asked to, returns with wait_nr completions ready.
    const int r = enter_raw(to_submit, wait_nr, flags, nullptr, 0);
    if (r >= 0 && (sqpoll || static_cast<unsigned>(r) == to_submit) &&
        (!(flags & IORING_ENTER_GETEVENTS) || cq_ready() >= std::min(wait_nr, cq_.entries)))
        return sqpoll ? static_cast<int>(to_submit) : r;
    return enter_slow(r, to_submit, wait_nr, flags, nullptr);
}

// Everything but the usual case: EINTR, a wait cut short by a signal, a
// partial submission, an error, and timed waits.  `r` is the result of the
// enter already made, or kNotEntered.
int Ring::enter_slow(int r, unsigned to_submit, unsigned wait_nr, unsigned flags,
                     TimedWait* timed) noexcept {
    const bool sqpoll = setup_flags_ & IORING_SETUP_SQPOLL;
    const bool waiting = (flags & IORING_ENTER_GETEVENTS) && wait_nr;
    int submitted = 0;  // by this call, over all its enters
    for (bool first = true;; first = false) {
        if (r == kNotEntered) {
            const void* arg = nullptr;
            std::size_t argsz = 0;
            if (timed) {
                if (!timed->arm() && !first) return submitted ? submitted : -ETIME;
                arg = &timed->arg;
                argsz = sizeof timed->arg;
            }
            r = enter_raw(to_submit, wait_nr, flags, arg, argsz);
        }
        if (r == -EINTR) {
            // A signal before anything was submitted, or during the wait of a
            // call with nothing to submit: go again with what is left.
            if (!sqpoll) to_submit = sq_.tail - barrier::load_acquire(sq_.khead);
            r = kNotEntered;
            continue;
        }
        if (r < 0) return submitted ? submitted : r;
        submitted += sqpoll ? static_cast<int>(to_submit) : r;
        // The kernel skips the wait when it submitted fewer than asked (an
        // SQE failed early): report that as is, waiting could never end.
        if (!sqpoll && static_cast<unsigned>(r) != to_submit) return submitted;
        // The kernel also ends a wait early, with fewer than wait_nr ready,
        // when a Timeout operation fires (its CQE is then ready: return, so a
        // Timeout works as a wake-up) or when a signal arrives (it still
        // reports the submitted count).  Wait again, submitting nothing, only
        // when nothing at all is ready: never return from a wait empty-handed.
        if (!waiting || cq_ready() > 0) return submitted;
        to_submit = 0;
        flags &= ~IORING_ENTER_SQ_WAKEUP;
        r = kNotEntered;
    }
}

int Ring::reserve(unsigned n) noexcept {
    if (n > sq_.entries) return -EINVAL;
    const bool sqpoll = setup_flags_ & IORING_SETUP_SQPOLL;
    while (sq_space_left() < n) {
        const unsigned pending = sq_pending();
        const int r = submit();
        if (r < 0) return r;
        if (!sqpoll) {
            // submit() hands the kernel everything prepared; if it took none,
            // it is out of requests until completions are reaped.
            if (sq_pending() >= pending) return -EAGAIN;
            continue;
        }
        if (sq_space_left() >= n) break;
        // Sleeps until the poll thread has room for at least one SQE; it
        // moves the head past its whole batch at once, so this ends.
        const int w = enter_raw(0, 0, IORING_ENTER_SQ_WAIT, nullptr, 0);
        if (w < 0 && w != -EINTR) return w;
    }
    return 0;
}

int Ring::wait_for_completion(std::chrono::nanoseconds timeout) noexcept {
    if (cq_ready() > 0) return 0;
    if (!(features_ & IORING_FEAT_EXT_ARG)) return -EOPNOTSUPP;
    TimedWait timed;
    timed.deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        timed.arm();
        const int r = enter_raw(0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &timed.arg, sizeof timed.arg);
        if (r >= 0 || cq_ready() > 0) return 0;
        if (r != -EINTR) return r;
        if (std::chrono::steady_clock::now() >= timed.deadline) return -ETIME;
    }
}

int Ring::submit_and_wait_for(unsigned wait_nr, std::chrono::nanoseconds timeout) noexcept {
    if (!(features_ & IORING_FEAT_EXT_ARG)) return -EOPNOTSUPP;
    TimedWait timed;
    timed.deadline = std::chrono::steady_clock::now() + timeout;
    return enter(wait_nr, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &timed);
}

int Ring::submit_and_wait_batch(unsigned wait_nr, std::chrono::microseconds min_wait,
                                std::chrono::nanoseconds timeout) noexcept {
    if (!(features_ & IORING_FEAT_MIN_TIMEOUT) || min_wait.count() <= 0 || min_wait.count() > UINT32_MAX)
        return -EOPNOTSUPP;
    TimedWait timed;
    // Without a timeout past the batch wait the kernel ends every wait at the
    // batch wait, events or not: an idle ring would wake that often.
    timed.deadline = std::chrono::steady_clock::now() + std::max<std::chrono::nanoseconds>(timeout, 2 * min_wait);
    timed.arg.min_wait_usec = static_cast<std::uint32_t>(min_wait.count());
    return enter(wait_nr, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG, &timed);
}

unsigned Ring::copy_completions(std::span<Completion> out) noexcept {
    unsigned n = 0;
    for (bool entered = false;;) {
        unsigned head = *cq_.khead;
        const unsigned tail = barrier::load_acquire(cq_.ktail);
        for (; head != tail && n < out.size(); ++head, ++n) {
            const io_uring_cqe& c = cq_.cqes[head & cq_.mask];
            out[n] = Completion{c.user_data, c.res, c.flags};
        }
        barrier::store_release(cq_.khead, head);
        if (n == out.size() || !peek_needs_enter(n, entered)) return n;
        entered = true;
        if (flush_overflow() < 0 || cq_ready() == 0) return n;
    }
}

int Ring::flush_overflow() noexcept {
    // Overflowed CQEs come back only through io_uring_enter(GETEVENTS); submit
    // nothing here, so a chain being prepared is not cut in two.
    int r;
    do {
        r = enter_raw(0, 0, IORING_ENTER_GETEVENTS, nullptr, 0);
    } while (r == -EINTR);
    return r;
}

int Ring::register_raw(unsigned opcode, const void* arg, unsigned nr_args) const noexcept {
    int r;
    do {
        r = sys::io_uring_register(fd_, opcode, arg, nr_args);
    } while (r == -EINTR);
    return r;
}

namespace {
void check(int r, const char* call) {
    if (r < 0) throw RingError(call, -r);
}
}  // namespace

void Ring::register_files(std::span<const int> fds) {
    check(register_raw(IORING_REGISTER_FILES, fds.data(), static_cast<unsigned>(fds.size())),
          "io_uring_register(REGISTER_FILES)");
}

void Ring::register_files_sparse(unsigned count) {
    io_uring_rsrc_register reg{};
    reg.nr = count;
    reg.flags = IORING_RSRC_REGISTER_SPARSE;
    check(register_raw(IORING_REGISTER_FILES2, &reg, sizeof reg),
          "io_uring_register(REGISTER_FILES2: a sparse file table, Linux 5.19)");
}

int Ring::update_files(unsigned offset, std::span<const int> fds) noexcept {
    io_uring_files_update up{};
    up.offset = offset;
    up.fds = reinterpret_cast<std::uintptr_t>(fds.data());
    return register_raw(IORING_REGISTER_FILES_UPDATE, &up, static_cast<unsigned>(fds.size()));
}

void Ring::unregister_files() {
    check(register_raw(IORING_UNREGISTER_FILES, nullptr, 0), "io_uring_register(UNREGISTER_FILES)");
}

void Ring::register_buffers(std::span<const iovec> buffers) {
    check(register_raw(IORING_REGISTER_BUFFERS, buffers.data(), static_cast<unsigned>(buffers.size())),
          "io_uring_register(REGISTER_BUFFERS)");
}

void Ring::unregister_buffers() {
    check(register_raw(IORING_UNREGISTER_BUFFERS, nullptr, 0),
          "io_uring_register(UNREGISTER_BUFFERS)");
}

std::array<unsigned, 2> Ring::set_iowq_max_workers(unsigned bounded, unsigned unbounded) {
    std::array<unsigned, 2> limits{bounded, unbounded};  // the kernel writes the old values back
    check(register_raw(IORING_REGISTER_IOWQ_MAX_WORKERS, limits.data(), 2),
          "io_uring_register(REGISTER_IOWQ_MAX_WORKERS)");
    return limits;
}

void Ring::register_eventfd(int eventfd) {
    check(register_raw(IORING_REGISTER_EVENTFD, &eventfd, 1), "io_uring_register(REGISTER_EVENTFD)");
}

void Ring::unregister_eventfd() {
    check(register_raw(IORING_UNREGISTER_EVENTFD, nullptr, 0),
          "io_uring_register(UNREGISTER_EVENTFD)");
}

OpcodeSupport Ring::probe_opcodes() const {
    // io_uring_probe ends in a flexible array; room for every 8-bit opcode.
    alignas(io_uring_probe) unsigned char storage[sizeof(io_uring_probe) + 256 * sizeof(io_uring_probe_op)] = {};
    auto* probe = reinterpret_cast<io_uring_probe*>(storage);
    check(register_raw(IORING_REGISTER_PROBE, probe, 256), "io_uring_register(REGISTER_PROBE)");
    OpcodeSupport out;
    out.last_op_ = probe->last_op;
    for (unsigned i = 0; i < probe->ops_len && i < 256; ++i) {
        const io_uring_probe_op& op = probe->ops[i];
        if (op.flags & IO_URING_OP_SUPPORTED) out.bits_[op.op / 64] |= std::uint64_t{1} << (op.op % 64);
    }
    return out;
}

}  // namespace uringkit
