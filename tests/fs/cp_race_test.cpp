// cp against someone who can write in the destination: a root `cp -a` into a
// directory an ordinary user owns (a restore into a home directory).  The
// user renames destination directories and puts symbolic links to a
// root-only directory in their place at fixed points of the copy (once the
// tree's directories exist, after the first file), or plants links before it
// starts; a stress run does the same as nobody, at random, while the binary
// copies.  Whatever happens, nothing outside the destination changes: the
// root-only directory keeps its owner, mode, times and entries, and its file
// its owner, mode and bytes.  Every copy path is tried: the ring's chains, the
// read -> write pool, file by file, --atomic.
#include "files_test_support.hpp"

#include "fs/copy.hpp"

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <cstring>
#include <set>

namespace {

using namespace files_test;
using uringkit::fs::CopyOptions;
using uringkit::fs::CopyResult;
using uringkit::fs::CopySink;
using uringkit::fs::CopyStatus;

struct Snapshot {
    struct stat dir {
    }, file{};
    std::set<std::string> entries;
    std::string bytes;
    bool operator==(const Snapshot& o) const {
        auto same = [](const struct stat& a, const struct stat& b) {
            return a.st_mode == b.st_mode && a.st_uid == b.st_uid && a.st_gid == b.st_gid &&
                   a.st_ino == b.st_ino && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
                   a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_ctim.tv_sec == b.st_ctim.tv_sec &&
                   a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
        };
        return same(dir, o.dir) && same(file, o.file) && entries == o.entries && bytes == o.bytes;
    }
};

// A root-only directory with a root-only file: what the attacker points at.
struct Victim {
    std::string dir, file;
    explicit Victim(const Scratch& s) : dir(s / "victim"), file(s / "victim/secret") {
        EXPECT_EQ(::mkdir(dir.c_str(), 0700), 0);
        write_file(file, "root's secret\n");
        EXPECT_EQ(::chmod(file.c_str(), 0600), 0);
    }
    Snapshot snap() const {
        Snapshot n;
        ::lstat(dir.c_str(), &n.dir);
        ::lstat(file.c_str(), &n.file);
        for (const auto& e : stdfs::directory_iterator(dir))
            n.entries.insert(e.path().filename().string());
        n.bytes = read_file(file);
        return n;
    }
};

// The backup being restored: two directories of nobody's files, mode 0777
// on the directories (what the attacker would like the victim to get).
void make_backup(const std::string& root, int files) {
    stdfs::create_directories(root + "/sub/deeper");
    for (int i = 0; i < files; ++i) {
        // Small files for the chains and the pool, and one large for the ring pairs.
        write_file(root + "/sub/f" + std::to_string(i),
                   random_bytes(i == 0 ? 300000 : 1000 + i, i));
        write_file(root + "/sub/deeper/g" + std::to_string(i), random_bytes(500, i + 100));
    }
    ::symlink("f1", (root + "/sub/link").c_str());
    ::mkfifo((root + "/sub/fifo").c_str(), 0644);
    for (const auto& e : stdfs::recursive_directory_iterator(root)) {
        ::lchown(e.path().c_str(), kNobody, kNobody);
        if (e.is_directory() && !e.is_symlink()) ::chmod(e.path().c_str(), 0777);
    }
}

// The attacker's move: `dir` renamed aside and a link to the victim put in
// its place.  Done as root here, at a point the test chooses: the effect on
// the file system is the same as the user doing it.
void swap_for_link(const std::string& dir, const std::string& victim) {
    ::rename(dir.c_str(), (dir + ".moved").c_str());
    ASSERT_EQ(::symlink(victim.c_str(), dir.c_str()), 0);
}

struct Outcome {
    CopyResult r;
    std::vector<std::string> errors;
};

enum class Path { chains, pool, preserve, atomic };
const char* name_of(Path p) {
    switch (p) {
        case Path::chains:
            return "chains";
        case Path::pool:
            return "pool";
        case Path::preserve:
            return "-a";
        case Path::atomic:
            return "--atomic -a";
    }
    return "?";
}

Outcome copy_with(Path path, const std::string& src, const std::string& dst,
                  std::function<void()> after_directories,
                  std::function<void(std::uint64_t)> on_file = {}) {
    CopyOptions o;
    o.recursive = true;
    o.no_dereference = true;
    o.copy_threads = path == Path::pool ? 4 : 0;
    o.clone_threads = 0;
    if (path == Path::preserve || path == Path::atomic)
        uringkit::fs::apply_preserve_list("all", true, o.preserve);
    o.atomic = path == Path::atomic;
    o.after_directories = std::move(after_directories);
    o.on_file = std::move(on_file);
    Outcome out;
    CopySink sink;
    sink.error = [&](std::string_view m) { out.errors.emplace_back(m); };
    const std::vector<std::string> srcs{src};
    out.r = uringkit::fs::copy(srcs, dst, o, sink);
    return out;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& m : v) s += m + "\n";
    return s;
}

