#include "fs/readfiles.hpp"

#include "readfiles_internal.hpp"

#include "cli/size.hpp"
#include "copy_strategy.hpp"
#include "uringkit/sys/page_cache.hpp"

#include <fcntl.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cstdio>
#include <optional>
#include <stdexcept>

namespace uringkit::fs {

using namespace readfiles_detail;
using detail::make_ring;

const char* engine_name(ReadEngine e) noexcept {
    switch (e) {
        case ReadEngine::ring:
            return "ring";
        case ReadEngine::threadpool:
            return "threadpool";
        case ReadEngine::sync:
            return "sync";
    }
    return "?";
}

bool print_xxhsum_line(std::FILE* out, std::uint64_t hash, std::string_view path) {
    return print_hash_line(out, HashLineStyle{}, HashValue{hash, 0}, path);
}

namespace readfiles_detail {

Buffer read_buffer(std::size_t bytes, const std::string& what) {
    try {
        return aligned_buffer(bytes);
    } catch (const std::bad_alloc&) {
        throw BufferError("cannot allocate " + cli::format_bytes(bytes) +
                          " for the read buffers (" + what + ")");
    }
}

namespace {

// The ring engine on a file system whose reads it hands to io-wq workers
// (asked of the first file: the lists readfiles gets mostly lie on one file
// system): it stays the ring, since the chains, a worker's read included,
// measured faster than one file at a time with plain calls on tmpfs
// (bench/results/tmpfs_handoff.md).  Empty elsewhere.
std::string ring_handoff_reason(const char* path, std::uint64_t& syscalls) {
    syscalls += 2;
    const int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return {};
    ++syscalls;
    std::string why;
    struct statfs sf {};
    if (sys::reads_go_to_workers(fd)) {
        ++syscalls;
        const unsigned long type =
            ::fstatfs(fd, &sf) == 0 ? static_cast<unsigned long>(sf.f_type) : 0;
        why = detail::fs_label(type) +
              ": each read on the ring goes to an io-wq worker; the ring's chains are kept, "
              "measured faster than reading one file at a time with plain calls";
    }
    ::close(fd);
    return why;
}

}  // namespace

}  // namespace readfiles_detail

BufferNeed read_buffers_needed(const ReadFilesOptions& o) noexcept {
    switch (o.engine) {
        case ReadEngine::ring:
            return {ring_threads(o), std::uint64_t{o.inflight} * 2 * o.block_size};
        case ReadEngine::threadpool:
            return {threadpool_workers(o), o.block_size};
        case ReadEngine::sync:
            break;
    }
    return {1, o.block_size};
}

ReadFilesStats read_files(const PathList& inputs, const ReadFilesOptions& o,
                          const ReadFilesSink& sink) {
    if (o.block_size == 0 || o.block_size > (1u << 30) || o.block_size % 512)
        throw std::invalid_argument("block size must be a multiple of 512 bytes, at most 1 GiB");
    if (o.inflight == 0 || o.inflight > 4096)
        throw std::invalid_argument("inflight must be 1..4096");
    ReadFilesStats stats;
    stats.engine = o.engine;

    std::optional<Ring> ring;
    if (o.engine == ReadEngine::ring) {
        std::string why;
        ring = make_ring(ring_entries(o), why);
        if (!ring) {
            stats.engine = ReadEngine::sync;
            if (sink.note)
                sink.note({}, 0,
                          "io_uring unavailable (" + why + "); reading with the sync engine");
        }
    }

    const auto t0 = Clock::now();
    const FileList list = collect_files(inputs, o, ring ? &*ring : nullptr, sink, stats);
    const PathList& files = list.paths;
    stats.walk_seconds = seconds_since(t0);

    if (stats.engine == ReadEngine::ring && !files.empty())
        stats.path_reason = ring_handoff_reason(files.c_str(0), stats.syscalls);

    const auto t1 = Clock::now();
    Emitter out(files, o, sink, stats);
    if (!files.empty()) {
        switch (stats.engine) {
            case ReadEngine::ring: {
                const auto nthreads = static_cast<unsigned>(std::min<std::size_t>(
                    ring_threads(o), (files.size() + o.inflight - 1) / o.inflight));
                if (nthreads > 1) {
                    run_rings(list, o, nthreads, out, stats, sink);
                } else if (!run_ring(*ring, list, o, out, stats, sink)) {
                    stats.engine = ReadEngine::sync;
                    run_sync(files, o, out, stats);
                }
                break;
            }
            case ReadEngine::threadpool:
                run_threadpool(files, o, out, stats);
                break;
            case ReadEngine::sync:
                run_sync(files, o, out, stats);
                break;
        }
    }
    stats.seconds = seconds_since(t1);
    if (ring) stats.syscalls += ring->enter_calls();
    return stats;
}

}  // namespace uringkit::fs
