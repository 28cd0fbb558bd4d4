// strace lines to events: which descriptor names which file in which thread,
// where each read and write lands, and calls split by other threads
// (<unfinished ...> / <... resumed>) joined again.
#include "strace_parser.hpp"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sched.h>

#include <fmt/format.h>

#include <unordered_map>

#include "fd_tables.hpp"
#include "strace_line.hpp"

namespace uringkit::replay {
namespace {

using namespace strace;

enum class Sys {
    open,
    openat,
    openat2,
    creat,
    close,
    close_range,
    dup,
    dup2,
    dup3,
    fcntl,
    clone,
    clone3,
    fork,
    vfork,
    read,
    write,
    pread,
    pwrite,
    readv,
    writev,
    preadv,
    pwritev,
    preadv2,
    pwritev2,
    lseek,
    fsync,
    fdatasync,
    ftruncate,
    fallocate,
    sync_file_range,
};

std::optional<Sys> lookup(std::string_view name) {
    static const std::unordered_map<std::string_view, Sys> names = {
        {"open", Sys::open},
        {"openat", Sys::openat},
        {"openat2", Sys::openat2},
        {"creat", Sys::creat},
        {"close", Sys::close},
        {"close_range", Sys::close_range},
        {"dup", Sys::dup},
        {"dup2", Sys::dup2},
        {"dup3", Sys::dup3},
        {"fcntl", Sys::fcntl},
        {"fcntl64", Sys::fcntl},
        {"clone", Sys::clone},
        {"clone3", Sys::clone3},
        {"fork", Sys::fork},
        {"vfork", Sys::vfork},
        {"read", Sys::read},
        {"write", Sys::write},
        {"pread64", Sys::pread},
        {"pwrite64", Sys::pwrite},
        {"readv", Sys::readv},
        {"writev", Sys::writev},
        {"preadv", Sys::preadv},
        {"pwritev", Sys::pwritev},
        {"preadv2", Sys::preadv2},
        {"pwritev2", Sys::pwritev2},
        {"lseek", Sys::lseek},
        {"fsync", Sys::fsync},
        {"fdatasync", Sys::fdatasync},
        {"ftruncate", Sys::ftruncate},
        {"fallocate", Sys::fallocate},
        {"sync_file_range", Sys::sync_file_range},
    };
    const auto it = names.find(name);
    if (it == names.end()) return std::nullopt;
    return it->second;
}

bool clone_like(std::string_view name) {
    return name == "clone" || name == "clone3" || name == "fork" || name == "vfork";
}

// The kernel's values (<fcntl.h> with _GNU_SOURCE); O_LARGEFILE is 0 in
// x86-64 glibc but strace prints the kernel's bit.
constexpr FlagName open_flags[] = {
    {"O_RDONLY", O_RDONLY},   {"O_WRONLY", O_WRONLY},       {"O_RDWR", O_RDWR},
    {"O_CREAT", O_CREAT},     {"O_EXCL", O_EXCL},           {"O_NOCTTY", O_NOCTTY},
    {"O_TRUNC", O_TRUNC},     {"O_APPEND", O_APPEND},       {"O_NONBLOCK", O_NONBLOCK},
    {"O_DSYNC", O_DSYNC},     {"O_SYNC", O_SYNC},           {"O_DIRECT", O_DIRECT},
    {"O_LARGEFILE", 0100000}, {"O_DIRECTORY", O_DIRECTORY}, {"O_NOFOLLOW", O_NOFOLLOW},
    {"O_NOATIME", O_NOATIME}, {"O_CLOEXEC", O_CLOEXEC},     {"O_PATH", O_PATH},
    {"O_TMPFILE", O_TMPFILE}, {"O_ASYNC", O_ASYNC},         {"FASYNC", O_ASYNC},
};
constexpr FlagName fcntl_commands[] = {
    {"F_DUPFD", F_DUPFD}, {"F_DUPFD_CLOEXEC", F_DUPFD_CLOEXEC}, {"F_SETFL", F_SETFL}};
constexpr FlagName whences[] = {{"SEEK_SET", SEEK_SET},
                                {"SEEK_CUR", SEEK_CUR},
                                {"SEEK_END", SEEK_END},
                                {"SEEK_DATA", SEEK_DATA},
                                {"SEEK_HOLE", SEEK_HOLE}};
constexpr FlagName clone_flags[] = {{"CLONE_FILES", CLONE_FILES}};
// <linux/close_range.h> is newer than some distributions' headers.
constexpr std::uint32_t close_range_unshare = 1U << 1, close_range_cloexec = 1U << 2;
constexpr FlagName close_range_flags[] = {{"CLOSE_RANGE_UNSHARE", close_range_unshare},
                                          {"CLOSE_RANGE_CLOEXEC", close_range_cloexec}};
constexpr FlagName sync_range_flags[] = {
    {"SYNC_FILE_RANGE_WAIT_BEFORE", SYNC_FILE_RANGE_WAIT_BEFORE},
    {"SYNC_FILE_RANGE_WRITE", SYNC_FILE_RANGE_WRITE},
    {"SYNC_FILE_RANGE_WAIT_AFTER", SYNC_FILE_RANGE_WAIT_AFTER},
};
constexpr FlagName falloc_modes[] = {
    {"FALLOC_FL_KEEP_SIZE", FALLOC_FL_KEEP_SIZE},
    {"FALLOC_FL_PUNCH_HOLE", FALLOC_FL_PUNCH_HOLE},
    {"FALLOC_FL_COLLAPSE_RANGE", FALLOC_FL_COLLAPSE_RANGE},
    {"FALLOC_FL_ZERO_RANGE", FALLOC_FL_ZERO_RANGE},
    {"FALLOC_FL_INSERT_RANGE", FALLOC_FL_INSERT_RANGE},
    {"FALLOC_FL_UNSHARE_RANGE", FALLOC_FL_UNSHARE_RANGE},
    {"FALLOC_FL_NO_HIDE_STALE", FALLOC_FL_NO_HIDE_STALE},
};
template <std::size_t N>
std::optional<std::uint32_t> flags_of(std::string_view arg, const FlagName (&table)[N]) {
    return parse_flags(arg, table, N);
}

// What a -y annotation or an opened path says about the descriptor; nullopt
// for a regular file.
std::optional<SkipReason> classify(std::string_view path) {
    if (path.starts_with("pipe:[")) return SkipReason::pipe;
    if (path.starts_with("socket:[")) return SkipReason::socket;
    if (path.starts_with("anon_inode:") || path.starts_with("/memfd:"))
        return SkipReason::pseudo_file;
    // -yy prints sockets as PROTOCOL:[...] (TCP:[...], UNIX-STREAM:[...]).
    const std::size_t colon = path.find(":[");
    if (colon != std::string_view::npos && path.front() != '/') return SkipReason::socket;
    // /dev/shm holds tmpfs files, ordinary enough to replay.
    if (path.starts_with("/dev/") && !path.starts_with("/dev/shm/")) return SkipReason::device;
    if (path.starts_with("/proc/") || path.starts_with("/sys/")) return SkipReason::pseudo_file;
    return std::nullopt;
}

std::string join(std::string_view dir, std::string_view rel) {
    std::string p(dir);
    if (!p.empty() && p.back() != '/') p += '/';
    p += rel;
    return p;
}

struct Timing {
    std::optional<std::int64_t> time_ns, duration_ns;
    std::uint64_t line = 0;
};

struct Pending {
    std::string text;  // "name(arguments so far"
    Timing timing;
    bool clone_like = false;
    std::optional<std::uint32_t> bound_child;  // the child that already appeared, if any
};

class StraceSource final : public TraceReader::Source {
public:
    StraceSource(std::istream& in, Options options) : Source(in, options, Format::strace) {}

private:
    void parse_line(std::string_view text) override {
        const Line l = split_line(text);
        // Without -f there is one traced process and no pid column.
        const std::uint32_t pid = l.pid.value_or(0);
        has_pids_ = has_pids_ || l.pid.has_value();
        if (l.time_ns) saw_time(*l.time_ns);
        saw_thread(pid);
        const Timing timing{l.time_ns, l.duration_ns, line_number()};
        switch (l.kind) {
            case Line::exited:
                return exited(pid);
            case Line::signal:
                return;
            case Line::unfinished: {
                ensure_thread(pid);
                if (pending_.erase(pid) != 0) skip(SkipReason::unfinished);
                pending_[pid] =
                    Pending{std::string(l.text), timing, clone_like(l.name), std::nullopt};
                return;
            }
            case Line::resumed: {
                ensure_thread(pid);
                const auto it = pending_.find(pid);
                if (it == pending_.end() ||
                    !it->second.text.starts_with(std::string(l.name) + "(")) {
                    if (it != pending_.end()) {
                        skip(SkipReason::unfinished);
                        pending_.erase(it);
                    }
                    skip(SkipReason::orphan_resume);
                    return;
                }
                Pending p = std::move(it->second);
                pending_.erase(it);
                p.text += l.text;
                // The call started at the first line; -T measured all of it.
                complete(p.text, pid, Timing{p.timing.time_ns, l.duration_ns, timing.line},
                         p.bound_child);
                return;
            }
            case Line::call: {
                ensure_thread(pid);
                complete(l.text, pid, timing, std::nullopt);
                return;
            }
        }
    }

