#include "console.hpp"

#include "command.hpp"

#include "cli/output_file.hpp"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <exception>

namespace uringkit::cli {
namespace {

std::atomic<const char*> g_tool{nullptr};
std::atomic<int> g_stdout_error{0};  // the errno of the first failed write to standard output
std::atomic<bool> g_stderr_failed{false};

// "uringkit TOOL: WHAT DETAIL" on stderr.
void say_failed(std::string_view what, std::string_view detail = {}) noexcept {
    const char* tool = g_tool.load();
    emit(stderr, "uringkit{}{}: {}{}\n", tool ? " " : "", tool ? tool : "", what, detail);
}

// 4: a path the user named cannot be used; 1: writing there failed.
int output_status(const cli::OutputError& e) noexcept {
    switch (e.error()) {
        case 0:  // a directory: util/output_file.cpp says so without an errno
        case ENOENT:
        case ENOTDIR:
        case EISDIR:
        case ELOOP:
        case ENAMETOOLONG:
            return kBadInput;
        default:
            return kFailure;
    }
}

// Runs `write`, turning what it throws into one line and a status.
template <class F>
int reported(F&& write) noexcept {
    try {
        write();
        return kOk;
    } catch (const cli::OutputError& e) {
        say_failed(e.what());
        return output_status(e);
    } catch (const std::exception& e) {  // std::bad_alloc
        say_failed(e.what());
        return kFailure;
    }
}

}  // namespace

void set_tool_name(const char* name) noexcept {
    g_tool.store(name);
}

bool failed_write(std::FILE* stream, int err) noexcept {
    if (stream == stderr) {
        g_stderr_failed.store(true);
    } else {
        int none = 0;
        g_stdout_error.compare_exchange_strong(none, err != 0 ? err : EIO);
    }
    return false;
}

bool output_lost() noexcept {
    return g_stdout_error.load() != 0;
}

bool put(std::FILE* stream, std::string_view text) noexcept {
    if (stream != stderr && output_lost()) return false;
    if (text.empty()) return true;
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), stream) == text.size()) return true;
    return failed_write(stream, errno);
}

bool flush(std::FILE* stream) noexcept {
    if (stream != stderr && output_lost()) return false;
    errno = 0;
    if (std::fflush(stream) == 0) return true;
    return failed_write(stream, errno);
}

int finish_output(int status) noexcept {
    if (!output_lost()) {
        errno = 0;
        if (std::fflush(stdout) != 0) {
            failed_write(stdout, errno);
        } else if (std::ferror(stdout)) {
            // Met by a writer that does not come through here, its errno gone by now.
            failed_write(stdout, EIO);
        } else if (const int fd = ::dup(STDOUT_FILENO);
                   fd >= 0 && ::close(fd) != 0 && errno != EINTR) {
            // A file system that keeps write errors back until close (NFS)
            // reports them on every close of the file: closing a duplicate
            // finds them and leaves standard output open for what runs at exit.
            failed_write(stdout, errno);
        }
    }
    if (std::ferror(stderr))
        g_stderr_failed.store(true);  // a writer that does not come through here
    const int err = g_stdout_error.load();
    // EPIPE: the reader went away (`| head -1`) and SIGPIPE is ignored; under
    // its default action the same write would have ended the process quietly.
    if (err != 0 && err != EPIPE)
        say_failed("write error on standard output: ", std::strerror(err));
    if (status == kOk && (err != 0 || g_stderr_failed.load())) status = kFailure;
    return status;
}

int check_output(const std::string& path) noexcept {
    return reported([&] { cli::check_output_path(path); });
}

int save_output(const std::string& path, std::string_view content) noexcept {
    if (cli::is_standard_output(path))
        return put(stdout, content) && flush(stdout) ? kOk : kFailure;
    return reported([&] { cli::write_output(path, content); });
}

}  // namespace uringkit::cli
