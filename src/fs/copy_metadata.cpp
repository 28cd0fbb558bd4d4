// What -p, -a and --preserve=LIST keep, in coreutils' order: the owner,
// the extended attributes (ACLs are the system.posix_acl_* ones), the mode,
// the times last, so no later step moves them; and hard links among the
// sources kept as hard links among the copies.
//
// Extended attributes go on the ring where the kernel has the opcodes
// (IORING_OP_FGETXATTR/FSETXATTR, GETXATTR/SETXATTR, Linux 5.19): one
// flistxattr(2) per file (io_uring has no listxattr), then all of its gets in
// one submission and all of its sets in another, instead of a system call
// per attribute and direction.  A file without attributes costs the one
// listing call.  Elsewhere, and for symbolic links (the path opcodes follow
// links), fgetxattr(2)/fsetxattr(2) and their l* forms.
#include "copy_internal.hpp"

#include "uringkit/ops/fs.hpp"
#include "uringkit/ring/kernel_owned.hpp"

#include <fcntl.h>
#include <linux/limits.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstring>

namespace uringkit::fs {

std::optional<std::string> apply_preserve_list(std::string_view list, bool on, Preserve& p) {
    for (;;) {
        const std::size_t comma = list.find(',');
        const std::string_view word = list.substr(0, comma);
        if (word == "mode") {
            p.mode = on;
            p.mode_refused = !on;
        } else if (word == "ownership") {
            p.ownership = on;
        } else if (word == "timestamps") {
            p.timestamps = on;
        } else if (word == "xattr") {
            p.xattr = p.xattr_required = on;
        } else if (word == "links") {
            p.links = on;
        } else if (word == "all") {  // as coreutils: `all` does not make a missing xattr an error
            p.mode = p.ownership = p.timestamps = p.xattr = p.links = on;
            p.mode_refused = !on;
            if (!on) p.xattr_required = false;
        } else {
            return std::string(word);
        }
        if (comma == std::string_view::npos) return std::nullopt;
        list.remove_prefix(comma + 1);
    }
}

namespace detail {
namespace {

// The value of most attributes (ACLs, SELinux labels, user tags) fits; a
// larger one (up to XATTR_SIZE_MAX, 64 KiB) answers -ERANGE and is read
// again with a system call into a buffer of the largest size.
constexpr std::size_t kValueSlot = 4096;

bool unsupported(int err) noexcept {
    return err == ENOTSUP || err == ENODATA;
}

// The ring, when the kernel has all four xattr opcodes (asked once per copy).
Ring* xattr_ring(Ctx& c) {
    if (!c.ring || c.ring_unusable()) return nullptr;
    if (c.xattr_ring < 0) {
        bool all = false;
        ++c.syscalls();
        try {
            const OpcodeSupport ops = c.ring->probe_opcodes();
            all = ops.supported(IORING_OP_FGETXATTR) && ops.supported(IORING_OP_FSETXATTR) &&
                  ops.supported(IORING_OP_GETXATTR) && ops.supported(IORING_OP_SETXATTR);
        } catch (const RingError&) {  // no opcode probe (before 5.6): no xattr opcodes either
        }
        c.xattr_ring = all ? 1 : 0;
        if (!all)
            c.note(
                "extended attributes are copied with fgetxattr/fsetxattr: this kernel's io_uring "
                "lacks "
                "IORING_OP_FGETXATTR/FSETXATTR (Linux 5.19)");
    }
    return c.xattr_ring ? &*c.ring : nullptr;
}

// One attribute on its way: where its name and value sit in the arena.
struct Attr {
    const char* name;
    char* value;
    int len = 0;         // the value's length once read, or -errno
    bool large = false;  // over kValueSlot: read and set with system calls
};

// Submits the `n` SQEs just prepared (user_data: the index into `res`) and
// reaps their completions.  Returns io_uring_enter's error when it fails for
// good (then what could not be drained keeps `arena` for the rest of the
// process), else 0.
int run_batch(Ctx& c, unsigned n, int* res, Buffer& arena) {
    Ring& ring = *c.ring;
    unsigned left = n;
    auto reap = [&](const Completion& cq) {
        res[cq.user_data] = cq.res;
        --left;
    };
    while (left > 0) {
        const int r = ring.submit_and_wait(left);
        if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
            if (!drain(
                    c, [&] { return left; }, reap))
                keep_for_kernel(arena.release());
            c.ring_failed = true;
            return r;
        }
        ring.for_each_completion(reap);
    }
    return 0;
}

class XattrCopier {
public:
    XattrCopier(Ctx& c, Node src, Node dst, bool is_symlink, bool acl_only)
        : c_(c),
          src_(src),
          dst_(dst),
          symlink_(is_symlink),
          acl_only_(acl_only),
          dst_at_(dst.fd >= 0 ? std::string()
                              : held_path(dst.dir, dst.name ? dst.name : dst.path)) {}

