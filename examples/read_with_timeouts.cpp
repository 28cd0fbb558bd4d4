// Reads one file as N concurrent pieces, each a coroutine with its own
// deadline, and writes the pieces to stdout in order (so the output is the
// file).  Each piece's buffer lives in its coroutine's frame: the loop never
// destroys a frame whose read is still in the kernel.
//
//     example_read_with_timeouts FILE [PIECES [TIMEOUT_MS]]   (defaults: 100, 1000)
//
// Exit status: 0 the whole file was written, 1 a piece failed or missed its
// deadline (named on stderr) or stdout failed, 2 usage, 3 io_uring is not
// usable here (the reason is printed).
#include <uringkit/async/loop.hpp>
#include <uringkit/sys/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace uringkit;

struct Piece {
    std::uint64_t offset = 0;
    std::uint32_t length = 0;
    std::string data;
    async::Result result;
};

// One piece: read until full, each read with the deadline; a short read
// (the file shrank) or an error ends it.
async::Task<void> read_piece(async::Loop& loop, int fd, Piece& piece,
                             std::chrono::milliseconds timeout) {
    piece.data.resize(piece.length);
    std::uint32_t done = 0;
    while (done < piece.length) {
        piece.result = co_await loop.with_timeout(
            op::Read(Fd{fd}, piece.data.data() + done, piece.length - done, piece.offset + done),
            timeout);
        if (piece.result.res <= 0) break;
        done += static_cast<std::uint32_t>(piece.result.res);
    }
    piece.data.resize(done);
}

bool write_all(const std::string& s) {
    std::size_t off = 0;
    while (off < s.size()) {
        const ssize_t w = ::write(STDOUT_FILENO, s.data() + off, s.size() - off);
        if (w <= 0) return false;
        off += static_cast<std::size_t>(w);
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || argc > 4) {
        std::fprintf(stderr, "usage: %s FILE [PIECES [TIMEOUT_MS]]\n", argv[0]);
        return 2;
    }
    const char* path = argv[1];
    const long pieces = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 100;
    const long timeout_ms = argc > 3 ? std::strtol(argv[3], nullptr, 10) : 1000;
    if (pieces < 1 || pieces > 100000 || timeout_ms < 1) {
        std::fprintf(stderr, "%s: PIECES must be 1..100000 and TIMEOUT_MS at least 1\n", argv[0]);
        return 2;
    }
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
        std::fprintf(stderr, "%s: %s: %s\n", argv[0], path, std::strerror(errno));
        return 1;
    }
    try {
        Ring ring(64);
        async::Loop loop(ring);
        const auto size = static_cast<std::uint64_t>(st.st_size);
        const std::uint64_t step =
            (size + static_cast<std::uint64_t>(pieces) - 1) / static_cast<std::uint64_t>(pieces);
        std::vector<Piece> parts(static_cast<std::size_t>(pieces));
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const std::uint64_t begin = std::min(size, i * step);
            parts[i].offset = begin;
            parts[i].length = static_cast<std::uint32_t>(std::min(size, begin + step) - begin);
            loop.spawn(read_piece(loop, fd, parts[i], std::chrono::milliseconds(timeout_ms)));
        }
        loop.run();  // every piece has finished: read, failed or timed out
        int status = 0;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const Piece& p = parts[i];
            if (p.data.size() == p.length) continue;
            std::fprintf(stderr, "%s: %s: piece %zu at offset %llu: %s\n", argv[0], path, i,
                         static_cast<unsigned long long>(p.offset),
                         p.result.timed_out() ? "timed out"
                         : p.result.res < 0   ? std::strerror(-p.result.res)
                                              : "short read");
            status = 1;
        }
        if (status == 0)
            for (const Piece& p : parts)
                if (!write_all(p.data)) {
                    std::fprintf(stderr, "%s: stdout: %s\n", argv[0], std::strerror(errno));
                    return 1;
                }
        ::close(fd);
        return status;
    } catch (const RingError& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 3;
    }
}
