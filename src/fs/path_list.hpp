// A list of paths kept in one character arena: tens of thousands of names cost
// two allocations, not one per name, and each name is a stable NUL-terminated
// C string an SQE can point to until its completion (the arena is only read
// once the list is built).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::fs {

class PathList {
public:
    void reserve(std::size_t paths, std::size_t chars) {
        offsets_.reserve(paths);
        chars_.reserve(chars);
    }
    // Appends `dir` + "/" + `name` (or just `name` when dir is empty).
    void push(std::string_view dir, std::string_view name) {
        offsets_.push_back(chars_.size());
        chars_.insert(chars_.end(), dir.begin(), dir.end());
        if (!dir.empty() && dir.back() != '/') chars_.push_back('/');
        chars_.insert(chars_.end(), name.begin(), name.end());
        chars_.push_back('\0');
    }
    void push(std::string_view path) { push({}, path); }
    std::size_t size() const noexcept { return offsets_.size(); }
    std::size_t chars() const noexcept { return chars_.size(); }  // the arena's bytes
    bool empty() const noexcept { return offsets_.empty(); }
    // Valid while the list is not appended to (appending may move the arena).
    const char* c_str(std::size_t i) const noexcept { return chars_.data() + offsets_[i]; }
    std::string_view operator[](std::size_t i) const noexcept {
        const std::size_t end = i + 1 < offsets_.size() ? offsets_[i + 1] - 1 : chars_.size() - 1;
        return {chars_.data() + offsets_[i], end - offsets_[i]};
    }

private:
    std::vector<std::size_t> offsets_;
    std::vector<char> chars_;
};

// Appends the entries of a path list to `out`: `separator` ends each entry
// ('\n' as `find -print` writes, '\0' as `find -print0` and `xargs -0`
// read), the last may lack it, and empty entries are skipped.  A newline
// list cannot name a file whose name holds a newline; a NUL list can name
// every file.  Each entry is copied into the arena: no allocation per entry.
inline void append_path_list(std::string_view text, char separator, PathList& out) {
    while (!text.empty()) {
        const std::size_t end = text.find(separator);
        const std::string_view entry = text.substr(0, end);
        if (!entry.empty()) out.push(entry);
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
}

// Reads all of `fd` (standard input: a pipe from `find`, a file) with large
// read(2) calls and appends its path list to `out` as append_path_list does.
// `find ... | readfiles -` over 10,000 paths spent more time in a character-
// at-a-time stream read and a string per line than in reading the files,
// and then, reading it whole into a zeroed 1 MiB buffer, 4 ms in page
// faults before the first path was looked at: the list is parsed 64 KiB at
// a time instead (an entry longer than that grows the buffer), and a
// regular file's size reserves the arena once.
// Returns 0, or -errno of the read that failed (what came before it is kept).
inline int read_path_list(int fd, char separator, PathList& out) {
    // At most 256 MiB ahead: a larger (or sparse) file grows the arena as a
    // pipe does, instead of asking for all of it before a byte is read.
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        const auto bytes = std::min(static_cast<std::size_t>(st.st_size), std::size_t{256} << 20);
        out.reserve(out.size() + bytes / 16, out.chars() + bytes + 1);
    }
    std::size_t cap = 64 * 1024, have = 0;
    std::unique_ptr<char[]> buf(new char[cap]);  // not zeroed: only what read(2) wrote is used
    for (;;) {
        if (have == cap) {  // one entry longer than the buffer
            std::unique_ptr<char[]> bigger(new char[cap * 2]);
            std::memcpy(bigger.get(), buf.get(), have);
            buf = std::move(bigger);
            cap *= 2;
        }
        const ssize_t n = ::read(fd, buf.get() + have, cap - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = n < 0 ? -errno : 0;
            append_path_list({buf.get(), have}, separator, out);
            return err;
        }
        have += static_cast<std::size_t>(n);
        // The whole entries so far; the last may go on in the next read.
        const void* last = ::memrchr(buf.get(), separator, have);
        if (!last) continue;
        const auto whole = static_cast<std::size_t>(static_cast<const char*>(last) - buf.get()) + 1;
        append_path_list({buf.get(), whole}, separator, out);
        std::memmove(buf.get(), buf.get() + whole, have - whole);
        have -= whole;
    }
}

}  // namespace uringkit::fs
