// The text of one strace line, without meaning: the pid column, the -t/-tt/
// -ttt timestamp, the -T duration, the kind of line, a call's top-level
// arguments and result, C strings and -y's <path> annotations decoded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::replay::strace {

struct Line {
    enum Kind { call, unfinished, resumed, exited, signal };
    Kind kind = call;
    std::optional<std::uint32_t> pid;  // -f; absent when one process was traced
    std::optional<std::int64_t> time_ns;
    std::optional<std::int64_t> duration_ns;
    // call: "name(args) = result"; unfinished: "name(args so far";
    // resumed: what follows "<... name resumed>".
    std::string_view text;
    std::string_view name;  // resumed: the call named in "<... name resumed>"
};
// Throws LineError.
Line split_line(std::string_view line);

struct Call {
    std::string_view name;
    std::vector<std::string_view> args;  // top level, blanks trimmed
    std::string_view result;             // "4096", "3</p>", "-1 ENOENT (...)", "?"
};
// Splits "name(args) = result"; commas and parentheses inside strings,
// structs, arrays and <annotations> do not count.  Throws LineError.
void parse_call(std::string_view text, Call& out);

// A number as strace prints one: decimal, negative, 0x hex, 0 octal (modes).
std::optional<std::int64_t> parse_number(std::string_view s);

// "3", "3</path>", "AT_FDCWD", "AT_FDCWD</cwd>": the number (AT_FDCWD is
// -100) and the decoded -y annotation.
struct FdArg {
    int fd = -1;
    std::optional<std::string> annotation;
};
std::optional<FdArg> parse_fd(std::string_view arg);

// The result of a call: ok unless strace printed an error or '?'.
struct Result {
    bool ok = false;
    std::int64_t value = 0;
    std::optional<std::string> annotation;  // -y on a returned descriptor
    std::string_view error;                 // "ENOENT" when !ok
};
Result parse_result(std::string_view s);

// A quoted C string ("...", with strace's escapes); nullopt when `arg` is
// not one.  `truncated` is set when strace cut it ("..."...).
std::optional<std::string> parse_string(std::string_view arg, bool* truncated = nullptr);

// "O_RDWR|O_CREAT|0x40000" against a table of names; unknown names are an error.
struct FlagName {
    std::string_view name;
    std::uint32_t value;
};
std::optional<std::uint32_t> parse_flags(std::string_view arg, const FlagName* table,
                                         std::size_t n);

// The value of `key=` inside a struct or argument text ("flags=CLONE_VM|...").
std::optional<std::string_view> field(std::string_view text, std::string_view key);

// The sum of iov_len over an iovec array; nullopt if strace abbreviated it.
std::optional<std::uint64_t> iovec_length(std::string_view arg);

}  // namespace uringkit::replay::strace
