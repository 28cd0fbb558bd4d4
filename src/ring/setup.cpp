// Ring setup and teardown (liburing's setup.c): io_uring_setup, the mmaps
// and the offsets the kernel reports, the optional registration of the ring
// fd itself, and undoing all of it.
#include "uringkit/ring/ring.hpp"

#include "uringkit/sys/error.hpp"
#include "uringkit/sys/syscall.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
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
    return with_taskrun_fallback(options, [&](const RingOptions& o) { return Ring(entries, o); });
}

Ring::Ring(unsigned entries, const RingOptions& options) {
    // A Ring's type says its SQEs are 64 bytes, so no 128-byte operation can
    // be prepared in it: the big layout is a BigRing's alone.
    if (options.extra_flags & IORING_SETUP_SQE128)
        throw RingError(
            "RingOptions::extra_flags: IORING_SETUP_SQE128 (128-byte SQEs) makes a BigRing "
            "(ring/big_ring.hpp), not a Ring",
            EINVAL);
    if (options.extra_flags & IORING_SETUP_CQE32)
        throw RingError(
            "RingOptions::extra_flags: IORING_SETUP_CQE32 (32-byte CQEs) makes a BigRing "
            "(ring/big_ring.hpp), not a Ring",
            EINVAL);
    setup(entries, options, 0);
}

Ring::Ring(unsigned entries, const RingOptions& options, BigLayout) {
    setup(entries, options, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
}

void Ring::setup(unsigned entries, const RingOptions& options, std::uint32_t layout_flags) {
    if (options.extra_flags & (IORING_SETUP_NO_MMAP | IORING_SETUP_REGISTERED_FD_ONLY))
        throw RingError(
            "RingOptions::extra_flags: IORING_SETUP_NO_MMAP (rings in memory of ours) is not "
            "supported",
            EINVAL);
    io_uring_params p{};
    p.flags = setup_flags_of(options) | layout_flags;
    p.cq_entries = options.cq_entries;
    p.sq_thread_idle = options.sq_thread_idle_ms;
    p.sq_thread_cpu = options.sq_thread_cpu >= 0 ? static_cast<unsigned>(options.sq_thread_cpu) : 0;
    p.wq_fd = options.attach_wq >= 0 ? static_cast<unsigned>(options.attach_wq) : 0;

    const int fd = sys::io_uring_setup(entries, &p);
    if (fd < 0) throw RingError("io_uring_setup", -fd);
    fd_ = enter_fd_ = fd;
    features_ = p.features;
    setup_flags_ = p.flags;

    sq_.shift = (p.flags & IORING_SETUP_SQE128) ? 1 : 0;
    cq_.shift = (p.flags & IORING_SETUP_CQE32) ? 1 : 0;
    try {
        sq_.ring_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
        cq_.ring_size =
            p.cq_off.cqes + (std::size_t{p.cq_entries} * sizeof(io_uring_cqe) << cq_.shift);
        if (features_ & IORING_FEAT_SINGLE_MMAP) {
            sq_.ring_size = cq_.ring_size = std::max(sq_.ring_size, cq_.ring_size);
            sq_.ring_ptr = cq_.ring_ptr = map_ring(fd, sq_.ring_size, IORING_OFF_SQ_RING);
        } else {
            sq_.ring_ptr = map_ring(fd, sq_.ring_size, IORING_OFF_SQ_RING);
            cq_.ring_ptr = map_ring(fd, cq_.ring_size, IORING_OFF_CQ_RING);
        }
        sq_.sqes_size = std::size_t{p.sq_entries} * sizeof(io_uring_sqe) << sq_.shift;
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

Ring::Ring(Ring&& other) noexcept {
    *this = std::move(other);
}

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

Ring::~Ring() {
    release();
}

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

}  // namespace uringkit