constexpr Path kPaths[] = {Path::chains, Path::pool, Path::preserve, Path::atomic};

// Directories the copy made, renamed and replaced by links once they exist:
// the copy goes on in the directories it made (now under their new names).
TEST(CpRace, NewDirectoriesSwappedForLinksAfterTheyAreMade) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the attack is on a root copy";
    for (Path path : kPaths) {
        Scratch s;
        Victim v(s);
        const Snapshot before = v.snap();
        make_backup(s / "backup", 12);
        const std::string home = s / "home";
        ASSERT_EQ(::mkdir(home.c_str(), 0755), 0);
        ASSERT_EQ(::chown(home.c_str(), kNobody, kNobody), 0);
        const std::string dst = home + "/restored";
        const Outcome r = copy_with(path, s / "backup", dst, [&] {
            // --atomic builds the tree under a temporary name beside `dst`.
            std::string at = dst;
            for (const auto& e : stdfs::directory_iterator(home))
                if (e.path().filename().string().rfind(".restored.uringkit-", 0) == 0)
                    at = e.path().string();
            swap_for_link(at + "/sub/deeper", v.dir);
            swap_for_link(at + "/sub", v.dir);
        });
        EXPECT_TRUE(v.snap() == before) << name_of(path) << ": the victim changed\n"
                                        << joined(r.errors);
        EXPECT_EQ(r.r.status, CopyStatus::ok) << name_of(path) << "\n" << joined(r.errors);
        // What was entered was filled: the renamed directories hold the copy.
        EXPECT_EQ(read_file(dst + "/sub.moved/f3"), read_file(s / "backup/sub/f3"))
            << name_of(path);
        EXPECT_EQ(read_file(dst + "/sub.moved/deeper.moved/g3"),
                  read_file(s / "backup/sub/deeper/g3"))
            << name_of(path);
    }
}

// Directories already in the destination (the user's own) merged into, then
// swapped for links once entered, and again after the first file is copied.
TEST(CpRace, ExistingDirectoriesSwappedForLinksWhileCopying) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the attack is on a root copy";
    for (Path path : {Path::chains, Path::preserve}) {
        for (bool mid_data : {false, true}) {
            Scratch s;
            Victim v(s);
            const Snapshot before = v.snap();
            make_backup(s / "backup", 12);
            const std::string home = s / "home";
            stdfs::create_directories(home + "/sub/deeper");
            for (const char* d : {"", "/sub", "/sub/deeper"})
                ASSERT_EQ(::chown((home + d).c_str(), kNobody, kNobody), 0);
            int files = 0;
            auto attack = [&] {
                swap_for_link(home + "/sub/deeper", v.dir);
                swap_for_link(home + "/sub", v.dir);
            };
            const Outcome r = copy_with(
                path, s / "backup/.", home,
                [&] {
                    if (!mid_data) attack();
                },
                [&](std::uint64_t) {
                    if (mid_data && ++files == 1) attack();
                });
            EXPECT_TRUE(v.snap() == before)
                << name_of(path) << (mid_data ? " mid-data" : "") << ": the victim changed\n"
                << joined(r.errors);
            EXPECT_TRUE(stdfs::is_symlink(home + "/sub")) << "the user's link is left as it is";
        }
    }
}

