// cat(1) through io_uring: each batch queues kDepth reads of consecutive
// chunks and submits them with one io_uring_enter, instead of one read(2)
// per chunk.  Output goes to stdout in file order.
//
//     example_cat FILE...        (no FILE, or "-": standard input)
//
// Exit status: 0 all files copied, 1 a file could not be opened or read, or
// stdout failed, 3 io_uring is not usable here (the reason is printed).
#include <uringkit/ops/ops.hpp>
#include <uringkit/ring/ring.hpp>
#include <uringkit/sys/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

namespace {

using namespace uringkit;

constexpr unsigned kDepth = 8;                // reads in flight per batch
constexpr std::uint32_t kChunk = 128 * 1024;  // bytes per read
constexpr std::uint64_t kFilePosition =
    ~0ULL;  // offset -1: read at (and advance) the file position

bool write_all(const char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(STDOUT_FILENO, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

// Submits the prepared batch and waits for all `n` completions, stored by
// user_data (the index of the read in the batch).  Returns 0 or -errno.
int run_batch(Ring& ring, unsigned n, int* res) {
    unsigned got = 0;
    while (got < n) {
        const int r = ring.submit_and_wait(n - got);
        if (r < 0) return r;
        got += ring.for_each_completion([&](const Completion& c) { res[c.user_data] = c.res; });
    }
    return 0;
}

// Copies one open file to stdout; returns 0, or a positive errno with `what` set.
int copy(Ring& ring, int fd, char* buffers, const char*& what) {
    struct stat st {};
    // Pipes and terminals have no offsets: read them one chunk at a time at
    // the file position.  Regular files get kDepth reads at explicit offsets.
    const bool seekable = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    const unsigned depth = seekable ? kDepth : 1;
    std::uint64_t offset = 0;
    for (;;) {
        for (unsigned i = 0; i < depth; ++i) {
            char* buf = buffers + static_cast<std::size_t>(i) * kChunk;
            const std::uint64_t at = seekable ? offset + std::uint64_t{i} * kChunk : kFilePosition;
            ring.prepare(op::Read(Fd{fd}, buf, kChunk, at)).user_data(i);
        }
        int res[kDepth];
        if (const int r = run_batch(ring, depth, res); r < 0) {
            what = "io_uring_enter";
            return -r;
        }
        // Write the chunks in order.  A short read ends the batch: the rest was
        // read past it, so the next batch restarts right after the short one
        // (only a read of 0 bytes means end of file).
        for (unsigned i = 0; i < depth; ++i) {
            if (res[i] < 0) {
                what = "read";
                return -res[i];
            }
            if (res[i] == 0) return 0;
            errno = 0;
            if (!write_all(buffers + static_cast<std::size_t>(i) * kChunk,
                           static_cast<std::size_t>(res[i]))) {
                what = "write to stdout";
                return errno ? errno : EIO;
            }
            offset += static_cast<std::uint64_t>(res[i]);
            if (static_cast<std::uint32_t>(res[i]) < kChunk) break;
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    std::unique_ptr<Ring> ring;
    try {
        // kDepth SQEs: one batch fills the SQ exactly.
        ring = std::make_unique<Ring>(kDepth);
    } catch (const RingError& e) {
        std::fprintf(stderr, "example_cat: %s\n", e.what());
        return 3;
    }
    const auto buffers = std::make_unique<char[]>(std::size_t{kDepth} * kChunk);
    int status = 0;
    const char* stdin_only[] = {"-"};
    const int count = argc > 1 ? argc - 1 : 1;
    const char* const* names = argc > 1 ? argv + 1 : stdin_only;
    for (int k = 0; k < count; ++k) {
        const std::string_view name = names[k];
        const bool is_stdin = name == "-";
        const int fd = is_stdin ? STDIN_FILENO : ::open(names[k], O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            std::fprintf(stderr, "example_cat: %s: %s\n", names[k], std::strerror(errno));
            status = 1;
            continue;
        }
        const char* what = "";
        if (const int err = copy(*ring, fd, buffers.get(), what)) {
            std::fprintf(stderr, "example_cat: %s: %s: %s\n", names[k], what, std::strerror(err));
            status = 1;
        }
        if (!is_stdin) ::close(fd);
    }
    return status;
}
