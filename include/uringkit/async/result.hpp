// What every awaitable of the coroutine layer gives back: the kernel's result
// and flags of the operation's completion, with an std::error_code view.
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ring/sqe.hpp"

#include <cerrno>
#include <cstdint>
#include <optional>
#include <system_error>

namespace uringkit::async {

struct Result {
    std::int32_t res = 0;     // bytes, a new fd, 0, or -errno: the kernel's own meaning
    std::uint32_t flags = 0;  // the CQE's flags (IORING_CQE_F_BUFFER, ...)

    bool ok() const noexcept { return res >= 0; }
    // The error as a std::error_code (empty when res >= 0).
    std::error_code error() const noexcept {
        return res < 0 ? std::error_code(-res, std::system_category()) : std::error_code();
    }
    // A deadline passed (with_timeout): distinct from a cancel (-ECANCELED).
    bool timed_out() const noexcept { return res == -ETIME; }
    bool cancelled() const noexcept { return res == -ECANCELED; }
    // The provided buffer the kernel picked, when one was selected.
    std::optional<std::uint16_t> buffer_id() const noexcept {
        return Completion{0, res, flags}.buffer_id();
    }
    bool more() const noexcept { return Completion{0, res, flags}.more(); }
};

}  // namespace uringkit::async