// No race: a link already in the destination where the source has a
// directory is refused (coreutils: "cannot overwrite non-directory"), at
// every depth, on every path; nothing is written through it.
TEST(CpRace, PlantedDirectoryLinkIsRefused) {
    for (Path path : kPaths) {
        if ((path == Path::preserve || path == Path::atomic) && ::geteuid() != 0) continue;
        Scratch s;
        Victim v(s);
        const Snapshot before = v.snap();
        make_backup(s / "backup", 4);
        const std::string dst = s / "dst";
        stdfs::create_directories(dst);
        ASSERT_EQ(::symlink("../victim", (dst + "/sub").c_str()), 0);
        const Outcome r = copy_with(path, s / "backup/.", dst, {});
        EXPECT_TRUE(v.snap() == before) << name_of(path) << ": the victim changed\n"
                                        << joined(r.errors);
        EXPECT_EQ(r.r.status, CopyStatus::failure) << name_of(path);
        ASSERT_FALSE(r.errors.empty()) << name_of(path);
        EXPECT_EQ(r.errors[0], "cannot overwrite non-directory '" + dst +
                                   "/./sub' with directory '" + s / "backup/./sub" + "'")
            << name_of(path);
    }
}

// A file link planted below the operand (dst/sub/f1 -> the victim's file)
// is refused with a line naming it; --remove-destination replaces the link.
TEST(CpRace, PlantedFileLinkIsNeverWrittenThrough) {
    Scratch s;
    Victim v(s);
    const Snapshot before = v.snap();
    make_backup(s / "backup", 4);
    const std::string dst = s / "dst";
    stdfs::create_directories(dst + "/sub");
    ASSERT_EQ(::symlink(v.file.c_str(), (dst + "/sub/f1").c_str()), 0);
    const Outcome r = copy_with(Path::chains, s / "backup/.", dst, {});
    EXPECT_TRUE(v.snap() == before) << joined(r.errors);
    EXPECT_EQ(r.r.status, CopyStatus::failure);
    EXPECT_EQ(joined(r.errors),
              "not writing through symbolic link '" + dst +
                  "/./sub/f1' inside the destination tree (--remove-destination replaces it)\n");
    EXPECT_EQ(read_file(dst + "/sub/f2"), read_file(s / "backup/sub/f2")) << "the rest is copied";

    CopyOptions o;
    o.recursive = true;
    o.remove_destination = true;
    CopySink sink;
    const std::vector<std::string> srcs{s / "backup/."};
    const CopyResult again = uringkit::fs::copy(srcs, dst, o, sink);
    EXPECT_EQ(again.status, CopyStatus::ok) << again.message;
    EXPECT_FALSE(stdfs::is_symlink(dst + "/sub/f1"));
    EXPECT_EQ(read_file(dst + "/sub/f1"), read_file(s / "backup/sub/f1"));
    EXPECT_TRUE(v.snap() == before);
}

// coreutils' tests/cp/abuse.sh: a link this run made at an operand's name
// is not written through by a later operand.
TEST(CpRace, JustCreatedSymlinkIsNotWrittenThrough) {
    Scratch s;
    for (const char* d : {"a", "b", "c"}) stdfs::create_directory(s / d);
    ASSERT_EQ(::symlink("../t", (s / "a/1").c_str()), 0);
    write_file(s / "b/1", "payload\n");
    write_file(s / "t", "i\n");
    CopyOptions o;
    o.recursive = true;
    o.no_dereference = true;
    CopySink sink;
    std::vector<std::string> errors;
    sink.error = [&](std::string_view m) { errors.emplace_back(m); };
    const std::vector<std::string> srcs{s / "a/1", s / "b/1"};
    const CopyResult r = uringkit::fs::copy(srcs, s / "c", o, sink);
    EXPECT_EQ(r.status, CopyStatus::failure);
    EXPECT_EQ(joined(errors), "will not copy '" + s / "b/1" + "' through just-created symlink '" +
                                  s / "c/1" + "'\n");
    EXPECT_EQ(read_file(s / "t"), "i\n");
}

// A second path to the source (a bind mount) is the source: copying a
// directory into it is refused as "into itself".
TEST(CpRace, IntoItselfThroughABindMountIsRefused) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to bind-mount";
    Scratch s;
    stdfs::create_directories(s / "src/in");
    write_file(s / "src/in/f", "x");
    stdfs::create_directory(s / "other");
    if (::mount((s / "src").c_str(), (s / "other").c_str(), nullptr, MS_BIND, nullptr) != 0)
        GTEST_SKIP() << "bind mount refused: " << std::strerror(errno);
    CopyOptions o;
    o.recursive = true;
    CopySink sink;
    const std::vector<std::string> srcs{s / "src"};
    const CopyResult r = uringkit::fs::copy(srcs, s / "other/in/copy", o, sink);
    ::umount2((s / "other").c_str(), MNT_DETACH);
    EXPECT_EQ(r.status, CopyStatus::bad_input);
    EXPECT_EQ(r.message, "cannot copy a directory, '" + s / "src" + "', into itself, '" +
                             s / "other/in/copy" + "'");
    EXPECT_FALSE(stdfs::exists(s / "src/in/copy"));
}

