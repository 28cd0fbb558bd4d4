// cp --verify: after each file is copied, source and copy are read again and
// compared by XXH3-128 in 1 MiB chunks.  A byte of the copy changed between
// the copy and the check (CopyOptions::before_verify) must fail the file,
// naming it, the 1 MiB range and the first differing offset, leave the copy
// as it is, and do so on every path the bytes can take (ring pairs,
// copy_file_range, read/write, a tree's chains, a clone, the clone pool).
// A clean copy passes, with the copy read back with O_DIRECT, on ext4, a
// tmpfs and XFS with reflink (where the copy shares the source's extents).
#include "loop_fs.hpp"

#include "fs/copy.hpp"

#include <functional>

namespace {

using namespace files_test;
using uringkit::fs::ByteEngine;
using uringkit::fs::CopyOptions;
using uringkit::fs::CopyResult;
using uringkit::fs::CopyStatus;

#define MAKE_FS(var, ...)    \
    LoopFs var(__VA_ARGS__); \
    if (!var.ok()) GTEST_SKIP() << var.why

constexpr std::size_t kSize = (3 << 20) + 5;    // four chunks, the last 5 bytes
constexpr std::uint64_t kFlip = (3 << 19) + 7;  // in the second chunk: bytes 1048576-2097151

struct Outcome {
    CopyResult r;
    std::vector<std::string> errors, notes;
    std::vector<std::string> verified;  // destinations before_verify saw
};

Outcome copy_verified(const std::vector<std::string>& srcs, const std::string& dst, CopyOptions o,
                      const std::function<void(const std::string& dst)>& tamper = {}) {
    Outcome out;
    o.verify = true;
    o.before_verify = [&](std::string_view, std::string_view d) {
        out.verified.emplace_back(d);
        if (tamper) tamper(std::string(d));
    };
    uringkit::fs::CopySink sink;
    sink.error = [&](std::string_view m) { out.errors.emplace_back(m); };
    sink.note = [&](std::string_view m) { out.notes.emplace_back(m); };
    out.r = uringkit::fs::copy(srcs, dst, o, sink);
    return out;
}

// Changes one byte of `path` in place (same inode), as a disk or a
// misbehaving layer below the copy might.
void flip_byte(const std::string& path, std::uint64_t offset) {
    const int fd = ::open(path.c_str(), O_RDWR);
    ASSERT_GE(fd, 0) << path;
    char b = 0;
    ASSERT_EQ(::pread(fd, &b, 1, static_cast<off_t>(offset)), 1);
    b = static_cast<char>(b ^ 0x5a);
    ASSERT_EQ(::pwrite(fd, &b, 1, static_cast<off_t>(offset)), 1);
    ::close(fd);
}

void expect_mismatch_reported(const Outcome& o, const std::string& dst, const std::string& range,
                              std::uint64_t first) {
    EXPECT_EQ(o.r.status, CopyStatus::failure) << o.r.message;
    ASSERT_EQ(o.errors.size(), 1u) << o.r.message;
    const std::string& m = o.errors[0];
    EXPECT_EQ(m.rfind(dst + ": verify: bytes at offsets " + range + " differ from '", 0), 0u) << m;
    EXPECT_NE(m.find("(first at offset " + std::to_string(first)), std::string::npos) << m;
    EXPECT_NE(m.find("XXH3-128 of the source's "), std::string::npos) << m;
    EXPECT_NE(m.find("the copy is left as it is"), std::string::npos) << m;
}

struct BytePath {
    const char* name;
    ByteEngine engine;
    bool fallback;
    std::uint64_t CopyResult::*counter;
};
const BytePath kPaths[] = {
    {"ring pairs", ByteEngine::ring, false, &CopyResult::ring_files},
    {"copy_file_range", ByteEngine::kernel, false, &CopyResult::kernel_copied_files},
    {"read/write without a ring", ByteEngine::automatic, true, &CopyResult::read_write_files},
};

TEST(CpVerify, ChangedByteIsNamedOnEveryBytePath) {
    for (const BytePath& p : kPaths) {
        SCOPED_TRACE(p.name);
        Scratch s;
        const std::string data = random_bytes(kSize, 1);
        write_file(s / "src", data);
        CopyOptions o;
        o.engine = p.engine;
        o.force_fallback = p.fallback;
        o.reflink = uringkit::fs::Reflink::never;
        const Outcome out = copy_verified({s / "src"}, s / "dst", o,
                                          [](const std::string& d) { flip_byte(d, kFlip); });
        EXPECT_EQ(out.r.*p.counter, 1u);
        EXPECT_EQ(out.verified, std::vector<std::string>{s / "dst"});
        expect_mismatch_reported(out, s / "dst", "1048576-2097151", kFlip);
        EXPECT_EQ(out.r.verified_files, 0u);
        // Left as it is: the copy, with the changed byte, under its name.
        std::string expected = data;
        expected[kFlip] = static_cast<char>(expected[kFlip] ^ 0x5a);
        EXPECT_EQ(read_file(s / "dst"), expected);
        EXPECT_TRUE(temporaries(s.dir).empty());
    }
}

TEST(CpVerify, CleanCopyPassesReadingTheCopyWithODirect) {
    for (const BytePath& p : kPaths) {
        SCOPED_TRACE(p.name);
        Scratch s;  // /tmp: ext4 on the machines the tests run on; O_DIRECT checked below
        const std::string data = random_bytes(kSize, 2);
        write_file(s / "src", data);
        CopyOptions o;
        o.engine = p.engine;
        o.force_fallback = p.fallback;
        const Outcome out = copy_verified({s / "src"}, s / "dst", o);
        ASSERT_EQ(out.r.status, CopyStatus::ok) << out.r.message;
        EXPECT_TRUE(out.errors.empty());
        EXPECT_EQ(out.r.verified_files, 1u);
        EXPECT_EQ(out.r.verify_bytes, 2 * kSize);  // every byte of both, once
        EXPECT_GT(out.r.verify_seconds, 0.0);
        const int probe = ::open((s / "dst").c_str(), O_RDONLY | O_DIRECT);
        if (probe >= 0) {
            ::close(probe);
            EXPECT_EQ(out.r.verified_direct, 1u) << "the copy's file system allows O_DIRECT";
        }
        EXPECT_EQ(read_file(s / "dst"), data);
    }
}

TEST(CpVerify, ShorterCopyNamesWhereEachEnds) {
    Scratch s;
    write_file(s / "src", random_bytes(kSize, 3));
    const Outcome out = copy_verified(
        {s / "src"}, s / "dst", CopyOptions{},
        [](const std::string& d) { ASSERT_EQ(::truncate(d.c_str(), (2 << 20) + 100), 0); });
    // The third chunk: the source has a whole 1 MiB there, the copy 100 bytes.
    expect_mismatch_reported(out, s / "dst", "2097152-3145727", (2 << 20) + 100);
    EXPECT_NE(out.errors.at(0).find("; the copy ends at offset 2097252;"), std::string::npos)
        << out.errors.at(0);
    EXPECT_EQ(out.errors.at(0).find("the source ends"), std::string::npos) << out.errors.at(0);

    // A longer copy: the source's last chunk (5 bytes) ends, the copy's goes on.
    const Outcome longer = copy_verified(
        {s / "src"}, s / "dst2", CopyOptions{},
        [](const std::string& d) { ASSERT_EQ(::truncate(d.c_str(), (3 << 20) + 9), 0); });
    expect_mismatch_reported(longer, s / "dst2", "3145728-3145736", (3 << 20) + 5);
    EXPECT_NE(longer.errors.at(0).find(
                  "; the source ends at offset 3145733; the copy ends at offset 3145737;"),
              std::string::npos)
        << longer.errors.at(0);
}

TEST(CpVerify, EmptyFileAndReplacedCopy) {
    Scratch s;
    write_file(s / "empty", "");
    const Outcome empty = copy_verified({s / "empty"}, s / "empty.copy", CopyOptions{});
    EXPECT_EQ(empty.r.status, CopyStatus::ok) << empty.r.message;
    EXPECT_EQ(empty.r.verified_files, 1u);
    EXPECT_EQ(empty.r.verify_bytes, 0u);

    // Something renamed over the copy before the check: not taken for the copy.
    write_file(s / "src", random_bytes(10000, 4));
    const Outcome replaced =
        copy_verified({s / "src"}, s / "dst", CopyOptions{}, [&](const std::string& d) {
            write_file(s / "other", random_bytes(10000, 4));  // the same bytes, another inode
            stdfs::rename(s / "other", d);
        });
    EXPECT_EQ(replaced.r.status, CopyStatus::failure);
    ASSERT_EQ(replaced.errors.size(), 1u);
    EXPECT_EQ(replaced.errors[0],
              s / "dst" + ": verify: not the file this copy wrote (replaced since); not verified");
}

// -r: small files go through the chains or the pool, the larger one through
// the range copier; only the changed one fails, the others are verified.
TEST(CpVerify, TreeNamesTheOneChangedFile) {
    Scratch s;
    stdfs::create_directories(s.dir / "t/sub");
    const std::pair<const char*, std::size_t> files[] = {
        {"t/a", 100}, {"t/sub/b", 5000}, {"t/c", 64 * 1024 + 1}, {"t/big", kSize}};
    unsigned seed = 10;
    for (const auto& [name, size] : files) write_file(s / name, random_bytes(size, seed++));
    const Outcome clean = copy_verified({s / "t"}, s / "clean", [] {
        CopyOptions o;
        o.recursive = true;
        return o;
    }());
    ASSERT_EQ(clean.r.status, CopyStatus::ok) << clean.r.message;
    EXPECT_EQ(clean.r.files, 4u);
    EXPECT_EQ(clean.r.verified_files, 4u);
    EXPECT_EQ(clean.verified.size(), 4u);

    // The small files on the chains, then (cached) on the read -> write pool.
    for (const unsigned threads : {0u, 4u}) {
        CopyOptions o;
        o.recursive = true;
        o.copy_threads = threads;
        const std::string copy = s / ("copy" + std::to_string(threads));
        const Outcome out = copy_verified({s / "t"}, copy, o, [&](const std::string& d) {
            if (d == copy + "/sub/b") flip_byte(d, 10);
        });
        if (threads == 0) {
            EXPECT_GE(out.r.ring_files, 2u) << "the small files took the chains";
        }
        expect_mismatch_reported(out, copy + "/sub/b", "0-4999", 10);
        EXPECT_EQ(out.r.verified_files, 3u);
        EXPECT_EQ(out.r.files, 4u);
        EXPECT_EQ(read_file(copy + "/big"), read_file(s / "t/big"));
    }
}

TEST(CpVerify, CleanCopyPassesOnTmpfs) {
    MAKE_FS(fs, "tmpfs", 32);
    write_file(fs / "src", random_bytes(kSize, 5));
    const Outcome out = copy_verified({fs / "src"}, fs / "dst", CopyOptions{});
    ASSERT_EQ(out.r.status, CopyStatus::ok) << out.r.message;
    EXPECT_EQ(out.r.verified_files, 1u);
    EXPECT_EQ(out.r.verify_bytes, 2 * kSize);
    // Before Linux 6.6 tmpfs refuses O_DIRECT: then a note says the copy was read through the
    // cache.
    if (out.r.verified_direct == 0) {
        ASSERT_EQ(out.notes.size(), 1u);
        EXPECT_NE(out.notes[0].find("does not allow O_DIRECT"), std::string::npos) << out.notes[0];
    }
}

// A clone shares the source's extents; it is still read back (the user
// asked), one file alone and a tree's small files in the clone pool.
TEST(CpVerify, ClonesAreVerifiedOnXfs) {
    MAKE_FS(fs, "xfs", 320, {"-m", "reflink=1"});
    write_file(fs / "src", random_bytes(kSize, 6));
    const Outcome one = copy_verified({fs / "src"}, fs / "dst", CopyOptions{});
    ASSERT_EQ(one.r.status, CopyStatus::ok) << one.r.message;
    EXPECT_EQ(one.r.reflinked_files, 1u);
    EXPECT_EQ(one.r.verified_files, 1u);
    EXPECT_EQ(one.r.verified_direct, 1u);

    const Outcome bad = copy_verified({fs / "src"}, fs / "dst2", CopyOptions{},
                                      [](const std::string& d) { flip_byte(d, kFlip); });
    EXPECT_EQ(bad.r.reflinked_files, 1u);
    expect_mismatch_reported(bad, fs / "dst2", "1048576-2097151", kFlip);

    stdfs::create_directory(fs / "t");
    for (int i = 0; i < 6; ++i)
        write_file(fs / ("t/f" + std::to_string(i)), random_bytes(3000 + i, 20 + i));
    CopyOptions o;
    o.recursive = true;
    const Outcome tree = copy_verified({fs / "t"}, fs / "copy", o, [&](const std::string& d) {
        if (d == fs / "copy/f4") flip_byte(d, 2999);
    });
    EXPECT_EQ(tree.r.reflinked_files, 6u);
    expect_mismatch_reported(tree, fs / "copy/f4", "0-3003", 2999);
    EXPECT_EQ(tree.r.verified_files, 5u);
}

TEST(CpVerifyCli, SummaryReportsTheCostAndFifosAreNoted) {
    Scratch s;
    write_file(s / "src", random_bytes(kSize, 7));
    const Child r = run({URINGKIT_CLI, "cp", "--verify", "--summary", s / "src", s / "dst"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("cp: verify: 1 files matched, 6.0 MiB read again (source and copy) in "),
              std::string::npos)
        << r.err;
    EXPECT_EQ(read_file(s / "dst"), read_file(s / "src"));

    ASSERT_EQ(::mkfifo((s / "fifo").c_str(), 0600), 0);
    const Child f = run({"sh", "-c",
                         std::string("printf abc > '") + (s / "fifo") + "' & exec " + URINGKIT_CLI +
                             " cp --verify '" + (s / "fifo") + "' '" + (s / "out") + "'"});
    EXPECT_EQ(f.status, 0) << f.err;
    EXPECT_NE(f.err.find("a FIFO or device cannot be read a second time; not verified"),
              std::string::npos)
        << f.err;
    EXPECT_EQ(read_file(s / "out"), "abc");
}

}  // namespace
