// A million-line strace trace, generated while it is read (never stored),
// must parse with the reader's own state staying at what the live threads
// and descriptors need, and with the process's peak memory barely moving.
#include <sys/resource.h>
#include "uringkit/sys/sanitizers.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <istream>
#include <streambuf>

#include "replay/trace.hpp"

using namespace uringkit::replay;

// ASan keeps freed blocks in its quarantine (256 MiB by default), so under
// it the peak RSS follows everything ever allocated, not what is kept.
#if URINGKIT_ASAN
#define REPLAY_RSS_FOLLOWS_FREES 1
#endif

namespace {

constexpr std::uint32_t threads = 8, files = 100;
constexpr std::uint64_t lines_per_round = 8;

// Line 1: process 2000 opens /gen/log.  Round k: thread 1000 + k % 8 opens
// /gen/fN and starts a pread; process 2000 appends to its log (an event
// while the pread is pending) and writes to stdout (skipped); the pread
// resumes; the thread writes, seeks and closes.  Lines are made on demand,
// a round at a time.
class GeneratedTrace : public std::streambuf {
public:
    explicit GeneratedTrace(std::uint64_t rounds) : rounds_(rounds) {}

protected:
    int_type underflow() override {
        if (!started_) {
            started_ = true;
            buf_ =
                "2000 1700000000.000000 openat(AT_FDCWD, \"/gen/log\", O_WRONLY) = 5 <0.000001>\n";
            setg(buf_.data(), buf_.data(), buf_.data() + buf_.size());
            return traits_type::to_int_type(buf_[0]);
        }
        if (round_ == rounds_) return traits_type::eof();
        const std::uint64_t k = round_++;
        const std::uint32_t pid = 1000 + static_cast<std::uint32_t>(k % threads);
        const std::uint64_t us = k * 7;
        auto ts = [&](std::uint64_t i) {
            return fmt::format("1700000000.{:06}", (us + i) % 1'000'000);
        };
        buf_ = fmt::format(
            "{0} {2} openat(AT_FDCWD, \"/gen/f{1}\", O_RDWR) = 3 <0.000001>\n"
            "{0} {3} pread64(3,  <unfinished ...>\n"
            "2000 {4} write(5, \"log\\n\", 4) = 4 <0.000001>\n"
            "2000 {4} write(1, \"x\", 1) = 1 <0.000001>\n"
            "{0} {5} <... pread64 resumed>\"\\0\\0\\0\"..., 4096, {7}) = 4096 <0.000002>\n"
            "{0} {6} write(3, \"abc\", 3) = 3 <0.000001>\n"
            "{0} {6} lseek(3, 0, SEEK_SET) = 0 <0.000001>\n"
            "{0} {6} close(3) = 0 <0.000001>\n",
            pid, k % files, ts(0), ts(1), ts(2), ts(3), ts(4), (k % 256) * 4096);
        setg(buf_.data(), buf_.data(), buf_.data() + buf_.size());
        return traits_type::to_int_type(buf_[0]);
    }

private:
    std::uint64_t rounds_, round_ = 0;
    bool started_ = false;
    std::string buf_;
};

long maxrss_kib() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

}  // namespace

TEST(ReplayBoundedMemory, AMillionLinesInTheStateOfEightThreads) {
    // A million lines make the RSS bound meaningful; under AddressSanitizer,
    // which cannot check it (below), a tenth of them checks the state bounds
    // in a tenth of the time (39 s there).
#ifdef REPLAY_RSS_FOLLOWS_FREES
    const std::uint64_t total_lines = 100'000;
#else
    const std::uint64_t total_lines = 1'000'000;
#endif
    const std::uint64_t rounds = total_lines / lines_per_round;
    GeneratedTrace gen(rounds);
    std::istream in(&gen);
    const long rss_before = maxrss_kib();
    const auto start = std::chrono::steady_clock::now();

    TraceReader reader(in);
    TraceReader::State peak;
    std::uint64_t n = 0;
    bool sequence_ok = true;
    ASSERT_EQ(reader.next()->op, Op::open);  // /gen/log
    while (auto e = reader.next()) {
        // Each round gives the thread's open, process 2000's append, the
        // thread's read, write and close, in that order.
        const std::uint64_t k = n / 5, i = n % 5;
        const Op expected[] = {Op::open, Op::write, Op::read, Op::write, Op::close};
        const std::uint64_t offset = i == 1 ? k * 4 : i == 2 ? (k % 256) * 4096 : 0;
        const std::uint32_t thread = i == 1 ? 2000 : 1000 + static_cast<std::uint32_t>(k % threads);
        const std::string path = i == 1 ? "/gen/log" : fmt::format("/gen/f{}", k % files);
        if (e->op != expected[i] || e->offset != offset || e->thread != thread ||
            reader.files()[e->file] != path) {
            sequence_ok = false;
            ADD_FAILURE() << "event " << n << " at line " << e->line << " is " << op_name(e->op)
                          << " at " << e->offset;
            break;
        }
        ++n;
        const auto st = reader.state();
        peak.descriptors = std::max(peak.descriptors, st.descriptors);
        peak.pending = std::max(peak.pending, st.pending);
        peak.buffered = std::max(peak.buffered, st.buffered);
        peak.tables = std::max(peak.tables, st.tables);
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const long rss_growth_kib = maxrss_kib() - rss_before;
    const Summary& s = reader.summary();
    std::printf(
        "%llu lines in %.2f s (%.0f lines/s); peak RSS grew %ld KiB (to %ld KiB); peak state: %zu "
        "descriptors, "
        "%zu pending, %zu buffered, %zu tables\n",
        static_cast<unsigned long long>(s.lines), seconds, static_cast<double>(s.lines) / seconds,
        rss_growth_kib, maxrss_kib(), peak.descriptors, peak.pending, peak.buffered, peak.tables);

    ASSERT_TRUE(sequence_ok);
    EXPECT_EQ(s.lines, rounds * lines_per_round + 1);
    EXPECT_GE(s.lines, total_lines);
    EXPECT_EQ(n, rounds * 5);
    EXPECT_EQ(s.skipped[static_cast<std::size_t>(SkipReason::inherited_descriptor)], rounds);
    EXPECT_EQ(s.skipped_total(), rounds);
    EXPECT_EQ(s.files, files + 1);
    EXPECT_EQ(s.threads, threads + 1);
    EXPECT_EQ(s.threads_seen, threads + 1);
    // What the reader holds is what the trace has open at one moment: two
    // descriptors, one call in flight (seen while 2000's append is
    // returned), one table per process (8 + pid 2000).
    EXPECT_EQ(peak.descriptors, 2u);
    EXPECT_EQ(peak.pending, 1u);
    EXPECT_LE(peak.buffered, 1u);
    EXPECT_LE(peak.tables, threads + 1);
    // Nothing kept per line: the peak RSS may grow by allocator slack, not
    // by the ~70 MB the trace's text amounts to.
#ifdef REPLAY_RSS_FOLLOWS_FREES
    std::printf(
        "peak RSS not checked under AddressSanitizer (its quarantine holds freed memory)\n");
#else
    EXPECT_LT(rss_growth_kib, 4 * 1024);
#endif
}
