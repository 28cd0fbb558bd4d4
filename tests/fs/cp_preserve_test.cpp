// `uringkit cp -p / -a / --preserve=LIST`: what coreutils keeps, checked on
// the copies: modes, owners (as root; as nobody the copy stays nobody's,
// quietly), times to the nanosecond, extended attributes and ACLs (on the
// ring and, with the opcode probe refused, with fgetxattr/fsetxattr), hard
// links within the tree kept as hard links, symbolic links kept as links;
// ACLs with -p, a temporary nobody else can open while it fills, procfs
// and sysfs files read to their end.
#include "files_test_support.hpp"
#include "tools/older_kernel.hpp"

#include "fs/copy.hpp"

#include <linux/io_uring.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cstring>

namespace {

using namespace files_test;

struct stat lstat_of(const std::string& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return st;
}

// atime and mtime with distinct nanoseconds, in the past (so reading the
// source would move its atime under relatime: the copy must keep the old one).
void set_times(const std::string& p, bool symlink = false) {
    const struct timespec t[2] = {{1'000'000'000, 123'456'789}, {1'100'000'000, 987'654'321}};
    ASSERT_EQ(::utimensat(AT_FDCWD, p.c_str(), t, symlink ? AT_SYMLINK_NOFOLLOW : 0), 0) << p;
}
void expect_times(const std::string& p) {
    const struct stat st = lstat_of(p);
    EXPECT_EQ(st.st_atim.tv_sec, 1'000'000'000) << p;
    EXPECT_EQ(st.st_atim.tv_nsec, 123'456'789) << p;
    EXPECT_EQ(st.st_mtim.tv_sec, 1'100'000'000) << p;
    EXPECT_EQ(st.st_mtim.tv_nsec, 987'654'321) << p;
}

std::string xattr_of(const std::string& p, const char* name) {
    std::string v(70000, '\0');
    const ssize_t n = ::lgetxattr(p.c_str(), name, v.data(), v.size());
    if (n < 0) return "<" + std::string(std::strerror(errno)) + ">";
    v.resize(static_cast<std::size_t>(n));
    return v;
}

// user.* attributes on the scratch directory's file system, or why not.
std::string user_xattrs_unsupported(const std::string& dir) {
    const std::string probe = dir + "/xattr-probe";
    write_file(probe, "");
    const int r = ::setxattr(probe.c_str(), "user.probe", "1", 1, 0);
    const int err = errno;
    ::unlink(probe.c_str());
    return r == 0 ? "" : std::string("user xattrs on ") + dir + ": " + std::strerror(err);
}

TEST(CpPreserve, ListsAreCheckedWordByWord) {
    uringkit::fs::Preserve p;
    EXPECT_FALSE(uringkit::fs::apply_preserve_list("mode,timestamps", true, p));
    EXPECT_TRUE(p.mode && p.timestamps && !p.ownership && !p.xattr && !p.links);
    EXPECT_FALSE(uringkit::fs::apply_preserve_list("all", true, p));
    EXPECT_TRUE(p.ownership && p.xattr && p.links);
    EXPECT_FALSE(p.xattr_required)
        << "all, as with coreutils, does not make a missing xattr an error";
    EXPECT_FALSE(uringkit::fs::apply_preserve_list("xattr", true, p));
    EXPECT_TRUE(p.xattr_required);
    EXPECT_FALSE(uringkit::fs::apply_preserve_list("mode,links", false, p));
    EXPECT_TRUE(!p.mode && !p.links && p.ownership);
    EXPECT_EQ(uringkit::fs::apply_preserve_list("mode,colour", true, p), "colour");
    EXPECT_EQ(uringkit::fs::apply_preserve_list("", true, p), "");

    Scratch s;
    write_file(s / "a", "a");
    // (CLI11 reads "--preserve=" as a bare --preserve.)
    for (const char* bad :
         {"--preserve=colour", "--preserve=mode,,links", "--no-preserve=mode,x"}) {
        const Child r = run(cp({bad, s / "a", s / "b"}));
        EXPECT_EQ(r.status, 1) << bad;  // cp's usage status, as coreutils
        EXPECT_NE(r.err.find("is not one of mode, ownership, timestamps, xattr, links, all"),
                  std::string::npos)
            << r.err;
        EXPECT_FALSE(stdfs::exists(s / "b"));
    }
    // A bare --preserve takes no list from the next word: both stay operands.
    const Child r = run(cp({"--preserve", s / "a", s / "b"}));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(read_file(s / "b"), "a");
}

TEST(CpPreserve, TimesToTheNanosecondForFilesDirectoriesAndLinks) {
    Scratch s;
    ASSERT_EQ(::mkdir((s / "t").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((s / "t/sub").c_str(), 0750), 0);
    write_file(s / "t/small", "small file: a chain");
    write_file(s / "t/sub/large", random_bytes(300 * 1024, 1));  // the large-file path
    ASSERT_EQ(::symlink("small", (s / "t/link").c_str()), 0);
    for (const char* p : {"t/small", "t/sub/large", "t/sub", "t"}) set_times(s / p);
    set_times(s / "t/link", true);
    const Child a = run(cp({"-a", s / "t", s / "a"}));
    ASSERT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(a.err, "");
    for (const char* p : {"a/small", "a/sub/large", "a/sub", "a", "a/link"}) expect_times(s / p);

    set_times(s / "t/sub/large");  // the copy above read it, which moved its atime
    const Child p = run(cp({"-p", s / "t/sub/large", s / "large-p"}));
    ASSERT_EQ(p.status, 0) << p.err;
    expect_times(s / "large-p");
    const Child plain = run(cp({s / "t/small", s / "small-plain"}));
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_NE(lstat_of(s / "small-plain").st_mtim.tv_sec, 1'100'000'000)
        << "times kept without being asked";
    const Child no = run(cp({"-p", "--no-preserve=timestamps", s / "t/small", s / "small-no"}));
    ASSERT_EQ(no.status, 0) << no.err;
    EXPECT_NE(lstat_of(s / "small-no").st_mtim.tv_sec, 1'100'000'000);
}

TEST(CpPreserve, ModeAndOwnershipAsRoot) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files to another owner";
    Scratch s;
    ASSERT_EQ(::mkdir((s / "t").c_str(), 0700), 0);
    for (const char* f : {"t/file", "t/big"}) {
        write_file(s / f, std::string(f) == "t/big" ? random_bytes(200 * 1024, 2) : "theirs");
        ASSERT_EQ(::chown((s / f).c_str(), 1234, 5678), 0);
        ASSERT_EQ(::chmod((s / f).c_str(), 0640), 0);
    }
    ASSERT_EQ(::chown((s / "t").c_str(), 1234, 5678), 0);
    const Child all = run(cp({"-a", s / "t", s / "a"}), {}, [] { ::umask(022); });
    ASSERT_EQ(all.status, 0) << all.err;
    for (const char* p : {"a", "a/file", "a/big"}) {
        const struct stat st = lstat_of(s / p);
        EXPECT_EQ(st.st_uid, 1234u) << p;
        EXPECT_EQ(st.st_gid, 5678u) << p;
    }
    EXPECT_EQ(lstat_of(s / "a").st_mode & 07777, 0700u);
    EXPECT_EQ(lstat_of(s / "a/file").st_mode & 07777, 0640u);

    const Child mode = run(cp({"--preserve=mode", s / "t/file", s / "mode-only"}));
    ASSERT_EQ(mode.status, 0) << mode.err;
    EXPECT_EQ(lstat_of(s / "mode-only").st_uid, 0u);
    EXPECT_EQ(lstat_of(s / "mode-only").st_mode & 07777, 0640u);
    const Child owner =
        run(cp({"--preserve=ownership", s / "t/file", s / "owner-only"}), {}, [] { ::umask(077); });
    ASSERT_EQ(owner.status, 0) << owner.err;
    EXPECT_EQ(lstat_of(s / "owner-only").st_uid, 1234u);
    EXPECT_EQ(lstat_of(s / "owner-only").st_mode & 07777, 0600u)
        << "mode not asked: the source's less the umask";
    const Child not_owner =
        run(cp({"-p", "--no-preserve=ownership", s / "t/file", s / "not-owner"}));
    ASSERT_EQ(not_owner.status, 0) << not_owner.err;
    EXPECT_EQ(lstat_of(s / "not-owner").st_uid, 0u);
    EXPECT_EQ(lstat_of(s / "not-owner").st_mode & 07777, 0640u);
}

// coreutils as an ordinary user: -p cannot give the copy away and does not
// say so (the set-ID bits go with the owner); times cannot be set on a file
// someone else owns: that is an error, status 1.
TEST(CpPreserve, AsNobodyTheCopyStaysTheirsAndForeignTimesAreRefused) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root to make files of another owner and drop to nobody";
    Scratch s;
    ASSERT_EQ(::chmod(s.dir.c_str(), 0777), 0);
    write_file(s / "suid", "root's program");
    ASSERT_EQ(::chmod((s / "suid").c_str(), 06755), 0);
    set_times(s / "suid");
    const Child p = run(cp({"-p", s / "suid", s / "mine"}), {}, [] { become_nobody(); });
    ASSERT_EQ(p.status, 0) << p.err;
    EXPECT_EQ(p.err, "");
    const struct stat st = lstat_of(s / "mine");
    EXPECT_EQ(st.st_uid, kNobody);
    EXPECT_EQ(st.st_mode & 07777, 0755u);
    expect_times(s / "mine");

    write_file(s / "roots", "root's, writable by all");
    ASSERT_EQ(::chmod((s / "roots").c_str(), 0666), 0);
    const Child t =
        run(cp({"--preserve=timestamps", s / "suid", s / "roots"}), {}, [] { become_nobody(); });
    EXPECT_EQ(t.status, 1) << t.err;
    EXPECT_NE(t.err.find("preserving times for '" + s / "roots" + "': Operation not permitted"),
              std::string::npos)
        << t.err;
    EXPECT_EQ(read_file(s / "roots"), "root's program")
        << "the bytes were written in place, as cp does";
}

// An ordinary user who belongs to the source's group keeps that group with
// -p, as coreutils does (chown to the owner fails, chown of the group alone
// does not); the owner is theirs.  Both cps run as nobody with one
// supplementary group.
TEST(CpPreserve, AMemberOfTheSourcesGroupKeepsItWithP) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root to make files of another owner and drop to nobody";
    constexpr gid_t kGroup = 4242;
    Scratch s;
    ASSERT_EQ(::chmod(s.dir.c_str(), 0777), 0);
    write_file(s / "src", "root's, group 4242");
    ASSERT_EQ(::chmod((s / "src").c_str(), 02644), 0);
    ASSERT_EQ(::chown((s / "src").c_str(), 0, kGroup), 0);
    const auto member = [] {
        const gid_t groups[] = {kGroup};
        if (::setgroups(1, groups) != 0 || ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)
            ::_exit(99);
    };
    const Child ours = run(cp({"-p", s / "src", s / "ours"}), {}, member);
    const Child theirs = run({"/usr/bin/cp", "-p", s / "src", s / "theirs"}, {}, member);
    ASSERT_EQ(ours.status, theirs.status) << ours.err << theirs.err;
    EXPECT_EQ(ours.err, "");
    const struct stat o = lstat_of(s / "ours"), t = lstat_of(s / "theirs");
    EXPECT_EQ(o.st_uid, kNobody);
    EXPECT_EQ(o.st_gid, kGroup) << "the group was lost";
    EXPECT_EQ(o.st_uid, t.st_uid);
    EXPECT_EQ(o.st_gid, t.st_gid);
    EXPECT_EQ(o.st_mode & 07777, t.st_mode & 07777);
}

TEST(CpPreserve, ExtendedAttributesOnTheRingAndWithoutIt) {
    Scratch s;
    if (auto why = user_xattrs_unsupported(s.dir.string()); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(::mkdir((s / "t").c_str(), 0755), 0);
    write_file(s / "t/small", "tagged");
    write_file(s / "t/big", random_bytes(400 * 1024, 3));
    write_file(s / "t/plain", "no attributes");
    const std::string blob = random_bytes(2000, 4);  // binary, NULs included
    for (const char* f : {"t/small", "t/big", "t"}) {
        ASSERT_EQ(::setxattr((s / f).c_str(), "user.origin", "uringkit", 8, 0), 0);
        ASSERT_EQ(::setxattr((s / f).c_str(), "user.blob", blob.data(), blob.size(), 0), 0);
    }
    auto check = [&](const std::string& root) {
        for (const char* f : {"/small", "/big", ""}) {
            EXPECT_EQ(xattr_of(root + f, "user.origin"), "uringkit") << root + f;
            EXPECT_EQ(xattr_of(root + f, "user.blob"), blob) << root + f;
        }
        EXPECT_EQ(::llistxattr((root + "/plain").c_str(), nullptr, 0), 0);
    };
    const Child a = run(cp({"-a", "--summary", s / "t", s / "a"}));
    ASSERT_EQ(a.status, 0) << a.err;
    check(s / "a");
    EXPECT_NE(a.err.find("6 extended attributes copied on the ring"), std::string::npos) << a.err;

    // The kernel's opcode probe refused, as on a kernel before 5.6: the same
    // attributes with fgetxattr/fsetxattr, and a note saying why.
    const Child old = run(cp({"-r", "--preserve=xattr", "--summary", s / "t", s / "old"}), {}, [] {
        if (!refuse_register_opcodes({IORING_REGISTER_PROBE})) ::_exit(98);
    });
    ASSERT_EQ(old.status, 0) << old.err;
    check(s / "old");
    EXPECT_NE(old.err.find("extended attributes are copied with fgetxattr/fsetxattr"),
              std::string::npos)
        << old.err;
    EXPECT_NE(old.err.find("6 extended attributes copied\n"), std::string::npos) << old.err;

    // A single file, through its descriptors; and none without being asked.
    const Child one = run(cp({"--preserve=xattr", s / "t/big", s / "big-x"}));
    ASSERT_EQ(one.status, 0) << one.err;
    EXPECT_EQ(xattr_of(s / "big-x", "user.blob"), blob);
    const Child p = run(cp({"-p", s / "t/big", s / "big-p"}));
    ASSERT_EQ(p.status, 0) << p.err;
    EXPECT_EQ(::llistxattr((s / "big-p").c_str(), nullptr, 0), 0) << "-p does not copy xattrs";
}

// xattr_permission() wants write access for user.*: an ordinary user's
// read-only file still gets its attributes, and ends read-only.
TEST(CpPreserve, ReadOnlyFileOfAnOrdinaryUserKeepsItsAttributes) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to drop to nobody";
    Scratch s;
    if (auto why = user_xattrs_unsupported(s.dir.string()); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(::chmod(s.dir.c_str(), 0777), 0);
    write_file(s / "ro", "read only");
    ASSERT_EQ(::setxattr((s / "ro").c_str(), "user.k", "v", 1, 0), 0);
    ASSERT_EQ(::chown((s / "ro").c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::chmod((s / "ro").c_str(), 0444), 0);
    const Child r =
        run(cp({"--preserve=xattr,mode", s / "ro", s / "copy"}), {}, [] { become_nobody(); });
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(xattr_of(s / "copy", "user.k"), "v");
    EXPECT_EQ(lstat_of(s / "copy").st_mode & 07777, 0444u);
}

// A file system without user xattrs (ramfs): --preserve=xattr says so and
// fails (status 1); -a copies the rest quietly, as coreutils.
TEST(CpPreserve, DestinationWithoutXattrsIsAnErrorOnlyWhenNamed) {
    Scratch s;
    if (auto why = user_xattrs_unsupported(s.dir.string()); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(::mkdir((s / "ramfs").c_str(), 0755), 0);
    if (::mount("none", (s / "ramfs").c_str(), "ramfs", 0, nullptr) != 0)
        GTEST_SKIP() << "cannot mount a ramfs (needs root): " << std::strerror(errno);
    struct Unmount {
        std::string p;
        ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
    } unmount{s / "ramfs"};
    if (user_xattrs_unsupported(s / "ramfs").empty())
        GTEST_SKIP() << "this kernel's ramfs has user xattrs";
    write_file(s / "f", "tagged");
    ASSERT_EQ(::setxattr((s / "f").c_str(), "user.k", "v", 1, 0), 0);
    const Child named = run(cp({"--preserve=xattr", s / "f", s / "ramfs/named"}));
    EXPECT_EQ(named.status, 1);
    EXPECT_NE(named.err.find("setting attribute 'user.k' for '" + s / "ramfs/named" +
                             "': Operation not supported"),
              std::string::npos)
        << named.err;
    const Child a = run(cp({"-a", s / "f", s / "ramfs/archive"}));
    EXPECT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(a.err, "");
    EXPECT_EQ(read_file(s / "ramfs/archive"), "tagged");
}

TEST(CpPreserve, AclsWithSetfacl) {
    if (!have_program("setfacl") || !have_program("getfacl"))
        GTEST_SKIP() << "setfacl/getfacl (Debian package acl) are not installed";
    Scratch s;
    ASSERT_EQ(::mkdir((s / "t").c_str(), 0750), 0);
    write_file(s / "t/f", "with an ACL");
    const Child set1 = run({"setfacl", "-m", "u:nobody:rw,g:nogroup:r", s / "t/f"});
    if (set1.status != 0) GTEST_SKIP() << "no ACLs here: " << set1.err;
    ASSERT_EQ(run({"setfacl", "-d", "-m", "u:nobody:rx", s / "t"}).status, 0);
    const Child a = run(cp({"-a", s / "t", s / "a"}));
    ASSERT_EQ(a.status, 0) << a.err;
    auto acl = [](const std::string& p) {
        return run({"getfacl", "--omit-header", "--absolute-names", p}).out;
    };
    EXPECT_EQ(acl(s / "a/f"), acl(s / "t/f"));
    EXPECT_NE(acl(s / "a/f").find("user:nobody:rw-"), std::string::npos) << acl(s / "a/f");
    EXPECT_EQ(acl(s / "a"), acl(s / "t"));
    EXPECT_NE(acl(s / "a").find("default:user:nobody:r-x"), std::string::npos) << acl(s / "a");
    const Child r = run(cp({"-r", s / "t", s / "r"}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(acl(s / "r/f").find("user:nobody"), std::string::npos)
        << "an ACL copied without being asked";
}

// coreutils' tests/cp/acl.sh: -p keeps the ACL (the mode's extension), and
// so does --preserve=mode; the other attributes only with xattr.
TEST(CpPreserve, PKeepsAclsWithoutOtherAttributes) {
    if (!have_program("setfacl") || !have_program("getfacl"))
        GTEST_SKIP() << "setfacl/getfacl (Debian package acl) are not installed";
    Scratch s;
    write_file(s / "f", "with an ACL");
    const Child set = run({"setfacl", "-m", "user:bin:rw-", s / "f"});
    if (set.status != 0) GTEST_SKIP() << "no ACLs here: " << set.err;
    const bool user_xattr = user_xattrs_unsupported(s.dir.string()).empty() &&
                            ::setxattr((s / "f").c_str(), "user.tag", "v", 1, 0) == 0;
    auto acl = [](const std::string& p) {
        return run({"getfacl", "--omit-header", "--absolute-names", p}).out;
    };
    for (const char* flag : {"-p", "--preserve=mode"}) {
        const std::string to = s / (std::string("g") + (flag[1] == 'p' ? "p" : "m"));
        const Child r = run(cp({flag, s / "f", to}));
        ASSERT_EQ(r.status, 0) << flag << ": " << r.err;
        EXPECT_EQ(acl(to), acl(s / "f")) << flag;
        EXPECT_NE(acl(to).find("user:bin:rw-"), std::string::npos) << flag << ": " << acl(to);
        if (user_xattr) {
            EXPECT_EQ(xattr_of(to, "user.tag"), "<No data available>") << flag;
        }
    }
}

// coreutils' tests/cp/file-perm-race.sh: while a -p copy fills its
// temporary, nobody but the copier may open it (the source's group here
// would be root's); the mode and owner come once it is whole.
TEST(CpPreserve, TemporaryIsOwnerOnlyWhileItFills) {
    Scratch s;
    write_file(s / "src", random_bytes(4 << 20, 11));
    ASSERT_EQ(::chmod((s / "src").c_str(), 0640), 0);
    if (::geteuid() == 0) {
        ASSERT_EQ(::chown((s / "src").c_str(), 0, 2), 0);  // group bin
    }
    write_file(s / "dst", "old");  // replaced with --atomic: through a temporary
    std::vector<mode_t> seen;
    uringkit::fs::CopyOptions o;
    uringkit::fs::apply_preserve_list("mode,ownership,timestamps", true, o.preserve);
    o.block_size = 64 * 1024;
    o.atomic = true;
    o.on_progress = [&](std::uint64_t) {
        for (const std::string& t : temporaries(s.dir)) {
            struct stat st {};
            if (::lstat(t.c_str(), &st) == 0) seen.push_back(st.st_mode & 07777);
        }
    };
    uringkit::fs::CopySink sink;
    const std::vector<std::string> srcs{s / "src"};
    for (const char* target : {"dst", "new"}) {
        seen.clear();
        o.atomic = std::string(target) == "dst";
        const auto r = uringkit::fs::copy(srcs, s / target, o, sink);
        ASSERT_EQ(r.status, uringkit::fs::CopyStatus::ok) << r.message;
        ASSERT_FALSE(seen.empty()) << target << ": the progress hook never saw the temporary";
        for (mode_t m : seen)
            EXPECT_EQ(m & 077, 0u) << target << std::oct << ": the temporary had mode " << m;
        EXPECT_EQ(lstat_of(s / target).st_mode & 07777, 0640u) << target;
        if (::geteuid() == 0) {
            EXPECT_EQ(lstat_of(s / target).st_gid, 2u) << target;
        }
    }
}

// coreutils' tests/cp/proc-zero-len.sh and proc-short-read.sh: procfs and
// sysfs files say a size they do not have; they are read to their end.
TEST(CpPreserve, FilesWhoseSizeLiesAreReadToTheirEnd) {
    Scratch s;
    for (const char* src :
         {"/proc/self/status", "/proc/version", "/sys/kernel/mm/transparent_hugepage/enabled"}) {
        const std::string want = read_file(src);
        if (want.empty()) continue;  // not on this kernel
        const Child r = run(cp({src, s / "copy"}));
        ASSERT_EQ(r.status, 0) << src << ": " << r.err;
        const std::string got = read_file(s / "copy");
        if (std::string(src) == "/proc/self/status") {  // another process's: the same fields
            EXPECT_EQ(got.substr(0, 5), "Name:") << got;
            EXPECT_GT(got.size(), 500u);
        } else {
            EXPECT_EQ(got, want) << src;
        }
    }
}

TEST(CpPreserve, HardLinksWithinTheTreeStayHardLinks) {
    Scratch s;
    ASSERT_EQ(::mkdir((s / "t").c_str(), 0755), 0);
    ASSERT_EQ(::mkdir((s / "t/sub").c_str(), 0755), 0);
    write_file(s / "t/a", "shared small");
    write_file(s / "t/big", random_bytes(500 * 1024, 5));
    ASSERT_EQ(::link((s / "t/a").c_str(), (s / "t/b").c_str()), 0);
    ASSERT_EQ(::link((s / "t/a").c_str(), (s / "t/sub/c").c_str()), 0);
    ASSERT_EQ(::link((s / "t/big").c_str(), (s / "t/sub/big2").c_str()), 0);
    write_file(s / "t/single", "one link");
    const Child a = run(cp({"-a", "--summary", s / "t", s / "a"}));
    ASSERT_EQ(a.status, 0) << a.err;
    EXPECT_NE(a.err.find("3 hard links kept"), std::string::npos) << a.err;
    const struct stat first = lstat_of(s / "a/a");
    EXPECT_EQ(first.st_nlink, 3u);
    for (const char* p : {"a/b", "a/sub/c"}) EXPECT_EQ(lstat_of(s / p).st_ino, first.st_ino) << p;
    EXPECT_EQ(lstat_of(s / "a/big").st_ino, lstat_of(s / "a/sub/big2").st_ino);
    EXPECT_EQ(read_file(s / "a/sub/big2"), read_file(s / "t/big"));
    EXPECT_EQ(lstat_of(s / "a/single").st_nlink, 1u);

    // Again over the same tree: the links are already there, nothing doubles.
    const Child again = run(cp({"-a", s / "t/.", s / "a"}));
    ASSERT_EQ(again.status, 0) << again.err;
    EXPECT_EQ(lstat_of(s / "a/a").st_nlink, 3u);

    // Without links: separate files.
    const Child r = run(cp({"-r", s / "t", s / "r"}));
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(lstat_of(s / "r/a").st_ino, lstat_of(s / "r/b").st_ino);
    EXPECT_EQ(read_file(s / "r/b"), "shared small");

    // Operands that are links of each other, into one directory.
    ASSERT_EQ(::mkdir((s / "ops").c_str(), 0755), 0);
    const Child ops = run(cp({"--preserve=links", s / "t/a", s / "t/sub/c", s / "ops"}));
    ASSERT_EQ(ops.status, 0) << ops.err;
    EXPECT_EQ(lstat_of(s / "ops/a").st_ino, lstat_of(s / "ops/c").st_ino);
    EXPECT_TRUE(temporaries(s.dir).empty());
}

TEST(CpPreserve, SymlinksStayLinksWithArchiveAndP) {
    Scratch s;
    write_file(s / "target", "pointed at");
    ASSERT_EQ(::symlink("target", (s / "link").c_str()), 0);
    for (const char* opt : {"-a", "-P"}) {
        const std::string dst = s / (std::string("copy") + opt);
        const Child r = run(cp({opt, s / "link", dst}));
        ASSERT_EQ(r.status, 0) << opt << ": " << r.err;
        ASSERT_TRUE(S_ISLNK(lstat_of(dst).st_mode)) << opt;
        EXPECT_EQ(stdfs::read_symlink(dst), "target");
    }
    const Child plain = run(cp({s / "link", s / "followed"}));
    ASSERT_EQ(plain.status, 0) << plain.err;
    EXPECT_TRUE(S_ISREG(lstat_of(s / "followed").st_mode))
        << "without -P a named link is followed, as cp";
    EXPECT_EQ(read_file(s / "followed"), "pointed at");
}

}  // namespace
