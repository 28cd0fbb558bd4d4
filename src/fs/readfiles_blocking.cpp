// readfiles' blocking engines: `sync` (one thread) and `threadpool`, and the
// blocking reader the ring engine falls back to.
#include "readfiles_internal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <thread>

namespace uringkit::fs::readfiles_detail {

// ---- sync and threadpool engines ------------------------------------------------

Slot_result BlockingReader::read(const char* path, std::uint64_t& syscalls) {
    Slot_result r;
    ++syscalls;
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        r.error = errno;
        r.stage = "open";
        return r;
    }
    if (hash_) st_.reset();
    for (;;) {
        const ssize_t n = detail::read_full(fd, buf_.get(), bs_, r.bytes, false, syscalls);
        if (n < 0) {
            r.error = static_cast<int>(-n);
            r.stage = "read";
            break;
        }
        if (hash_) st_.update(buf_.get(), static_cast<std::size_t>(n));
        r.bytes += static_cast<std::uint64_t>(n);
        if (static_cast<std::size_t>(n) < bs_) break;  // read_full saw the end of the file
        if (stopping(o_)) {
            r.abandoned = true;
            break;
        }
    }
    ++syscalls;
    ::close(fd);
    if (hash_ && !r.error) r.hash = st_.digest();
    return r;
}

void run_sync(const PathList& files, const ReadFilesOptions& o, Emitter& out,
              ReadFilesStats& stats) {
    BlockingReader reader(o);
    for (std::size_t i = 0; i < files.size() && !stopping(o); ++i)
        out.finish(i, reader.read(files.c_str(i), stats.syscalls));
}

unsigned threadpool_workers(const ReadFilesOptions& o) noexcept {
    return o.threads ? o.threads : 8;
}

void run_threadpool(const PathList& files, const ReadFilesOptions& o, Emitter& out,
                    ReadFilesStats& stats) {
    const unsigned nthreads = std::max(
        1u, std::min<unsigned>(threadpool_workers(o), static_cast<unsigned>(files.size())));
    // Every worker's buffer is made here, before a thread starts: memory that
    // cannot be had is read_files()' BufferError, not an exception in a worker.
    std::vector<std::unique_ptr<BlockingReader>> readers;
    for (unsigned t = 0; t < nthreads; ++t) readers.push_back(std::make_unique<BlockingReader>(o));
    std::atomic<std::size_t> next{0};
    std::vector<std::uint64_t> syscalls(nthreads, 0);
    std::vector<std::thread> pool;
    out.expect_workers(nthreads);
    for (unsigned t = 0; t < nthreads; ++t)
        pool.emplace_back([&, t] {
            BlockingReader& reader = *readers[t];
            std::uint64_t calls = 0;
            for (std::size_t i;
                 !stopping(o) && (i = next.fetch_add(1, std::memory_order_relaxed)) < files.size();)
                out.record(i, reader.read(files.c_str(i), calls));
            syscalls[t] = calls;
            out.worker_exited();
        });
    out.drain_in_order();
    for (std::thread& th : pool) th.join();
    for (std::uint64_t c : syscalls) stats.syscalls += c;
}

}  // namespace uringkit::fs::readfiles_detail
