// The uring engines of the replay: one ring per trace thread, each step an
// SQE (READ, WRITE, FSYNC, FALLOCATE, FTRUNCATE from 6.9), up to `depth` in
// flight.  Each turn prepares every step that may start (a free slot, no
// dependency on a step still in flight, its time come in timed mode), then
// makes one io_uring_enter that submits them and waits for one completion,
// then reaps everything ready.
#include "thread_replay.hpp"

#include "uringkit/engines/engine.hpp"
#include "uringkit/ops/files.hpp"
#include "uringkit/ops/ops.hpp"
#include "uringkit/ring/kernel_owned.hpp"
#include "uringkit/ring/ring.hpp"
#include "uringkit/sys/error.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>

namespace uringkit::replay::detail {
namespace {

// Per-slot buffers while they fit in this; above it every step of the
// thread shares one buffer (the bytes read are not used, only counted).
constexpr std::uint64_t kSlotBufferBudget = 64u << 20;

struct Slot {
    Step step;
    std::uint64_t index = 0;  // the step's place in its thread (first loop: the order log)
    std::uint64_t t0 = 0;     // issued, or due (timed)
    unsigned loop = 0;
    std::uint32_t len = 0;
};

RingOptions options_for(const ThreadJob& job) {
    if (!job.sqpoll) return single_thread_options();
    RingOptions o;
    o.sqpoll = true;
    o.sq_thread_idle_ms = 50;  // sleep soon after the run instead of spinning into the next
    o.single_issuer = true;
    o.register_ring_fd = true;
    return o;
}

}  // namespace

ThreadResult replay_thread_uring(const ThreadJob& job) {
    ThreadResult out;
    const Program& p = *job.program;
    // The buffers are made before the ring, so they outlive it on every path.
    const std::uint64_t len = job.max_io_bytes ? job.max_io_bytes : 1;
    const bool per_slot = job.verify || len * job.depth <= kSlotBufferBudget;
    // Held by pointer so that a ring that fails with reads in flight can hand
    // it to keep_for_kernel() instead of unmapping it under the kernel.
    auto arena = std::make_unique<engines::BufferArena>(per_slot ? job.depth : 1,
                                                        static_cast<std::uint32_t>(len), 4096);
    engines::BufferArena& buffers = *arena;
    std::memset(buffers.data(), 0xa5, buffers.bytes());
    std::optional<Ring> ring;
    try {
        ring.emplace(Ring::create(job.depth, options_for(job)));
    } catch (const RingError& e) {
        out.unavailable = e.what();
        job.gate->arrive_and_wait();
        job.gate->finish();
        return out;
    }
    bool ftruncate_op = false;
    try {
        ftruncate_op = ring->probe_opcodes().supported(sys::opcode::ftruncate);
    } catch (const RingError&) {
    }
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
    const std::uint64_t enters_before = ring->enter_calls();
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
            if (s.op == Op::ftruncate && !ftruncate_op) {
                // IORING_OP_FTRUNCATE came in 6.9: before it, the system call,
                // counted like any other.  depends() has already drained
                // every step of this file.
                ++sync_calls;
                const long long res = ::ftruncate(fd, static_cast<off_t>(s.offset)) < 0 ? -errno : 0;
                record(Slot{s, i, t0, loop, 0}, res, monotonic_ns());
                continue;
            }
            const unsigned slot = free_slots.back();
            io_uring_sqe* sqe = ring->get_sqe();
            while (!sqe && ring->wait_sq_space() >= 0) sqe = ring->get_sqe();
            if (!sqe) {
                out.error = "io_uring: the submission queue stayed full";
                failed = true;
                break;
            }
            free_slots.pop_back();
            live.push_back(slot);
            slots[slot] = Slot{s, i, t0, loop, n};
            unsigned char* buf = buffers.slot(per_slot ? slot : 0);
            const File f{Fd{fd}};
            switch (s.op) {
                case Op::read:
                    op::Read(f, buf, n, s.offset).prepare(*sqe);
                    break;
                case Op::write:
                    op::Write(f, buf, n, s.offset).prepare(*sqe);
                    break;
                case Op::fsync:
                    op::Fsync(f).prepare(*sqe);
                    break;
                case Op::fdatasync:
                    op::Fsync(f).datasync().prepare(*sqe);
                    break;
                case Op::ftruncate:
                    op::Ftruncate(f, s.offset).prepare(*sqe);
                    break;
                case Op::sync_range:
                    op::SyncFileRange(f, s.offset, static_cast<std::uint32_t>(std::min<std::uint64_t>(s.length, UINT32_MAX)),
                                      s.pad[0])
                        .prepare(*sqe);
                    break;
                case Op::fallocate:
                    op::Fallocate(f, s.pad[0], s.offset, s.length).prepare(*sqe);
                    break;
                case Op::trim:
                    op::Fallocate(f, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, s.offset, s.length)
                        .prepare(*sqe);
                    break;
                case Op::open:
                case Op::close:
                    break;
            }
            sqe->user_data = slot;
        }
        if (live.empty()) {
            if (failed || !out.error.empty() || stopped() || !next_step()) break;
            if (wait_until) sleep_until_ns(wait_until, job.stop);
            continue;  // a step ran synchronously, or its time has come
        }
        int ret;
        if (wait_until) {
            const std::uint64_t now = monotonic_ns();
            // At most a slice, so a stop is seen while the next step is far off.
            const std::uint64_t wait = wait_until > now ? std::min(wait_until - now, kStopSliceNs) : 0;
            ret = ring->submit_and_wait_for(1, std::chrono::nanoseconds(wait));
            if (ret == -EOPNOTSUPP) ret = ring->submit_and_wait(1);  // before 5.11: wait for one
        } else {
            ret = ring->submit_and_wait(1);
        }
        if (ret < 0 && ret != -EBUSY && ret != -EAGAIN && ret != -EINTR && ret != -ETIME) {
            out.error = fmt::format("io_uring_enter: {}", std::strerror(-ret));
            break;
        }
        const std::uint64_t t1 = monotonic_ns();
        ring->for_each_completion([&](const Completion& c) {
            const auto slot = static_cast<unsigned>(c.user_data);
            const Slot& sl = slots[slot];
            record(sl, c.res, t1);
            if (job.verify && c.res > 0 && sl.step.op == Op::read &&
                !verify_read((*job.fds)[sl.step.file], sl.step, buffers.slot(slot),
                             static_cast<std::size_t>(c.res), check))
                ++out.verify_failures;
            for (unsigned k = 0; k < live.size(); ++k)
                if (live[k] == slot) {
                    live[k] = live.back();
                    live.pop_back();
                    break;
                }
            free_slots.push_back(slot);
        });
        // An error stops issuing; what is in flight is still reaped above
        // and below, so no buffer is freed under the kernel.
        if (!out.error.empty() && live.empty()) break;
    }
    // Drain: the ring is destroyed only with nothing in flight.
    while (!live.empty()) {
        const int ret = ring->submit_and_wait(1);
        if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
            // The ring failed for good: its last CQEs will never come, and
            // closing it does not wait for the requests.
            keep_for_kernel(arena.release());
            break;
        }
        ring->for_each_completion([&](const Completion& c) {
            const auto slot = static_cast<unsigned>(c.user_data);
            record(slots[slot], c.res, monotonic_ns());
            for (unsigned k = 0; k < live.size(); ++k)
                if (live[k] == slot) {
                    live[k] = live.back();
                    live.pop_back();
                    break;
                }
        });
    }
    out.syscalls = ring->enter_calls() - enters_before + sync_calls;
    job.gate->finish();
    return out;
}

}  // namespace uringkit::replay::detail
