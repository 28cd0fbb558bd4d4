// copy(): checks the options and copies each operand (copy_tree.cpp for -r, copy_destination.cpp
// for a file).
#include "copy_internal.hpp"

#include "fs/walk.hpp"
#include "uringkit/ring/kernel_owned.hpp"
#include "uringkit/sys/error.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace uringkit::fs {
namespace detail {

Ctx::~Ctx() {
    restore_kernel_workers(*this);
    // An operation the kernel may still complete names these buffers: keep
    // them for the rest of the process rather than let it write freed memory.
    if (kernel_holds_buffers) {
        keep_for_kernel(big.release());
        keep_for_kernel(small.release());
    }
}

void Ctx::report(const Failure& f) {
    if (f.status == CopyStatus::interrupted) {
        interrupted = true;
        return;
    }
    if (result.failures++ == 0) {
        result.status = f.status;
        result.message = f.message;
    } else if (f.status == CopyStatus::bad_input && result.status == CopyStatus::failure) {
        result.status = f.status;  // the README's rule: a path that cannot be used (4) wins over a
                                   // refused write (1)
    }
    if (sink.error) sink.error(f.message);
}

CopyStatus status_of_write(int err) noexcept {
    err = err < 0 ? -err : err;
    return err == ENOSPC || err == EFBIG || err == EDQUOT ? CopyStatus::no_space
                                                          : CopyStatus::failure;
}

CopyStatus status_of_create(int err) noexcept {
    err = err < 0 ? -err : err;
    return err == ENOENT || err == ENOTDIR ? CopyStatus::bad_input : status_of_write(err);
}

std::string io_message(std::string_view path, const char* what, std::uint64_t offset, int err) {
    err = err < 0 ? -err : err;
    char tail[160];
    std::snprintf(tail, sizeof tail, ": %s at offset %llu: %s (errno %d)", what,
                  static_cast<unsigned long long>(offset), std::strerror(err), err);
    return std::string(path) + tail;
}
std::string errno_message(std::string_view path, const char* what, int err) {
    err = err < 0 ? -err : err;
    char tail[160];
    std::snprintf(tail, sizeof tail, ": %s: %s (errno %d)", what, std::strerror(err), err);
    return std::string(path) + tail;
}
std::string quoted_message(const char* what, std::string_view path, int err) {
    err = err < 0 ? -err : err;
    return std::string(what) + " '" + std::string(path) + "': " + std::strerror(err);
}

std::string shrank_message(std::string_view path, std::uint64_t offset) {
    return std::string(path) + ": end of file at offset " + std::to_string(offset) +
           ", before the size it had when the copy started (the file shrank while being copied)";
}

std::string dirname_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}
std::string basename_of(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}
std::string join(const std::string& dir, std::string_view name) {
    std::string p = dir;
    if (!p.empty() && p.back() != '/') p += '/';
    p += name;
    return p;
}

std::string temp_name_for(const std::string& final_path) {
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    unsigned char random[12];
    std::size_t got = 0;
    while (got < sizeof random) {
        const ssize_t n = ::getrandom(random + got, sizeof random - got, 0);
        if (n > 0)
            got += static_cast<std::size_t>(n);
        else if (errno != EINTR)
            throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    std::string suffix(sizeof random, 'x');
    for (std::size_t i = 0; i < sizeof random; ++i) suffix[i] = alphabet[random[i] % 62];
    return join(dirname_of(final_path), "." + basename_of(final_path) + ".uringkit-" + suffix);
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) {
    return (v + a - 1) / a * a;
}

}  // namespace detail

