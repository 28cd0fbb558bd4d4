// bench's attribution (docs/bench.md, "Attribution"): each cause the verdict
// can name is produced on the real kernel and its fields and words checked,
// never its timings: tmpfs reads handed to io-wq workers, IOSQE_ASYNC
// (uring-async), an SQPOLL thread that sleeps between I/Os, a CQ smaller
// than the I/Os in flight; and the hand-off counter's "not counted" path.
#include "bench_cli_fixture.hpp"

#include <sys/statfs.h>

#include <linux/magic.h>

namespace {

using bench_cli::BenchCli;
using bench_cli::Result;
using json = nlohmann::json;

// The mount point of tracefs, where one is mounted (the tests never mount it).
std::string tracefs_mount() {
    std::ifstream in("/proc/self/mounts");
    for (std::string line; std::getline(in, line);) {
        std::istringstream f(line);
        std::string source, point, type;
        if (f >> source >> point >> type && type == "tracefs") return point;
    }
    return {};
}

bool is_tmpfs(const char* dir) {
    struct statfs s {};
    return ::statfs(dir, &s) == 0 && s.f_type == TMPFS_MAGIC;
}

class BenchAttribution : public BenchCli {
protected:
    void TearDown() override {
        if (!shm_file_.empty()) ::unlink(shm_file_.c_str());
        BenchCli::TearDown();
    }

    // A file of `bytes` in /dev/shm (tmpfs), removed after the test.
    std::string shm_file(std::size_t bytes) {
        char name[] = "/dev/shm/uringkit-attribution-XXXXXX";
        const int fd = ::mkstemp(name);
        EXPECT_GE(fd, 0);
        shm_file_ = name;
        std::string block(1 << 20, 'a');
        for (std::size_t done = 0; done < bytes; done += block.size())
            EXPECT_EQ(::write(fd, block.data(), block.size()), static_cast<ssize_t>(block.size()));
        ::close(fd);
        return shm_file_;
    }

    // Runs bench with `args` and the JSON in a file; returns the document.
    json bench_json(std::vector<std::string> args, Result* out = nullptr) {
        const std::string file = path("bench.json");
        args.insert(args.end(), {"--rounds", "1", "--json", file, "--wide"});
        const Result r = run(args);
        EXPECT_EQ(r.status, 0) << r.err << r.out;
        if (out) *out = r;
        std::ifstream in(file);
        return json::parse(in, nullptr, false);
    }

    static const json& row(const json& doc, const std::string& engine, unsigned depth) {
        for (const json& r : doc.at("rows"))
            if (r.at("engine") == engine && r.at("iodepth") == depth) return r;
        static const json none;
        ADD_FAILURE() << "no row " << engine << " at depth " << depth;
        return none;
    }

    static std::string verdict(const json& doc) {
        std::string all;
        for (const json& l : doc.at("verdict")) all += l.get<std::string>() + "\n";
        return all;
    }

    static bool has(const std::string& text, const std::string& needle) {
        return text.find(needle) != std::string::npos;
    }

