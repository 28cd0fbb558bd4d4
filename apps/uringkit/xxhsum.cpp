// `uringkit xxhsum` (or uringkit called as `xxhsum`): xxhsum 0.8.1 for
// scripts, on the ring.  Its argument rules are xxhsum's, not readfiles':
// no file or a leading `-` hashes standard input (printed as `stdin`), a
// directory is an error, and options end at the first file name.  The
// hashing and checking are readfiles' (fs::read_files, run_check).
#include "command.hpp"
#include "console.hpp"
#include "interrupt.hpp"
#include "manual.hpp"
#include "readfiles_check.hpp"

#include "fs/readfiles.hpp"
#include "uringkit/version.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringkit::cli {
namespace {

constexpr const char* kTool = "xxhsum";

// What the words asked for, read as xxhsum 0.8.1 reads them.
struct XxhsumArgs {
    fs::HashLineStyle style;
    bool check = false;
    CheckFlags flags;
    std::vector<std::string> files;  // empty: standard input
    bool help = false, version = false;
    std::string refused;  // a usage error: what to say
};

// xxhsum 0.8.1's rules: words that start with '-' are options until the
// first that does not (or `--`); every word from there on is a file name,
// `-` and `--tag` included.  `-` among the options asks for standard input,
// which is what no file name gives anyway.  Short options combine (`-cq`);
// `-H` takes the digits that follow it, none meaning 0.
XxhsumArgs parse_xxhsum(const std::vector<std::string>& words) {
    XxhsumArgs a;
    a.flags.tool = kTool;
    std::size_t i = 0;
    for (; i < words.size(); ++i) {
        const std::string_view w = words[i];
        if (w == "--") {
            ++i;
            break;
        }
        if (w.empty() || w[0] != '-') break;
        if (w.starts_with("--")) {
            const std::pair<std::string_view, bool*> names[] = {
                {"--check", &a.check},
                {"--tag", &a.style.tag},
                {"--little-endian", &a.style.little_endian},
                {"--quiet", &a.flags.quiet},
                {"--status", &a.flags.status},
                {"--strict", &a.flags.strict},
                {"--warn", &a.flags.warn},
                {"--ignore-missing", &a.flags.ignore_missing},
                {"--help", &a.help},
                {"--version", &a.version}};
            bool known = false;
            for (const auto& [name, flag] : names)
                if (w == name) *flag = known = true;
            if (!known) {
                a.refused = "unknown option '" + std::string(w) + "'";
                return a;
            }
            continue;
        }
        for (std::size_t at = 1; at < w.size(); ++at) {
            switch (w[at]) {
                case 'c':
                    a.check = true;
                    break;
                case 'q':
                    a.flags.quiet = true;
                    break;
                case 'w':
                    a.flags.warn = true;
                    break;
                case 'h':
                    a.help = true;
                    break;
                case 'V':
                    a.version = true;
                    break;
                case 'H': {
                    std::size_t end = at + 1;
                    while (end < w.size() && w[end] >= '0' && w[end] <= '9') ++end;
                    // Leading zeros are the number's ("-H03" is -H3), as xxhsum reads it.
                    std::string_view digits = w.substr(at + 1, end - at - 1);
                    while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
                    const auto algo = fs::hash_from_number(digits.empty() ? "0" : digits);
                    if (!algo) {
                        a.refused = "-H" + std::string(digits) +
                                    ": not a hash; give 0 or 32 (XXH32), 1 or 64 (XXH64), 2 or "
                                    "128 (XXH128), 3 (XXH3)";
                        return a;
                    }
                    a.style.algo = *algo;
                    at = end - 1;
                    break;
                }
                case 'b':
                case 'i':
                case 'B':
                    a.refused = std::string("-") + w[at] +
                                ": uringkit's xxhsum does not benchmark; measure with `uringkit "
                                "readfiles --summary` or `uringkit bench`";
                    return a;
                default:
                    a.refused = std::string("unknown option '-") + w[at] + "'";
                    return a;
            }
        }
    }
    a.files.assign(words.begin() + static_cast<std::ptrdiff_t>(i), words.end());
    return a;
}

// Standard input, or a file the engines leave alone (a pipe, a device):
// hashed as it comes.  False when it could not be read.
bool hash_as_stream(int fd, std::string_view name, const fs::HashLineStyle& style,
                    const std::atomic<bool>* stop) {
    const fs::StreamHash h = fs::hash_stream(fd, style.algo, stop);
    if (h.error) {
        flush(stdout);
        emit(stderr, "uringkit {}: {}: read: {} (errno {})\n", kTool, name, std::strerror(h.error),
             h.error);
        return false;
    }
    if (!output_lost() && !fs::print_hash_line(stdout, style, h.value, name))
        failed_write(stdout, errno);
    return true;
}

// The files in the order given, read on the ring; true when every one was
// hashed.  A name the engines do not read (one that failed when listed, or
// a pipe, a device) is answered in its place in the order: the collector
// notes those before any file is read, and each result that comes back
// (in input order) first lets the noted names before it through.
bool hash_files(const std::vector<std::string>& files, const fs::HashLineStyle& style,
                fs::ReadFilesOptions o) {
    fs::PathList inputs;
    for (const std::string& f : files) inputs.push(f);
    struct Noted {
        std::string path;
        int error;
    };
    std::deque<Noted> noted;
    std::size_t next = 0;  // the input whose line comes next
    bool all_ok = true;
    const auto report_failure = [&](std::string_view path, int error) {
        all_ok = false;
        flush(stdout);
        if (error == EISDIR)
            emit(stderr, "uringkit {}: {}: Is a directory\n", kTool, path);
        else
            emit(stderr, "uringkit {}: Could not open '{}': {}\n", kTool, path,
                 std::strerror(error));
    };
    const auto answer_noted = [&] {
        const Noted n = std::move(noted.front());
        noted.pop_front();
        ++next;
        if (n.error) return report_failure(n.path, n.error);
        const int fd = ::open(n.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) return report_failure(n.path, errno);
        all_ok &= hash_as_stream(fd, n.path, style, o.stop);
        ::close(fd);
    };
    // Noted names up to (not including) `path`, the next result's.
    const auto answer_noted_before = [&](std::string_view path) {
        while (!noted.empty() && next < inputs.size() && inputs[next] != path &&
               inputs[next] == noted.front().path)
            answer_noted();
    };
    fs::ReadFilesSink sink;
    sink.note = [&](std::string_view path, int error, std::string_view message) {
        if (path.empty()) {
            emit(stderr, "uringkit {}: {}\n", kTool, message);
            return;
        }
        noted.push_back({std::string(path), error});
    };
    sink.file = [&](const fs::FileResult& r) {
        answer_noted_before(r.path);
        ++next;
        if (r.error) {
            if (std::strcmp(r.stage, "open") == 0) return report_failure(r.path, r.error);
            all_ok = false;
            flush(stdout);
            emit(stderr, "uringkit {}: {}: {}: {} (errno {})\n", kTool, r.path, r.stage,
                 std::strerror(r.error), r.error);
            return;
        }
        if (!output_lost() && !fs::print_hash_line(stdout, style, r.value(), r.path))
            failed_write(stdout, errno);
    };
    fs::read_files(inputs, o, sink);
    while (!noted.empty() && !(o.stop && o.stop->load(std::memory_order_relaxed))) answer_noted();
    return all_ok;
}

Register xxhsum_command{Command{
    "xxhsum", "xxhsum 0.8.1 for scripts, on the ring: the same options, output and exit statuses",
    45, [](CLI::App& app) -> std::function<int()> {
        auto words = std::make_shared<std::vector<std::string>>();
        // Declared for --help, the man page and the completions; the words
        // themselves are read by xxhsum's rules (parse_xxhsum).
        app.add_option("files", *words,
                       "Files to hash, or with -c checksum lists; none, or '-' before the first "
                       "name: standard input, printed as 'stdin'");
        app.add_option("-H")->description(
            "Hash: 0 or 32 (XXH32), 1 or 64 (XXH64, the default), 2 or 128 "
            "(XXH128), 3 (XXH3, printed BSD style as 0.8.1 does); written "
            "-H3, as xxhsum takes it");
        app.add_flag("--tag")->description("BSD-style lines for every hash: 'XXH64 (name) = hex'");
        app.add_flag("--little-endian")->description("Digits of the hash in little-endian order");
        app.add_flag("-c,--check")
            ->description("Read checksum lists and verify the files they name");
        app.add_flag("-q,--quiet")->description("--check: no line for a file that is OK");
        app.add_flag("--status")
            ->description("--check: print nothing; the exit status says whether all is well");
        app.add_flag("--strict")
            ->description("--check: a badly formatted line makes the exit status 1");
        app.add_flag("-w,--warn")
            ->description("--check: a line on stderr for each badly formatted line");
        app.add_flag("--ignore-missing")
            ->description(
                "--check: a file that does not exist is neither reported nor a failure "
                "(xxhsum 0.8.2's option)");
        app.add_flag("-V")->description("Print uringkit's version (also --version) and exit");
        name_values(app, {{"files", "[FILE...]"}, {"-H", "N"}});
        group_options(app, "Checking (-c)",
                      {"--check", "--quiet", "--status", "--strict", "--warn", "--ignore-missing"});
        group_options(app, "Output", {"-H", "--tag", "--little-endian"});
        app.footer(
            "Argument rules, xxhsum 0.8.1's, not readfiles': no file, or '-' before the first "
            "name, hashes standard input, printed as 'stdin'; a directory is an error (status 1), "
            "not walked; options end at the first file name, after which every word is a name "
            "('-' too); -c with no list reads one from standard input; a bad option is status 1.  "
            "readfiles instead walks directories, reads a list of paths from '-', takes options "
            "anywhere and says 2 for a bad option and 4 for a missing path.");
        describe(
            app,
            Manual{.description =
                       "xxhsum 0.8.1's command line, for scripts that run xxhsum: standard output "
                       "and exit status as xxhsum 0.8.1 gives them, for every hash (-H0 to -H3), "
                       "--tag, --little-endian and -c with --quiet, --status, --strict and --warn; "
                       "the files are read on the ring as readfiles reads them.  Installed or "
                       "linked under the name xxhsum (ln -s uringkit xxhsum) it is this mode.\n\n"
                       "Beyond 0.8.1, as 0.8.2 writes and reads them: -c accepts 'XXH3_' lines and "
                       "escaped names, and --ignore-missing.  Not here: the benchmark mode (-b, "
                       "-i, -B are refused: `uringkit readfiles --summary` and `uringkit bench` "
                       "measure).  Messages on stderr are uringkit's words, not 0.8.1's padded "
                       "ones.",
                   .examples = {{"uringkit xxhsum -H3 *.tar > sums && uringkit xxhsum -c sums",
                                 "XXH3 of some files, then checked."},
                                {"ln -s \"$(command -v uringkit)\" ~/bin/xxhsum",
                                 "Scripts that run xxhsum get this mode."},
                                {"tar c dir | uringkit xxhsum -H2", "A stream, as 'stdin'."}},
                   .exits = {{0, "every file was hashed (-c: every file matched)"},
                             {1,
                              "a file could not be read or was a directory; -c: a file did not "
                              "match or could not be read, a list had no properly formatted line, "
                              "or (--strict) a line was badly formatted; a bad option (xxhsum's "
                              "status for it)"}},
                   .see_also = "xxhsum(1), uringkit-readfiles(1)",
                   .doc = "files.md"});
        take_own_arguments(words.get());
        return [words, &app]() -> int {
            const XxhsumArgs a = parse_xxhsum(*words);
            if (a.help) {  // a combined one (-qh): main() answered -h and --help standing alone
                put(stdout, app.get_formatter()->make_help(&app, app.get_name(),
                                                           CLI::AppFormatMode::Normal));
                return kOk;
            }
            if (!a.refused.empty()) {
                usage_error(kTool, a.refused);
                return kFailure;  // xxhsum's status for wrong parameters
            }
            if (a.version) {
                emit(stdout, "uringkit {} (xxhsum mode: xxhsum 0.8.1's options and output)\n",
                     uringkit::version_string);
                return kOk;
            }
            fs::ReadFilesOptions o;
            o.walk = false;
            o.ordered = true;
            o.algo = a.style.algo;
            InterruptScope interrupt;
            o.stop = interrupt.flag();
            if (a.check) {
                CheckFlags flags = a.flags;
                flags.little_endian = a.style.little_endian;
                // A '-' among the names is a file of that name, as in 0.8.1.
                std::vector<std::string> lists = a.files;
                for (std::string& l : lists)
                    if (l == "-") l = "./-";
                if (lists.empty()) lists.push_back("-");
                const int status = run_check(lists, flags, o);
                flush(stdout);
                return interrupt.exit_status(output_lost() ? kFailure : status);
            }
            static char outbuf[1 << 16];
            std::setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
            const bool ok = a.files.empty() ? hash_as_stream(STDIN_FILENO, "stdin", a.style, o.stop)
                                            : hash_files(a.files, a.style, o);
            flush(stdout);
            return interrupt.exit_status(ok && !output_lost() ? kOk : kFailure);
        };
    }}};

}  // namespace
}  // namespace uringkit::cli