    void finish() override {
        skip(SkipReason::unfinished, pending_.size());
        pending_.clear();
    }

    void add_state(TraceReader::State& st) const override {
        st.descriptors = tables_.descriptors();
        st.tables = tables_.distinct_tables();
        st.live_threads = tables_.live_threads();
        st.pending = pending_.size();
    }

    void exited(std::uint32_t pid) {
        if (pending_.erase(pid) != 0) skip(SkipReason::unfinished);
        tables_.exit(pid);
    }

    // A pid seen for the first time while some thread is inside clone/fork:
    // its lines can come before the parent's "<... clone resumed>) = PID",
    // so it takes its table from that call now (the earliest one pending).
    void ensure_thread(std::uint32_t pid) {
        if (tables_.has(pid)) return;
        Pending* parent = nullptr;
        std::uint32_t parent_pid = 0;
        for (auto& [p, pend] : pending_)
            if (pend.clone_like && !pend.bound_child &&
                (!parent || pend.timing.line < parent->timing.line)) {
                parent = &pend;
                parent_pid = p;
            }
        if (!parent) {
            tables_.table(pid);
            return;
        }
        parent->bound_child = pid;
        tables_.spawn(parent_pid, pid, shares_files(parent->text));
    }

    static bool shares_files(std::string_view call_text) {
        const auto f = field(call_text, "flags");
        if (!f) return false;  // fork, vfork
        const auto v = flags_of(*f, clone_flags);
        return v && (*v & CLONE_FILES) != 0;
    }

