#include "load_paths.hpp"

#include "command.hpp"

#include "net/static_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace uringkit::cli {
namespace {

constexpr std::uint64_t kMaxExpected = 1ULL << 30;

std::string limit_text(std::uint64_t limit) {
    return limit >= (1ULL << 30) ? fmt::format("over {} GiB", limit >> 30)
                                 : fmt::format("over {} MiB", limit >> 20);
}

}  // namespace

std::string read_regular_file(const std::string& path, std::uint64_t limit, std::string& why) {
    std::string out;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        why = fmt::format("cannot open: {}", std::strerror(errno));
        return out;
    }
    struct stat st {};
    if (::fstat(fd, &st) < 0)
        why = std::strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (static_cast<std::uint64_t>(st.st_size) > limit)
        why = limit_text(limit);
    else
        out.reserve(static_cast<std::size_t>(st.st_size));
    while (why.empty()) {
        char buf[65536];
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) why = std::strerror(errno);
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > limit) why = limit_text(limit);
    }
    ::close(fd);
    return out;
}

std::vector<std::string> read_paths(const std::string& file) {
    std::ifstream in(file);
    if (!in)
        throw UsageError{fmt::format("--paths {}: cannot open: {}", file, std::strerror(errno))};
    std::vector<std::string> paths;
    std::string line;
    for (unsigned n = 1; std::getline(in, line); ++n) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line.front() == '#') continue;
        if (line.front() != '/' || line.find_first_of(" \t") != std::string::npos ||
            line.find('\0') != std::string::npos)
            throw UsageError{fmt::format(
                "--paths {}: line {}: '{}' is not a target (give one path per line, like "
                "/index.html, no spaces)",
                file, n, line)};
        paths.push_back(line);
    }
    if (in.bad()) throw UsageError{fmt::format("--paths {}: read error", file)};
    if (paths.empty()) throw UsageError{fmt::format("--paths {}: no path in it", file)};
    return paths;
}

std::vector<std::string> read_expected(const std::string& dir,
                                       const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    std::uint64_t total = 0;
    for (const std::string& target : paths) {
        const auto path = net::decode_target(target);
        if (!path)
            throw UsageError{fmt::format("--verify {}: {}: bad percent-encoding", dir, target)};
        const std::string file = dir + "/" + *path;
        std::string why;
        out.push_back(read_regular_file(file, kMaxExpected, why));
        if (!why.empty()) throw UsageError{fmt::format("--verify {}: {}: {}", dir, file, why)};
        total += out.back().size();
        if (total > kMaxExpected)
            throw UsageError{fmt::format("--verify {}: the files add up to over 1 GiB", dir)};
    }
    return out;
}

}  // namespace uringkit::cli
