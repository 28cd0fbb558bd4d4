// The group-commit log of examples/append_log.hpp keeps what it acknowledged:
// after many coroutines append concurrently and the file is closed and
// reopened, every acknowledged record is there, whole, once, and in order
// per appender; fewer fdatasync calls than appends were made; and when the
// file stops growing (RLIMIT_FSIZE) every append acknowledged before the
// failure is on disk and every later one fails with the kernel's errno.
#include "append_log.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace uringkit;

namespace {

std::string payload(std::uint32_t appender, std::uint64_t seq) {
    // Lengths differ from record to record, so a misplaced record shows.
    return std::string(1 + (appender * 7 + seq * 13) % 200,
                       static_cast<char>('a' + (appender + seq) % 26)) +
           "#" + std::to_string(appender) + "." + std::to_string(seq);
}

class AppendLog : public ::testing::Test {
protected:
    void SetUp() override {
        char tmpl[] = "/tmp/uringkit-log-XXXXXX";
        const int fd = ::mkstemp(tmpl);
        ASSERT_GE(fd, 0);
        ::close(fd);
        path_ = tmpl;
    }
    void TearDown() override { ::unlink(path_.c_str()); }

    // Appenders [0, appenders) each append `records` records from sequence
    // `first`; the results land in acked[appender][i].
    void append_all(unsigned appenders, unsigned records, std::uint64_t first,
                    std::vector<std::vector<int>>& acked, std::uint64_t* fsyncs = nullptr,
                    std::uint64_t* appends = nullptr) {
        const int fd = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        std::uint64_t end = 0;
        (void)append_log::read_all(fd, &end);
        Ring ring(64);
        async::Loop loop(ring);
        append_log::GroupCommitLog log(loop, fd, end);
        acked.assign(appenders, std::vector<int>(records, 1));
        for (std::uint32_t a = 0; a < appenders; ++a)
            loop.spawn([](append_log::GroupCommitLog& l, std::uint32_t id, std::uint64_t from,
                          unsigned n, std::vector<int>& res) -> async::Task<void> {
                for (unsigned i = 0; i < n; ++i) {
                    const std::string p = payload(id, from + i);
                    const async::Result r = co_await l.append(
                        id, from + i, {reinterpret_cast<const std::byte*>(p.data()), p.size()});
                    res[i] = r.res;
                }
            }(log, a, first, records, acked[a]));
        loop.run();
        if (fsyncs) *fsyncs = log.fsyncs();
        if (appends) *appends = log.appends();
        ::close(fd);
    }

    std::vector<append_log::Record> reopen_and_read(std::uint64_t* valid, std::uint64_t* size) {
        const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
        EXPECT_GE(fd, 0);
        auto records = append_log::read_all(fd, valid);
        *size = static_cast<std::uint64_t>(::lseek(fd, 0, SEEK_END));
        ::close(fd);
        return records;
    }

    std::string path_;
};

TEST_F(AppendLog, EveryAcknowledgedRecordIsThereInOrderAfterAReopen) {
    constexpr unsigned kAppenders = 48, kRecords = 40;
    std::vector<std::vector<int>> acked;
    std::uint64_t fsyncs = 0, appends = 0;
    append_all(kAppenders, kRecords, 0, acked, &fsyncs, &appends);
    // A second run on the reopened file continues every sequence.
    std::vector<std::vector<int>> acked2;
    append_all(kAppenders, kRecords, kRecords, acked2);
    for (unsigned a = 0; a < kAppenders; ++a)
        for (unsigned i = 0; i < kRecords; ++i) {
            ASSERT_EQ(acked[a][i], 0) << "appender " << a << " record " << i;
            ASSERT_EQ(acked2[a][i], 0) << "appender " << a << " record " << kRecords + i;
        }
    EXPECT_EQ(appends, kAppenders * kRecords);
    EXPECT_GE(fsyncs, 1u);
    EXPECT_LT(fsyncs, appends)
        << "48 concurrent appenders and still one fdatasync per append: no group formed";

    std::uint64_t valid = 0, size = 0;
    const auto records = reopen_and_read(&valid, &size);
    EXPECT_EQ(valid, size) << "bytes after the last whole record";
    ASSERT_EQ(records.size(), 2u * kAppenders * kRecords);
    std::map<std::uint32_t, std::uint64_t> next;
    for (const auto& r : records) {
        ASSERT_LT(r.appender, kAppenders);
        ASSERT_EQ(r.seq, next[r.appender]) << "appender " << r.appender << " out of order or twice";
        ASSERT_EQ(r.payload, payload(r.appender, r.seq));
        ++next[r.appender];
    }
    for (unsigned a = 0; a < kAppenders; ++a) EXPECT_EQ(next[a], 2u * kRecords) << "appender " << a;
}

TEST_F(AppendLog, AFileThatStopsGrowingFailsLaterAppendsAndKeepsTheAcknowledged) {
    // The kernel refuses writes past RLIMIT_FSIZE with EFBIG (and SIGXFSZ,
    // ignored here): a short write, then an error, in the middle of a group.
    struct sigaction ignore {
    }, old_action{};
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &old_action), 0);
    rlimit old_limit{};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
    rlimit small = old_limit;
    small.rlim_cur = 20000;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    std::vector<std::vector<int>> acked;
    append_all(16, 40, 0, acked);  // about 16 * 40 * 125 = 80 KB wanted
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &old_limit), 0);
    ASSERT_EQ(::sigaction(SIGXFSZ, &old_action, nullptr), 0);

    std::uint64_t valid = 0, size = 0;
    const auto records = reopen_and_read(&valid, &size);
    EXPECT_LE(size, 20000u);
    std::map<std::uint32_t, std::vector<std::uint64_t>> on_disk;
    for (const auto& r : records) {
        ASSERT_EQ(r.payload, payload(r.appender, r.seq));
        on_disk[r.appender].push_back(r.seq);
    }
    std::size_t ok = 0, failed = 0;
    for (std::uint32_t a = 0; a < 16; ++a) {
        const auto& seqs = on_disk[a];
        for (std::size_t i = 0; i < 40; ++i) {
            if (acked[a][i] == 0) {
                ++ok;
                ASSERT_LT(i, seqs.size())
                    << "appender " << a << " record " << i << " acknowledged but not on disk";
                EXPECT_EQ(seqs[i], i);
            } else {
                ++failed;
                EXPECT_EQ(acked[a][i], -EFBIG) << "appender " << a << " record " << i;
                // Only the failed group may have reached the disk in part.
            }
        }
    }
    EXPECT_GT(ok, 0u);
    EXPECT_GT(failed, 0u) << "the size limit never stopped the log";
}

}  // namespace