    std::string_view arg(std::size_t i) const {
        if (i >= call_.args.size())
            throw LineError(
                fmt::format("{} has {} arguments, expected more", call_.name, call_.args.size()));
        return call_.args[i];
    }
    FdArg fd_arg(std::size_t i) const {
        const auto f = parse_fd(arg(i));
        if (!f) throw LineError(fmt::format("'{}' is not a descriptor", arg(i)));
        return *f;
    }
    std::int64_t number_arg(std::size_t i) const {
        const auto v = parse_number(arg(i));
        if (!v) throw LineError(fmt::format("'{}' is not a number", arg(i)));
        return *v;
    }
    template <std::size_t N>
    std::uint32_t flags_arg(std::string_view text, const FlagName (&table)[N]) const {
        const auto v = flags_of(text, table);
        if (!v) throw LineError(fmt::format("'{}' is not a set of flags", text));
        return *v;
    }

    void complete(std::string_view text, std::uint32_t pid, const Timing& timing,
                  std::optional<std::uint32_t> bound) {
        parse_call(text, call_);
        const auto sys = lookup(call_.name);
        if (!sys) {
            skip(SkipReason::other_call);
            return;
        }
        const Result r = parse_result(call_.result);
        if (!r.ok) {
            // close(2): on Linux the descriptor is released even when close
            // fails, except with EBADF (it was not open).
            if (*sys == Sys::close && r.error != "EBADF") tables_.close(pid, fd_arg(0).fd);
            skip(SkipReason::failed);
            return;
        }
        switch (*sys) {
            case Sys::open:
                return opened(pid, timing, r, fd_of(AT_FDCWD), arg(0),
                              flags_arg(arg(1), open_flags));
            case Sys::creat:
                return opened(pid, timing, r, fd_of(AT_FDCWD), arg(0),
                              O_CREAT | O_WRONLY | O_TRUNC);
            case Sys::openat:
                return opened(pid, timing, r, fd_arg(0), arg(1), flags_arg(arg(2), open_flags));
            case Sys::openat2: {
                const auto f = field(arg(2), "flags");
                if (!f) throw LineError("openat2 without flags= in its open_how");
                return opened(pid, timing, r, fd_arg(0), arg(1), flags_arg(*f, open_flags));
            }
            case Sys::close:
                return closed(pid, timing, fd_arg(0));
            case Sys::close_range:
                return closed_range(pid, timing);
            case Sys::dup:
            case Sys::dup2:
            case Sys::dup3:
                return duplicate(pid, fd_arg(0).fd, static_cast<int>(r.value));
            case Sys::fcntl:
                return fcntl(pid, r);
            case Sys::clone:
            case Sys::clone3:
            case Sys::fork:
            case Sys::vfork:
                return cloned(pid, text, r, bound);
            case Sys::read:
                return transfer(pid, timing, Op::read, r, number_arg(2), std::nullopt);
            case Sys::write:
                return transfer(pid, timing, Op::write, r, number_arg(2), std::nullopt);
            case Sys::pread:
                return transfer(pid, timing, Op::read, r, number_arg(2), number_arg(3));
            case Sys::pwrite:
                return transfer(pid, timing, Op::write, r, number_arg(2), number_arg(3));
            case Sys::readv:
                return transfer(pid, timing, Op::read, r, iovecs(), std::nullopt);
            case Sys::writev:
                return transfer(pid, timing, Op::write, r, iovecs(), std::nullopt);
            case Sys::preadv:
            case Sys::preadv2:
                return transfer(pid, timing, Op::read, r, iovecs(), number_arg(3));
            case Sys::pwritev:
            case Sys::pwritev2:
                return transfer(pid, timing, Op::write, r, iovecs(), number_arg(3));
            case Sys::lseek:
                return seek(pid, r);
            case Sys::fsync:
                return simple(pid, timing, Op::fsync, 0, 0, 0);
            case Sys::fdatasync:
                return simple(pid, timing, Op::fdatasync, 0, 0, 0);
            case Sys::ftruncate:
                return simple(pid, timing, Op::ftruncate, 0, as_size(number_arg(1)), 0);
            case Sys::fallocate:
                return simple(pid, timing, Op::fallocate, as_size(number_arg(2)),
                              as_size(number_arg(3)), flags_arg(arg(1), falloc_modes));
            case Sys::sync_file_range:
                return simple(pid, timing, Op::sync_range, as_size(number_arg(1)),
                              as_size(number_arg(2)), flags_arg(arg(3), sync_range_flags));
        }
    }