    // Returns false when nothing was there to copy (or listing failed).
    bool run(bool& made_writable, mode_t& mode_before) {
        if (!list()) return false;
        if (attrs_.empty()) return false;
        made_writable = writable_for_us(mode_before);
        // The path opcodes follow links: only a destination with a
        // descriptor takes the ring.
        Ring* ring = symlink_ || dst_.fd < 0 ? nullptr : xattr_ring(c_);
        if (ring) c_.result.xattrs_on_ring = true;
        if (!(ring ? get_on_ring() : get_with_syscalls())) return true;
        for (Attr& a : attrs_)
            if (a.len == -ERANGE) get_large(a);
        ring ? set_on_ring() : set_with_syscalls();
        return true;
    }

private:
    // The names, copied into the arena, which also holds a slot per value:
    // memory the kernel reads and writes lives in one block, kept for the
    // kernel should the ring fail with requests in flight.
    bool list() {
        if (c_.xattr_names.empty()) c_.xattr_names.resize(XATTR_LIST_MAX);
        ++c_.syscalls();
        const ssize_t n =
            src_.fd >= 0 ? ::flistxattr(src_.fd, c_.xattr_names.data(), c_.xattr_names.size())
                         : ::llistxattr(src_.path, c_.xattr_names.data(), c_.xattr_names.size());
        if (n < 0) {
            if (!unsupported(errno))
                problem(errno,
                        std::string("cannot list extended attributes of '") + src_.path + "'");
            return false;
        }
        if (n == 0) return false;
        std::size_t count = 0;
        for (ssize_t i = 0; i < n; ++i)
            count += c_.xattr_names[static_cast<std::size_t>(i)] == '\0';
        const std::size_t names = round_up(static_cast<std::uint64_t>(n), 64);
        arena_ = aligned_buffer(names + count * kValueSlot);
        std::memcpy(arena_.get(), c_.xattr_names.data(), static_cast<std::size_t>(n));
        std::size_t k = 0;
        for (std::size_t off = 0; off < static_cast<std::size_t>(n);
             off += std::strlen(arena_.get() + off) + 1) {
            // -p and --preserve=mode carry the ACLs (the mode's extension),
            // as coreutils does, without the other attributes.
            if (acl_only_ && std::strncmp(arena_.get() + off, "system.posix_acl_", 17) != 0)
                continue;
            attrs_.push_back({arena_.get() + off, arena_.get() + names + k++ * kValueSlot});
        }
        res_.assign(attrs_.size(), 0);
        return true;
    }

    // xattr_permission(): setting a user.* attribute asks for write access to
    // the inode, whatever the descriptor, so an ordinary user cannot tag a
    // read-only copy.  As coreutils: u+w for the time it takes.
    bool writable_for_us(mode_t& before) {
        if (c_.root || symlink_) return false;
        struct stat st {};
        ++c_.syscalls();
        if ((dst_.fd >= 0 ? ::fstat(dst_.fd, &st)
                          : ::fstatat(dst_.dir, dst_name(), &st, AT_SYMLINK_NOFOLLOW)) != 0 ||
            (st.st_mode & S_IWUSR))
            return false;
        before = st.st_mode & 07777;
        ++c_.syscalls();
        return (dst_.fd >= 0
                    ? ::fchmod(dst_.fd, before | S_IWUSR)
                    : ::fchmodat(dst_.dir, dst_name(), before | S_IWUSR, AT_SYMLINK_NOFOLLOW)) == 0;
    }
    const char* dst_name() const { return dst_.name ? dst_.name : dst_.path; }

