// Waiting on other threads and processes: futex wait and wake (6.7), a wait
// on several futexes at once, and waitid(2) for a child (6.7).  A futex
// operation names a 32-bit word in memory by its address: a wait in flight
// keeps that address, so the word must live until the wait's completion
// (async/sync.hpp builds a mutex and an event on these).
#pragma once

#include "uringkit/cxx20.hpp"
#include "uringkit/ops/prep.hpp"
#include "uringkit/sys/uapi.hpp"

#include <linux/futex.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdint>

namespace uringkit::op {

// The futex2 flags the futex operations default to: a 32-bit word private
// to this process (the threads of one process; not shared memory between
// processes, which needs .flags(FUTEX2_SIZE_U32)).
inline constexpr std::uint32_t kFutexPrivate32 = FUTEX2_SIZE_U32 | FUTEX2_PRIVATE;

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "a futex word may be an std::atomic<std::uint32_t>");

// The shape FUTEX_WAIT and FUTEX_WAKE share: the word's address in addr, a
// value in addr2 (the expected value, or how many to wake), the bitset mask
// in addr3 and the futex2 flags in fd.  sqe->futex_flags (the rw_flags
// field) stays 0: the kernel defines none yet and refuses any.
template <std::uint8_t Code>
class BasicFutex {
public:
    static constexpr std::uint8_t code = Code;
    BasicFutex(const std::uint32_t* word, std::uint64_t value) noexcept
        : word_(word), value_(value) {}
    BasicFutex(const std::atomic<std::uint32_t>* word, std::uint64_t value) noexcept
        : word_(reinterpret_cast<const std::uint32_t*>(word)), value_(value) {}
    // Only waiters whose mask shares a bit with this one match (0 is refused).
    BasicFutex& mask(std::uint64_t m) noexcept {
        mask_ = m;
        return *this;
    }
    // futex2 flags in place of kFutexPrivate32 (FUTEX2_SIZE_U32 without
    // FUTEX2_PRIVATE: a word in memory shared between processes).
    BasicFutex& flags(std::uint32_t futex2_flags) noexcept {
        flags_ = futex2_flags;
        return *this;
    }
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = static_cast<std::int32_t>(flags_);
        s.addr = reinterpret_cast<std::uintptr_t>(word_);
        s.addr2 = value_;
        s.addr3 = mask_;
    }

private:
    const std::uint32_t* word_;
    std::uint64_t value_;
    std::uint64_t mask_ = FUTEX_BITSET_MATCH_ANY;
    std::uint32_t flags_ = kFutexPrivate32;
};

// Waits while *word == `expected` (IORING_OP_FUTEX_WAIT, 6.7), until a wake
// (res 0) or a cancel (-ECANCELED); -EAGAIN at once when the word already
// holds another value.  A wake from futex(2) or FutexWake, from any thread
// of the process, ends it.  The word must live until the completion.
using FutexWait = BasicFutex<sys::opcode::futex_wait>;
// Wakes up to `count` waiters on `word` (IORING_OP_FUTEX_WAKE, 6.7), ring
// or futex(2) waiters alike.  res: how many it woke.
using FutexWake = BasicFutex<sys::opcode::futex_wake>;

// Waits on up to FUTEX_WAITV_MAX (128) futexes at once (IORING_OP_FUTEX_WAITV,
// 6.7): each entry names a word (uaddr), the value it is expected to hold
// (val) and its futex2 flags (kFutexPrivate32).  res: the index of the
// entry woken, or -EAGAIN when one already held another value.  The array
// and the words must live until the completion.
class FutexWaitv {
public:
    static constexpr std::uint8_t code = sys::opcode::futex_waitv;
    FutexWaitv(const futex_waitv* waiters, unsigned count) noexcept
        : waiters_(waiters), count_(count) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.addr = reinterpret_cast<std::uintptr_t>(waiters_);
        s.len = count_;
    }

private:
    const futex_waitv* waiters_;
    unsigned count_;
};

// waitid(2) (IORING_OP_WAITID, 6.7): waits for a child that matches
// (`idtype`, `id`) to change state as `options` asks (WEXITED, ...), without
// blocking a thread.  res 0 and `*info` filled (si_pid, si_code CLD_EXITED or
// CLD_KILLED, si_status), or -ECHILD, -ECANCELED.  `info` must live until
// the completion; the child is reaped unless `options` has WNOWAIT.
class Waitid {
public:
    static constexpr std::uint8_t code = sys::opcode::waitid;
    Waitid(idtype_t idtype, id_t id, siginfo_t* info, int options) noexcept
        : idtype_(idtype), id_(id), info_(info), options_(options) {}
    void prepare(io_uring_sqe& s) const noexcept {
        s.opcode = code;
        s.fd = static_cast<std::int32_t>(id_);
        s.len = static_cast<std::uint32_t>(idtype_);
        s.file_index = static_cast<std::uint32_t>(options_);
        s.addr2 = reinterpret_cast<std::uintptr_t>(info_);
    }

private:
    idtype_t idtype_;
    id_t id_;
    siginfo_t* info_;
    int options_;
};

}  // namespace uringkit::op
