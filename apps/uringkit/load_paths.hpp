// `load --paths FILE` and `--verify DIR`: the list of targets to request,
// and the files their bodies must equal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace uringkit::cli {

// A regular file's bytes, at most `limit`; `why` set instead ("not a
// regular file", "over 16 MiB", "cannot open: " and strerror, or strerror
// of a failed read) when it cannot be read.  Opened
// with O_NONBLOCK, so a FIFO named here is refused, not waited on.
std::string read_regular_file(const std::string& path, std::uint64_t limit, std::string& why);

// The targets listed in FILE, one per line ("/a.html", "/img/b.png?v=2");
// blank lines and lines starting with '#' are skipped.  Throws UsageError
// naming FILE and the line for one that is not an origin-form target.
std::vector<std::string> read_paths(const std::string& file);

// The bytes of DIR/PATH for each target (its query left off, its
// percent-encoding undone once), read now: what each 200 response must
// carry.  Throws UsageError naming the file that cannot be read, or when
// the files add up to over 1 GiB.
std::vector<std::string> read_expected(const std::string& dir,
                                       const std::vector<std::string>& paths);

}  // namespace uringkit::cli