    static FdArg fd_of(int fd) { return FdArg{fd, std::nullopt}; }
    static std::uint64_t as_size(std::int64_t v) {
        if (v < 0) throw LineError(fmt::format("a negative size or offset {}", v));
        return static_cast<std::uint64_t>(v);
    }
    // An abbreviated iovec array (more elements than strace prints) has no
    // known total; the result is then the best figure there is.
    std::optional<std::int64_t> iovecs() const {
        const auto n = iovec_length(arg(1));
        if (!n) return std::nullopt;
        return static_cast<std::int64_t>(*n);
    }

    Event event(std::uint32_t pid, Op op, const Description& d, const Timing& t) const {
        Event e;
        e.thread = pid;
        e.op = op;
        e.file = d.file;
        e.time_ns = t.time_ns;
        e.duration_ns = t.duration_ns;
        e.line = t.line;
        return e;
    }

    // The description a call on `fd` acts on, or nullptr after counting why
    // the call is left out.  A -y annotation is the kernel's own view at that
    // moment: if it says socket or pipe where the table has a file, an
    // untraced call (socket, pipe, accept, exec closing O_CLOEXEC) reused the
    // number, and the annotation wins.  A regular path that differs is kept
    // as the table has it: a rename after open changes -y's path, not the file.
    DescriptionPtr target(std::uint32_t pid, const FdArg& fd) {
        const std::optional<SkipReason> said =
            fd.annotation ? classify(*fd.annotation) : std::nullopt;
        DescriptionPtr d = tables_.find(pid, fd.fd);
        if (d && said && d->kind == Description::regular) {
            d = std::make_shared<Description>(
                Description{Description::other, *said, 0, {}, false, std::nullopt});
            tables_.set(pid, fd.fd, d);
        }
        if (!d) {
            skip(said.value_or(SkipReason::inherited_descriptor));
            return nullptr;
        }
        if (d->kind == Description::regular) return d;
        skip(d->kind == Description::directory ? SkipReason::directory : d->reason);
        return nullptr;
    }

