// IORING_OP_MSG_RING (5.18): posts a completion on another ring, with `res`
// = value and the user_data given.  How one thread's loop wakes another's
// (async/mailbox.hpp); the sender gets its own completion (res 0 or -errno).
#pragma once

#include "uringkit/ops/ops.hpp"

namespace uringkit::op {

class MsgRing {
public:
    static constexpr std::uint8_t code = IORING_OP_MSG_RING;
    // `target_ring_fd`: the receiving Ring's fd() (its real descriptor, even
    // when that ring registered it).
    MsgRing(int target_ring_fd, std::uint32_t value, std::uint64_t user_data) noexcept
        : fd_(target_ring_fd), value_(value), user_data_(user_data) {}
    // The target's CQE carries these flags (IORING_MSG_RING_FLAGS_PASS,
    // 6.3; -EINVAL before): what a ring that is not ours can make another
    // ring's completions look like, and so what a consumer must not trust.
    MsgRing& pass_flags(std::uint32_t cqe_flags) noexcept {
        pass_ = true;
        cqe_flags_ = cqe_flags;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = fd_;
        s.addr = 0;  // IORING_MSG_DATA
        s.len = value_;
        s.off = user_data_;
        if (pass_) {
            s.msg_ring_flags = IORING_MSG_RING_FLAGS_PASS;
            s.file_index = cqe_flags_;
        }
    }

private:
    int fd_;
    std::uint32_t value_;
    std::uint64_t user_data_;
    bool pass_ = false;
    std::uint32_t cqe_flags_ = 0;
};

}  // namespace uringkit::op
