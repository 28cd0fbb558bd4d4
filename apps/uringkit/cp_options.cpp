// -v, -i and coreutils' quoting of names (cp_options.hpp).
#include "cp_options.hpp"

#include "console.hpp"

#include <fmt/core.h>

#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#include <cwctype>

namespace uringkit::cli {

namespace {

// The environment's character set (LC_ALL, LC_CTYPE, LANG), as coreutils
// reads it: a UTF-8 locale leaves printable multibyte characters as they are.
bool multibyte_locale() {
    static const bool multibyte = [] {
        std::setlocale(LC_CTYPE, "");
        return MB_CUR_MAX > 1;
    }();
    return multibyte;
}

}  // namespace

std::string shell_quote(std::string_view name) {
    // quotearg_buffer_restyled with shell_escape_always_quoting_style:
    // printable characters stay, a few controls get their letter, every
    // other byte three octal digits, each run inside '$'...''.
    const bool multibyte = multibyte_locale();
    std::string out = "'";
    bool pending = false;  // inside a $'...' piece
    bool single_quote = false, double_quote_ok = true;
    for (std::size_t i = 0; i < name.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(name[i]);
        bool compatible = false;  // may stand inside "..." as it is
        char escape = 0;
        bool octal = false;
        switch (c) {
            case '\a':
                escape = 'a';
                break;
            case '\b':
                escape = 'b';
                break;
            case '\f':
                escape = 'f';
                break;
            case '\n':
                escape = 'n';
                break;
            case '\r':
                escape = 'r';
                break;
            case '\t':
                escape = 't';
                break;
            case '\v':
                escape = 'v';
                break;
            case '\0':
                escape = '0';
                break;
            case '{':
            case '}':
                compatible = name.size() == 1;
                break;
            case '#':
            case '~':
                compatible = i == 0;
                break;
            case ' ':
                compatible = true;
                break;
            case '\'':
                single_quote = compatible = true;
                out += "'\\'";
                pending = false;
                break;
            default:
                if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    std::string_view("%+,-./:]_@").find(static_cast<char>(c)) !=
                        std::string_view::npos)
                    compatible = true;
                else if (c >= 0x80 && multibyte) {
                    std::mbstate_t state{};
                    wchar_t w = 0;
                    const std::size_t n =
                        std::mbrtowc(&w, name.data() + i, name.size() - i, &state);
                    if (n != static_cast<std::size_t>(-1) && n != static_cast<std::size_t>(-2) &&
                        n > 1 && std::iswprint(static_cast<wint_t>(w))) {
                        if (pending) out += "''";
                        pending = false;
                        out.append(name.substr(i, n));
                        i += n - 1;
                        continue;
                    }
                    octal = true;
                } else if (c < 0x20 || c >= 0x7f)
                    octal = true;
                // the shell's specials (! " $ & ( ) * ; < = > [ ^ ` | ? \) stay as they are,
                // but rule out the "..." form
                break;
        }
        if (escape || octal) {
            if (!pending) out += "'$'";
            pending = true;
            out += '\\';
            if (octal) {
                out += static_cast<char>('0' + (c >> 6));
                out += static_cast<char>('0' + ((c >> 3) & 7));
                out += static_cast<char>('0' + (c & 7));
            } else {
                out += escape;
            }
        } else {
            if (pending) out += "''";
            pending = false;
            out += static_cast<char>(c);
        }
        if (!compatible) double_quote_ok = false;
    }
    out += '\'';
    if (single_quote && double_quote_ok) return "\"" + std::string(name) + "\"";
    return out;
}

void print_copy_event(fs::CopyEvent kind, std::string_view from, std::string_view to) {
    // -b's backup is told just before the copy it belongs to, and printed on its line.
    // (Kept with the destination it is of: a copy that failed after its
    // backup was made prints no line, and the next copy's is its own.)
    static std::string backup, backed_up;
    switch (kind) {
        case fs::CopyEvent::backed_up:
            backup = shell_quote(to);
            backed_up = from;
            break;
        case fs::CopyEvent::copied:
            if (backup.empty() || backed_up != to)
                emit(stdout, "{} -> {}\n", shell_quote(from), shell_quote(to));
            else
                emit(stdout, "{} -> {} (backup: {})\n", shell_quote(from), shell_quote(to), backup);
            backup.clear();
            break;
        case fs::CopyEvent::removed:
            emit(stdout, "removed {}\n", shell_quote(from));
            break;
        case fs::CopyEvent::made_parent:
            emit(stdout, "{} -> {}\n", from, to);
            break;
    }
}

