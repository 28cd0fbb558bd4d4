// A trace compiled into per-thread programs of steps, held in chunks: in
// memory while few, then in an unlinked temporary file, so a trace of ten
// million I/Os costs a few chunks of memory per thread, not 320 MB.
#include "replaybench/replaybench.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <system_error>
#include <utility>

namespace uringkit::replaybench {

namespace {
constexpr std::size_t kChunkSteps = 4096;  // 128 KiB

int open_spill_file() {
    const char* dir = std::getenv("TMPDIR");
    const std::string d = dir && *dir ? dir : "/tmp";
    int fd = ::open(d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    // Filesystems without O_TMPFILE: a private name, unlinked at once.
    std::string name = d + "/uringkit-replay-XXXXXX";
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) throw std::system_error(errno, std::generic_category(), "temporary file in " + d);
    ::unlink(name.c_str());
    return fd;
}
}  // namespace

struct Program::Impl {
    struct Chunk {
        std::uint64_t file_offset = 0;
        std::uint32_t count = 0;
        std::vector<Step> mem;  // empty once spilled
    };
    struct Thread {
        std::uint32_t id = 0;
        std::uint64_t steps = 0;
        std::vector<Chunk> chunks;
    };
    std::vector<Thread> threads;
    int spill_fd = -1;
    std::uint64_t spilled = 0;
    std::size_t in_memory = 0;  // steps held in memory chunks

    ~Impl() {
        if (spill_fd >= 0) ::close(spill_fd);
    }

    void spill(Chunk& c) {
        if (spill_fd < 0) spill_fd = open_spill_file();
        const std::size_t bytes = c.mem.size() * sizeof(Step);
        const auto* p = reinterpret_cast<const char*>(c.mem.data());
        for (std::size_t done = 0; done < bytes;) {
            const ssize_t n =
                ::pwrite(spill_fd, p + done, bytes - done, static_cast<off_t>(spilled + done));
            if (n < 0) {
                if (errno == EINTR) continue;
                throw std::system_error(errno, std::generic_category(),
                                        "writing the compiled trace to a temporary file");
            }
            done += static_cast<std::size_t>(n);
        }
        c.file_offset = spilled;
        spilled += bytes;
        in_memory -= c.mem.size();
        std::vector<Step>().swap(c.mem);
    }

    void add(std::size_t t, const Step& s, std::size_t spill_steps) {
        Thread& th = threads[t];
        if (th.chunks.empty() || th.chunks.back().count == kChunkSteps) {
            // The chunk just filled may go to the file once memory holds enough.
            if (!th.chunks.empty() && in_memory >= spill_steps) spill(th.chunks.back());
            th.chunks.emplace_back();
            th.chunks.back().mem.reserve(kChunkSteps);
        }
        Chunk& c = th.chunks.back();
        c.mem.push_back(s);
        ++c.count;
        ++th.steps;
        ++in_memory;
    }
};

Program::Program() : impl_(std::make_unique<Impl>()) {}
Program::~Program() = default;
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;

std::size_t Program::threads() const noexcept {
    return impl_->threads.size();
}
std::uint32_t Program::thread_id(std::size_t t) const noexcept {
    return impl_->threads[t].id;
}
std::uint64_t Program::steps_of(std::size_t t) const noexcept {
    return impl_->threads[t].steps;
}
std::size_t Program::memory_bytes() const noexcept {
    std::size_t b = impl_->in_memory * sizeof(Step);
    for (const auto& t : impl_->threads) b += t.chunks.size() * sizeof(Impl::Chunk);
    return b;
}
std::uint64_t Program::spilled_bytes() const noexcept {
    return impl_->spilled;
}

Program::Cursor::Cursor(const Program& p, std::size_t thread) : p_(&p), thread_(thread) {
    load(0);
}

void Program::Cursor::rewind() noexcept {
    chunk_ = 0;
    pos_ = 0;
    try {
        load(0);
    } catch (...) {
        cur_ = nullptr;
    }
}

bool Program::Cursor::load(std::size_t chunk) {
    const auto& chunks = p_->impl_->threads[thread_].chunks;
    chunk_ = chunk;
    pos_ = 0;
    if (chunk >= chunks.size()) {
        cur_ = nullptr;
        return false;
    }
    const Impl::Chunk& c = chunks[chunk];
    if (!c.mem.empty() || c.count == 0) {
        cur_ = &c.mem;
        return true;
    }
    buf_.resize(c.count);
    const std::size_t bytes = std::size_t{c.count} * sizeof(Step);
    auto* out = reinterpret_cast<char*>(buf_.data());
    for (std::size_t done = 0; done < bytes;) {
        const ssize_t n = ::pread(p_->impl_->spill_fd, out + done, bytes - done,
                                  static_cast<off_t>(c.file_offset + done));
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            throw std::system_error(n < 0 ? errno : EIO, std::generic_category(),
                                    "reading the compiled trace back");
        }
        done += static_cast<std::size_t>(n);
    }
    cur_ = &buf_;
    return true;
}

const Step* Program::Cursor::peek() {
    while (cur_) {
        if (pos_ < cur_->size()) return &(*cur_)[pos_];
        if (!load(chunk_ + 1)) return nullptr;
    }
    return nullptr;
}

