// `uringkit cp`: copy files and trees through linked read -> write chains.
#include "command.hpp"

#include "uringkit/fs/copy.hpp"
#include "uringkit/util/size.hpp"

#include <fmt/core.h>

#include <memory>
#include <string>
#include <vector>

namespace uringkit::cli {
namespace {

int exit_status(fs::CopyStatus s) {
    switch (s) {
    case fs::CopyStatus::ok: return kOk;
    case fs::CopyStatus::failure: return kFailure;
    case fs::CopyStatus::bad_input: return kBadInput;
    case fs::CopyStatus::no_space: return kNoSpace;
    case fs::CopyStatus::usage: return kUsage;
    }
    return kFailure;
}

Register cp_command{Command{
    "cp",
    "Copy files (and with -r trees) through linked read/write chains on io_uring",
    30,
    [](CLI::App& app) -> std::function<int()> {
        struct Args {
            std::vector<std::string> paths;
            bool recursive = false, preserve = false, direct = false, fsync = false, summary = false;
            unsigned qd = 8, inflight = 64, kernel_workers = 0;
            std::string bs = "256k";
            std::string source_reads = "auto";
        };
        auto args = std::make_shared<Args>();
        app.add_option("paths", args->paths, "SRC... DST")->required()->expected(2, -1);
        app.add_flag("-r,-R,--recursive", args->recursive, "Copy directories and everything under them");
        app.add_flag("-p,--preserve", args->preserve, "Also keep times and owner (where allowed); modes are always kept");
        app.add_flag("--direct", args->direct, "O_DIRECT where both files allow it (else says so and uses the page cache)");
        app.add_option("--source-reads", args->source_reads,
                       "How a large file's source is read: auto (default) uses O_DIRECT when the file is at least "
                       "8 MiB and under half of it is in the page cache (16 x 1m reads in flight), else the cache; "
                       "cache: always the page cache; direct: O_DIRECT for any size where the file system allows it. "
                       "The destination goes through the page cache unless --direct")
            ->check(CLI::IsMember({"auto", "cache", "direct"}));
        app.add_flag("--fsync", args->fsync, "Make each file durable before it is renamed into place");
        auto* qd = app.add_option("--qd", args->qd,
                                  "Read/write pairs in flight for a large file (default 8 through the page cache, "
                                  "16 when the source is read with O_DIRECT)")
                       ->check(CLI::Range(1u, 1024u));
        auto* bs = app.add_option("--bs", args->bs,
                                  "Bytes per read/write pair, a multiple of 4k (default 256k through the page cache, "
                                  "1m when the source is read with O_DIRECT)");
        app.add_option("--inflight", args->inflight, "Small files in flight with -r")->check(CLI::Range(1u, 1024u));
        app.add_option("--kernel-workers", args->kernel_workers,
                       "With -r: kernel threads (io-wq) that may run the copy's blocking steps: creates, opens, "
                       "buffered writes (default one per CPU; more only spin on a directory's lock)")
            ->check(CLI::Range(1u, 1024u));
        app.add_flag("--summary", args->summary, "Print files, MiB/s and system calls on stderr");
        app.footer(
            "Each file is written under a temporary name (.NAME.uringkit-XXXXXX) beside its destination "
            "and renamed into place when complete; a new tree is built under a temporary directory name "
            "and renamed at the end.  On error nothing half-written remains and an existing destination "
            "is unchanged.  Regular files, directories and symlinks are copied; FIFOs, devices and sockets "
            "are skipped with a warning.  Sparse files stay sparse.  Without io_uring the copy runs on "
            "read/write and says so once.\n"
            "Exit status: 0 copied; 1 an I/O error or a source that changed while copied; 2 bad option or "
            "arguments; 4 a source is missing or unreadable, a directory without -r, or a copy onto "
            "itself; 5 no space (ENOSPC, EFBIG, EDQUOT).");
        return [args, qd, bs]() -> int {
            const auto block_size = util::parse_size(args->bs);
            if (!block_size || *block_size < 4096 || *block_size % 4096 || *block_size > (1u << 30)) {
                fmt::print(stderr, "uringkit cp: --bs {}: not a multiple of 4k up to 1g (try 256k or 1m)\n", args->bs);
                return kUsage;
            }
            fs::CopyOptions o;
            o.recursive = args->recursive;
            o.preserve = args->preserve;
            o.direct = args->direct;
            o.fsync = args->fsync;
            o.source_reads = args->source_reads == "auto"    ? fs::SourceReads::automatic
                             : args->source_reads == "cache" ? fs::SourceReads::page_cache
                                                             : fs::SourceReads::direct;
            o.inflight = args->inflight;
            o.kernel_workers = args->kernel_workers;
            // A size given on the command line holds for both kinds of source.
            o.qd = args->qd;
            o.block_size = *block_size;
            if (qd->count()) o.direct_read_qd = args->qd;
            if (bs->count()) o.direct_read_block_size = *block_size;
            std::vector<std::string> sources(args->paths.begin(), args->paths.end() - 1);
            fs::CopySink sink;
            sink.note = [](std::string_view m) { fmt::print(stderr, "uringkit cp: {}\n", m); };
            const fs::CopyResult r = fs::copy(sources, args->paths.back(), o, sink);
            if (r.status != fs::CopyStatus::ok) fmt::print(stderr, "uringkit cp: {}\n", r.message);
            if (args->summary) {
                const double t = r.seconds > 0 ? r.seconds : 1e-9;
                const std::uint64_t items = r.files + r.dirs + r.symlinks;
                fmt::print(stderr,
                           "cp: {} files, {} directories, {} symlinks, {} skipped, {:.1f} MiB in {:.3f} s "
                           "({:.1f} MiB/s, {:.0f} files/s), {} system calls ({:.3f} per file), {} read with O_DIRECT{}\n",
                           r.files, r.dirs, r.symlinks, r.skipped, static_cast<double>(r.bytes) / 1048576.0, r.seconds,
                           static_cast<double>(r.bytes) / 1048576.0 / t, static_cast<double>(r.files) / t, r.syscalls,
                           items ? static_cast<double>(r.syscalls) / static_cast<double>(items) : 0.0,
                           r.direct_read_files, r.used_ring ? "" : ", read/write fallback");
            }
            return exit_status(r.status);
        };
    }}};

}  // namespace
}  // namespace uringkit::cli
