// An append-only log with group commit (append_log.hpp): APPENDERS coroutines
// each append RECORDS records to FILE, every append awaited until durable;
// the log makes each group durable with one write->fdatasync chain.  Run it
// again on the same file and each appender continues its sequence; a torn
// tail (a crash in the middle of a group) is cut off first.
//
//   example_append_log FILE [APPENDERS [RECORDS]]        (default 64 appenders, 100 records)
//
// Prints what it appended and how many fdatasync calls that took.  Exit
// status: 0 done, 1 an append failed, 2 usage, 3 io_uring cannot be set up,
// 4 FILE cannot be used (or holds something other than a log).
#include "append_log.hpp"

#include <uringkit/async/loop.hpp>
#include <uringkit/sys/error.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <system_error>
#include <vector>

using namespace uringkit;

namespace {

// The payload names its appender and sequence, so a reader can check it.
std::string payload(std::uint32_t appender, std::uint64_t seq) {
    return "appender " + std::to_string(appender) + " record " + std::to_string(seq) + ".";
}

async::Task<int> appender(append_log::GroupCommitLog& log, std::uint32_t id, std::uint64_t first,
                          unsigned records) {
    for (std::uint64_t seq = first; seq < first + records; ++seq) {
        const std::string text = payload(id, seq);
        const async::Result r = co_await log.append(
            id, seq, {reinterpret_cast<const std::byte*>(text.data()), text.size()});
        if (!r.ok()) {
            std::fprintf(stderr, "example_append_log: appender %u, record %llu: %s\n", id,
                         static_cast<unsigned long long>(seq), r.error().message().c_str());
            co_return 1;
        }
    }
    co_return 0;
}

bool parse(const char* s, unsigned long max, unsigned& out) {
    char* end = nullptr;
    errno = 0;
    const unsigned long v = std::strtoul(s, &end, 10);
    if (errno || end == s || *end || v == 0 || v > max) return false;
    out = static_cast<unsigned>(v);
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    unsigned appenders = 64, records = 100;
    if (argc < 2 || argc > 4 || (argc > 2 && !parse(argv[2], 4096, appenders)) ||
        (argc > 3 && !parse(argv[3], 1000000, records))) {
        std::fprintf(stderr,
                     "usage: example_append_log FILE [APPENDERS (1-4096) [RECORDS (1-1000000)]]\n");
        return 2;
    }
    const char* path = argv[1];
    // Never through a symlink: the log is a file this program made.
    const int fd = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        std::fprintf(stderr, "example_append_log: %s: %s\n", path,
                     fd < 0 ? std::strerror(errno) : "not a regular file");
        return 4;
    }
    std::uint64_t valid = 0;
    const std::vector<append_log::Record> old = append_log::read_all(fd, &valid);
    if (valid < static_cast<std::uint64_t>(st.st_size)) {
        if (old.empty()) {  // not a torn tail: someone else's file
            std::fprintf(
                stderr,
                "example_append_log: %s: not a log written by this program; left as it is\n", path);
            return 4;
        }
        std::fprintf(stderr, "example_append_log: %s: cutting a torn tail of %llu bytes at %llu\n",
                     path, static_cast<unsigned long long>(st.st_size - valid),
                     static_cast<unsigned long long>(valid));
        if (::ftruncate(fd, static_cast<off_t>(valid)) != 0) {
            std::fprintf(stderr, "example_append_log: %s: %s\n", path, std::strerror(errno));
            return 1;
        }
    }
    std::map<std::uint32_t, std::uint64_t> next;  // each appender's next sequence
    for (const auto& r : old) next[r.appender] = r.seq + 1;

    try {
        Ring ring(256);
        async::Loop loop(ring);
        append_log::GroupCommitLog log(loop, fd, valid);
        std::vector<int> status(appenders, 0);
        for (std::uint32_t id = 0; id < appenders; ++id)
            loop.spawn([](append_log::GroupCommitLog& l, std::uint32_t i, std::uint64_t first,
                          unsigned n, int& out) -> async::Task<void> {
                out = co_await appender(l, i, first, n);
            }(log, id, next[id], records, status[id]));
        loop.run();
        int failed = 0;
        for (int s : status) failed |= s;
        std::printf(
            "%llu records appended by %u appenders in %llu groups: %llu fdatasync calls, %.3f per "
            "append; "
            "the log holds %zu records\n",
            static_cast<unsigned long long>(log.appends()), appenders,
            static_cast<unsigned long long>(log.groups()),
            static_cast<unsigned long long>(log.fsyncs()),
            log.appends() ? static_cast<double>(log.fsyncs()) / static_cast<double>(log.appends())
                          : 0.0,
            append_log::read_all(fd, nullptr).size());
        ::close(fd);
        return failed ? 1 : 0;
    } catch (const RingError& e) {
        std::fprintf(stderr, "example_append_log: %s\n", e.what());
        return 3;
    } catch (const std::system_error& e) {
        std::fprintf(stderr, "example_append_log: %s\n", e.what());
        return 1;
    }
}
