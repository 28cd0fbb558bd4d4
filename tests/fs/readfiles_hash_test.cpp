// readfiles: every engine hashes every byte of every file (checked against
// libxxhash's one-shot XXH64 of the same bytes), in walk order or as they
// complete; files larger than the block need several reads; /proc files that
// say size 0 are read to their end; FIFOs are skipped, not read forever; a
// file that fails is reported and the others continue.
#include "files_test_support.hpp"
#include "tools/forbid_uring.hpp"

#include "fs/readfiles.hpp"

#include <sys/stat.h>
#include <xxhash.h>

#include <map>
#include <thread>

namespace {

using namespace files_test;
using uringkit::fs::ReadEngine;

constexpr std::size_t kBlock = 4096;

struct Tree {
    Scratch s;
    std::vector<std::string> order;  // expected walk order of the regular files
    std::map<std::string, std::string> content;

    Tree() {
        stdfs::create_directories(s.dir / "d" / "sub");
        const std::size_t sizes[] = {0,          1,          kBlock - 1,     kBlock,
                                     kBlock + 1, 2 * kBlock, 2 * kBlock + 1, 5 * kBlock + 3};
        unsigned seed = 1;
        // Names chosen so byte order differs from a naive listing.
        for (std::size_t n : sizes) add("d/f" + std::to_string(n), n, seed++);
        add("d/sub/z", 100, seed++);
        add("d/A space", 10, seed++);
        add("d/back\\slash", 3, seed++);
        std::sort(order.begin(), order.end());  // "d/A.." < "d/b.." < "d/f.." < "d/sub/z"
    }
    void add(const std::string& rel, std::size_t n, unsigned seed) {
        const std::string p = s / rel;
        content[p] = random_bytes(n, seed);
        write_file(p, content[p]);
        order.push_back(p);
    }
    std::string root() const { return s / "d"; }
};

struct Collected {
    std::vector<uringkit::fs::FileResult> files;
    std::vector<std::string> paths;
    std::vector<std::string> notes;
    uringkit::fs::ReadFilesStats stats;
};

Collected run_lib(const std::vector<std::string>& inputs, uringkit::fs::ReadFilesOptions o) {
    Collected c;
    uringkit::fs::ReadFilesSink sink;
    sink.file = [&](const uringkit::fs::FileResult& r) {
        c.files.push_back(r);
        c.paths.emplace_back(r.path);
        c.files.back().path = {};
    };
    sink.note = [&](std::string_view p, int e, std::string_view m) {
        c.notes.push_back(std::string(p) + "|" + std::to_string(e) + "|" + std::string(m));
    };
    c.stats = uringkit::fs::read_files(inputs, o, sink);
    return c;
}

class ReadFilesEngines
    : public ::testing::TestWithParam<std::tuple<ReadEngine, bool, unsigned, unsigned>> {};

// threads: 1, or 3 (the ring engine then runs three rings on three threads
// when there are enough files for them, i.e. at inflight 1 and 3).
TEST_P(ReadFilesEngines, EveryByteHashedInWalkOrder) {
    const auto [engine, ordered, inflight, threads] = GetParam();
    Tree t;
    uringkit::fs::ReadFilesOptions o;
    o.engine = engine;
    o.ordered = ordered;
    o.inflight = inflight;
    o.threads = threads;
    o.block_size = kBlock;
    const Collected c = run_lib({t.root()}, o);
    ASSERT_EQ(c.files.size(), t.order.size());
    EXPECT_EQ(c.stats.files, t.order.size());
    EXPECT_EQ(c.stats.failed, 0u);
    std::uint64_t total = 0;
    std::map<std::string, int> seen;
    for (std::size_t i = 0; i < c.files.size(); ++i) {
        const std::string& p = c.paths[i];
        ASSERT_TRUE(t.content.count(p)) << p;
        const std::string& data = t.content.at(p);
        EXPECT_EQ(c.files[i].error, 0) << p;
        EXPECT_EQ(c.files[i].bytes, data.size()) << p;
        EXPECT_EQ(c.files[i].hash, XXH64(data.data(), data.size(), 0)) << p;
        ++seen[p];
        total += data.size();
    }
    for (const auto& [p, n] : seen) EXPECT_EQ(n, 1) << p << " reported " << n << " times";
    if (ordered) {
        EXPECT_EQ(c.paths, t.order);
    }
    EXPECT_EQ(c.stats.bytes, total);
    EXPECT_EQ(c.stats.engine, engine);
}

INSTANTIATE_TEST_SUITE_P(All, ReadFilesEngines,
                         ::testing::Combine(::testing::Values(ReadEngine::ring,
                                                              ReadEngine::threadpool,
                                                              ReadEngine::sync),
                                            ::testing::Bool(), ::testing::Values(1u, 3u, 64u),
                                            ::testing::Values(1u, 3u)));

// Every hash (XXH32, XXH64, XXH128, XXH3) on every engine: each file's
// digest is libxxhash's one-shot hash of its bytes, across several blocks
// included; and a directory given with `walk` off fails with EISDIR (the
// check lists of --check name files, one result per line).
TEST(ReadFiles, EveryHashOnEveryEngineIsTheOneShotHash) {
    using uringkit::fs::HashAlgo;
    Tree t;
    for (const ReadEngine engine : {ReadEngine::ring, ReadEngine::threadpool, ReadEngine::sync})
        for (const HashAlgo algo :
             {HashAlgo::xxh32, HashAlgo::xxh64, HashAlgo::xxh128, HashAlgo::xxh3}) {
            uringkit::fs::ReadFilesOptions o;
            o.engine = engine;
            o.algo = algo;
            o.block_size = kBlock;
            const Collected c = run_lib({t.root()}, o);
            ASSERT_EQ(c.paths, t.order);
            for (std::size_t i = 0; i < c.files.size(); ++i) {
                const std::string& d = t.content.at(c.paths[i]);
                uringkit::fs::HashValue want;
                switch (algo) {
                    case HashAlgo::xxh32:
                        want.low = XXH32(d.data(), d.size(), 0);
                        break;
                    case HashAlgo::xxh64:
                        want.low = XXH64(d.data(), d.size(), 0);
                        break;
                    case HashAlgo::xxh128: {
                        const XXH128_hash_t h = XXH3_128bits(d.data(), d.size());
                        want = {h.low64, h.high64};
                        break;
                    }
                    case HashAlgo::xxh3:
                        want.low = XXH3_64bits(d.data(), d.size());
                        break;
                }
                EXPECT_EQ(c.files[i].value(), want) << c.paths[i] << " algo " << int(algo);
            }
        }
    uringkit::fs::ReadFilesOptions o;
    o.walk = false;
    const Collected c = run_lib({t.root(), t.order[0]}, o);
    EXPECT_EQ(c.paths, std::vector<std::string>{t.order[0]});
    ASSERT_EQ(c.notes.size(), 1u);
    EXPECT_EQ(c.notes[0], t.root() + "|" + std::to_string(EISDIR) + "|");
}

// A ring thread that cannot set up its ring reads its share of the files with
// blocking calls: nothing is lost, doubled or out of order, and a note says so.
// The fault is injected between the calling thread's ring (made first, for
// the walk) and the reader threads: the walk notes the FIFO, and that note
// installs a seccomp filter on the calling thread that the reader threads,
// created afterwards, inherit.
TEST(ReadFiles, RingThreadWithoutItsRingReadsItsShareTheBlockingWay) {
    Tree t;
    ASSERT_EQ(::mkfifo((t.s / "d/fifo").c_str(), 0600), 0);
    uringkit::fs::ReadFilesOptions o;
    o.threads = 3;
    o.inflight = 1;  // three threads' worth of files in an 11-file tree
    o.block_size = kBlock;
    Collected c;
    bool forbidden = false;
    const std::vector<std::string> inputs{t.root()};
    std::thread runner([&] {
        uringkit::fs::ReadFilesSink sink;
        sink.file = [&](const uringkit::fs::FileResult& r) {
            c.files.push_back(r);
            c.paths.emplace_back(r.path);
        };
        sink.note = [&](std::string_view p, int e, std::string_view m) {
            if (!forbidden) forbidden = forbid_io_uring(EPERM, true);
            c.notes.push_back(std::string(p) + "|" + std::to_string(e) + "|" + std::string(m));
        };
        c.stats = uringkit::fs::read_files(inputs, o, sink);
    });
    runner.join();
    ASSERT_TRUE(forbidden) << "the seccomp filter could not be installed";
    EXPECT_EQ(c.stats.engine, ReadEngine::ring);
    EXPECT_EQ(c.paths, t.order);
    EXPECT_EQ(c.stats.files, t.order.size());
    EXPECT_EQ(c.stats.failed, 0u);
    for (std::size_t i = 0; i < c.files.size(); ++i) {
        const std::string& data = t.content.at(c.paths[i]);
        EXPECT_EQ(c.files[i].hash, XXH64(data.data(), data.size(), 0)) << c.paths[i];
    }
    int fallbacks = 0;
    for (const std::string& n : c.notes)
        fallbacks += n.find("its files were read with blocking calls") != std::string::npos;
    EXPECT_EQ(fallbacks, 3) << "every reader thread says it fell back";
}

TEST(ReadFiles, RingSyscallsPerFileWellUnderOne) {
    Scratch s;
    constexpr int kFiles = 300;
    for (int i = 0; i < kFiles; ++i)
        write_file(s / ("f" + std::to_string(i)), random_bytes(4096, static_cast<unsigned>(i)));
    uringkit::fs::ReadFilesOptions o;
    o.hash = false;
    const Collected c = run_lib({s.dir.string()}, o);
    ASSERT_EQ(c.stats.files, static_cast<std::uint64_t>(kFiles));
    EXPECT_EQ(c.stats.bytes, kFiles * 4096u);
    // 64 files in flight: a few io_uring_enter calls per 64 files, plus the walk.
    EXPECT_LT(c.stats.syscalls, kFiles / 4) << c.stats.syscalls << " system calls";
}

TEST(ReadFiles, ProcFilesThatSayZeroAreReadToTheEnd) {
    struct stat st {};
    ASSERT_EQ(::stat("/proc/version", &st), 0);
    ASSERT_EQ(st.st_size, 0) << "the premise: /proc says size 0";
    const std::string data = read_file("/proc/version");
    ASSERT_FALSE(data.empty());
    for (ReadEngine e : {ReadEngine::ring, ReadEngine::threadpool, ReadEngine::sync}) {
        uringkit::fs::ReadFilesOptions o;
        o.engine = e;
        o.block_size = 512;  // several reads for one /proc file
        const Collected c = run_lib({"/proc/version"}, o);
        ASSERT_EQ(c.files.size(), 1u);
        EXPECT_EQ(c.files[0].bytes, data.size()) << uringkit::fs::engine_name(e);
        EXPECT_EQ(c.files[0].hash, XXH64(data.data(), data.size(), 0))
            << uringkit::fs::engine_name(e);
    }
}

TEST(ReadFiles, SpecialFilesSkippedFailuresReportedOthersContinue) {
    Scratch s;
    write_file(s / "a", "alpha");
    write_file(s / "c", "gamma");
    ASSERT_EQ(::mkfifo((s / "b-fifo").c_str(), 0600), 0);
    ASSERT_EQ(::symlink("/nonexistent/target", (s / "b-broken").c_str()), 0);
    ASSERT_EQ(::symlink(".", (s / "b-dirlink").c_str()), 0);
    ASSERT_EQ(::symlink("a", (s / "b-filelink").c_str()), 0);
    for (ReadEngine e : {ReadEngine::ring, ReadEngine::threadpool, ReadEngine::sync}) {
        uringkit::fs::ReadFilesOptions o;
        o.engine = e;
        const Collected c = run_lib({s.dir.string(), s / "missing", "/dev/null"}, o);
        EXPECT_EQ(c.paths, (std::vector<std::string>{s / "a", s / "b-filelink", s / "c"}));
        EXPECT_EQ(c.stats.failed, 2u);   // the broken link, the missing input
        EXPECT_EQ(c.stats.skipped, 3u);  // fifo, link to a directory, /dev/null
        std::string notes;
        for (const std::string& n : c.notes) notes += n + "\n";
        EXPECT_NE(notes.find("b-fifo|0|skipped: fifo"), std::string::npos) << notes;
        EXPECT_NE(notes.find("/dev/null|0|skipped: character device"), std::string::npos) << notes;
        EXPECT_NE(notes.find("b-broken|" + std::to_string(ENOENT)), std::string::npos) << notes;
        EXPECT_NE(notes.find("missing|" + std::to_string(ENOENT)), std::string::npos) << notes;
        ASSERT_EQ(c.files.size(), 3u);
        EXPECT_EQ(c.files[1].hash, XXH64("alpha", 5, 0));
    }
}

TEST(ReadFiles, AReadErrorFailsThatFileAloneAndFreesItsSlot) {
    // /proc/self/mem opens, then reading offset 0 (an unmapped address) fails
    // with EIO: the read stage of the chain fails, the close still runs (it
    // is hard-linked) and the slot serves the next files.
    Scratch s;
    write_file(s / "x", "x");
    for (ReadEngine e : {ReadEngine::ring, ReadEngine::threadpool, ReadEngine::sync}) {
        uringkit::fs::ReadFilesOptions o;
        o.engine = e;
        o.inflight = 1;
        const Collected c = run_lib({s / "x", "/proc/self/mem", s / "x", s / "x"}, o);
        ASSERT_EQ(c.files.size(), 4u);
        EXPECT_EQ(c.files[1].error, EIO) << uringkit::fs::engine_name(e);
        EXPECT_STREQ(c.files[1].stage, "read");
        for (std::size_t i : {0u, 2u, 3u}) {
            EXPECT_EQ(c.files[i].error, 0);
            EXPECT_EQ(c.files[i].hash, XXH64("x", 1, 0));
        }
        EXPECT_EQ(c.stats.failed, 1u);
        EXPECT_EQ(c.stats.files, 3u);
    }
}

// hash_stream (xxhsum's standard input, pipes, devices): bytes arriving in
// pieces of every size, through a pipe, hash as libxxhash's one-shot hash of
// the whole, for every hash (XXH3 and XXH128 through the AVX2 loop where the
// CPU has it); a descriptor that cannot be read gives its errno.
TEST(ReadFiles, StreamInPiecesIsTheOneShotHash) {
    using uringkit::fs::HashAlgo;
    const std::string data = random_bytes(300001, 9);
    for (const HashAlgo algo :
         {HashAlgo::xxh32, HashAlgo::xxh64, HashAlgo::xxh128, HashAlgo::xxh3}) {
        int p[2];
        ASSERT_EQ(::pipe(p), 0);
        std::thread writer([&] {
            // 1, 2, 3 ... bytes at a time, then larger pieces: stripes and blocks cut anywhere.
            std::size_t at = 0;
            for (std::size_t n = 1; at < data.size(); n = n < 300 ? n + 1 : n * 2) {
                const std::size_t take = std::min(n, data.size() - at);
                ASSERT_EQ(::write(p[1], data.data() + at, take), static_cast<ssize_t>(take));
                at += take;
            }
            ::close(p[1]);
        });
        const uringkit::fs::StreamHash h = uringkit::fs::hash_stream(p[0], algo);
        writer.join();
        ::close(p[0]);
        EXPECT_EQ(h.error, 0);
        EXPECT_EQ(h.bytes, data.size());
        uringkit::fs::HashValue want;
        if (algo == HashAlgo::xxh32) want.low = XXH32(data.data(), data.size(), 0);
        if (algo == HashAlgo::xxh64) want.low = XXH64(data.data(), data.size(), 0);
        if (algo == HashAlgo::xxh3) want.low = XXH3_64bits(data.data(), data.size());
        if (algo == HashAlgo::xxh128) {
            const XXH128_hash_t w = XXH3_128bits(data.data(), data.size());
            want = {w.low64, w.high64};
        }
        EXPECT_EQ(h.value, want) << int(algo);
    }
    Scratch s;
    const int dir = ::open(s.dir.c_str(), O_RDONLY | O_DIRECTORY);
    ASSERT_GE(dir, 0);
    EXPECT_EQ(uringkit::fs::hash_stream(dir, HashAlgo::xxh3).error, EISDIR);
    ::close(dir);
}

}  // namespace
