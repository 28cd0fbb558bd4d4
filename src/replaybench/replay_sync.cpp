// The pread engine of the replay: each step as the program made it, one
// system call at a time (pread64, pwrite64, fsync, fdatasync, ftruncate,
// fallocate).  A sync engine has one step in flight whatever the depth, so
// in batched mode it shows what the program gets without changing its calls.
#include "thread_replay.hpp"

#include "engines/engine.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace uringkit::replaybench::detail {

std::uint64_t monotonic_ns() noexcept {
    return engines::now_ns();
}

void sleep_until_ns(std::uint64_t t, const std::atomic<bool>* stop) noexcept {
    // In slices, so a stop (SIGINT, delivered to whichever thread) ends a
    // long wait for a step recorded seconds later.
    for (;;) {
        const std::uint64_t now = monotonic_ns();
        if (now >= t || (stop && stop->load(std::memory_order_relaxed))) return;
        const std::uint64_t until = std::min(t, now + kStopSliceNs);
        const timespec ts{static_cast<time_t>(until / 1000000000u),
                          static_cast<long>(until % 1000000000u)};
        ::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    }
}

namespace {
double process_cpu_seconds() noexcept {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}
}  // namespace

void StartGate::finish() noexcept {
    try {
        std::lock_guard lk(kernel_threads_lock_);
        kernel_threads_.sample();
    } catch (...) {
        // Out of memory for a /proc read: the workers' figures stay as last sampled.
    }
    // The last thread out: every other one has stored its figures (acq_rel).
    if (running_.fetch_sub(1, std::memory_order_acq_rel) == 1) cpu_end_ = process_cpu_seconds();
}

std::uint64_t StartGate::arrive_and_wait() noexcept {
    if (waiting_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        try {
            std::lock_guard lk(kernel_threads_lock_);
            kernel_threads_.begin();
        } catch (...) {
            // Out of memory for a /proc read: the workers go uncounted.
        }
        cpu_start_ = process_cpu_seconds();
        start_.store(monotonic_ns(), std::memory_order_release);
        start_.notify_all();
    } else {
        start_.wait(0, std::memory_order_acquire);
    }
    return start_.load(std::memory_order_acquire);
}

std::string step_error(const Program& p, const Step& s, long long res) {
    const std::string& path = p.files()[s.file].path;
    std::string what;
    switch (s.op) {
        case Op::read:
        case Op::write:
            what =
                fmt::format("{} of {} at {} ({} bytes)", op_name(s.op), path, s.offset, s.length);
            break;
        case Op::ftruncate:
            what = fmt::format("ftruncate of {} to {} bytes", path, s.offset);
            break;
        case Op::fallocate:
        case Op::trim:
        case Op::sync_range:
            what =
                fmt::format("{} of {} at {} ({} bytes)", op_name(s.op), path, s.offset, s.length);
            break;
        default:
            what = fmt::format("{} of {}", op_name(s.op), path);
    }
    return fmt::format("{}: {}", what, std::strerror(static_cast<int>(-res)));
}

bool verify_read(int fd, const Step& s, const unsigned char* got, std::size_t n,
                 std::vector<unsigned char>& scratch) noexcept {
    if (scratch.size() < n) scratch.resize(n);
    std::size_t done = 0;
    while (done < n) {
        const ssize_t r =
            ::pread(fd, scratch.data() + done, n - done, static_cast<off_t>(s.offset + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        done += static_cast<std::size_t>(r);
    }
    return std::memcmp(scratch.data(), got, n) == 0;
}

long long run_step_sync(int fd, const Step& s, unsigned char* buf, std::uint32_t len) noexcept {
    ssize_t r = 0;
    switch (s.op) {
        case Op::read:
            r = ::pread(fd, buf, len, static_cast<off_t>(s.offset));
            break;
        case Op::write:
            r = ::pwrite(fd, buf, len, static_cast<off_t>(s.offset));
            break;
        case Op::fsync:
            r = ::fsync(fd);
            break;
        case Op::fdatasync:
            r = ::fdatasync(fd);
            break;
        case Op::ftruncate:
            r = ::ftruncate(fd, static_cast<off_t>(s.offset));
            break;
        case Op::sync_range:
            r = ::sync_file_range(fd, static_cast<off_t>(s.offset), static_cast<off_t>(s.length),
                                  s.pad[0]);
            break;
        case Op::fallocate:
            r = ::fallocate(fd, s.pad[0], static_cast<off_t>(s.offset),
                            static_cast<off_t>(s.length));
            break;
        case Op::trim:
            r = ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                            static_cast<off_t>(s.offset), static_cast<off_t>(s.length));
            break;
        case Op::open:
        case Op::close:
            break;
    }
    return r < 0 ? -errno : r;
}

ThreadResult replay_thread_sync(const ThreadJob& job) {
    ThreadResult out;
    const Program& p = *job.program;
    engines::BufferArena buffer(
        1, static_cast<std::uint32_t>(job.max_io_bytes ? job.max_io_bytes : 1), 4096);
    std::memset(buffer.data(), 0xa5, buffer.bytes());
    std::vector<unsigned char> check;
    Program::Cursor cursor(p, job.thread);
    std::uint64_t index = 0, tick = 0;
    const std::uint64_t start = out.start_ns = job.gate->arrive_and_wait();
    out.end_ns = start;
    for (unsigned loop = 0; loop < job.loops && out.error.empty(); ++loop) {
        if (loop) cursor.rewind();
        index = 0;
        while (const Step* sp = cursor.peek()) {
            if (job.stop && job.stop->load(std::memory_order_relaxed)) break;
            const Step s = *sp;
            cursor.pop();
            const std::uint64_t i = index++;
            if (!is_io(s.op)) continue;
            std::uint64_t t0;
            if (job.mode == Mode::timed && s.at_ns >= 0) {
                t0 = due_ns(job, start, s, loop);
                if (monotonic_ns() < t0) sleep_until_ns(t0, job.stop);
                if (job.stop && job.stop->load(std::memory_order_relaxed)) break;
            } else {
                t0 = monotonic_ns();
            }
            if (job.order && loop == 0) (*job.order)[i].issued = ++tick;
            const std::uint32_t len = io_len(job, s);
            const int fd = (*job.fds)[s.file];
            const long long res = run_step_sync(fd, s, buffer.slot(0), len);
            const std::uint64_t t1 = monotonic_ns();
            if (job.order && loop == 0) (*job.order)[i].completed = ++tick;
            ++out.syscalls;
            if (res < 0) {
                out.error = step_error(p, s, res);
                break;
            }
            ++out.ios;
            out.latency.record(t1 - t0);
            if (s.op == Op::read || s.op == Op::write) {
                out.bytes += static_cast<std::uint64_t>(res);
                if (static_cast<std::uint64_t>(res) < len) ++out.short_ios;
                if (job.verify && s.op == Op::read &&
                    !verify_read(fd, s, buffer.slot(0), static_cast<std::size_t>(res), check))
                    ++out.verify_failures;
            }
            out.end_ns = t1;
        }
    }
    job.gate->finish();
    return out;
}

}  // namespace uringkit::replaybench::detail