bool ask_overwrite(std::string_view dst, mode_t unwritable, bool replaces) {
    flush(stdout);
    if (unwritable) {
        // strmode(3)'s nine permission characters, set-ID and sticky bits included.
        std::string perms = "rwxrwxrwx";
        for (unsigned k = 0; k < 9; ++k)
            if (!(unwritable & (0400u >> k))) perms[k] = '-';
        const auto special = [&](std::size_t at, mode_t bit, char set, char unset) {
            if (unwritable & bit) perms[at] = perms[at] == '-' ? unset : set;
        };
        special(2, S_ISUID, 's', 'S');
        special(5, S_ISGID, 's', 'S');
        special(8, S_ISVTX, 't', 'T');
        if (replaces)
            emit(stderr, "cp: replace {}, overriding mode {:04o} ({})? ", shell_quote(dst),
                 unwritable & 07777, perms);
        else
            emit(stderr, "cp: unwritable {} (mode {:04o}, {}); try anyway? ", shell_quote(dst),
                 unwritable & 07777, perms);
    } else {
        emit(stderr, "cp: overwrite {}? ", shell_quote(dst));
    }
    flush(stderr);
    char* line = nullptr;
    std::size_t size = 0;
    const ssize_t n = ::getline(&line, &size, stdin);
    const bool yes = n > 0 && (line[0] == 'y' || line[0] == 'Y');
    std::free(line);
    return yes;
}

}  // namespace uringkit::cli