    bool get_on_ring() {
        Ring& ring = *c_.ring;
        for (std::size_t first = 0; first < attrs_.size();) {
            const auto n = static_cast<unsigned>(
                std::min<std::size_t>(ring.sq_space_left(), attrs_.size() - first));
            if (n == 0)
                return ring_failed(
                    -EBUSY);  // nothing of ours is queued: cannot happen, never spins
            for (unsigned k = 0; k < n; ++k) {
                Attr& a = attrs_[first + k];
                const auto size = static_cast<std::uint32_t>(kValueSlot);
                (src_.fd >= 0 ? ring.prepare(op::FGetXattr(Fd{src_.fd}, a.name, a.value, size))
                              : ring.prepare(op::GetXattr(src_.path, a.name, a.value, size)))
                    .user_data(k);
            }
            if (const int r = run_batch(c_, n, res_.data(), arena_); r < 0) return ring_failed(r);
            for (unsigned k = 0; k < n; ++k) attrs_[first + k].len = res_[k];
            first += n;
        }
        return true;
    }

    bool get_with_syscalls() {
        for (Attr& a : attrs_) {
            ++c_.syscalls();
            const ssize_t r = src_.fd >= 0 ? ::fgetxattr(src_.fd, a.name, a.value, kValueSlot)
                                           : ::lgetxattr(src_.path, a.name, a.value, kValueSlot);
            a.len = r < 0 ? -errno : static_cast<int>(r);
        }
        return true;
    }

    void get_large(Attr& a) {
        large_.emplace_back(XATTR_SIZE_MAX);
        ++c_.syscalls();
        const ssize_t r =
            src_.fd >= 0
                ? ::fgetxattr(src_.fd, a.name, large_.back().data(), large_.back().size())
                : ::lgetxattr(src_.path, a.name, large_.back().data(), large_.back().size());
        a.value = large_.back().data();  // never named by a request: only system calls use it
        a.large = true;
        a.len = r < 0 ? -errno : static_cast<int>(r);
    }

    void set_on_ring() {
        Ring& ring = *c_.ring;
        std::vector<std::size_t> which;  // values in the arena: set on the ring
        for (std::size_t i = 0; i < attrs_.size(); ++i) {
            Attr& a = attrs_[i];
            if (a.len == -ENODATA) continue;  // removed since it was listed
            if (a.len < 0)
                get_failed(a);
            else if (a.large)
                set_result(a, set_one(a));  // read by a system call, set by one
            else
                which.push_back(i);
        }
        for (std::size_t first = 0; first < which.size();) {
            const auto n = static_cast<unsigned>(
                std::min<std::size_t>(ring.sq_space_left(), which.size() - first));
            if (n == 0) {
                ring_failed(-EBUSY);
                return;
            }
            for (unsigned k = 0; k < n; ++k) {
                const Attr& a = attrs_[which[first + k]];
                const auto len = static_cast<std::uint32_t>(a.len);
                ring.prepare(op::FSetXattr(Fd{dst_.fd}, a.name, a.value, len)).user_data(k);
            }
            if (const int r = run_batch(c_, n, res_.data(), arena_); r < 0) {
                ring_failed(r);
                return;
            }
            for (unsigned k = 0; k < n; ++k) set_result(attrs_[which[first + k]], res_[k]);
            first += n;
        }
    }

    void set_with_syscalls() {
        for (Attr& a : attrs_) {
            if (a.len == -ENODATA) continue;
            if (a.len < 0)
                get_failed(a);
            else
                set_result(a, set_one(a));
        }
    }

    int set_one(const Attr& a) {
        ++c_.syscalls();
        const auto len = static_cast<std::size_t>(a.len);
        const int r = dst_.fd >= 0 ? ::fsetxattr(dst_.fd, a.name, a.value, len, 0)
                                   : ::lsetxattr(dst_at_.c_str(), a.name, a.value, len, 0);
        return r < 0 ? -errno : 0;
    }

