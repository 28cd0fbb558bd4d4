// The tools' standard output and standard error.
//
// A write there can fail: stderr appended to a log on a full disk, `> sums`
// on a full disk, /dev/full, a pipe whose reader went away.  fmt::print
// throws std::system_error then, and an exception thrown while a copy is
// reporting a failed file ended the process (SIGABRT) before its cleanup
// ran.  So every tool writes through here instead: nothing throws, each
// write says whether it got there, and a failure is recorded once for the
// process.  main() calls finish_output() with the tool's status, which
// flushes and closes standard output and turns the record into the exit
// status, as coreutils' close_stdout does:
//
//  - standard output failed: one line, "uringkit TOOL: write error on
//    standard output: No space left on device", and status 1 (sha256sum's);
//    its reader went away (EPIPE: SIGPIPE is ignored, else the signal ended
//    the process at that write): no line, status 1;
//  - a diagnostic that could not be written is dropped, and a status of 0
//    becomes 1, so a lost warning is never a silent success.
//
// Once standard output failed nothing more is written to it (a later write
// that succeeds would leave a gap in the middle of the output), and tools
// that stream their output (readfiles) ask output_lost() to stop working.
#pragma once

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

namespace uringkit::cli {

// The tool named in finish_output()'s line: "readfiles", "bench net".  A
// string that lives as long as the process (a literal).
void set_tool_name(const char* name) noexcept;

// Records that a write to `stream` (stdout or stderr) failed with `err`,
// for code that writes to the stream itself (fs::print_hash_line).
// Returns false, for `return failed_write(...)`.
bool failed_write(std::FILE* stream, int err) noexcept;

// Writes `text` to `stream` (stdout or stderr).  False when not all of it
// got there (the failure recorded), or standard output already failed.
bool put(std::FILE* stream, std::string_view text) noexcept;

// fmt::print that never throws: formats, then put().
template <class... T>
bool emit(std::FILE* stream, fmt::format_string<T...> format, T&&... args) noexcept {
    try {
        fmt::memory_buffer text;
        fmt::format_to(std::back_inserter(text), format, std::forward<T>(args)...);
        return put(stream, {text.data(), text.size()});
    } catch (
        ...) {  // std::bad_alloc while formatting: lost like a message that could not be written
        return failed_write(stream, ENOMEM);
    }
}

// Writes out what `stream` holds; false (recorded) when that failed.
bool flush(std::FILE* stream) noexcept;

// True once standard output failed or its reader went away.
bool output_lost() noexcept;

// Called once, by main(), with the tool's status: see the top of this file.
int finish_output(int status) noexcept;

// ---- output files (--json, --csv, --plot) -----------------------------------

// Checks before a run that an output can be written (cli::check_output_path);
// 0, or the status after one line naming the path and what failed.
int check_output(const std::string& path) noexcept;

// Writes an output the tool was asked for: to `path`, or to standard output
// for "-" (a failure there is finish_output()'s line).  0, or the status
// after one line naming the path and what failed: 4 when the path itself
// cannot be used (a directory, a directory that does not exist), 1 when
// writing there failed (permission, no space, an I/O error), as for cp's
// destinations.
int save_output(const std::string& path, std::string_view content) noexcept;

}  // namespace uringkit::cli
