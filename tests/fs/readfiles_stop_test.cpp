// readfiles stopped part-way (ReadFilesOptions::stop, set by the CLI's
// SIGINT/SIGTERM handler): every engine ends without waiting for the rest,
// and what it reports is a prefix of the input order with the right hashes:
// nothing after a gap, nothing of a file it did not finish.
#include "files_test_support.hpp"

#include "fs/readfiles.hpp"

#include <xxhash.h>

#include <atomic>
#include <thread>

namespace {

using namespace files_test;
using uringkit::fs::ReadEngine;

struct Case {
    ReadEngine engine;
    unsigned threads;
    const char* name;
};
const Case kCases[] = {{ReadEngine::sync, 0, "sync"},
                       {ReadEngine::threadpool, 4, "threadpool"},
                       {ReadEngine::ring, 1, "ring"},
                       {ReadEngine::ring, 3, "ring x3"}};

struct Reported {
    std::vector<std::string> paths;
    std::vector<std::uint64_t> hashes;
};

Reported run_until(const std::vector<std::string>& inputs, const Case& c, std::atomic<bool>& stop,
                   std::size_t stop_after) {
    uringkit::fs::ReadFilesOptions o;
    o.engine = c.engine;
    o.threads = c.threads;
    o.inflight = 8;
    o.block_size = 4096;
    o.stop = &stop;
    Reported r;
    uringkit::fs::ReadFilesSink sink;
    sink.file = [&](const uringkit::fs::FileResult& f) {
        EXPECT_EQ(f.error, 0) << f.path;
        r.paths.emplace_back(f.path);
        r.hashes.push_back(f.hash);
        if (r.paths.size() == stop_after) stop.store(true);  // as a signal would, mid-run
    };
    uringkit::fs::read_files(inputs, o, sink);
    return r;
}

TEST(ReadFilesStop, WhatIsReportedIsAPrefixInInputOrder) {
    Scratch s;
    std::vector<std::string> inputs, data;
    for (int i = 0; i < 400; ++i) {
        inputs.push_back(s / ("f" + std::to_string(1000 + i)));
        data.push_back(
            random_bytes(static_cast<std::size_t>(i % 7) * 3000, static_cast<unsigned>(i)));
        write_file(inputs.back(), data.back());
    }
    // File 200 is 64 GiB of holes: reading it all would take tens of seconds,
    // so whatever the threads do, the stop set after 50 reports must cut there.
    {
        const int fd = ::open(inputs[200].c_str(), O_WRONLY | O_TRUNC);
        ASSERT_GE(fd, 0);
        if (::ftruncate(fd, 64ll << 30) != 0) GTEST_SKIP() << "no 64 GiB sparse file here";
        ::close(fd);
    }
    for (const Case& c : kCases) {
        std::atomic<bool> stop{false};
        const Reported r = run_until(inputs, c, stop, 50);
        ASSERT_GE(r.paths.size(), 50u) << c.name;
        EXPECT_LE(r.paths.size(), 200u) << c.name << ": the stop was not seen";
        for (std::size_t i = 0; i < r.paths.size(); ++i) {
            ASSERT_EQ(r.paths[i], inputs[i]) << c.name << ": not a prefix at " << i;
            EXPECT_EQ(r.hashes[i], XXH64(data[i].data(), data[i].size(), 0)) << c.name << " " << i;
        }
    }
}

// A stop while a huge file is being read abandons it: it is not reported
// (its hash would be of part of it) and the call returns without reading it
// all (64 GiB of holes would take tens of seconds).
TEST(ReadFilesStop, AFileInFlightIsAbandonedNotReported) {
    Scratch s;
    const std::string small = s / "a", huge = s / "b";
    write_file(small, "first\n");
    {
        const int fd = ::open(huge.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ASSERT_GE(fd, 0);
        if (::ftruncate(fd, 64ll << 30) != 0) GTEST_SKIP() << "no 64 GiB sparse file here";
        ::close(fd);
    }
    for (const Case& c : kCases) {
        std::atomic<bool> stop{false};
        std::atomic<bool> done{false};
        std::thread stopper([&] {
            // Set the stop once the huge file is surely under way.
            for (int i = 0; i < 20 && !done.load(); ++i) ::usleep(10000);
            stop.store(true);
        });
        const Reported r = run_until({small, huge}, c, stop, 0);
        done.store(true);
        stopper.join();
        ASSERT_EQ(r.paths.size(), 1u) << c.name;
        EXPECT_EQ(r.paths[0], small) << c.name;
    }
}

}  // namespace

// The listing reports as it goes, and a stop during it ends the walk: no
// further directory is listed and no file is read.
TEST(ReadFilesStop, TheListingReportsAndAStopEndsIt) {
    Scratch s;
    for (int d = 0; d < 3; ++d) {
        const std::string dir = s / ("d" + std::to_string(d));
        ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
        for (int f = 0; f < 4; ++f) write_file(dir + "/f" + std::to_string(f), "x");
    }
    uringkit::fs::ReadFilesOptions o;
    o.engine = ReadEngine::sync;
    std::atomic<bool> stop{false};
    o.stop = &stop;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
    std::size_t read = 0;
    uringkit::fs::ReadFilesSink sink;
    sink.file = [&](const uringkit::fs::FileResult&) { ++read; };
    sink.listing = [&](std::uint64_t files, std::uint64_t dirs) { seen.emplace_back(files, dirs); };
    uringkit::fs::read_files(std::vector<std::string>{s.dir.string()}, o, sink);
    ASSERT_EQ(seen.size(), 4u);  // each directory once its entries are in
    EXPECT_EQ(seen.back(), std::make_pair(std::uint64_t{12}, std::uint64_t{4}));
    EXPECT_EQ(read, 12u);

    seen.clear();
    read = 0;
    sink.listing = [&](std::uint64_t files, std::uint64_t dirs) {
        seen.emplace_back(files, dirs);
        if (dirs == 2) stop.store(true);  // as a signal would, mid-walk
    };
    uringkit::fs::read_files(std::vector<std::string>{s.dir.string()}, o, sink);
    // The first report is the first subdirectory's; nothing is listed after it.
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0], std::make_pair(std::uint64_t{4}, std::uint64_t{2}));
    EXPECT_EQ(read, 0u);
}
