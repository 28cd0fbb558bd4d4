// Group commit on io_uring against its two honest peers, in the same run:
//
//   uring-group   examples/append_log.hpp: N coroutines on one loop append;
//                 each group is one linked write->fdatasync chain.
//   thread-group  the same group commit with plain pwrite+fdatasync: N
//                 appender threads hand records to one committer thread,
//                 which writes and fdatasyncs each group (so io_uring is not
//                 credited with what batching does).
//   pwrite-each   N threads, each append a pwrite and an fdatasync of its own.
//
// Every append is acknowledged only when durable.  Per run: appends/s, p99
// append latency (call to acknowledgement) and fdatasync calls per append;
// rounds interleave the engines (the order rotates each round) and the table
// gives medians with min-max.  Each run's file is read back: every record
// there, whole, in order per appender, or the run fails.
//
//   log_bench [--dir DIR] [--appenders N] [--appends M] [--size BYTES] [--rounds R] [--engines
//   a,b,...]
//
// DIR must be on a real disk (fdatasync on tmpfs does nothing); the files are
// O_TMPFILE, never named.  Exit status: 0, 1 a run failed or read back wrong,
// 2 usage, 4 DIR unusable.
#include "append_log.hpp"

#include <uringkit/async/loop.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace uringkit;
using Clock = std::chrono::steady_clock;

namespace {

struct Config {
    std::string dir = ".";
    unsigned appenders = 32;
    unsigned appends = 50;  // per appender
    unsigned size = 128;    // payload bytes
    unsigned rounds = 5;
    std::vector<std::string> engines{"uring-group", "thread-group", "pwrite-each"};
};

struct RunResult {
    double appends_per_s = 0;
    double p99_us = 0;
    double fsyncs_per_append = 0;
};

std::vector<std::byte> payload(const Config& c, std::uint32_t appender, std::uint64_t seq) {
    std::vector<std::byte> p(c.size);
    for (std::size_t i = 0; i < p.size(); ++i)
        p[i] = static_cast<std::byte>((appender * 131 + seq * 7 + i) & 0xff);
    return p;
}

int open_log(const Config& c) {
    const int fd = ::open(c.dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        std::fprintf(stderr, "log_bench: %s: cannot make a temporary file there: %s\n",
                     c.dir.c_str(), std::strerror(errno));
        std::exit(4);
    }
    return fd;
}

// ---- uring-group ------------------------------------------------------------------

std::uint64_t run_uring_group(const Config& c, int fd, std::vector<double>& lat_us) {
    Ring ring(256);
    async::Loop loop(ring);
    append_log::GroupCommitLog log(loop, fd, 0);
    bool failed = false;
    for (std::uint32_t a = 0; a < c.appenders; ++a)
        loop.spawn([](const Config& cfg, append_log::GroupCommitLog& l, std::uint32_t id,
                      double* lat, bool& fail) -> async::Task<void> {
            for (std::uint64_t s = 0; s < cfg.appends; ++s) {
                const std::vector<std::byte> p = payload(cfg, id, s);
                const auto t0 = Clock::now();
                const async::Result r = co_await l.append(id, s, p);
                lat[s] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
                if (!r.ok()) fail = true;
            }
        }(c, log, a, lat_us.data() + static_cast<std::size_t>(a) * c.appends, failed));
    loop.run();
    if (failed) throw std::runtime_error("uring-group: an append failed");
    return log.fsyncs();
}

// ---- thread-group -----------------------------------------------------------------

class ThreadGroupLog {
public:
    explicit ThreadGroupLog(int fd) : fd_(fd), committer_([this] { commit_loop(); }) {}
    ~ThreadGroupLog() {
        {
            std::lock_guard lock(m_);
            stop_ = true;
        }
        work_.notify_one();
        committer_.join();
    }
    // Returns when the record is durable: 0 or -errno.
    int append(std::uint32_t appender, std::uint64_t seq, std::span<const std::byte> p) {
        std::unique_lock lock(m_);
        append_log::encode(filling_, appender, seq, p);
        const std::uint64_t group = next_group_;
        work_.notify_one();
        done_.wait(lock, [&] { return durable_ >= group || failed_; });
        return durable_ >= group ? 0 : failed_;
    }
    std::uint64_t fsyncs() const noexcept { return fsyncs_; }

private:
    void commit_loop() {
        std::vector<std::byte> writing;
        std::unique_lock lock(m_);
        for (;;) {
            work_.wait(lock, [&] { return stop_ || !filling_.empty(); });
            if (filling_.empty()) return;
            std::swap(filling_, writing);
            filling_.clear();
            const std::uint64_t group = next_group_++;
            lock.unlock();
            int err = 0;
            for (std::size_t done = 0; done < writing.size() && !err;) {
                const ssize_t n = ::pwrite(fd_, writing.data() + done, writing.size() - done,
                                           static_cast<off_t>(end_ + done));
                if (n <= 0)
                    err = n < 0 ? -errno : -EIO;
                else
                    done += static_cast<std::size_t>(n);
            }
            if (!err && ::fdatasync(fd_) != 0) err = -errno;
            ++fsyncs_;
            end_ += writing.size();
            lock.lock();
            if (err)
                failed_ = err;
            else
                durable_ = group;
            done_.notify_all();
        }
    }

