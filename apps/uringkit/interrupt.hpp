// SIGINT and SIGTERM for the tools, ended the way GNU tools end them.
//
// The handler only records the signal in a flag (lock-free std::atomic: safe
// in a handler).  The tool polls the flag (library calls take it as their
// `stop` option): it stops submitting, waits for what is in flight, removes
// its temporaries and reports what was done.  Then `exit_status()` restores
// the signal's default action and raises it again, so the parent sees death
// by that signal (a shell shows 130 for SIGINT, 143 for SIGTERM) and `make`,
// `xargs` or a script's trap react as they do to any interrupted program.
//
// The handlers are installed without SA_RESTART, so a blocking wait in
// io_uring_enter or read returns EINTR and the loop around it sees the flag.
// A signal that was ignored when the tool started (`nohup`, a background job
// of a non-interactive shell) stays ignored, as with coreutils.
#pragma once

#include <atomic>

namespace uringkit::cli {

class InterruptScope {
public:
    InterruptScope();   // installs the handlers for SIGINT and SIGTERM
    ~InterruptScope();  // puts the previous actions back
    InterruptScope(const InterruptScope&) = delete;
    InterruptScope& operator=(const InterruptScope&) = delete;

    // The flag for a library call's `stop` option; set once a signal arrived.
    const std::atomic<bool>* flag() const noexcept;
    bool requested() const noexcept;
    // Sets the flag without a signal: the work stops as it would for one
    // (standard output went away, so nothing more could be reported), and
    // exit_status() returns its argument.
    void stop() noexcept;
    int signal() const noexcept;               // the signal that arrived first, or 0
    const char* signal_name() const noexcept;  // "SIGINT", "SIGTERM" or ""
    // `status` when no signal arrived.  Otherwise the handlers are removed,
    // the signal's default action restored and the signal raised again: the
    // process ends by it and this does not return.
    int exit_status(int status) const;
};

}  // namespace uringkit::cli
