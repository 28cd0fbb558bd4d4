// A ring of 128-byte SQEs and 32-byte CQEs (IORING_SETUP_SQE128 and
// IORING_SETUP_CQE32, Linux 5.19): the layout NVMe passthrough needs, whose
// command (struct nvme_uring_cmd, 72 bytes) runs past the first 64 bytes of
// its SQE and whose result carries a second 64-bit value in the CQE's extra
// 16 bytes.
//
// Its own type so that a 128-byte operation (one whose prepare() takes a
// BigSqe&, see ops/passthrough.hpp) can only be prepared where its slot is
// 128 bytes: nothing else hands out a BigSqe, Ring::prepare has no overload
// for it, and a Ring cannot be set up with this layout (its constructor
// refuses the flags).
// Every ordinary operation stays legal here: it fills the first 64 bytes of
// a slot whose second half get_sqe() has zeroed.
//
// Like Ring, single-threaded; the hot path allocates nothing.
#pragma once

#include "uringkit/ring/ring.hpp"

#include <cstdint>

namespace uringkit {

// A completion of a 32-byte-CQE ring: the usual three fields and the extra
// 16 bytes (for an NVMe passthrough command, big[0] is the command's 64-bit
// result, NVMe's completion dword 0 and 1).
struct BigCompletion : Completion {
    std::uint64_t big[2];
};

class BigRing {
public:
    // Throws RingError naming io_uring_setup (EINVAL before 5.19, which has
    // neither flag).  `options` as for Ring; extra_flags may not hold SQE128
    // or CQE32 again, nor NO_MMAP.
    explicit BigRing(unsigned entries, const RingOptions& options = {})
        : ring_(entries, options, Ring::BigLayout{}) {}
    // As Ring::create: SINGLE_ISSUER/DEFER_TASKRUN dropped where the kernel
    // refuses them (EINVAL before 6.0/6.1); other failures throw RingError.
    static BigRing create(unsigned entries, const RingOptions& options) {
        return Ring::with_taskrun_fallback(
            options, [&](const RingOptions& o) { return BigRing(entries, o); });
    }

    // Submission, waiting, registration and the counters: the usual ring's.
    // Its prepare() takes the 64-byte operations; 128-byte ones come here.
    Ring& ring() noexcept { return ring_; }
    const Ring& ring() const noexcept { return ring_; }

    // Writes a whole SQE from a typed operation, a 128-byte one included.
    // Empty when the SQ is full.
    template <class Op>
    Sqe prepare(const Op& op) noexcept {
        io_uring_sqe* s = ring_.get_sqe();  // 128 bytes here, all zeroed
        if (!s) return Sqe();
        if constexpr (detail::BigSqeOp<Op>)
            op.prepare(*reinterpret_cast<BigSqe*>(s));
        else
            op.prepare(*s);
        return Sqe(s);
    }

    // As Ring::for_each_completion, with the CQE's extra 16 bytes.
    template <class F>
    unsigned for_each_completion(F&& f) {
        return ring_.for_each_cqe(
            [](const io_uring_cqe& c) {
                return BigCompletion{{c.user_data, c.res, c.flags}, {c.big_cqe[0], c.big_cqe[1]}};
            },
            f);
    }

private:
    Ring ring_;
};

}  // namespace uringkit
