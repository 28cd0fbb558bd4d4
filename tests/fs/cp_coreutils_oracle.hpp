// `uringkit cp` against coreutils' own cp (9.1, /bin/cp) on the same input:
// two copies of one prepared directory, the same command line run in each
// (coreutils' as `cp` found on PATH, so its messages say "cp:"), then their
// standard output and error, exit statuses and resulting trees compared.
#pragma once

#include "files_test_support.hpp"

#include <sys/stat.h>
#include <sys/time.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace cp_oracle {

using namespace files_test;

// Every entry under `root`, sorted: path, type, permission bits, owner and
// then the bytes of a file or the target of a link.
inline std::string snapshot(const std::string& root) {
    std::vector<std::string> lines;
    for (auto it = stdfs::recursive_directory_iterator(root); it != stdfs::end(it); ++it) {
        const std::string path = it->path().string();
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) continue;
        std::string line = path.substr(root.size()) + " " + std::to_string(st.st_mode) + " " +
                           std::to_string(st.st_uid) + " ";
        if (S_ISREG(st.st_mode)) line += read_file(path);
        if (S_ISLNK(st.st_mode)) line += stdfs::read_symlink(path).string();
        lines.push_back(line);
    }
    std::sort(lines.begin(), lines.end());
    std::string all;
    for (const std::string& l : lines) all += l + "\n";
    return all;
}

// Lines of `text` sorted (a tree's order is the walk's, which differs).
inline std::string sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t nl = text.find('\n', at);
        const std::size_t end = nl == std::string::npos ? text.size() : nl + 1;
        lines.push_back(text.substr(at, end - at));
        at = end;
    }
    std::sort(lines.begin(), lines.end());
    std::string all;
    for (const std::string& l : lines) all += l;
    return all;
}

inline void set_mtime(const std::string& path, long seconds) {
    const timespec t[2] = {{seconds, 0}, {seconds, 0}};
    ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), t, AT_SYMLINK_NOFOLLOW), 0) << path;
}

struct Compared {
    Child ours, theirs;
    std::string tree_ours, tree_theirs;
};

// Runs `cp ARGS` (coreutils) in one copy of what `prepare` makes and
// `uringkit cp OURS` in the other (OURS: ARGS unless given), each with
// `input` on standard input, `as_nobody`: as the user nobody.
inline Compared compare(const std::function<void(const std::string& dir)>& prepare,
                        const std::vector<std::string>& args, const std::string& input = {},
                        std::vector<std::string> ours = {}, bool as_nobody = false) {
    static int serial = 0;
    const Scratch s;
    ::chmod(s.dir.c_str(), 0755);
    Compared r;
    if (ours.empty()) ours = args;
    const std::string tag = std::to_string(++serial);
    for (int side = 0; side < 2; ++side) {
        const std::string dir = s / ((side ? "uringkit-" : "coreutils-") + tag);
        stdfs::create_directory(dir);
        prepare(dir);
        if (as_nobody) ::chown(dir.c_str(), kNobody, kNobody);
        std::vector<std::string> argv =
            side ? std::vector<std::string>{URINGKIT_CLI, "cp"} : std::vector<std::string>{"cp"};
        argv.insert(argv.end(), (side ? ours : args).begin(), (side ? ours : args).end());
        (side ? r.ours : r.theirs) = run(argv, input, [dir, as_nobody] {
            ::umask(022);
            if (::chdir(dir.c_str()) != 0) ::_exit(98);
            if (as_nobody) become_nobody();
        });
        (side ? r.tree_ours : r.tree_theirs) = snapshot(dir);
    }
    return r;
}

// Both succeeded with the same output and trees.
inline void expect_same(const Compared& r, bool sort_output = false) {
    EXPECT_EQ(r.theirs.status, 0) << r.theirs.err;
    EXPECT_EQ(r.ours.status, 0) << r.ours.err;
    if (sort_output)
        EXPECT_EQ(sorted_lines(r.ours.out), sorted_lines(r.theirs.out));
    else
        EXPECT_EQ(r.ours.out, r.theirs.out);
    EXPECT_EQ(r.ours.err, r.theirs.err);
    EXPECT_EQ(r.tree_ours, r.tree_theirs);
}

}  // namespace cp_oracle