namespace {

using namespace detail;
using Clock = std::chrono::steady_clock;

// ---- the job -------------------------------------------------------------------

// Whether the directory `target` would be made in (its parent, or the
// target itself when it exists) is `src` or below it: compared by device and
// inode up to the root, so a second path to the same directory (a bind
// mount, a symbolic link) is seen too, as coreutils does.
// Whether paths `a` and `b` are one directory entry (not two names of one
// file): the same parent directory, the same last name.
bool same_entry(Ctx& c, const std::string& a, const std::string& b) {
    if (basename_of(a) != basename_of(b)) return false;
    struct stat da {
    }, db{};
    c.syscalls() += 2;
    return ::stat(dirname_of(a).c_str(), &da) == 0 && ::stat(dirname_of(b).c_str(), &db) == 0 &&
           da.st_dev == db.st_dev && da.st_ino == db.st_ino;
}

bool inside_source(Ctx& c, const struct stat& src, const std::string& target) {
    std::string start = target;
    while (start.size() > 1 && start.back() == '/') start.pop_back();
    ++c.syscalls();
    util::UniqueFd dir(::open(start.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir) {
        ++c.syscalls();
        dir.reset(::open(dirname_of(start).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    }
    for (int depth = 0; dir && depth < 4096; ++depth) {
        struct stat here {
        }, up{};
        c.syscalls() += 2;
        if (::fstat(dir.get(), &here) != 0) return false;
        if (here.st_dev == src.st_dev && here.st_ino == src.st_ino) return true;
        util::UniqueFd parent(::openat(dir.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!parent || ::fstat(parent.get(), &up) != 0) return false;
        if (up.st_dev == here.st_dev && up.st_ino == here.st_ino) return false;  // the root
        dir = std::move(parent);
    }
    return false;
}

std::optional<Failure> copy_one(Ctx& c, const std::string& src, const Where& at) {
    const std::string& target = at.path;
    struct stat st {};
    ++c.syscalls();
    const bool follow = c.o.dereference_operands || (!c.o.recursive && !c.o.no_dereference);
    const int r = follow ? ::stat(src.c_str(), &st) : ::lstat(src.c_str(), &st);
    if (r != 0) return Failure{CopyStatus::bad_input, quoted_message("cannot stat", src, errno)};
    if (S_ISDIR(st.st_mode)) {
        if (!c.o.recursive)
            return Failure{CopyStatus::bad_input,
                           "-r not specified; omitting directory '" + src + "'"};
        if (inside_source(c, st, target))
            return Failure{CopyStatus::bad_input,
                           "cannot copy a directory, '" + src + "', into itself, '" + target + "'"};
        copy_tree(c, src, target, at.dir == AT_FDCWD ? -1 : at.dir);
        return std::nullopt;
    }
    // A link made at the name of the very file the source names (cp -P or -s
    // of `link` onto the `file` it points to, cp -s of a file onto itself)
    // would put a link to nowhere in the data's place: refused, as cp does
    // (with -b the file is kept under its backup name, and so it may).
    if (c.o.backup == Backup::none && c.o.link_instead != LinkInstead::hard &&
        (S_ISLNK(st.st_mode) || c.o.link_instead == LinkInstead::symbolic)) {
        struct stat there {
        }, named{};
        c.syscalls() += 2;
        if (::lstat(target.c_str(), &there) == 0 && !S_ISLNK(there.st_mode) &&
            !S_ISDIR(there.st_mode) && ::stat(src.c_str(), &named) == 0 &&
            named.st_dev == there.st_dev && named.st_ino == there.st_ino)
            return Failure{CopyStatus::bad_input,
                           "'" + src + "' and '" + target + "' are the same file"};
    }
    if (c.o.link_instead != LinkInstead::none) return make_link(c, src.c_str(), at, follow);
    struct stat tst {};
    std::string from = src;
    if (::stat(target.c_str(), &tst) == 0 && tst.st_dev == st.st_dev && tst.st_ino == st.st_ino) {
        // A source named through a symbolic link whose DST is the file itself:
        // removing or renaming DST would leave the source naming nothing.
        struct stat src_entry {
        }, dst_entry{};
        c.syscalls() += 2;
        const bool through_link =
            ::lstat(src.c_str(), &src_entry) == 0 && S_ISLNK(src_entry.st_mode) &&
            ::lstat(target.c_str(), &dst_entry) == 0 && !S_ISLNK(dst_entry.st_mode);
        const bool one_name = same_entry(c, src, target);
        if (c.o.force && c.o.backup != Backup::none && S_ISREG(st.st_mode) && at.dir == AT_FDCWD &&
            one_name) {
            // cp --force --backup F F: F is renamed to its backup and copied from there.
            from = backup_name(c, at.dir, at.name);
            if (auto f = back_up(c, at, st, src.c_str())) return f;
        } else if (one_name || through_link ||
                   (c.o.backup == Backup::none && !c.o.remove_destination)) {
            return Failure{CopyStatus::bad_input,
                           "'" + src + "' and '" + target + "' are the same file"};
        }
        // Otherwise DST is another name of the source's file (a hard link, a
        // symbolic link to it): -b renames it and --remove-destination removes
        // it, and the source, by its own name, is copied there, as cp does.
    }
    if (S_ISLNK(st.st_mode)) return copy_symlink(c, src.c_str(), at, false);
    // -r makes a FIFO or a device again (unless --copy-contents); without it its contents are
    // read.
    if (c.o.recursive && !S_ISREG(st.st_mode) && !c.o.copy_contents)
        return copy_special(c, src.c_str(), at, st);
    if (c.o.on_planned)
        c.o.on_planned(1, S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0);
    std::optional<Failure> link_failure;
    const std::uint64_t skipped = c.result.skipped;
    // An operand reached through a symbolic link (-H, or -L without -r) is one
    // of two names of its file even when it has one link: coreutils links
    // `cp --preserve=links -R -H file link-to-file dir`'s two copies.
    const OperandLinks followed(c, follow && st.st_nlink == 1);
    if (link_to_first_copy(c, st, at, false, link_failure)) {
        if (!link_failure && c.result.skipped == skipped) c.event(CopyEvent::copied, src, target);
        return link_failure;
    }
    auto failure = copy_file(c, from.c_str(), at, false, std::nullopt);
    if (!failure && c.result.skipped == skipped) remember_first_copy(c, st, target);
    return failure;
}

// A directory on --parents' way (made, or with -p entered), whose attributes are set from its
// source once what goes inside is copied (coreutils' re_protect: -p's mode may forbid writing into
// it).
struct MadeParent {
    util::UniqueFd fd;
    std::string src, dst;
    struct stat st;
};

// --parents: the directory SRC's path names below `dest` (held open in
// `dir`), each entered O_NOFOLLOW or made (the source directory's
// permission bits less the umask) from the one before, never resolved from
// the top again.  `name`: SRC's last name, to be copied into `dir`;
// `made_parents`: the directories whose attributes -p sets afterwards.
std::optional<Failure> parents_of(Ctx& c, const std::string& src, const std::string& dest,
                                  util::UniqueFd& dir, std::string& name, std::string& target,
                                  std::vector<MadeParent>& made_parents) {
    std::vector<std::string> names;
    std::vector<std::size_t> ends;  // where each name ends in `src`
    for (std::size_t at = 0; at < src.size();) {
        const std::size_t slash = std::min(src.find('/', at), src.size());
        const std::string part = src.substr(at, slash - at);
        if (part == "..")
            return Failure{CopyStatus::bad_input,
                           "--parents: '" + src +
                               "': a '..' is not followed out of the destination (name the "
                               "source from a directory above it)"};
        if (!part.empty() && part != ".") {
            names.push_back(part);
            ends.push_back(slash);
        }
        at = slash + 1;
    }
    if (names.empty())
        return Failure{CopyStatus::bad_input, "--parents: '" + src + "': no name to copy"};
    target = join(dest, src);
    ++c.syscalls();
    dir.reset(::open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir) return Failure{status_of_create(errno), quoted_message("cannot open", dest, errno)};
    for (std::size_t k = 0; k + 1 < names.size(); ++k) {
        // As coreutils names them: the source's path as given, up to this name.
        const std::string src_prefix = src.substr(0, ends[k]);
        const std::string dst_prefix = join(dest, src_prefix);
        ++c.syscalls();
        int fd =
            ::openat(dir.get(), names[k].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) {
            struct stat st {};
            c.syscalls() += 2;
            if (::stat(src_prefix.c_str(), &st) != 0)
                return Failure{CopyStatus::bad_input,
                               quoted_message("cannot stat", src_prefix, errno)};
            if (!S_ISDIR(st.st_mode))
                return Failure{CopyStatus::bad_input, "'" + src_prefix + "' is not a directory"};
            // Made 0700 and checked to be ours before it is entered (another
            // user cannot swap in a directory of theirs), then given its mode.
            if (::mkdirat(dir.get(), names[k].c_str(), S_IRWXU) != 0)
                return Failure{status_of_write(errno),
                               quoted_message("cannot make directory", dst_prefix, errno)};
            c.event(CopyEvent::made_parent, src_prefix, dst_prefix);
            c.syscalls() += 3;
            fd = ::openat(dir.get(), names[k].c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            struct stat made {};
            if (fd >= 0 && (::fstat(fd, &made) != 0 || made.st_uid != ::geteuid() ||
                            (made.st_mode & 077) != 0 ||
                            ::fchmod(fd, (c.o.preserve.dir_creation_bits(st.st_mode) & ~c.umask) |
                                             (made.st_mode & S_ISGID)) != 0)) {
                ::close(fd);
                return Failure{CopyStatus::failure, "'" + dst_prefix +
                                                        "' was replaced while being created: "
                                                        "nothing copied into it"};
            }
            if (fd >= 0 && c.o.preserve.any()) {
                ++c.syscalls();
                made_parents.push_back(
                    {util::UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 0)), src_prefix, dst_prefix, st});
            }
        } else if (fd >= 0 && c.o.preserve.any()) {
            // An existing directory on the way gets its source's attributes too (cp -p).
            struct stat st {};
            c.syscalls() += 2;
            if (::stat(src_prefix.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
                made_parents.push_back(
                    {util::UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 0)), src_prefix, dst_prefix, st});
        }
        if (fd < 0) {
            const int err = errno;
            struct stat there {};
            const bool link =
                (err == ELOOP || err == ENOTDIR) &&
                ::fstatat(dir.get(), names[k].c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0 &&
                S_ISLNK(there.st_mode);
            return Failure{
                CopyStatus::failure,
                link ? "'" + dst_prefix + "' is a symbolic link: --parents does not follow one"
                     : quoted_message("cannot open directory", dst_prefix, err)};
        }
        dir.reset(fd);
    }
    name = names.back();
    return std::nullopt;
}

}  // namespace

CopyResult copy(std::span<const std::string> sources, const std::string& dest, const CopyOptions& o,
                const CopySink& sink) {
    CopyResult result;
    auto usage = [&](std::string m) {
        result.status = CopyStatus::usage;
        result.message = std::move(m);
        return result;
    };
    if (sources.empty())
        return usage("nothing to copy: name at least one source and a destination");
    for (const std::size_t bs : {o.block_size, o.direct_read_block_size})
        if (bs < kDirectAlign || bs % kDirectAlign || bs > (1u << 30))
            return usage("block size must be a multiple of 4 KiB, at most 1 GiB");
    for (const unsigned qd : {o.qd, o.direct_read_qd})
        if (qd == 0 || qd > 1024) return usage("queue depth must be 1..1024");
    if (o.inflight == 0 || o.inflight > 1024) return usage("files in flight must be 1..1024");
    if (o.kernel_workers > 1024) return usage("kernel workers must be 0 (one per CPU) to 1024");
    if (o.clone_threads > 64) return usage("clone threads must be 0 to 64");
    if (o.copy_threads > 64) return usage("copy threads must be 0 to 64");

    Ctx c(o, sink, result);
    c.small_slots = o.inflight;
    c.root = ::geteuid() == 0;
    c.umask = ::umask(0);
    ::umask(c.umask);
    c.syscalls() += 3;

    struct stat dst_st {};
    const bool dest_is_dir =
        !o.no_target_directory && ::stat(dest.c_str(), &dst_st) == 0 && S_ISDIR(dst_st.st_mode);
    ++c.syscalls();
    if (o.no_target_directory && sources.size() > 1)
        return usage("extra operand '" + dest + "' (-T takes one source and its copy)");
    if (o.parents && !dest_is_dir)
        return usage("with --parents, the destination must be a directory");
    if (sources.size() > 1 && !dest_is_dir)
        return usage("target '" + dest +
                     "' is not a directory (several sources need an existing directory)");

    const auto t0 = Clock::now();
    // The ring and its buffers come when a path first needs them (copy_setup.cpp).
    if (o.force_fallback) result.used_ring = false;

    for (const std::string& src : sources) {
        if (c.stop_requested()) c.interrupted = true;
        if (c.interrupted || c.ring_unusable()) break;
        if (o.parents) {
            util::UniqueFd dir;
            std::string name, target;
            std::vector<MadeParent> made;
            auto f = parents_of(c, src, dest, dir, name, target, made);
            if (!f) f = copy_one(c, src, Where{dir.get(), name, target, false});
            if (f) c.report(*f);
            for (auto p = made.rbegin(); p != made.rend(); ++p)
                if (p->fd)
                    keep_attributes(c, {-1, p->src.c_str()}, {p->fd.get(), p->dst.c_str()}, p->st,
                                    false);
            continue;
        }
        const std::string target = dest_is_dir ? join(dest, basename_of(src)) : dest;
        if (auto f = copy_one(c, src, Where::operand(target))) c.report(*f);
    }
    if (c.interrupted) result.status = CopyStatus::interrupted;
    result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (c.ring) result.syscalls += c.ring->enter_calls();
    return result;
}

}  // namespace uringkit::fs