    std::string shm_file_;
};

// tmpfs files lack FMODE_NOWAIT: io_uring queues every read to an io-wq
// worker; pread never involves one.  The row and the verdict say so.
TEST_F(BenchAttribution, TmpfsReadsAreHandedToWorkers) {
    if (!is_tmpfs("/dev/shm")) GTEST_SKIP() << "/dev/shm is not tmpfs here";
    const std::string file = shm_file(16 << 20);
    Result r;
    const json doc = bench_json(
        {"--filename", file, "--engines", "pread,uring", "--iodepth", "1", "--runtime", "0.1"}, &r);
    ASSERT_FALSE(doc.is_discarded());
    EXPECT_EQ(doc.at("storage").at("filesystem"), "tmpfs");
    const json& uring = row(doc, "uring", 1);
    ASSERT_EQ(uring.at("status"), "ok") << uring.dump();
    EXPECT_GE(uring.at("io_workers").get<unsigned>(), 1u) << uring.dump();
    EXPECT_GT(uring.at("offload_cpu_us_per_io").get<double>(), 0) << uring.dump();
    // At depth 1 the worker sleeps after each read and is woken for the next.
    EXPECT_GE(uring.at("offload_ctx_per_kio").get<double>(), 500) << uring.dump();
    if (doc.at("offload_counter").at("counted").get<bool>()) {
        EXPECT_GE(uring.at("offload_per_io").get<double>(), 0.99) << uring.dump();
    }
    const json& pread = row(doc, "pread", 1);
    EXPECT_EQ(pread.at("io_workers"), 0u) << pread.dump();
    EXPECT_EQ(pread.at("offload_cpu_us_per_io"), 0.0) << pread.dump();
    EXPECT_EQ(pread.at("sqpoll_cpu_us_per_io"), 0.0) << pread.dump();

    const std::string v = verdict(doc);
    EXPECT_TRUE(has(v, "at depth 1 uring handed ") || has(v, "at depth 1 uring spent ")) << v;
    EXPECT_TRUE(has(v, "kernel worker threads")) << v;
    EXPECT_TRUE(has(v,
                    "tmpfs files do not support non-blocking reads, so io_uring queues each "
                    "one to a worker"))
        << v;
    EXPECT_FALSE(has(v, "at depth 1 pread handed") || has(v, "at depth 1 pread spent")) << v;
    // The table's columns, and each run carries the figures too.
    EXPECT_TRUE(has(r.out, "kthr%")) << r.out;
    EXPECT_TRUE(has(r.out, "offl/IO")) << r.out;
    for (const json& round : doc.at("runs"))
        for (const json& run : round.at("runs"))
            if (run.at("engine") == "uring") {
                EXPECT_GE(run.at("io_workers").get<unsigned>(), 1u);
            }
}

// IOSQE_ASYNC sends every read to a worker even where the plain ring reads
// inline (a warm ext4 or other disk file system): uring-async's row names
// it, uring's says nothing.
TEST_F(BenchAttribution, AsyncFlagForcesWorkers) {
    if (is_tmpfs(tmp_.c_str())) GTEST_SKIP() << "TMPDIR is tmpfs: plain uring reads go to workers";
    const json doc = bench_json(
        {"--size", "16m", "--engines", "uring,uring-async", "--iodepth", "1", "--runtime", "0.1"});
    ASSERT_FALSE(doc.is_discarded());
    const json& async = row(doc, "uring-async", 1);
    ASSERT_EQ(async.at("status"), "ok") << async.dump();
    EXPECT_GE(async.at("io_workers").get<unsigned>(), 1u) << async.dump();
    EXPECT_GE(async.at("offload_ctx_per_kio").get<double>(), 500) << async.dump();
    const json& plain = row(doc, "uring", 1);
    // Warm buffered reads complete inline: at most a stray worker, never one per read.
    EXPECT_LT(plain.at("offload_ctx_per_kio").get<double>(), 100) << plain.dump();
    const std::string v = verdict(doc);
    EXPECT_TRUE(has(v, "IOSQE_ASYNC sends every read to a worker")) << v;
    EXPECT_FALSE(has(v, "at depth 1 uring handed") || has(v, "at depth 1 uring spent")) << v;
}

// An SQPOLL thread that sleeps after 1 ms without work (rounded up to a
// tick: 4 ms at HZ=250), while each 64 MiB read of a tmpfs file keeps an
// io-wq worker busy several times longer (about 10 ms on an idle 2-core VM;
// 16 MiB reads were too short to be sure of it on a busy one): most reads
// have to wake it.  Whether the thread is asleep at each submission is the
// scheduler's call: under ASan on a loaded 2-core machine one run of 14
// reads saw a single wake-up.  So up to three runs, and the first that
// woke it for one read in ten must name the cause; none doing so fails.
TEST_F(BenchAttribution, SqpollThreadWokenOften) {
    if (!is_tmpfs("/dev/shm")) GTEST_SKIP() << "/dev/shm is not tmpfs here";
    const std::string file = shm_file(128 << 20);
    std::string tried;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const json doc =
            bench_json({"--filename", file, "--engines", "uring-sqpoll", "--iodepth", "1", "--bs",
                        "64m", "--sq-thread-idle", "1", "--runtime", "0.3", "--ramp", "0"});
        ASSERT_FALSE(doc.is_discarded());
        const json& sq = row(doc, "uring-sqpoll", 1);
        if (sq.at("status") == "unavailable") GTEST_SKIP() << sq.at("reason");
        ASSERT_EQ(sq.at("status"), "ok") << sq.dump();
        EXPECT_GT(sq.at("sqpoll_cpu_us_per_io").get<double>(), 0) << sq.dump();
        if (sq.at("sq_wakeups_per_kio").get<double>() < 100) {
            tried += sq.dump() + "\n";
            continue;
        }
        const std::string v = verdict(doc);
        EXPECT_TRUE(has(v, "at depth 1 uring-sqpoll woke its sleeping SQ polling thread")) << v;
        EXPECT_TRUE(has(v, "it sleeps after 1 ms without work")) << v;
        return;
    }
    ADD_FAILURE() << "three runs, none woke the SQ thread for one read in ten:\n" << tried;
}

