// stat(1) and open(2) for many files at once: for each FILE one coroutine
// submits an openat and a statx together (Loop::batch: two SQEs, one
// submission, awaited together), then closes what it opened.  Prints
// "PATH SIZE MODE" (mode in octal, as `stat -c '%n %s %a'`) in argument order.
//
//     example_open_and_stat FILE...
//
// Exit status: 0 every file was opened and stat'ed, 1 some could not be
// (each named on stderr with the reason), 2 usage, 3 io_uring is not usable.
#include <uringkit/async/loop.hpp>
#include <uringkit/sys/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using namespace uringkit;

struct Entry {
    const char* path = nullptr;
    struct statx stx {};
    async::Result opened, stated;
};

async::Task<void> open_and_stat(async::Loop& loop, Entry& e) {
    const auto [opened, stated] =
        co_await loop.batch(op::OpenAt(AT_FDCWD, e.path, O_RDONLY | O_CLOEXEC),
                            op::Statx(AT_FDCWD, e.path, 0, STATX_SIZE | STATX_MODE, &e.stx));
    e.opened = opened;
    e.stated = stated;
    if (opened.ok()) co_await loop.close(Fd{opened.res});
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s FILE...\n", argv[0]);
        return 2;
    }
    try {
        Ring ring(64);
        async::Loop loop(ring);
        std::vector<Entry> entries(static_cast<std::size_t>(argc - 1));
        for (std::size_t i = 0; i < entries.size(); ++i) {
            entries[i].path = argv[i + 1];
            loop.spawn(open_and_stat(loop, entries[i]));
        }
        loop.run();
        int status = 0;
        for (const Entry& e : entries) {
            const async::Result& bad = !e.stated.ok() ? e.stated : e.opened;
            if (!bad.ok()) {
                std::fprintf(stderr, "%s: %s: %s\n", argv[0], e.path,
                             bad.error().message().c_str());
                status = 1;
                continue;
            }
            std::printf("%s %llu %o\n", e.path, static_cast<unsigned long long>(e.stx.stx_size),
                        e.stx.stx_mode & 07777u);
        }
        return status;
    } catch (const RingError& e) {
        std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
        return 3;
    }
}
