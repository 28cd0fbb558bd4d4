// The scheduler every queueing replay engine shares (not installed): uring,
// uring-sqpoll, uring-reg, liburing, libaio and threadpool differ only in
// how a step is handed over and how completions come back, which is the
// Backend below.  One trace thread's steps, up to `depth` in flight: each
// turn hands over every step that may start (a free slot, no dependency on a
// step still in flight, its time come in timed mode), then makes one wait
// that submits them and returns once a completion is ready (or the next
// step's time has come), then reaps everything ready.
//
// A Backend provides:
//   bool queues(Op) const                 the step goes through the backend; otherwise it is
//                                         run here as its system call (depends() has drained
//                                         every step of its file first)
//   bool prepare(unsigned slot, const Step&, int fd, unsigned char* buf, uint32_t len)
//                                         false: it cannot take the step (a fatal error)
//   int wait(uint64_t deadline_ns)        hands over what was prepared and waits for a
//                                         completion, or until deadline_ns (0: none); < 0: the
//                                         backend failed for good (-errno)
//   template <class F> void reap(F&&)     f(slot, res) for each completion ready
//   uint64_t syscalls() const             system calls made so far, counted by the backend
//   const char* name() const              for error lines ("io_uring_enter", "io_getevents")
//   bool kernel_may_write() const         after a failed wait, the kernel may still write
//                                         into the buffers of steps not reaped
#pragma once

#include "thread_replay.hpp"

#include "engines/engine.hpp"
#include "uringkit/ring/kernel_owned.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace uringkit::replaybench::detail {

// Per-slot buffers while they fit in this; above it every step of the
// thread shares one buffer (the bytes read are not used, only counted).
inline constexpr std::uint64_t kSlotBufferBudget = 64u << 20;

inline std::uint32_t replay_buffer_bytes(const ThreadJob& job) noexcept {
    return static_cast<std::uint32_t>(job.max_io_bytes ? job.max_io_bytes : 1);
}
// One buffer per slot (the check of --verify needs them), or one for all.
inline bool per_slot_buffers(const ThreadJob& job) noexcept {
    return job.verify || std::uint64_t{replay_buffer_bytes(job)} * job.depth <= kSlotBufferBudget;
}

// The buffers of one replay thread.  Made before the backend, so they
// outlive it on every path.
inline std::unique_ptr<engines::BufferArena> make_replay_buffers(const ThreadJob& job) {
    auto arena = std::make_unique<engines::BufferArena>(per_slot_buffers(job) ? job.depth : 1,
                                                        replay_buffer_bytes(job), 4096);
    std::memset(arena->data(), 0xa5, arena->bytes());
    return arena;
}

// What a thread returns when its engine cannot start here (the ring or a
// registration refused, a library not built in): it still passes the gate,
// so the other threads are not left waiting for it.
inline ThreadResult replay_unavailable(const ThreadJob& job, std::string why) {
    ThreadResult out;
    out.unavailable = std::move(why);
    job.gate->arrive_and_wait();
    job.gate->finish();
    return out;
}

