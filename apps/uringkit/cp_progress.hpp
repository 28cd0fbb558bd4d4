// `uringkit cp --progress`: the live line on stderr.
//
// The copy reports work as it learns of it (CopyOptions::on_planned), the
// bytes of the file in hand (on_progress) and each finished file (on_file);
// those callbacks only store counters.  A thread of its own draws the line
// from the counters, so the line keeps moving (rate, ETA) while one long
// step runs, and the copy's thread never waits on the terminal.
//
// On a terminal the line is redrawn in place (`\r\033[K`) at most 10 times a
// second and cleared before anything else is printed; by default it appears
// only once the copy has run for a second, as `uringkit bench`'s does, and
// --progress draws it from the start.  When stderr is not a terminal,
// --progress prints a plain line once a second instead, and a last line
// with the totals (in bytes too) when the copy ends.
#pragma once

#include "fs/copy.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace uringkit::cli {

class CopyProgressLine {
public:
    enum class Mode { off, automatic, forced };
    // `stderr_is_tty`: redraw in place; otherwise plain lines (forced only).
    CopyProgressLine(Mode mode, bool stderr_is_tty, bool recursive);
    ~CopyProgressLine();
    CopyProgressLine(const CopyProgressLine&) = delete;
    CopyProgressLine& operator=(const CopyProgressLine&) = delete;

    // Sets the options' on_planned, on_progress and on_file (when a line may be drawn).
    void attach(fs::CopyOptions& o);
    // A note or an error for stderr, printed on a line of its own.  `failed`:
    // the file in hand failed, so its partial bytes stop counting.
    void message(std::string_view text, bool failed);
    // The copy returned: stop drawing; clear the line (terminal) or print the
    // last line (plain).  Call before printing anything else.
    void finish();

private:
    // The line at `seconds` since the start; `last`: the closing plain line.
    std::string line(double seconds, bool last) const;
    void draw_loop();
    void draw_locked(double seconds);
    double elapsed() const;

    const Mode mode_;
    const bool tty_, recursive_;
    const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
    std::atomic<std::uint64_t> files_total_{0}, bytes_total_{0}, files_done_{0}, bytes_done_{0},
        bytes_current_{0};
    std::mutex mutex_;  // stderr, `drawn_`, `stopping_`
    std::condition_variable wake_;
    bool drawn_ = false, stopping_ = false, finished_ = false;
    std::thread drawer_;
};

}  // namespace uringkit::cli
