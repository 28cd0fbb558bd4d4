#include "cp_progress.hpp"

#include "console.hpp"

#include <fmt/core.h>

#include <cstdio>

namespace uringkit::cli {
namespace {

constexpr auto kTerminalPeriod = std::chrono::milliseconds(100);  // at most 10 redraws a second
constexpr auto kPlainPeriod = std::chrono::seconds(1);
constexpr double kAutomaticAfter = 1.0;  // seconds before the automatic line appears

double mib(std::uint64_t bytes) {
    return static_cast<double>(bytes) / 1048576.0;
}

std::string eta(double seconds) {
    const auto s = static_cast<std::uint64_t>(seconds + 0.5);
    if (s < 60) return fmt::format("{} s", s);
    if (s < 3600) return fmt::format("{}:{:02}", s / 60, s % 60);
    return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
}

}  // namespace

CopyProgressLine::CopyProgressLine(Mode mode, bool stderr_is_tty, bool recursive)
    : mode_(mode == Mode::automatic && !stderr_is_tty ? Mode::off : mode),
      tty_(stderr_is_tty),
      recursive_(recursive) {
    if (mode_ != Mode::off) drawer_ = std::thread([this] { draw_loop(); });
}

CopyProgressLine::~CopyProgressLine() {
    finish();
}

void CopyProgressLine::attach(fs::CopyOptions& o) {
    if (mode_ == Mode::off) return;
    o.on_planned = [this](std::uint64_t files, std::uint64_t bytes) {
        files_total_.fetch_add(files, std::memory_order_relaxed);
        bytes_total_.fetch_add(bytes, std::memory_order_relaxed);
    };
    o.on_progress = [this](std::uint64_t done) {
        bytes_current_.store(done, std::memory_order_relaxed);
    };
    o.on_file = [this](std::uint64_t bytes) {
        // One thread calls these: no other writer can come between the two stores.
        bytes_done_.fetch_add(bytes, std::memory_order_relaxed);
        bytes_current_.store(0, std::memory_order_relaxed);
        files_done_.fetch_add(1, std::memory_order_relaxed);
    };
}

double CopyProgressLine::elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

std::string CopyProgressLine::line(double seconds, bool last) const {
    const std::uint64_t files = files_done_.load(std::memory_order_relaxed);
    const std::uint64_t files_total = files_total_.load(std::memory_order_relaxed);
    const std::uint64_t done = bytes_done_.load(std::memory_order_relaxed) +
                               bytes_current_.load(std::memory_order_relaxed);
    const std::uint64_t total = bytes_total_.load(std::memory_order_relaxed);
    const double rate = seconds > 0 ? mib(done) / seconds : 0;
    std::string s = last ? "cp: finished: " : "cp: ";
    if (recursive_ || files_total > 1) s += fmt::format("{}/{} files, ", files, files_total);
    // A FIFO or device has no size to go by: only what came so far.
    const bool sized = done <= total;
    s += sized ? fmt::format("{:.1f}/{:.1f} MiB", mib(done), mib(total))
               : fmt::format("{:.1f} MiB", mib(done));
    if (last) return s + fmt::format(" ({} bytes) in {:.2f} s, {:.1f} MiB/s", done, seconds, rate);
    s += fmt::format(", {:.1f} MiB/s", rate);
    if (sized && rate > 0 && done < total) s += ", ETA " + eta(mib(total - done) / rate);
    return s;
}

void CopyProgressLine::draw_locked(double seconds) {
    if (tty_) {
        emit(stderr, "\r\033[K{}", line(seconds, false));
        drawn_ = true;
    } else {
        emit(stderr, "{}\n", line(seconds, false));
    }
    flush(stderr);
}

void CopyProgressLine::draw_loop() {
    std::unique_lock lock(mutex_);
    const auto period = tty_ ? std::chrono::steady_clock::duration(kTerminalPeriod)
                             : std::chrono::steady_clock::duration(kPlainPeriod);
    // Forced on a terminal: drawn at once; plain lines come once a second.
    auto next = mode_ == Mode::forced && tty_ ? t0_ : t0_ + period;
    for (;;) {
        if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
        const double t = elapsed();
        if (mode_ == Mode::forced || t >= kAutomaticAfter) draw_locked(t);
        next += period;
        const auto now = std::chrono::steady_clock::now();
        if (next < now) next = now + period;  // fell behind (a stopped process): no burst of lines
    }
}

void CopyProgressLine::message(std::string_view text, bool failed) {
    if (failed) bytes_current_.store(0, std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    if (drawn_) {
        emit(stderr, "\r\033[K");
        drawn_ = false;  // redrawn at the next tick
    }
    emit(stderr, "uringkit cp: {}\n", text);
}

void CopyProgressLine::finish() {
    {
        std::lock_guard lock(mutex_);
        if (finished_) return;
        finished_ = true;
        stopping_ = true;
    }
    wake_.notify_all();
    if (drawer_.joinable()) drawer_.join();
    std::lock_guard lock(mutex_);
    if (drawn_) emit(stderr, "\r\033[K");
    drawn_ = false;
    if (mode_ == Mode::forced && !tty_) emit(stderr, "{}\n", line(elapsed(), true));
    flush(stderr);
}

}  // namespace uringkit::cli