// Replays job's thread through `backend`; `arena` holds the buffers the
// backend was given (handed to keep_for_kernel() if the backend fails with
// steps in flight that the kernel may still write into).
template <class Backend>
ThreadResult replay_queued(const ThreadJob& job, Backend& backend,
                           std::unique_ptr<engines::BufferArena>& arena) {
    struct Slot {
        Step step;
        std::uint64_t index = 0;  // the step's place in its thread (first loop: the order log)
        std::uint64_t t0 = 0;     // issued, or due (timed)
        unsigned loop = 0;
        std::uint32_t len = 0;
    };
    ThreadResult out;
    const Program& p = *job.program;
    engines::BufferArena& buffers = *arena;
    const bool per_slot = per_slot_buffers(job);
    std::vector<unsigned char> check;
    std::vector<Slot> slots(job.depth);
    std::vector<unsigned> free_slots, live;  // live: the slots in flight, in no order
    free_slots.reserve(job.depth);
    live.reserve(job.depth);
    for (unsigned s = job.depth; s-- > 0;) free_slots.push_back(s);

    Program::Cursor cursor(p, job.thread);
    unsigned loop = 0;
    std::uint64_t index = 0, tick = 0, sync_calls = 0;
    const auto next_step = [&]() -> const Step* {
        for (;;) {
            if (const Step* s = cursor.peek()) return s;
            if (loop + 1 >= job.loops) return nullptr;
            ++loop;
            index = 0;
            cursor.rewind();
        }
    };
    const auto stopped = [&] { return job.stop && job.stop->load(std::memory_order_relaxed); };
    const auto record = [&](const Slot& sl, long long res, std::uint64_t t1) {
        if (job.order && sl.loop == 0) (*job.order)[sl.index].completed = ++tick;
        if (res < 0) {
            if (out.error.empty()) out.error = step_error(p, sl.step, res);
            return;
        }
        ++out.ios;
        out.latency.record(t1 > sl.t0 ? t1 - sl.t0 : 0);
        out.end_ns = t1;
        if (sl.step.op == Op::read || sl.step.op == Op::write) {
            out.bytes += static_cast<std::uint64_t>(res);
            if (static_cast<std::uint64_t>(res) < sl.len) ++out.short_ios;
        }
    };
    const auto retire = [&](unsigned slot) {
        for (unsigned k = 0; k < live.size(); ++k)
            if (live[k] == slot) {
                live[k] = live.back();
                live.pop_back();
                return;
            }
    };
    const std::uint64_t calls_before = backend.syscalls();
    const std::uint64_t start = out.start_ns = job.gate->arrive_and_wait();
    out.end_ns = start;
    bool failed = false;
    while (!failed) {
        std::uint64_t wait_until = 0;
        while (out.error.empty() && !stopped() && !free_slots.empty()) {
            const Step* sp = next_step();
            if (!sp) break;
            bool blocked = false;
            for (unsigned l : live)
                if (depends(slots[l].step, *sp)) {
                    blocked = true;
                    break;
                }
            if (blocked) break;
            if (!is_io(sp->op)) {
                cursor.pop();
                ++index;
                continue;
            }
            std::uint64_t t0 = monotonic_ns();
            if (job.mode == Mode::timed && sp->at_ns >= 0) {
                const std::uint64_t due = due_ns(job, start, *sp, loop);
                if (t0 < due) {
                    wait_until = due;
                    break;
                }
                t0 = due;
            }
            const Step s = *sp;
            cursor.pop();
            const std::uint64_t i = index++;
            if (job.order && loop == 0) (*job.order)[i].issued = ++tick;
            const int fd = (*job.fds)[s.file];
            const std::uint32_t n = io_len(job, s);
            const unsigned slot = free_slots.back();
            unsigned char* buf = buffers.slot(per_slot ? slot : 0);
            if (!backend.queues(s.op)) {
                ++sync_calls;
                record(Slot{s, i, t0, loop, n}, run_step_sync(fd, s, buf, n), monotonic_ns());
                continue;
            }
            slots[slot] = Slot{s, i, t0, loop, n};
            if (!backend.prepare(slot, s, fd, buf, n)) {
                out.error = fmt::format("{}: the submission queue stayed full", backend.name());
                failed = true;
                break;
            }
            free_slots.pop_back();
            live.push_back(slot);
        }
        if (live.empty()) {
            if (failed || !out.error.empty() || stopped() || !next_step()) break;
            if (wait_until) sleep_until_ns(wait_until, job.stop);
            continue;  // a step ran synchronously, or its time has come
        }
        // At most a slice past now, so a stop is seen while the next step is far off.
        const int ret =
            backend.wait(wait_until ? std::min(wait_until, monotonic_ns() + kStopSliceNs) : 0);
        if (ret < 0) {
            out.error = fmt::format("{}: {}", backend.name(), std::strerror(-ret));
            break;
        }
        const std::uint64_t t1 = monotonic_ns();
        backend.reap([&](unsigned slot, long long res) {
            const Slot& sl = slots[slot];
            record(sl, res, t1);
            if (job.verify && res > 0 && sl.step.op == Op::read &&
                !verify_read((*job.fds)[sl.step.file], sl.step, buffers.slot(slot),
                             static_cast<std::size_t>(res), check))
                ++out.verify_failures;
            retire(slot);
            free_slots.push_back(slot);
        });
        // An error stops issuing; what is in flight is still reaped above
        // and below, so no buffer is freed under the kernel.
        if (!out.error.empty() && live.empty()) break;
    }
    // Drain: the backend is torn down only with nothing in flight.
    while (!live.empty()) {
        if (backend.wait(0) < 0) {
            // Failed for good: the last completions will never come, and
            // tearing down does not wait for the requests.
            if (backend.kernel_may_write()) keep_for_kernel(arena.release());
            break;
        }
        backend.reap([&](unsigned slot, long long res) {
            record(slots[slot], res, monotonic_ns());
            retire(slot);
        });
    }
    out.syscalls = backend.syscalls() - calls_before + sync_calls;
    job.gate->finish();
    return out;
}

}  // namespace uringkit::replaybench::detail
