#include "readfiles_check.hpp"

#include "console.hpp"

#include "fs/xxhsum_check.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

namespace uringkit::cli {
namespace {

// The whole list; a negative errno when it cannot be opened or read.
int slurp(const std::string& path, std::string& out) {
    const bool in = path == "-";
    const int fd = in ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return -errno;
    char buf[1 << 16];
    int err = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) err = -errno;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    if (!in) ::close(fd);
    return err;
}

struct Outcome {
    fs::HashValue got;
    int error = 0;  // errno, or -1: skipped (a FIFO, a device), said in `why`
    std::string why;
};

struct Entry {
    unsigned long line;
    fs::CheckLine check;
    std::optional<Outcome> outcome;
};

// Reads the files of the lines of one algorithm, on the ring as readfiles
// reads any list of files: one result per name.  Results come in list
// order, after every note (names the engines did not read are noted while
// the names are listed), so once the noted lines are answered each result
// belongs to the next line still waiting: no lookup by name, which cost a
// 10,000-line list a fifth of its time.
void read_group(std::vector<Entry>& entries, fs::HashAlgo algo, fs::ReadFilesOptions o,
                const char* tool) {
    o.algo = algo;
    o.hash = true;
    o.walk = false;
    o.ordered = true;
    fs::PathList paths;
    std::vector<Entry*> group;  // the lines read, in list order
    for (Entry& e : entries) {
        if (e.check.algo != algo) continue;
        if (e.check.name.empty()) {
            e.outcome = Outcome{{}, ENOENT, {}};
        } else {
            paths.push(e.check.name);
            group.push_back(&e);
        }
    }
    if (paths.empty()) return;
    std::map<std::string, Outcome, std::less<>> noted;  // few: the names that failed
    bool noted_answered = false;
    const auto answer_noted = [&] {
        noted_answered = true;
        if (noted.empty()) return;
        for (Entry* e : group)
            if (const auto it = noted.find(e->check.name); it != noted.end())
                e->outcome = it->second;
    };
    std::size_t next = 0;  // the first line of `group` that may still wait
    fs::ReadFilesSink sink;
    sink.file = [&](const fs::FileResult& r) {
        if (!noted_answered) answer_noted();
        while (next < group.size() && group[next]->outcome) ++next;
        Outcome got{r.value(), r.error, {}};
        if (next < group.size() && group[next]->check.name == r.path) {
            group[next++]->outcome = std::move(got);
            return;
        }
        for (Entry* e : group)  // out of the order expected: found by name
            if (!e->outcome && e->check.name == r.path) {
                e->outcome = std::move(got);
                return;
            }
    };
    sink.note = [&](std::string_view path, int error, std::string_view message) {
        if (path.empty()) {
            emit(stderr, "uringkit {}: {}\n", tool, message);
            return;
        }
        noted[std::string(path)] = Outcome{{}, error ? error : -1, std::string(message)};
    };
    fs::read_files(paths, o, sink);
    if (!noted_answered) answer_noted();
}

const char* plural(unsigned long n, const char* one, const char* many) {
    return n == 1 ? one : many;
}

// One list; true when it passed.
bool check_list(const std::string& path, const CheckFlags& f, const fs::ReadFilesOptions& o) {
    const std::string name = path == "-" ? "stdin" : path;
    std::string text;
    if (const int err = slurp(path, text); err < 0) {
        emit(stderr, "uringkit {}: {}: cannot read the checksum list: {} (errno {})\n", f.tool,
             name, std::strerror(-err), -err);
        return false;
    }
    // Sized once: growing it page by page, copying as it went, was a sixth of
    // the time of a 10,000-line list (first touches of fresh pages).
    std::vector<Entry> entries;
    entries.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
    unsigned long line = 0, improper = 0;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        ++line;
        if (auto c = fs::parse_check_line(std::string_view(text).substr(at, end - at),
                                          f.little_endian)) {
            entries.push_back(Entry{line, std::move(*c), std::nullopt});
        } else {
            ++improper;
            if (f.warn)
                emit(stderr, "{}:{}: Error: Improperly formatted checksum line.\n", name, line);
        }
        at = end + 1;
    }
    bool seen[4] = {};
    for (const Entry& e : entries) seen[static_cast<int>(e.check.algo)] = true;
    for (int a = 0; a < 4; ++a)
        if (seen[a]) read_group(entries, static_cast<fs::HashAlgo>(a), o, f.tool);

    unsigned long unreadable = 0, mismatched = 0, verified = 0;
    for (const Entry& e : entries) {
        if (!e.outcome) continue;  // stopped by a signal before it was read
        const Outcome& r = *e.outcome;
        if (r.error) {
            if (f.ignore_missing && r.error == ENOENT) continue;
            ++unreadable;
            if (!f.status)
                emit(stdout, "{}:{}: Could not open or read '{}': {}.\n", name, e.line,
                     e.check.name, r.error > 0 ? std::strerror(r.error) : r.why);
            continue;
        }
        ++verified;
        const bool ok = r.got == e.check.expected;
        if (!ok) ++mismatched;
        if (!f.status && (!ok || !f.quiet))
            emit(stdout, "{}: {}\n", e.check.name, ok ? "OK" : "FAILED");
    }
    if (entries.empty()) {
        emit(stderr, "{}: no properly formatted xxHash checksum lines found\n", name);
    } else if (!f.status) {
        if (improper)
            emit(stdout, "{} {} improperly formatted\n", improper,
                 plural(improper, "line is", "lines are"));
        if (unreadable)
            emit(stdout, "{} listed {} could not be read\n", unreadable,
                 plural(unreadable, "file", "files"));
        if (mismatched)
            emit(stdout, "{} computed {} did NOT match\n", mismatched,
                 plural(mismatched, "checksum", "checksums"));
    }
    const bool none_verified = f.ignore_missing && !entries.empty() && verified == 0 && !unreadable;
    if (none_verified) emit(stderr, "{}: no file was verified\n", name);
    return !entries.empty() && !mismatched && !unreadable && !(f.strict && improper) &&
           !none_verified;
}

}  // namespace

int run_check(const std::vector<std::string>& lists, const CheckFlags& flags,
              fs::ReadFilesOptions read) {
    bool ok = true;
    if (lists.empty()) return check_list("-", flags, read) ? 0 : 1;
    for (const std::string& l : lists) {
        ok &= check_list(l, flags, read);
        flush(stdout);
        if (read.stop && read.stop->load(std::memory_order_relaxed)) break;
    }
    return ok ? 0 : 1;
}

}  // namespace uringkit::cli