    void opened(std::uint32_t pid, const Timing& t, const Result& r, const FdArg& dirfd,
                std::string_view path_arg, std::uint32_t flags) {
        const auto recorded = parse_string(path_arg);
        if (!recorded) throw LineError(fmt::format("'{}' is not a path", path_arg));
        // The kernel's absolute path (-y on the result) is best; then the
        // directory the call was relative to; the cwd itself is never traced,
        // so a path relative to AT_FDCWD without -y stays as recorded.
        std::string path;
        if (r.annotation) {
            path = *r.annotation;
        } else if (recorded->starts_with('/')) {
            path = *recorded;
        } else if (const auto dir = dirfd.fd == AT_FDCWD ? nullptr : tables_.find(pid, dirfd.fd);
                   dir && dir->kind == Description::directory) {
            path = join(dir->path, *recorded);
        } else if (dirfd.annotation) {
            path = join(*dirfd.annotation, *recorded);
        } else {
            path = *recorded;
        }
        const int fd = static_cast<int>(r.value);
        auto d = std::make_shared<Description>();
        const bool tmpfile = (flags & O_TMPFILE) == O_TMPFILE;
        if ((flags & O_PATH) != 0 || ((flags & O_DIRECTORY) != 0 && !tmpfile)) {
            d->kind = Description::directory;
            d->path = path;
            tables_.set(pid, fd, d);
            skip(SkipReason::directory);
            return;
        }
        if (const auto reason = classify(path)) {
            d->kind = Description::other;
            d->reason = *reason;
            tables_.set(pid, fd, d);
            skip(*reason);
            return;
        }
        d->file = file_index(path);
        d->append = (flags & O_APPEND) != 0;
        d->position = 0;
        tables_.set(pid, fd, d);
        Event e = event(pid, Op::open, *d, t);
        e.result = fd;
        e.flags = flags;
        emit(e);
    }

    void closed(std::uint32_t pid, const Timing& t, const FdArg& fd) {
        if (const auto d = target(pid, fd)) emit(event(pid, Op::close, *d, t));
        tables_.close(pid, fd.fd);
    }

    void closed_range(std::uint32_t pid, const Timing& t) {
        const std::int64_t first = number_arg(0), last = number_arg(1);
        const std::uint32_t flags = flags_arg(arg(2), close_range_flags);
        if (first < 0 || last < first) throw LineError("close_range with a reversed range");
        if ((flags & close_range_unshare) != 0) tables_.unshare(pid);
        // CLOSE_RANGE_CLOEXEC only marks the descriptors; exec (not traced) closes them.
        if ((flags & close_range_cloexec) != 0) return;
        Timing each = t;
        for (const auto& [fd, d] : tables_.close_range(pid, static_cast<std::uint64_t>(first),
                                                       static_cast<std::uint64_t>(last))) {
            if (d->kind != Description::regular) continue;
            emit(event(pid, Op::close, *d, each));
            // One call closed them all: its duration counts once, on the first.
            each.duration_ns.reset();
        }
    }

