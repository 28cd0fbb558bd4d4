// A list of paths kept in one character arena: tens of thousands of names cost
// two allocations, not one per name, and each name is a stable NUL-terminated
// C string an SQE can point to until its completion (the arena is only read
// once the list is built).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstdint>
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
// at-a-time stream read and a string per line than in reading the files.
// Returns 0, or -errno of the read that failed (what came before it is kept).
inline int read_path_list(int fd, char separator, PathList& out) {
    std::vector<char> text(1 << 20);
    std::size_t have = 0;
    for (;;) {
        if (have == text.size()) text.resize(text.size() * 2);
        const ssize_t n = ::read(fd, text.data() + have, text.size() - have);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = n < 0 ? -errno : 0;
            append_path_list({text.data(), have}, separator, out);
            return err;
        }
        have += static_cast<std::size_t>(n);
    }
}

}  // namespace uringkit::fs
