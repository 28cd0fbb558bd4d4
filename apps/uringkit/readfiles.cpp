// `uringkit readfiles`: hash every regular file under some paths, through
// open -> read -> close chains on the ring; output as `xxhsum -H0..-H3`
// prints it, and `--check` verifies such lists as `xxhsum -c` does.
#include "command.hpp"
#include "console.hpp"
#include "interrupt.hpp"
#include "manual.hpp"
#include "readfiles_check.hpp"

#include "cli/size.hpp"
#include "fs/path_list.hpp"
#include "fs/readfiles.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace uringkit::cli {
namespace {

// The live line of a read that lasts: files, MiB and files/s, shown from
// the first second on and redrawn at most four times a second.  Only when
// stderr is a terminal and stdout is not the same screen (the hash lines
// would tear it); off a terminal nothing is added to stderr, where scripts
// that use readfiles as xxhsum expect only problems.  Counted with relaxed
// atomics (the sink may be called from several readers with --unordered)
// and the clock read once per 64 files, so the reading loop does not notice.
class LiveLine {
public:
    explicit LiveLine(bool on) : on_(on), start_(now_ns()), next_(start_ + 1'000'000'000) {}
    void count(std::uint64_t bytes) {
        if (!on_) return;
        bytes_.fetch_add(bytes, std::memory_order_relaxed);
        const std::uint64_t n = files_.fetch_add(1, std::memory_order_relaxed) + 1;
        if (n % 64) return;
        const std::int64_t now = now_ns();
        if (!begin_draw(now)) return;
        const double s = static_cast<double>(now - start_) / 1e9;
        emit(stderr, "\r\033[Kreadfiles: {} files, {:.1f} MiB, {:.0f} files/s", n,
             static_cast<double>(bytes_.load(std::memory_order_relaxed)) / 1048576.0,
             static_cast<double>(n) / s);
        end_draw();
    }
    // While the inputs are listed (no file read yet): the same cadence.
    void listing(std::uint64_t files, std::uint64_t dirs) {
        if (!on_ || !begin_draw(now_ns())) return;
        emit(stderr, "\r\033[Kreadfiles: listing: {} files in {} directories", files, dirs);
        end_draw();
    }
    // Before any other line on stderr, and at the end.
    void clear() {
        if (!on_ || drawing_.exchange(true, std::memory_order_acquire)) return;
        if (shown_) emit(stderr, "\r\033[K");
        shown_ = false;
        drawing_.store(false, std::memory_order_release);
    }

private:
    // A redraw is due and no other thread is drawing: take the line.
    bool begin_draw(std::int64_t now) {
        if (now < next_.load(std::memory_order_relaxed)) return false;
        if (drawing_.exchange(true, std::memory_order_acquire)) return false;
        next_.store(now + 250'000'000, std::memory_order_relaxed);
        return true;
    }
    void end_draw() {
        flush(stderr);
        shown_ = true;
        drawing_.store(false, std::memory_order_release);
    }
    static std::int64_t now_ns() {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }
    bool on_;
    std::int64_t start_;
    std::atomic<std::int64_t> next_;
    std::atomic<std::uint64_t> files_{0}, bytes_{0};
    std::atomic<bool> drawing_{false};
    bool shown_ = false;
};

// Whether stdout and stderr are one terminal (the same device).
bool same_terminal() {
    struct stat out {
    }, err{};
    return ::isatty(STDOUT_FILENO) && ::fstat(STDOUT_FILENO, &out) == 0 &&
           ::fstat(STDERR_FILENO, &err) == 0 && out.st_rdev == err.st_rdev;
}

// An input the user named that is not there or may not be read: status 4,
// as for every tool (README, "Exit statuses").  A file found inside a tree
// that fails is status 1.
bool unusable_input(int error) noexcept {
    return error == ENOENT || error == ENOTDIR || error == EACCES || error == EPERM ||
           error == ELOOP || error == ENAMETOOLONG;
}

// Read buffers beyond the machine's memory can never be had: refused before
// anything is read, naming the options that size them.  Empty when they fit.
std::string buffers_beyond_memory(const fs::ReadFilesOptions& o, const std::string& bs) {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return {};
    const std::uint64_t memory =
        static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
    const fs::BufferNeed need = fs::read_buffers_needed(o);
    if (need.total() <= memory) return {};
    const std::string threads = fmt::format(
        "{} {}{}", need.threads, o.engine == fs::ReadEngine::ring ? "ring thread" : "worker",
        need.threads == 1 ? "" : "s");
    const std::string shape =
        o.engine == fs::ReadEngine::ring
            ? fmt::format("2 x {} for each of --inflight {} files, on {}",
                          cli::format_bytes(o.block_size), o.inflight, threads)
            : fmt::format("{} for each of {}", cli::format_bytes(o.block_size), threads);
    return fmt::format(
        "--bs {}: the read buffers would take {} ({}), more than the {} of memory here; lower "
        "--bs{}",
        bs, cli::format_bytes(need.total()), shape, cli::format_bytes(memory),
        o.engine == fs::ReadEngine::ring         ? ", --inflight or --threads"
        : o.engine == fs::ReadEngine::threadpool ? " or --threads"
                                                 : "");
}

Register readfiles_command{Command{
    "readfiles",
    "Read and hash (XXH64, XXH32, XXH128, XXH3) every file under some paths, or check a list, "
    "many files in flight",
    40, [](CLI::App& app) -> std::function<int()> {
        struct Args {
            std::vector<std::string> paths;
            std::string engine = "ring";
            std::string hash = "xxh64";
            bool unordered = false;
            bool summary = false;
            bool async = false;
            bool null = false;
            unsigned inflight = 32;
            unsigned threads = 0;
            std::string bs = "64k";
            std::string algo;  // -H
            bool tag = false;
            bool little_endian = false;
            bool check = false;
            CheckFlags flags;
        };
        auto args = std::make_shared<Args>();
        app.add_option("paths", args->paths,
                       "Files and directories (walked depth-first, names in byte order); '-' reads "
                       "a list of paths from stdin, one per line (with -0: each ended by a NUL); "
                       "with --check: checksum lists ('-' or none: stdin)");
        app.add_flag(
            "-0,--null", args->null,
            "The list on stdin ('-') is NUL-separated, as `find -print0` writes it: any file name "
            "can be listed, newlines included");
        app.add_option("--engine", args->engine,
                       "ring: open/read/close chains on io_uring; threadpool: blocking workers; "
                       "sync: one file at a time")
            ->check(CLI::IsMember({"ring", "threadpool", "sync"}));
        auto* hash = app.add_option("--hash", args->hash,
                                    "xxh64 (as xxhsum -H1), xxh32 (-H0), xxh128 (-H2), xxh3 (-H3), "
                                    "or none (only count files and bytes)")
                         ->check(CLI::IsMember({"xxh64", "xxh32", "xxh128", "xxh3", "none"}));
        app.add_option("-H", args->algo,
                       "The hash as xxhsum numbers it: 0 or 32 (XXH32), 1 or 64 (XXH64, the "
                       "default), 2 or 128 (XXH128), 3 (XXH3, 64 bits; printed BSD style, as "
                       "xxhsum 0.8.1 does)")
            ->excludes(hash);
        app.add_flag("--tag", args->tag,
                     "BSD-style lines for every hash: 'XXH64 (name) = hex', as xxhsum --tag");
        app.add_flag("--little-endian", args->little_endian,
                     "Digits of the hash in little-endian order, as xxhsum --little-endian (with "
                     "--check: GNU-style lines are read that way)");
        app.add_flag("-c,--check", args->check,
                     "Read xxhsum checksum lists (GNU or BSD style, any hash) and verify the files "
                     "they name: 'name: OK' or 'name: FAILED', as xxhsum -c");
        app.add_flag("-q,--quiet", args->flags.quiet, "--check: no line for a file that is OK");
        app.add_flag("--status", args->flags.status,
                     "--check: print nothing; the exit status says whether all is well");
        app.add_flag("--strict", args->flags.strict,
                     "--check: a badly formatted line makes the exit status 1");
        app.add_flag("--warn", args->flags.warn,
                     "--check: a line on stderr for each badly formatted line");
        app.add_flag("--ignore-missing", args->flags.ignore_missing,
                     "--check: a file that does not exist is neither reported nor a failure");
        app.add_flag("--unordered", args->unordered,
                     "Print each file as it completes, not in input order");
        app.add_flag("--summary", args->summary,
                     "Print files/s, MiB/s and system calls per file on stderr");
        app.add_flag("--async", args->async,
                     "ring: run the chains on io-wq workers (IOSQE_ASYNC), several files at once "
                     "on other CPUs");
        app.add_option("--inflight", args->inflight,
                       "Files in flight on the ring (fixed-file slots)")
            ->check(CLI::Range(1u, 4096u));
        app.add_option(
               "--threads", args->threads,
               "ring: threads, each with its own ring and --inflight files (default: one per CPU, "
               "up to 4); threadpool: blocking workers (default 8)")
            ->check(CLI::Range(1u, 1024u));
        app.add_option("--bs", args->bs,
                       "Read size per request (e.g. 64k, 1m); the ring keeps 2 blocks per file in "
                       "flight on each thread, which must fit in memory");
        name_values(app, {{"paths", "PATH..."}, {"--bs", "SIZE"}, {"-H", "N"}});
        group_options(app, "What is read", {"-0", "--hash", "-H", "--unordered"});
        group_options(app, "Checking (-c)",
                      {"--check", "--quiet", "--status", "--strict", "--warn", "--ignore-missing"});
        group_options(app, "Engines", {"--engine", "--async", "--inflight", "--threads", "--bs"});
        group_options(app, "Output", {"--tag", "--little-endian", "--summary"});
        app.footer(
            "Argument rules: readfiles walks directories, reads a list of paths from '-', wants "
            "at least one PATH, takes options anywhere, and says 4 for a missing PATH.  `uringkit "
            "xxhsum` keeps xxhsum 0.8.1's rules instead, for scripts that run xxhsum: no file or "
            "'-' hashes standard input (printed as 'stdin'), a directory is an error (status 1), "
            "options end at the first file name.");
        describe(
            app,
            Manual{
                .description = "Output: '<XXH64 hex>  <path>' per file, byte-identical to xxhsum "
                               "-H1 for the same "
                               "files in the same order, so xxhsum -c checks it; -H0, -H2 and -H3 "
                               "(XXH32, XXH128, XXH3), --tag and --little-endian print as xxhsum "
                               "0.8.1 does.  --check verifies such lists (xxhsum 0.8.1's lines of "
                               "every hash, and 0.8.2's 'XXH3_' and escaped lines) and prints as "
                               "xxhsum -c: 'name: OK', 'name: FAILED', the lines of files that "
                               "could not be read, then the counts.\n\n"
                               "Files that cannot be opened or read are reported on stderr with "
                               "their errno and "
                               "the rest continue; FIFOs, devices and sockets are skipped with a "
                               "note.  Without "
                               "io_uring the ring engine falls back to sync and says so.",
                .examples =
                    {{"uringkit readfiles src/ > sums && xxhsum -c sums",
                      "Hash a tree; xxhsum checks the output as its own."},
                     {"find /etc -name '*.conf' -print0 | uringkit readfiles -0 -",
                      "Hash the files a list names, one per NUL."},
                     {"uringkit readfiles -H2 --tag src/ > sums && uringkit readfiles -c sums",
                      "XXH128, BSD style; checked on the ring."},
                     {"uringkit readfiles --summary /usr/share/doc > /dev/null",
                      "How fast a tree is read, and by which path."}},
                .exits = {{0, "every file was read (--check: every file matched)"},
                          {1,
                           "a file or directory inside a tree could not be read, a read failed, or "
                           "standard output could not be written (readfiles stops there); "
                           "--check: a file did not match or could not be read, a list had no "
                           "properly formatted line or could not be read, or (--strict) a line "
                           "was badly formatted"},
                          {2, "bad option (buffers of --bs beyond the memory included)"},
                          {4,
                           "a path given (on the command line or in the '-' list) is missing or "
                           "may not be read; the others are still read"},
                          {130,
                           "interrupted by SIGINT (SIGTERM: 143): the lines of the files already "
                           "read are printed, in order, then readfiles ends by the signal"}},
                .see_also = "xxhsum(1), uringkit-xxhsum(1), sha256sum(1), find(1)",
                .doc = "files.md"});
        return [args]() -> int {
            const std::string_view cmd = "readfiles";
            fs::ReadFilesOptions o;
            if (!args->algo.empty()) {
                const auto a = fs::hash_from_number(args->algo);
                if (!a)
                    return usage_error(std::string(cmd),
                                       "-H " + args->algo +
                                           ": not a hash; give 0 or 32 (XXH32), 1 or 64 (XXH64), "
                                           "2 or 128 (XXH128), 3 (XXH3)");
                o.algo = *a;
            } else if (args->hash != "none") {
                o.algo = args->hash == "xxh32"    ? fs::HashAlgo::xxh32
                         : args->hash == "xxh128" ? fs::HashAlgo::xxh128
                         : args->hash == "xxh3"   ? fs::HashAlgo::xxh3
                                                  : fs::HashAlgo::xxh64;
            }
            const CheckFlags& cf = args->flags;
            if (!args->check) {
                const char* only = cf.quiet            ? "--quiet"
                                   : cf.status         ? "--status"
                                   : cf.strict         ? "--strict"
                                   : cf.warn           ? "--warn"
                                   : cf.ignore_missing ? "--ignore-missing"
                                                       : nullptr;
                if (only)
                    return usage_error(std::string(cmd),
                                       std::string(only) + " is for --check (-c) only");
                if (args->paths.empty())
                    return usage_error(std::string(cmd),
                                       "give at least one PATH ('-' reads a list of paths from "
                                       "stdin)");
            } else if (args->null || args->unordered || args->summary || args->hash == "none") {
                return usage_error(
                    std::string(cmd),
                    std::string(args->null        ? "-0"
                                : args->unordered ? "--unordered"
                                : args->summary   ? "--summary"
                                                  : "--hash none") +
                        " does not go with --check: the lists name the files and their hashes "
                        "(give '-' to read a list from stdin)");
            }
            o.engine = args->engine == "ring"         ? fs::ReadEngine::ring
                       : args->engine == "threadpool" ? fs::ReadEngine::threadpool
                                                      : fs::ReadEngine::sync;
            o.hash = args->hash != "none";
            o.ordered = !args->unordered;
            o.inflight = args->inflight;
            o.threads = args->threads;
            o.async_open = args->async;
            const auto parsed = cli::parse_size(args->bs);
            const std::uint64_t bs = parsed.value_or(0);
            if (!parsed || bs == 0 || bs % 512 || bs > (1u << 30)) {
                return usage_error("readfiles",
                                   fmt::format("--bs {}: not a size that is a multiple of 512 "
                                               "up to 1g (try 64k, 128k or 1m)",
                                               args->bs));
            }
            o.block_size = bs;
            if (std::string why = buffers_beyond_memory(o, args->bs); !why.empty())
                return usage_error("readfiles", std::move(why));
            const fs::HashLineStyle style{o.algo, args->tag, args->little_endian};

            // SIGINT/SIGTERM: no new file is started, reads in flight are
            // abandoned, the lines of the files finished are printed (in
            // input order, a complete prefix), then readfiles ends by the
            // signal, as GNU tools do.
            InterruptScope interrupt;
            o.stop = interrupt.flag();
            if (args->check) {
                CheckFlags flags = cf;
                flags.little_endian = args->little_endian;
                const int status = run_check(args->paths, flags, o);
                flush(stdout);
                return interrupt.exit_status(output_lost() ? kFailure : status);
            }

            fs::PathList inputs;
            for (const std::string& p : args->paths) {
                if (p != "-") {
                    inputs.push(p);
                    continue;
                }
                if (const int err =
                        fs::read_path_list(STDIN_FILENO, args->null ? '\0' : '\n', inputs);
                    err < 0) {
                    emit(stderr, "uringkit readfiles: -: cannot read the list: {} (errno {})\n",
                         std::strerror(-err), -err);
                    return kBadInput;
                }
            }

            // Whether a path that failed was given (status 4) or found in a
            // tree (status 1).  Made at the first failure: a list of 10,000
            // paths that all read costs no set.
            std::set<std::string_view> named;
            bool named_made = false;
            bool bad_input = false;
            const auto note_named = [&](std::string_view path, int error) {
                if (!unusable_input(error)) return;
                if (!named_made) {
                    for (std::size_t i = 0; i < inputs.size(); ++i) named.insert(inputs[i]);
                    named_made = true;
                }
                if (named.count(path)) bad_input = true;
            };

            static char outbuf[1 << 16];
            std::setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
            // Standard output failed (a full disk, a reader that went away):
            // no further line could be printed, so no further file is read.
            const auto stop_if_output_lost = [&] {
                if (output_lost()) interrupt.stop();
            };
            LiveLine live(::isatty(STDERR_FILENO) && !same_terminal());
            fs::ReadFilesSink sink;
            sink.file = [&](const fs::FileResult& r) {
                live.count(r.bytes);
                if (r.error) {
                    live.clear();
                    if (std::strcmp(r.stage, "open") == 0) note_named(r.path, r.error);
                    flush(stdout);
                    stop_if_output_lost();
                    emit(stderr, "uringkit readfiles: {}: {}: {} (errno {})\n", r.path, r.stage,
                         std::strerror(r.error), r.error);
                } else if (o.hash && !output_lost()) {
                    if (!fs::print_hash_line(stdout, style, r.value(), r.path))
                        failed_write(stdout, errno);
                    stop_if_output_lost();
                }
            };
            sink.note = [&](std::string_view path, int error, std::string_view message) {
                live.clear();
                flush(stdout);
                stop_if_output_lost();
                if (error) note_named(path, error);
                if (error)
                    emit(stderr, "uringkit readfiles: {}: {} (errno {})\n", path,
                         std::strerror(error), error);
                else if (path.empty())
                    emit(stderr, "uringkit readfiles: {}\n", message);
                else
                    emit(stderr, "uringkit readfiles: {}: {}\n", path, message);
            };
            sink.listing = [&](std::uint64_t files, std::uint64_t dirs) {
                live.listing(files, dirs);
            };
            const fs::ReadFilesStats st = fs::read_files(inputs, o, sink);
            live.clear();
            if (!o.hash) emit(stdout, "{} files, {} bytes\n", st.files, st.bytes);
            flush(stdout);
            if (interrupt.signal() != 0)
                emit(stderr,
                     "uringkit readfiles: interrupted by {}: {} files read, the rest not started\n",
                     interrupt.signal_name(), st.files + st.failed);
            if (args->summary) {
                const double t = st.seconds > 0 ? st.seconds : 1e-9;
                const double files = static_cast<double>(st.files + st.failed);
                emit(stderr,
                     "readfiles: engine {}: {} files ({} failed, {} skipped), {:.1f} MiB in "
                     "{:.3f} s (walk {:.3f} s): {:.0f} files/s, {:.1f} MiB/s, {} system calls, "
                     "{:.3f} per file\n",
                     fs::engine_name(st.engine), st.files, st.failed, st.skipped,
                     static_cast<double>(st.bytes) / 1048576.0, st.seconds, st.walk_seconds,
                     static_cast<double>(st.files) / t,
                     static_cast<double>(st.bytes) / 1048576.0 / t, st.syscalls,
                     files > 0 ? static_cast<double>(st.syscalls) / files : 0.0);
                if (!st.path_reason.empty()) emit(stderr, "readfiles: {}\n", st.path_reason);
            }
            return interrupt.exit_status(bad_input ? kBadInput : st.failed ? kFailure : kOk);
        };
    }}};

}  // namespace
}  // namespace uringkit::cli