bool depends(const Step& a, const Step& b) noexcept {
    if (a.file != b.file) return false;
    const auto barrier = [](Op op) {
        return op == Op::fsync || op == Op::fdatasync || op == Op::sync_range ||
               op == Op::ftruncate || op == Op::fallocate || op == Op::open || op == Op::close;
    };
    if (barrier(a.op) || barrier(b.op)) return true;
    if (!is_write(a.op) && !is_write(b.op)) return false;  // two reads never conflict
    // Overlapping byte ranges; an empty range overlaps nothing.
    return a.length && b.length && a.offset < b.offset + b.length && b.offset < a.offset + a.length;
}

namespace {
unsigned size_bucket(std::uint64_t len) {
    unsigned b = 0;
    for (std::uint64_t limit = 4096; b < 7 && len > limit; limit *= 4) ++b;
    return b;
}
}  // namespace

Program compile(TraceReader& reader, std::size_t spill_steps) {
    Program p;
    Program::Impl& im = *p.impl_;
    TraceShape& sh = p.shape_;
    std::map<std::uint32_t, std::size_t> thread_index;
    std::map<std::pair<std::size_t, std::uint32_t>, std::uint64_t> next_offset;  // sequential share
    std::optional<std::int64_t> base;
    bool all_timed = true;
    while (auto e = reader.next()) {
        if (p.files_.size() < reader.files().size()) {
            for (std::size_t i = p.files_.size(); i < reader.files().size(); ++i)
                p.files_.push_back(FileInfo{reader.files()[i]});
        }
        if ((e->op == Op::read || e->op == Op::write) && e->offset == replay::unknown_offset) {
            ++sh.unknown_offset;
            continue;
        }
        auto [it, fresh] = thread_index.try_emplace(e->thread, im.threads.size());
        if (fresh) {
            im.threads.emplace_back();
            im.threads.back().id = e->thread;
        }
        const std::size_t t = it->second;
        FileInfo& f = p.files_[e->file];
        Step s;
        s.file = e->file;
        s.op = e->op;
        if (e->time_ns) {
            if (!base) base = *e->time_ns;
            s.at_ns = std::max<std::int64_t>(0, *e->time_ns - *base);
        }
        switch (e->op) {
            case Op::read:
            case Op::write: {
                s.offset = e->offset;
                s.length = e->length;
                const bool rd = e->op == Op::read;
                (rd ? sh.reads : sh.writes) += 1;
                (rd ? sh.read_bytes : sh.write_bytes) += e->length;
                (rd ? f.reads : f.writes) += 1;
                ++sh.sizes[size_bucket(e->length)];
                sh.max_length = std::max(sh.max_length, e->length);
                if (e->length == 0) ++sh.zero_length;
                const std::uint64_t moved =
                    rd ? static_cast<std::uint64_t>(std::max<std::int64_t>(0, e->result))
                       : e->length;
                f.extent = std::max(f.extent, e->offset + moved);
                auto [n, first] = next_offset.try_emplace({t, e->file}, 0);
                if (!first && n->second == e->offset) ++sh.sequential;
                n->second = e->offset + moved;
                break;
            }
            case Op::fsync:
            case Op::fdatasync:
                ++sh.syncs;
                break;
            case Op::sync_range:
                s.offset = e->offset;
                s.length = e->length;
                s.pad[0] = static_cast<std::uint8_t>(e->flags);
                ++sh.syncs;
                break;
            case Op::ftruncate:
                s.offset = e->length;  // the new size
                f.extent = std::max(f.extent, e->length);
                ++sh.writes;
                ++f.writes;
                break;
            case Op::fallocate:
            case Op::trim:
                s.offset = e->offset;
                s.length = e->length;
                s.pad[0] = static_cast<std::uint8_t>(e->flags);
                if (e->op == Op::fallocate && !(e->flags & FALLOC_FL_KEEP_SIZE))
                    f.extent = std::max(f.extent, e->offset + e->length);
                ++sh.writes;
                ++f.writes;
                break;
            case Op::open:
                if (f.reads + f.writes == 0 && f.open_flags == 0)
                    f.open_flags = e->flags & (O_DIRECT | O_SYNC | O_DSYNC);
                break;
            case Op::close:
                break;
        }
        if (is_io(s.op)) {
            ++sh.steps;
            if (s.at_ns < 0) all_timed = false;
            if (s.op != Op::read && s.op != Op::write && s.op != Op::fsync &&
                s.op != Op::fdatasync && s.op != Op::sync_range)
                ++sh.other;
        }
        im.add(t, s, spill_steps);
        // An open with O_TRUNC (for writing) empties the file: replay it as a
        // truncation to 0, which then counts as a write.
        if (e->op == Op::open && (e->flags & O_TRUNC) && (e->flags & O_ACCMODE) != O_RDONLY) {
            Step tr = s;
            tr.op = Op::ftruncate;
            tr.offset = 0;
            ++sh.steps;
            ++sh.writes;
            ++sh.other;
            ++f.writes;
            im.add(t, tr, spill_steps);
        }
    }
    p.summary_ = reader.summary();
    sh.timed = sh.steps > 0 && all_timed;
    if (p.summary_.first_ns && p.summary_.last_ns)
        sh.span_ns = *p.summary_.last_ns - *p.summary_.first_ns;
    return p;
}

}  // namespace uringkit::replaybench
