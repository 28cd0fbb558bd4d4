// Errors from setup and registration: which call failed, the errno, and what
// that errno usually means for io_uring, so a user reads a cause and not a
// bare "Operation not permitted".
#pragma once

#include <string>
#include <system_error>
#include "uringkit/cxx20.hpp"

namespace uringkit {

// The error rule (docs/library.md, "Errors"): RingError is thrown only for a
// failed io_uring call (io_uring_setup, io_uring_register, io_uring_enter,
// the mmap of the rings), by constructors, registration and a loop's
// run(); never by the hot path, which returns the kernel's own negative
// result, and never for other failures (a bad argument is
// std::invalid_argument, another system call a plain std::system_error),
// whose errno would get io_uring advice that misleads.
class RingError : public std::system_error {
public:
    RingError(const char* call, int err);
    // The system call or operation that failed, e.g. "io_uring_setup".
    const char* call() const noexcept { return call_; }
    // "io_uring_setup: Operation not permitted (io_uring is disabled: ...)".
    const char* what() const noexcept override { return message_.c_str(); }

private:
    const char* call_;
    std::string message_;
};

// A one-sentence explanation of what `err` (a positive errno) usually means for
// `call` on io_uring; empty when there is nothing more to say than strerror.
std::string explain(const char* call, int err);

// Make a std::error_code from a kernel result (negative errno) or a positive errno.
inline std::error_code errno_code(int err) noexcept {
    return {err < 0 ? -err : err, std::system_category()};
}

}  // namespace uringkit