// A ring of 4 entries with 32 reads in flight: the CQ cannot hold them.
TEST_F(BenchAttribution, TinyCqOverflows) {
    const json doc = bench_json({"--size", "16m", "--engines", "uring", "--iodepth", "32",
                                 "--ring-entries", "4", "--runtime", "0.1"});
    ASSERT_FALSE(doc.is_discarded());
    const json& u = row(doc, "uring", 32);
    ASSERT_EQ(u.at("status"), "ok") << u.dump();
    EXPECT_GT(u.at("cq_overflows").get<std::uint64_t>(), 0u) << u.dump();
    const std::string v = verdict(doc);
    EXPECT_TRUE(has(v, "at depth 32 uring overflowed its completion queue in ")) << v;
    EXPECT_TRUE(has(v, "32 I/Os in flight for a CQ of 4 entries")) << v;
}

// The ring's own size (the default) never overflows, and nothing is said.
TEST_F(BenchAttribution, NothingToExplainSaysNothing) {
    if (is_tmpfs(tmp_.c_str())) GTEST_SKIP() << "TMPDIR is tmpfs: plain uring reads go to workers";
    const json doc = bench_json(
        {"--size", "16m", "--engines", "pread,uring", "--iodepth", "32", "--runtime", "0.1"});
    ASSERT_FALSE(doc.is_discarded());
    EXPECT_EQ(row(doc, "uring", 32).at("cq_overflows"), 0u);
    const std::string v = verdict(doc);
    for (const char* cause : {"kernel worker threads", "SQ polling thread", "completion queue",
                              "io_uring_enter answered"})
        EXPECT_FALSE(has(v, cause)) << v;
}

// Without tracefs, or without the right to count a kernel tracepoint, the
// hand-offs are not counted: null in every row, one note saying why.
TEST_F(BenchAttribution, HandOffCounterSaysWhyNotCounted) {
    const bool mounted = !tracefs_mount().empty();
    std::function<void()> as_nobody;
    if (mounted) {
        if (::geteuid() != 0) GTEST_SKIP() << "tracefs is mounted; becoming nobody needs root";
        // nobody may not read tracefs (0700) nor count a kernel tracepoint.
        fs::permissions(dir_, fs::perms::all);
        fs::permissions(tmp_, fs::perms::all);
        as_nobody = [] {
            if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(126);
        };
    }
    const std::string file = path("bench.json");
    const Result r = run({"--size", "4m", "--engines", "uring", "--iodepth", "1", "--runtime",
                          "0.05", "--rounds", "1", "--json", file},
                         as_nobody);
    ASSERT_EQ(r.status, 0) << r.err;
    std::ifstream in(file);
    const json doc = json::parse(in);
    const json& counter = doc.at("offload_counter");
    EXPECT_FALSE(counter.at("counted").get<bool>()) << counter.dump();
    const std::string why = counter.at("why");
    if (!mounted) {
        EXPECT_EQ(why, "tracefs not mounted");
    } else {
        EXPECT_FALSE(why.empty());
    }
    EXPECT_TRUE(row(doc, "uring", 1).at("offload_per_io").is_null());
    std::size_t notes = 0;
    for (const json& n : doc.at("notes"))
        notes += has(n.get<std::string>(), "io-wq hand-offs: not counted: " + why);
    EXPECT_EQ(notes, 1u) << doc.at("notes").dump();
}

// Where tracefs is mounted and this is root, every tmpfs read is counted
// as one hand-off, and pread's none.
TEST_F(BenchAttribution, HandOffCounterCountsEveryTmpfsRead) {
    const std::string mount = tracefs_mount();
    if (mount.empty()) GTEST_SKIP() << "tracefs not mounted (the tests never mount it)";
    if (::geteuid() != 0) GTEST_SKIP() << "counting a kernel tracepoint needs root here";
    if (!is_tmpfs("/dev/shm")) GTEST_SKIP() << "/dev/shm is not tmpfs here";
    const std::string file = shm_file(16 << 20);
    const json doc = bench_json(
        {"--filename", file, "--engines", "pread,uring", "--iodepth", "1,8", "--runtime", "0.1"});
    ASSERT_FALSE(doc.is_discarded());
    ASSERT_TRUE(doc.at("offload_counter").at("counted").get<bool>()) << doc.at("offload_counter");
    for (unsigned depth : {1u, 8u}) {
        EXPECT_NEAR(row(doc, "uring", depth).at("offload_per_io").get<double>(), 1.0, 0.01);
        EXPECT_EQ(row(doc, "pread", depth).at("offload_per_io").get<double>(), 0.0);
    }
    EXPECT_TRUE(has(verdict(doc), "at depth 1 uring handed 100% of its reads")) << verdict(doc);
}

}  // namespace
