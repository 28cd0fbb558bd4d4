// An append-only log with group commit on uringkit::async: many coroutines
// append; the records that arrive while one group is being made durable form
// the next group, written and fdatasync'ed as one linked write->fsync chain
// (one submission).  An append resumes when its record is durable.
//
//     append_log::GroupCommitLog log(loop, fd, end);
//     async::Result r = co_await log.append(appender, seq, payload);   // 0, or -errno
//
// On disk each record is
//     u32 payload length | u32 appender | u64 sequence | payload | u32 checksum
// (little-endian; the checksum covers everything before it), so a reader
// finds where a torn tail begins and stops there.  Used by
// examples/append_log.cpp, tests/examples/append_log_test.cpp and
// bench/log_bench.cpp.
#pragma once

#include <uringkit/async/loop.hpp>

#include <unistd.h>

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace append_log {

namespace async = uringkit::async;

inline constexpr std::size_t kHeader = 16;  // length, appender, sequence
inline constexpr std::size_t kTrailer = 4;  // checksum
inline constexpr std::size_t kMaxPayload = 1u << 20;

// FNV-1a, 32 bits: enough to tell a torn or stale tail from a record.
inline std::uint32_t checksum(const std::byte* p, std::size_t n) noexcept {
    std::uint32_t h = 2166136261u;
    for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<std::uint32_t>(p[i])) * 16777619u;
    return h;
}

// Appends one encoded record to `out`.
inline void encode(std::vector<std::byte>& out, std::uint32_t appender, std::uint64_t seq,
                   std::span<const std::byte> payload) {
    const std::size_t at = out.size();
    const auto len = static_cast<std::uint32_t>(payload.size());
    std::byte field[kHeader];
    std::memcpy(field, &len, 4);
    std::memcpy(field + 4, &appender, 4);
    std::memcpy(field + 8, &seq, 8);
    out.insert(out.end(), field, field + kHeader);
    out.insert(out.end(), payload.begin(), payload.end());
    const std::uint32_t sum = checksum(out.data() + at, kHeader + payload.size());
    std::memcpy(field, &sum, 4);
    out.insert(out.end(), field, field + kTrailer);
}

struct Record {
    std::uint32_t appender = 0;
    std::uint64_t seq = 0;
    std::string payload;
};

// Every whole record of the file behind `fd`, in file order.  `valid`
// receives the length of the prefix they fill: anything after it is a torn
// tail (a group whose write did not reach the disk whole).
inline std::vector<Record> read_all(int fd, std::uint64_t* valid) {
    std::vector<std::byte> file;
    std::byte buf[65536];
    for (;;) {
        const ssize_t n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(file.size()));
        if (n <= 0) break;
        file.insert(file.end(), buf, buf + n);
    }
    std::vector<Record> out;
    std::size_t at = 0;
    while (file.size() - at >= kHeader + kTrailer) {
        std::uint32_t len;
        std::memcpy(&len, file.data() + at, 4);
        if (len > kMaxPayload || file.size() - at < kHeader + len + kTrailer) break;
        std::uint32_t sum;
        std::memcpy(&sum, file.data() + at + kHeader + len, 4);
        if (sum != checksum(file.data() + at, kHeader + len)) break;
        Record r;
        std::memcpy(&r.appender, file.data() + at + 4, 4);
        std::memcpy(&r.seq, file.data() + at + 8, 8);
        r.payload.assign(reinterpret_cast<const char*>(file.data() + at + kHeader), len);
        out.push_back(std::move(r));
        at += kHeader + len + kTrailer;
    }
    if (valid) *valid = at;
    return out;
}

class GroupCommitLog {
public:
    // Appends at `end` of the file behind `fd` (open for writing).  The log
    // must outlive every append() awaited on it.
    GroupCommitLog(async::Loop& loop, int fd, std::uint64_t end)
        : loop_(&loop), fd_(fd), end_(end) {}
    GroupCommitLog(const GroupCommitLog&) = delete;
    GroupCommitLog& operator=(const GroupCommitLog&) = delete;

