// io_uring_register (liburing's register.c): registered files and buffers,
// io-wq limits, an eventfd, and the opcode probe.
#include "uringkit/ring/ring.hpp"

#include "uringkit/sys/error.hpp"
#include "uringkit/sys/syscall.hpp"

#include <array>
#include <cerrno>
#include <cstdint>

namespace uringkit {

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
    check(register_raw(IORING_REGISTER_BUFFERS, buffers.data(),
                       static_cast<unsigned>(buffers.size())),
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
    check(register_raw(IORING_REGISTER_EVENTFD, &eventfd, 1),
          "io_uring_register(REGISTER_EVENTFD)");
}

void Ring::unregister_eventfd() {
    check(register_raw(IORING_UNREGISTER_EVENTFD, nullptr, 0),
          "io_uring_register(UNREGISTER_EVENTFD)");
}

OpcodeSupport Ring::probe_opcodes() const {
    // io_uring_probe ends in a flexible array; room for every 8-bit opcode.
    alignas(io_uring_probe) unsigned char
        storage[sizeof(io_uring_probe) + 256 * sizeof(io_uring_probe_op)] = {};
    auto* probe = reinterpret_cast<io_uring_probe*>(storage);
    check(register_raw(IORING_REGISTER_PROBE, probe, 256), "io_uring_register(REGISTER_PROBE)");
    OpcodeSupport out;
    out.last_op_ = probe->last_op;
    for (unsigned i = 0; i < probe->ops_len && i < 256; ++i) {
        const io_uring_probe_op& op = probe->ops[i];
        if (op.flags & IO_URING_OP_SUPPORTED)
            out.bits_[op.op / 64] |= std::uint64_t{1} << (op.op % 64);
    }
    return out;
}

}  // namespace uringkit
