// cp picks the path for a file's bytes by what its file system does with
// ring reads: on tmpfs each would go to an io-wq worker
// (sys::reads_go_to_workers), so a copy within it takes copy_file_range and
// --summary says so and why; on ext4 the rule is the one it was.  Every
// copy is byte-identical.
#include "files_test_support.hpp"

#include <linux/magic.h>
#include <sys/statfs.h>

namespace {

using namespace files_test;

bool is_fs(const std::string& dir, unsigned long magic) {
    struct statfs sf {};
    return ::statfs(dir.c_str(), &sf) == 0 && static_cast<unsigned long>(sf.f_type) == magic;
}

// A scratch directory under `parent`, removed by the destructor.
struct ScratchIn {
    explicit ScratchIn(const std::string& parent) {
        std::string tmpl = parent + "/uringkit-handoff-XXXXXX";
        if (::mkdtemp(tmpl.data())) dir = tmpl;
    }
    ~ScratchIn() {
        std::error_code ec;
        if (!dir.empty()) stdfs::remove_all(dir, ec);
    }
    std::string operator/(const std::string& n) const { return dir + "/" + n; }
    std::string dir;
};

const std::string kWhy = "(reads on the ring would go to io-wq workers)";

TEST(CpHandoffPath, TmpfsCopiesWithCopyFileRangeAndSaysWhy) {
    if (!is_fs("/dev/shm", TMPFS_MAGIC)) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
    ScratchIn s("/dev/shm");
    ASSERT_FALSE(s.dir.empty());
    for (std::size_t n : {std::size_t{1}, std::size_t{4097}, (std::size_t{3} << 20) + 17}) {
        const std::string src = s / ("s" + std::to_string(n)), dst = s / ("d" + std::to_string(n));
        write_file(src, random_bytes(n, static_cast<unsigned>(n)));
        const Child r = run(cp({"--summary", src, dst}));
        ASSERT_EQ(r.status, 0) << r.err;
        EXPECT_EQ(read_file(dst), read_file(src)) << n << " bytes";
        EXPECT_NE(r.err.find("0 reflink, 1 copy_file_range, 0 ring, 0 read/write"),
                  std::string::npos)
            << r.err;
        EXPECT_NE(r.err.find("cp: tmpfs to tmpfs: copy_file_range " + kWhy), std::string::npos)
            << r.err;
    }
    // A forced engine is obeyed, and then nothing is said about the rule.
    write_file(s / "big", random_bytes((2 << 20) + 5, 9));
    const Child ring = run(cp({"--summary", "--engine", "ring", s / "big", s / "ring-copy"}));
    ASSERT_EQ(ring.status, 0) << ring.err;
    EXPECT_EQ(read_file(s / "ring-copy"), read_file(s / "big"));
    EXPECT_NE(ring.err.find("0 copy_file_range, 1 ring"), std::string::npos) << ring.err;
    EXPECT_EQ(ring.err.find("io-wq"), std::string::npos) << ring.err;
}

TEST(CpHandoffPath, Ext4KeepsItsRuleAndSaysNothingOfWorkers) {
    if (!is_fs("/tmp", EXT4_SUPER_MAGIC)) GTEST_SKIP() << "/tmp is not ext4 here";
    ScratchIn s("/tmp");
    ASSERT_FALSE(s.dir.empty());
    write_file(s / "src", random_bytes((3 << 20) + 17, 3));
    const Child r = run(cp({"--summary", s / "src", s / "dst"}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(s / "dst"), read_file(s / "src"));
    EXPECT_NE(r.err.find("1 copy_file_range"), std::string::npos) << r.err;  // ext4's own rule
    EXPECT_EQ(r.err.find("io-wq"), std::string::npos) << r.err;
}

// Between file systems copy_file_range is refused (EXDEV): the ring path,
// as before, from tmpfs to ext4 and back; the bytes arrive intact.
TEST(CpHandoffPath, BetweenTmpfsAndExt4TheBytesArriveIntact) {
    if (!is_fs("/dev/shm", TMPFS_MAGIC) || !is_fs("/tmp", EXT4_SUPER_MAGIC))
        GTEST_SKIP() << "needs /dev/shm on tmpfs and /tmp on ext4";
    ScratchIn shm("/dev/shm"), tmp("/tmp");
    write_file(shm / "src", random_bytes((3 << 20) + 17, 4));
    const Child out = run(cp({"--summary", shm / "src", tmp / "dst"}));
    ASSERT_EQ(out.status, 0) << out.err;
    EXPECT_EQ(read_file(tmp / "dst"), read_file(shm / "src"));
    const Child back = run(cp({"--summary", tmp / "dst", shm / "again"}));
    ASSERT_EQ(back.status, 0) << back.err;
    EXPECT_EQ(read_file(shm / "again"), read_file(shm / "src"));
    EXPECT_NE(back.err.find("1 ring"), std::string::npos) << back.err;
}

}  // namespace
