// `uringkit cp`'s coreutils options that talk to the user: -v's lines, -i's
// question, and coreutils' way of quoting a file name in both.
#pragma once

#include "fs/copy.hpp"

#include <sys/stat.h>
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace uringkit::cli {

// A file name as coreutils 9.1 quotes it in cp's messages (quotearg's
// shell-escape-always style): 'a b'; "it's" when a single quote is the
// only thing to protect; control characters, and bytes that are not a
// printable character of the environment's locale (LC_ALL, LC_CTYPE, LANG:
// UTF-8 or not), as $'\n', $'\303' pieces: 'a'$'\n''b'.
std::string shell_quote(std::string_view name);

// -v: one line on standard output per event, byte for byte as cp 9.1
// prints it: 'SRC' -> 'DST' (with -b: 'SRC' -> 'DST' (backup: 'DST~')),
// removed 'DST', and for --parents' directories SRC -> DST unquoted.
void print_copy_event(fs::CopyEvent kind, std::string_view from, std::string_view to);

// -i: "cp: overwrite 'DST'? " on stderr (for a file the user may not write,
// coreutils' "cp: unwritable 'DST' (mode 0444, r--r--r--); try anyway? ",
// or with -f or --remove-destination "cp: replace 'DST', overriding mode
// ...? "), then one line from standard input (a terminal or not, as
// coreutils); true when it starts with y or Y.  End of input is no.
bool ask_overwrite(std::string_view dst, mode_t unwritable, bool replaces);

// -d, -l, -s, -b/--backup/-S, --sparse, --attributes-only, --copy-contents,
// -x, --strip-trailing-slashes (and --keep-directory-symlink, refused):
// coreutils 9.1's options that make something other than a plain copy.
struct LinkAndBackupArgs {
    bool no_deref_links = false;  // -d
    bool hard = false, symbolic = false, attributes_only = false, copy_contents = false;
    bool one_file_system = false, strip_trailing_slashes = false, keep_directory_symlink = false;
    bool backup_short = false;
    std::string backup = "none";  // --backup[=CONTROL]
    std::string suffix;
    std::string sparse = "auto";
    CLI::Option* backup_option = nullptr;
    CLI::Option* suffix_option = nullptr;
};
void add_link_and_backup_options(CLI::App& app, LinkAndBackupArgs& a);
// Sets `o` from them (after -a, -p and --preserve were applied); returns a
// usage error's message, as coreutils words it, or nullopt.
std::optional<std::string> apply_link_and_backup(const LinkAndBackupArgs& a, fs::CopyOptions& o);

}  // namespace uringkit::cli