    void set_result(const Attr& a, int res) {
        if (res >= 0) {
            ++c_.result.xattrs;
            return;
        }
        problem(-res, std::string("setting attribute '") + a.name + "' for '" + dst_.path + "'");
    }
    void get_failed(const Attr& a) {
        problem(-a.len, std::string("getting attribute '") + a.name + "' of '" + src_.path + "'");
    }
    bool ring_failed(int err) {
        c_.report({CopyStatus::failure,
                   errno_message(dst_.path, "io_uring_enter (extended attributes)", err)});
        return false;
    }

    // coreutils: --preserve=xattr makes every failure an error; from -a or
    // `all` a file system without them is quiet and anything else a note.
    void problem(int err, const std::string& what) {
        const std::string m = what + ": " + std::strerror(err);
        if (c_.o.preserve.xattr_required)
            c_.report({CopyStatus::failure, m});
        else if (!unsupported(err))
            c_.note(m);
    }

    Ctx& c_;
    Node src_, dst_;
    bool symlink_, acl_only_;
    std::string dst_at_;  // the destination for lsetxattr when it has no descriptor
    Buffer arena_;
    std::vector<Attr> attrs_;
    std::vector<int> res_;
    std::vector<std::vector<char>> large_;
};

}  // namespace

void keep_attributes(Ctx& c, Node src, Node dst, const struct stat& st, bool is_symlink) {
    const Preserve& p = c.o.preserve;
    if (!p.ownership && !p.xattr && !p.mode && !p.timestamps) return;
    const bool by_fd = dst.fd >= 0;
    // Without a descriptor: the name in its held directory, never followed.
    const char* name = dst.name ? dst.name : dst.path;
    bool owner_kept = true;
    if (p.ownership) {
        ++c.syscalls();
        owner_kept =
            (by_fd ? ::fchown(dst.fd, st.st_uid, st.st_gid)
                   : ::fchownat(dst.dir, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW)) == 0;
        // coreutils: an ordinary user cannot give a file away (EPERM) and
        // is not told; root failing to is an error.
        if (!owner_kept && c.root)
            c.report({CopyStatus::failure,
                      quoted_message("failed to preserve ownership for", dst.path, errno)});
        // coreutils again: the group alone may still be kept, by a member of
        // it (chown(2) lets an owner pick any group it belongs to).  Its
        // failure is not reported either; the set-ID bits still go below.
        if (!owner_kept && !c.root) {
            ++c.syscalls();
            static_cast<void>(by_fd ? ::fchown(dst.fd, static_cast<uid_t>(-1), st.st_gid)
                                    : ::fchownat(dst.dir, name, static_cast<uid_t>(-1), st.st_gid,
                                                 AT_SYMLINK_NOFOLLOW));
        }
    }
    bool made_writable = false;
    mode_t mode_before = 0;
    const bool acls = (p.xattr || p.mode) && !is_symlink;
    if ((p.xattr || acls) && (src.fd >= 0 || src.path))
        XattrCopier(c, src, dst, is_symlink, !p.xattr).run(made_writable, mode_before);
    if (!is_symlink && (p.mode || made_writable)) {  // a symlink's own mode means nothing on Linux
        mode_t mode = p.mode ? st.st_mode & 07777 : mode_before;
        // coreutils: a set-ID bit is kept only with the owner it gives power to.
        if (p.mode && p.ownership && !owner_kept) mode &= ~(S_ISUID | S_ISGID | S_ISVTX);
        ++c.syscalls();
        // fchmodat's AT_SYMLINK_NOFOLLOW (glibc: through an O_PATH
        // descriptor; fchmodat2 from Linux 6.6) changes the entry itself.
        if ((by_fd ? ::fchmod(dst.fd, mode)
                   : ::fchmodat(dst.dir, name, mode, AT_SYMLINK_NOFOLLOW)) != 0)
            c.report({CopyStatus::failure,
                      quoted_message("preserving permissions for", dst.path, errno)});
    }
    if (p.timestamps) {
        const struct timespec times[2] = {st.st_atim, st.st_mtim};
        ++c.syscalls();
        if ((by_fd ? ::futimens(dst.fd, times)
                   : ::utimensat(dst.dir, name, times, AT_SYMLINK_NOFOLLOW)) != 0)
            c.report(
                {CopyStatus::failure, quoted_message("preserving times for", dst.path, errno)});
    }
}

namespace {
std::pair<std::uint64_t, std::uint64_t> inode_key(const struct stat& st) {
    return {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}
bool has_other_links(const Ctx& c, const struct stat& st) {
    return c.o.preserve.links && (st.st_nlink > 1 || c.operand_followed) && !S_ISDIR(st.st_mode);
}
}  // namespace

void remember_first_copy(Ctx& c, const struct stat& st, const std::string& dst) {
    if (has_other_links(c, st)) c.first_link.emplace(inode_key(st), dst);
}

bool link_to_first_copy(Ctx& c, const struct stat& st, const Where& dst, bool in_new_dir,
                        std::optional<Failure>& failure, const Where* first_at) {
    if (!has_other_links(c, st)) return false;
    Where remembered;
    if (!first_at) {
        const auto it = c.first_link.find(inode_key(st));
        if (it == c.first_link.end()) return false;
        remembered = Where::operand(it->second);
        first_at = &remembered;
    }
    const Where& first = *first_at;
    const char* name = dst.name.c_str();
    auto link_failure = [&](int err) {
        return Failure{status_of_create(err), "cannot create hard link '" + dst.path + "' to '" +
                                                  first.path + "': " + std::strerror(err)};
    };
    if (!in_new_dir) {
        struct stat there {
        }, copy{};
        ++c.syscalls();
        if (::fstatat(dst.dir, name, &there, AT_SYMLINK_NOFOLLOW) == 0) {
            // -u does not keep a name from being linked to its first copy: cp
            // replaces it even when it is a newer, separate file.
            if (!update_only_older(c.o) && keep_existing(c, st, there, dst)) {
                ++c.result.skipped;
                return true;
            }
            if (S_ISDIR(there.st_mode)) {
                failure = Failure{CopyStatus::bad_input, "cannot overwrite directory '" + dst.path +
                                                             "' with non-directory"};
                return true;
            }
            ++c.syscalls();
            if (::fstatat(first.dir, first.name.c_str(), &copy, AT_SYMLINK_NOFOLLOW) == 0 &&
                copy.st_ino == there.st_ino && copy.st_dev == there.st_dev) {
                ++c.result.files;  // already the same file: a second run of the same cp -a
                ++c.result.hard_links;
                file_done(c, static_cast<std::uint64_t>(st.st_size));
                return true;
            }
        }
    }
    // link(2) never replaces a name: into a directory this copy made it is
    // made at its name; elsewhere at a temporary name renamed over what is
    // there, as cp replaces a destination it links.  Neither side is
    // followed if it is a symbolic link (linkat without AT_SYMLINK_FOLLOW).
    std::string where = dst.name;
    int r = -1;
    if (in_new_dir) {
        ++c.syscalls();
        r = ::linkat(first.dir, first.name.c_str(), dst.dir, name, 0);
    } else {
        for (int attempt = 0; attempt < 16; ++attempt) {
            where = temp_name_for(dst.name);
            ++c.syscalls();
            r = ::linkat(first.dir, first.name.c_str(), dst.dir, where.c_str(), 0);
            if (r == 0 || errno != EEXIST) break;
        }
    }
    if (r != 0) {
        failure = link_failure(errno);
        return true;
    }
    if (where != dst.name) {
        ++c.syscalls();
        if (::renameat(dst.dir, where.c_str(), dst.dir, name) != 0) {
            const int err = errno;
            ::unlinkat(dst.dir, where.c_str(), 0);
            failure = link_failure(err);
            return true;
        }
    }
    ++c.result.files;
    ++c.result.hard_links;
    file_done(c, static_cast<std::uint64_t>(st.st_size));
    return true;
}

}  // namespace detail
}  // namespace uringkit::fs