// More directories than the copy may hold open (a quarter of a descriptor
// limit of 40: 10): the least recently used are closed and opened again
// from their parent's descriptor, checked to be the same directory.  The
// tree is copied whole on every path; one that was swapped for a link while
// closed is found replaced, refused with one line, and the victim is untouched.
TEST(CpRace, DirectoriesBeyondTheDescriptorBudgetAreReopenedAndChecked) {
    struct rlimit old {};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
    struct Restore {
        struct rlimit rl;
        ~Restore() { ::setrlimit(RLIMIT_NOFILE, &rl); }
    } restore{old};
    for (Path path : {Path::chains, Path::pool, Path::preserve}) {
        if (path == Path::preserve && ::geteuid() != 0) continue;
        Scratch s;
        Victim v(s);
        const Snapshot before = v.snap();
        for (int d = 0; d < 30; ++d) {
            const std::string dir = s / ("src/d" + std::to_string(d) + "/inner");
            stdfs::create_directories(dir);
            for (int f = 0; f < 3; ++f)
                write_file(dir + "/f" + std::to_string(f), random_bytes(700, d * 10 + f));
            write_file(s / ("src/d" + std::to_string(d) + "/top"), random_bytes(90000, d));
        }
        struct rlimit low = old;
        low.rlim_cur = 40;
        ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
        const Outcome whole = copy_with(path, s / "src", s / "whole", {});
        const Outcome swapped = copy_with(path, s / "src", s / "swapped",
                                          [&] { swap_for_link(s / "swapped/d0/inner", v.dir); });
        ::setrlimit(RLIMIT_NOFILE, &old);
        EXPECT_EQ(whole.r.status, CopyStatus::ok) << name_of(path) << "\n" << joined(whole.errors);
        EXPECT_EQ(run({"diff", "-r", s / "src", s / "whole"}).status, 0) << name_of(path);
        EXPECT_TRUE(v.snap() == before) << name_of(path) << ": the victim changed\n"
                                        << joined(swapped.errors);
        EXPECT_EQ(swapped.r.status, CopyStatus::failure) << name_of(path);
        EXPECT_NE(
            joined(swapped.errors)
                .find("'" + s / "swapped/d0/inner" + "' was moved or replaced while being copied"),
            std::string::npos)
            << name_of(path) << "\n"
            << joined(swapped.errors);
        EXPECT_EQ(read_file(s / "swapped/d29/inner/f2"), read_file(s / "src/d29/inner/f2"))
            << name_of(path);
    }
}

#ifdef URINGKIT_CLI
// Not deterministic, beside the cases above: nobody swaps the destination's
// directories for links to the victim as fast as it can while root runs
// `uringkit cp -a` into nobody's directory, several times.
TEST(CpRace, StressAnUnprivilegedAttackerAgainstRootCpA) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: the attack is on a root copy";
    Scratch s;
    ASSERT_EQ(::chmod(s.dir.c_str(), 0755), 0);
    Victim v(s);
    const Snapshot before = v.snap();
    make_backup(s / "backup", 200);
    const std::string home = s / "home";
    ASSERT_EQ(::mkdir(home.c_str(), 0755), 0);
    ASSERT_EQ(::chown(home.c_str(), kNobody, kNobody), 0);
    const pid_t attacker = ::fork();
    if (attacker == 0) {
        become_nobody();
        const std::string sub = home + "/sub", deeper = home + "/sub/deeper";
        for (unsigned i = 0;; ++i) {
            const std::string& d = i % 2 ? sub : deeper;
            const std::string aside = d + ".x" + std::to_string(i);
            if (::rename(d.c_str(), aside.c_str()) == 0)
                (void)::symlink(v.dir.c_str(), d.c_str());
            else
                (void)::unlink(d.c_str());
        }
    }
    for (int round = 0; round < 6; ++round) {
        const Child r = run(cp({"-a", s / "backup/.", home}));
        EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
        EXPECT_EQ(count(r.err, "Aborted"), 0u) << r.err;
    }
    ::kill(attacker, SIGKILL);
    ::waitpid(attacker, nullptr, 0);
    EXPECT_TRUE(v.snap() == before) << "the victim changed";
}
#endif

}  // namespace