    int fd_;
    std::mutex m_;
    std::condition_variable work_, done_;
    std::vector<std::byte> filling_;
    std::uint64_t next_group_ = 1;  // the group filling_ becomes
    std::uint64_t durable_ = 0;     // every group up to this one is durable
    int failed_ = 0;
    bool stop_ = false;
    std::uint64_t end_ = 0;
    std::atomic<std::uint64_t> fsyncs_{0};
    std::thread committer_;
};

template <class Append>
void run_threads(const Config& c, std::vector<double>& lat_us, Append&& append) {
    std::vector<std::thread> threads;
    std::atomic<bool> failed{false};
    for (std::uint32_t a = 0; a < c.appenders; ++a)
        threads.emplace_back([&, a] {
            double* lat = lat_us.data() + static_cast<std::size_t>(a) * c.appends;
            for (std::uint64_t s = 0; s < c.appends; ++s) {
                const std::vector<std::byte> p = payload(c, a, s);
                const auto t0 = Clock::now();
                if (append(a, s, p) != 0) failed = true;
                lat[s] = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
            }
        });
    for (auto& t : threads) t.join();
    if (failed) throw std::runtime_error("an append failed");
}

std::uint64_t run_thread_group(const Config& c, int fd, std::vector<double>& lat_us) {
    ThreadGroupLog log(fd);
    run_threads(c, lat_us, [&](std::uint32_t a, std::uint64_t s, std::span<const std::byte> p) {
        return log.append(a, s, p);
    });
    return log.fsyncs();
}

// ---- pwrite-each ----------------------------------------------------------------------

std::uint64_t run_pwrite_each(const Config& c, int fd, std::vector<double>& lat_us) {
    std::atomic<std::uint64_t> end{0};
    std::atomic<std::uint64_t> fsyncs{0};
    run_threads(c, lat_us, [&](std::uint32_t a, std::uint64_t s, std::span<const std::byte> p) {
        std::vector<std::byte> rec;
        append_log::encode(rec, a, s, p);
        const std::uint64_t at = end.fetch_add(rec.size());
        if (::pwrite(fd, rec.data(), rec.size(), static_cast<off_t>(at)) !=
            static_cast<ssize_t>(rec.size()))
            return -EIO;
        ++fsyncs;
        return ::fdatasync(fd) == 0 ? 0 : -errno;
    });
    return fsyncs;
}

// Every record of every appender, whole and in order per appender.
bool verify(const Config& c, int fd, std::string& why) {
    std::uint64_t valid = 0;
    const auto records = append_log::read_all(fd, &valid);
    if (records.size() != static_cast<std::size_t>(c.appenders) * c.appends) {
        why = std::to_string(records.size()) + " records read back";
        return false;
    }
    std::map<std::uint32_t, std::uint64_t> next;
    for (const auto& r : records) {
        const std::vector<std::byte> want = payload(c, r.appender, r.seq);
        if (r.seq != next[r.appender]++ || r.payload.size() != want.size() ||
            std::memcmp(r.payload.data(), want.data(), want.size()) != 0) {
            why = "appender " + std::to_string(r.appender) + " record " + std::to_string(r.seq) +
                  " wrong or out of order";
            return false;
        }
    }
    return true;
}

RunResult run_one(const Config& c, const std::string& engine) {
    const int fd = open_log(c);
    std::vector<double> lat(static_cast<std::size_t>(c.appenders) * c.appends);
    const auto t0 = Clock::now();
    std::uint64_t fsyncs = 0;
    if (engine == "uring-group")
        fsyncs = run_uring_group(c, fd, lat);
    else if (engine == "thread-group")
        fsyncs = run_thread_group(c, fd, lat);
    else
        fsyncs = run_pwrite_each(c, fd, lat);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    std::string why;
    if (!verify(c, fd, why)) throw std::runtime_error(engine + ": the log read back wrong: " + why);
    ::close(fd);
    std::sort(lat.begin(), lat.end());
    RunResult r;
    r.appends_per_s = static_cast<double>(lat.size()) / secs;
    r.p99_us = lat[std::min(lat.size() - 1, lat.size() * 99 / 100)];
    r.fsyncs_per_append = static_cast<double>(fsyncs) / static_cast<double>(lat.size());
    return r;
}

struct Summary {
    double median, lo, hi;
};
Summary summarize(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    const double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return {med, v.front(), v.back()};
}

bool parse_unsigned(const char* s, unsigned& out) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(s, &end, 10);
    if (end == s || *end || v == 0 || v > 1000000) return false;
    out = static_cast<unsigned>(v);
    return true;
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "log_bench: %s\nusage: log_bench [--dir DIR] [--appenders N] [--appends M] "
                 "[--size BYTES] [--rounds R]"
                 " [--engines uring-group,thread-group,pwrite-each]\n",
                 why);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    Config c;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) usage(("missing value after " + a).c_str());
        const char* v = argv[++i];
        bool ok = true;
        if (a == "--dir")
            c.dir = v;
        else if (a == "--appenders")
            ok = parse_unsigned(v, c.appenders) && c.appenders <= 4096;
        else if (a == "--appends")
            ok = parse_unsigned(v, c.appends);
        else if (a == "--size")
            ok = parse_unsigned(v, c.size) && c.size <= append_log::kMaxPayload;
        else if (a == "--rounds")
            ok = parse_unsigned(v, c.rounds);
        else if (a == "--engines") {
            c.engines.clear();
            std::string s = v;
            for (std::size_t at = 0; at <= s.size();) {
                const std::size_t comma = std::min(s.find(',', at), s.size());
                const std::string e = s.substr(at, comma - at);
                if (e != "uring-group" && e != "thread-group" && e != "pwrite-each")
                    usage(("unknown engine " + e).c_str());
                c.engines.push_back(e);
                at = comma + 1;
            }
        } else
            usage(("unknown option " + a).c_str());
        if (!ok) usage(("bad value for " + a + ": " + v).c_str());
    }
    const std::size_t E = c.engines.size();
    std::vector<std::vector<RunResult>> results(E);
    try {
        for (unsigned round = 0; round < c.rounds; ++round)
            for (std::size_t k = 0; k < E; ++k) {
                const std::size_t e = (k + round) % E;  // the order rotates each round
                const RunResult r = run_one(c, c.engines[e]);
                results[e].push_back(r);
                std::fprintf(
                    stderr,
                    "round %u %-12s %10.0f appends/s  p99 %9.0f us  %.3f fdatasync/append\n",
                    round + 1, c.engines[e].c_str(), r.appends_per_s, r.p99_us,
                    r.fsyncs_per_append);
            }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "log_bench: %s\n", e.what());
        return 1;
    }
    std::printf(
        "%u appenders x %u appends of %u-byte records; %u rounds, order rotated; median "
        "(min-max)\n\n",
        c.appenders, c.appends, c.size, c.rounds);
    std::printf(
        "| engine | appends/s | p99 append latency (ms) | fdatasync per append "
        "|\n|---|---:|---:|---:|\n");
    for (std::size_t e = 0; e < E; ++e) {
        std::vector<double> tput, p99, fs;
        for (const auto& r : results[e]) {
            tput.push_back(r.appends_per_s);
            p99.push_back(r.p99_us / 1000);
            fs.push_back(r.fsyncs_per_append);
        }
        const Summary t = summarize(tput), p = summarize(p99), f = summarize(fs);
        std::printf("| %s | %.0f (%.0f-%.0f) | %.1f (%.1f-%.1f) | %.3f (%.3f-%.3f) |\n",
                    c.engines[e].c_str(), t.median, t.lo, t.hi, p.median, p.lo, p.hi, f.median,
                    f.lo, f.hi);
    }
    return 0;
}
