// Collecting readfiles' inputs: explicit files stat'ed in one batch on the
// ring, directories walked, everything else skipped with a note.
#include "readfiles_internal.hpp"

#include "fs/walk.hpp"
#include "uringkit/sys/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstring>
#include <optional>

namespace uringkit::fs::readfiles_detail {
namespace {

// ---- collecting the files --------------------------------------------------

struct Candidate {
    bool needs_stat;         // a symlink or DT_UNKNOWN entry: its target decides
    bool short_read_is_eof;  // found in a directory of a disk-like file system
};

class Collector {
public:
    Collector(const ReadFilesOptions& o, const ReadFilesSink& sink, ReadFilesStats& stats)
        : o_(o), sink_(sink), stats_(stats) {}

    FileList collect(const PathList& inputs, Ring* ring) {
        // Explicit inputs (a `-` list may hold tens of thousands): looked
        // up as the walk does, from their directory (ListedStat).  Not
        // IORING_OP_STATX: the kernel runs every statx on an io-wq worker
        // (it has no non-blocking path), which cost a list of 10,000 files
        // more than reading them.
        ListedStat lister;
        for (std::size_t i = 0; i < inputs.size() && !stopping(o_); ++i) {
            ListedStat::Answer a;
            const int r = lister.lookup(inputs.c_str(i), a, stats_.syscalls);
            if (r < 0) {
                fail(inputs[i], -r);
            } else if (a.type == S_IFDIR) {
                if (o_.walk)
                    walk(std::string(inputs[i]));
                else
                    fail(inputs[i], EISDIR);
            } else if (a.type == S_IFREG) {
                add(inputs[i], false, a.short_read_is_eof);
            } else {
                skip(inputs[i], a.type);
            }
        }
        if (stopping(o_)) return {};  // nothing will be read: leave the links unstat'ed
        return resolve(ring);
    }

private:
    void add(std::string_view path, bool needs_stat, bool eof) {
        candidates_.push(path);
        kinds_.push_back({needs_stat, eof});
        pending_ += needs_stat;
    }
    void fail(std::string_view path, int err) {
        ++stats_.failed;
        if (sink_.note) sink_.note(path, err, "");
    }
    void skip(std::string_view path, mode_t mode) {
        ++stats_.skipped;
        if (sink_.note)
            sink_.note(path, 0, std::string("skipped: ") + kind_name(mode) + ", not read");
    }

    // A signal stops the walk too: the listing of a large cold tree can
    // take longer than reading it.
    void walk(const std::string& dir) {
        if (stopping(o_)) return;
        std::vector<DirEntry> entries;
        bool eof = false;
        const int r = read_directory(dir.c_str(), entries, stats_.syscalls, &eof);
        if (r < 0) fail(dir, -r);
        ++dirs_;
        std::string path;
        for (const DirEntry& e : entries) {
            path = dir;
            if (path.empty() || path.back() != '/') path += '/';
            path += e.name;
            switch (e.type) {
                case EntryType::regular:
                    add(path, false, eof);
                    break;
                case EntryType::directory:
                    walk(path);
                    break;
                case EntryType::symlink:
                case EntryType::unknown:
                    add(path, true, false);
                    break;
                case EntryType::other: {
                    struct stat sb {};
                    ++stats_.syscalls;
                    skip(path, ::lstat(path.c_str(), &sb) == 0 ? sb.st_mode : S_IFSOCK);
                    break;
                }
            }
        }
        if (sink_.listing && !stopping(o_)) sink_.listing(candidates_.size(), dirs_);
    }

    // Symlinks and entries of unknown type: stat the targets in one batch,
    // keep the regular files in their place in the order.
    FileList resolve(Ring* ring) {
        FileList out;
        if (pending_ == 0) {
            out.paths = std::move(candidates_);
            for (const Candidate& k : kinds_) out.short_read_is_eof.push_back(k.short_read_is_eof);
            return out;
        }
        std::vector<const char*> ptrs;
        std::vector<std::size_t> which;
        for (std::size_t i = 0; i < candidates_.size(); ++i)
            if (kinds_[i].needs_stat) {
                ptrs.push_back(candidates_.c_str(i));
                which.push_back(i);
            }
        std::vector<struct statx> st(ptrs.size());
        std::vector<int> res(ptrs.size());
        if (const int r = stat_batch(ring, ptrs, 0, STATX_TYPE, st, res, stats_.syscalls); r < 0)
            throw RingError("io_uring_enter", r);
        std::size_t k = 0;
        for (std::size_t i = 0; i < candidates_.size(); ++i) {
            if (!kinds_[i].needs_stat) {
                out.paths.push(candidates_[i]);
                out.short_read_is_eof.push_back(kinds_[i].short_read_is_eof);
                continue;
            }
            const std::size_t j = k++;
            if (res[j] < 0)
                fail(candidates_[i], -res[j]);
            else if (S_ISREG(st[j].stx_mode)) {
                out.paths.push(candidates_[i]);
                out.short_read_is_eof.push_back(false);  // the target may be anywhere
            } else if (S_ISDIR(st[j].stx_mode)) {
                ++stats_.skipped;
                if (sink_.note)
                    sink_.note(candidates_[i], 0,
                               "skipped: symbolic link to a directory, not followed");
            } else
                skip(candidates_[i], st[j].stx_mode);
        }
        return out;
    }

    const ReadFilesOptions& o_;
    const ReadFilesSink& sink_;
    ReadFilesStats& stats_;
    std::uint64_t dirs_ = 0;
    PathList candidates_;
    std::vector<Candidate> kinds_;
    std::size_t pending_ = 0;
};

}  // namespace

FileList collect_files(const PathList& inputs, const ReadFilesOptions& o, Ring* ring,
                       const ReadFilesSink& sink, ReadFilesStats& stats) {
    return Collector(o, sink, stats).collect(inputs, ring);
}

}  // namespace uringkit::fs::readfiles_detail