namespace uringkit::cli {

void add_link_and_backup_options(CLI::App& app, LinkAndBackupArgs& a) {
    app.add_flag("-d", a.no_deref_links, "Same as -P --preserve=links");
    app.add_flag("-l,--link", a.hard,
                 "Make each file a hard link of its source instead of copying it (with -r the "
                 "directories are still made); a symbolic link named as a source is followed "
                 "unless -P, -d or -a");
    app.add_flag("-s,--symbolic-link", a.symbolic,
                 "Make each file a symbolic link to its source instead of copying it; a "
                 "relative SRC only for a link made in the current directory (it would name "
                 "something else from anywhere else)");
    a.backup_option =
        app.add_flag("--backup{existing}", a.backup,
                     "Rename an existing destination that is replaced to a backup first. "
                     "CONTROL: none (off), numbered (t: NAME.~N~), existing (nil: numbered "
                     "where NAME has numbered backups, else simple; the default, or "
                     "VERSION_CONTROL's), simple (never: NAME~, or -S's suffix)")
            ->type_name("[=CONTROL]");
    app.add_flag("-b", a.backup_short, "Like --backup, without CONTROL");
    a.suffix_option = app.add_option("-S,--suffix", a.suffix,
                                     "The simple backups' suffix (default ~, or "
                                     "SIMPLE_BACKUP_SUFFIX); implies -b")
                          ->type_name("SUFFIX");
    app.add_option("--sparse", a.sparse,
                   "WHEN: auto (default) keeps the source's holes and writes its data as it "
                   "is; always also leaves a hole for each block of zeros in the data; never "
                   "writes holes out as zeros.  always and never copy the bytes with "
                   "read/write (no clone, not with --reflink=always)")
        ->type_name("WHEN")
        ->check(CLI::IsMember({"auto", "always", "never"}));
    app.add_flag("--attributes-only", a.attributes_only,
                 "Copy no data: a new file is made empty, an existing one keeps its bytes; "
                 "only the attributes -p, -a or --preserve name are set");
    app.add_flag("--copy-contents", a.copy_contents,
                 "With -r, read a FIFO or a device in a tree like a file instead of making it "
                 "again (a FIFO with no writer waits, as with cp)");
    app.add_flag("-x,--one-file-system", a.one_file_system,
                 "With -r, stay on the file systems of the sources: a directory on another "
                 "one (a mount point) is made, empty, and not entered");
    app.add_flag("--strip-trailing-slashes", a.strip_trailing_slashes,
                 "Remove trailing slashes from each source operand (a symbolic link named "
                 "'link/' is then the link, not the directory it names)");
    app.add_flag("--keep-directory-symlink", a.keep_directory_symlink,
                 "Not offered (refused): a symbolic link in a destination tree is never "
                 "followed; name the directory the link points to as the destination");
}

std::optional<std::string> apply_link_and_backup(const LinkAndBackupArgs& a, fs::CopyOptions& o) {
    // -d is -P and --preserve=links, each taken in cp.cpp in the order given
    // among -L/-H and the --preserve options.
    if (a.hard && a.symbolic) return "cannot make both hard and symbolic links";
    // coreutils follows a destination's symlink to a directory with this
    // option; uringkit's destination walk never follows one (a link another
    // user planted there could lead a root copy anywhere), so it is refused
    // rather than accepted and ignored.
    if (a.keep_directory_symlink)
        return "--keep-directory-symlink is not offered: links in a destination tree are never "
               "followed; name the directory the link points to as the destination instead";
    o.one_file_system = a.one_file_system;
    o.link_instead = a.hard       ? fs::LinkInstead::hard
                     : a.symbolic ? fs::LinkInstead::symbolic
                                  : fs::LinkInstead::none;
    o.attributes_only = a.attributes_only;
    o.copy_contents = a.copy_contents;
    o.sparse = a.sparse == "always"  ? fs::Sparse::always
               : a.sparse == "never" ? fs::Sparse::never
                                     : fs::Sparse::automatic;
    if (o.sparse != fs::Sparse::automatic && o.reflink == fs::Reflink::always)
        return "--reflink can be used only with --sparse=auto";
    const bool backups = a.backup_short || a.backup_option->count() || a.suffix_option->count();
    if (!backups) return std::nullopt;
    // CONTROL as coreutils' argmatch takes it: a word, or any unambiguous start of one.
    std::string control = a.backup_option->count() ? a.backup : "";
    const char* from = "--backup";
    if (control.empty() || control == "existing") {
        if (const char* env = std::getenv("VERSION_CONTROL"); env && *env && control.empty()) {
            control = env;
            from = "$VERSION_CONTROL";
        }
        if (control.empty()) control = "existing";
    }
    static constexpr std::pair<std::string_view, fs::Backup> kWords[] = {
        {"none", fs::Backup::none},         {"off", fs::Backup::none},
        {"simple", fs::Backup::simple},     {"never", fs::Backup::simple},
        {"existing", fs::Backup::existing}, {"nil", fs::Backup::existing},
        {"numbered", fs::Backup::numbered}, {"t", fs::Backup::numbered}};
    std::optional<fs::Backup> kind;
    bool ambiguous = false;
    for (const auto& [word, k] : kWords) {
        if (word == control) {
            kind = k;
            ambiguous = false;
            break;
        }
        if (word.substr(0, control.size()) == control) {
            if (kind && *kind != k) ambiguous = true;
            kind = k;
        }
    }
    if (!kind || ambiguous)
        return fmt::format(
            "{} argument '{}' for '{}'\nValid arguments are:\n  - 'none', 'off'\n  - "
            "'simple', 'never'\n  - 'existing', 'nil'\n  - 'numbered', 't'",
            ambiguous ? "ambiguous" : "invalid", control, from);
    o.backup = *kind;
    if (a.suffix_option->count())
        o.backup_suffix = a.suffix;
    else if (const char* env = std::getenv("SIMPLE_BACKUP_SUFFIX"); env && *env)
        o.backup_suffix = env;
    if (o.backup_suffix.find('/') != std::string::npos) o.backup_suffix = "~";
    return std::nullopt;
}

}  // namespace uringkit::cli