    // Resumes once the record is durable: res 0, or the -errno of its
    // group's write or fdatasync.  After a failed
    // group every later append fails too: what reached the disk of that
    // group is unknown, so the log stops rather than write past it.
    async::Task<async::Result> append(std::uint32_t appender, std::uint64_t seq,
                                      std::span<const std::byte> payload) {
        if (payload.size() > kMaxPayload) co_return async::Result{-EMSGSIZE, 0};
        encode(filling_, appender, seq, payload);
        Waiter w;
        if (tail_)
            tail_->next = &w;
        else
            head_ = &w;
        tail_ = &w;
        ++appends_;
        if (!committing_) {
            committing_ = true;
            loop_->spawn(commit());  // runs up to its first submission now
        }
        co_await w;
        co_return w.result;
    }

    std::uint64_t appends() const noexcept { return appends_; }
    // Groups written (durable, or the one that failed), and the fdatasync
    // calls they took.
    std::uint64_t groups() const noexcept { return groups_; }
    std::uint64_t fsyncs() const noexcept { return fsyncs_; }
    std::uint64_t end() const noexcept { return end_; }

private:
    struct Waiter {
        std::coroutine_handle<> handle;
        async::Result result;
        Waiter* next = nullptr;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) noexcept { handle = h; }
        void await_resume() const noexcept {}
    };

    // While records wait: take them all as one group, make it durable, wake
    // its appenders (who may append again, into the next group).
    async::Task<void> commit() {
        while (head_) {
            std::swap(filling_, writing_);
            filling_.clear();
            Waiter* group = std::exchange(head_, nullptr);
            tail_ = nullptr;
            if (failed_.res == 0) {
                co_await make_durable(static_cast<std::uint32_t>(writing_.size()));
                ++groups_;
            }
            // The appenders run now, one after another; what they append
            // goes into filling_, the next group.
            while (group) {
                Waiter* w = group;
                group = w->next;
                w->result = failed_.res == 0 ? async::Result{0, 0} : failed_;
                w->handle.resume();
            }
        }
        committing_ = false;
    }

    // Writes writing_ at end_ and fdatasyncs it: one linked chain; a short
    // write (a size limit, a full disk) goes on with the rest, so the error
    // that stops it is the kernel's own.  Sets failed_, or moves end_.
    async::Task<void> make_durable(std::uint32_t n) {
        using namespace uringkit;
        const auto r = co_await loop_->chain(op::Write(Fd{fd_}, writing_.data(), n, end_),
                                             op::Fsync(Fd{fd_}).datasync());
        if (r[1].res != -ECANCELED) ++fsyncs_;
        if (r[0].res < 0) {
            failed_ = r[0];
            co_return;
        }
        if (static_cast<std::uint32_t>(r[0].res) == n) {
            if (r[1].res < 0)
                failed_ = r[1];
            else
                end_ += n;
            co_return;
        }
        // Short: the fdatasync was cancelled with the rest of the chain.
        for (std::uint32_t done = static_cast<std::uint32_t>(r[0].res); done < n;) {
            const async::Result w =
                co_await loop_->write(Fd{fd_}, writing_.data() + done, n - done, end_ + done);
            if (w.res <= 0) {
                failed_ = w.res < 0 ? w : async::Result{-EIO, 0};
                co_return;
            }
            done += static_cast<std::uint32_t>(w.res);
        }
        const async::Result s = co_await loop_->submit(op::Fsync(Fd{fd_}).datasync());
        ++fsyncs_;
        if (s.res < 0)
            failed_ = s;
        else
            end_ += n;
    }

    async::Loop* loop_;
    int fd_;
    std::uint64_t end_;
    std::vector<std::byte> filling_;  // the next group, encoded
    std::vector<std::byte> writing_;  // the group the kernel is writing
    Waiter* head_ = nullptr;
    Waiter* tail_ = nullptr;
    bool committing_ = false;
    async::Result failed_{};
    std::uint64_t appends_ = 0;
    std::uint64_t groups_ = 0;
    std::uint64_t fsyncs_ = 0;
};

}  // namespace append_log