    void duplicate(std::uint32_t pid, int from, int to) {
        if (from == to) return;  // dup2(fd, fd) changes nothing
        if (auto d = tables_.find(pid, from))
            tables_.set(pid, to, std::move(d));
        else
            tables_.close(pid,
                          to);  // `to` now names what `from` named: something never opened here
    }

    void fcntl(std::uint32_t pid, const Result& r) {
        const FdArg fd = fd_arg(0);
        const auto cmd = flags_of(arg(1), fcntl_commands);
        if (!cmd) return;  // F_GETFL, F_SETLK and the rest change no mapping
        if (*cmd == F_DUPFD || *cmd == F_DUPFD_CLOEXEC)
            return duplicate(pid, fd.fd, static_cast<int>(r.value));
        if (*cmd == F_SETFL)
            if (auto d = tables_.find(pid, fd.fd))
                d->append = (flags_arg(arg(2), open_flags) & O_APPEND) != 0;
    }

    void cloned(std::uint32_t pid, std::string_view text, const Result& r,
                std::optional<std::uint32_t> bound) {
        // Without -f the children are not traced and have no lines to read.
        if (!has_pids_) return;
        const auto child = static_cast<std::uint32_t>(r.value);
        if (bound == child) return;  // ensure_thread() gave it its table already
        tables_.spawn(pid, child, shares_files(text));
    }

    void seek(std::uint32_t pid, const Result& r) {
        const FdArg fd = fd_arg(0);
        const std::uint32_t whence = flags_arg(arg(2), whences);
        const auto d = tables_.find(pid, fd.fd);
        if (!d || d->kind != Description::regular) return;
        // lseek returns the new position whatever the whence, so SEEK_END
        // (and SEEK_DATA/SEEK_HOLE) resolve without the file's size.
        d->position = static_cast<std::uint64_t>(r.value);
        if (whence != SEEK_SET && whence != SEEK_CUR) ++summary_.seeks_from_result;
    }

    void transfer(std::uint32_t pid, const Timing& t, Op op, const Result& r,
                  std::optional<std::int64_t> requested, std::optional<std::int64_t> offset) {
        const auto d = target(pid, fd_arg(0));
        if (!d) return;
        Event e = event(pid, op, *d, t);
        e.result = r.value;
        e.length = requested ? as_size(*requested) : static_cast<std::uint64_t>(r.value);
        const bool appends = op == Op::write && d->append;
        // preadv2/pwritev2 take -1 for "the current position".
        if (offset && *offset != -1) {
            // pwrite(2), BUGS: on Linux an O_APPEND descriptor appends whatever the offset.
            e.offset = appends ? unknown_offset : as_size(*offset);
        } else if (appends || !d->position) {
            e.offset = unknown_offset;
            d->position.reset();  // after an append the position is the unknown end
        } else {
            e.offset = *d->position;
            *d->position += static_cast<std::uint64_t>(r.value);
        }
        emit(e);
    }

    void simple(std::uint32_t pid, const Timing& t, Op op, std::uint64_t offset,
                std::uint64_t length, std::uint32_t flags) {
        const auto d = target(pid, fd_arg(0));
        if (!d) return;
        Event e = event(pid, op, *d, t);
        e.offset = offset;
        e.length = length;
        e.flags = flags;
        emit(e);
    }

    FdTables tables_;
    std::unordered_map<std::uint32_t, Pending> pending_;
    Call call_;  // reused: its argument vector keeps its capacity from line to line
    bool has_pids_ = false;
};

}  // namespace

std::unique_ptr<TraceReader::Source> make_strace_source(std::istream& in, Options options) {
    return std::make_unique<StraceSource>(in, options);
}

}  // namespace uringkit::replay
