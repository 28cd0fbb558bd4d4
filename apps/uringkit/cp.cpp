// `uringkit cp`: copy files and trees by the cheapest path each file system allows.
#include "command.hpp"
#include "console.hpp"
#include "cp_options.hpp"
#include "cp_progress.hpp"
#include "interrupt.hpp"
#include "manual.hpp"

#include "cli/size.hpp"
#include "fs/copy.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace uringkit::cli {
namespace {

int exit_status(fs::CopyStatus s) {
    switch (s) {
        case fs::CopyStatus::ok:
            return kOk;
        case fs::CopyStatus::failure:
            return kFailure;
        // coreutils' cp exits 1 for every failure, a missing source and a
        // full disk included; scripts written for it test for 1.
        case fs::CopyStatus::bad_input:
        case fs::CopyStatus::no_space:
            return kFailure;
        case fs::CopyStatus::usage:
            return kUsage;
        case fs::CopyStatus::interrupted:
            return kInterrupted;
    }
    return kFailure;
}

Register cp_command{Command{
    "cp",
    "Copy files (and with -r trees): a reflink, copy_file_range or linked read/write chains on "
    "io_uring, per file system",
    30,
    [](CLI::App& app) -> std::function<int()> {
        struct Args {
            std::vector<std::string> paths;
            bool recursive = false, preserve = false, archive = false, direct = false,
                 fsync = false, summary = false;
            bool atomic = false, no_clobber = false, no_dereference = false,
                 remove_destination = false;
            bool verify = false, progress = false, no_progress = false;
            bool force = false, interactive = false, verbose = false, update_older = false,
                 dereference = false, command_line_links = false, no_target = false,
                 parents = false;
            std::string target_directory, update = "all";
            std::vector<std::string> preserve_lists, no_preserve_lists;
            unsigned qd = 8, inflight = 64, kernel_workers = 0, clone_threads = 4, copy_threads = 4;
            std::string bs = "256k";
            std::string source_reads = "auto";
            std::string reflink = "auto", engine = "auto";
            LinkAndBackupArgs links;
        };
        auto args = std::make_shared<Args>();
        app.add_option("paths", args->paths, "SRC... DST")->required()->expected(1, -1);
        auto* target_dir = app.add_option("-t,--target-directory", args->target_directory,
                                          "Copy every operand into DIR (then each is a source)")
                               ->type_name("DIR");
        app.add_flag("-T,--no-target-directory", args->no_target,
                     "DST is the copy itself even when it is a directory: a directory is copied "
                     "into it as its contents, a file onto it is refused (one source only)");
        app.add_flag("-r,-R,--recursive", args->recursive,
                     "Copy directories and everything under them");
        app.add_flag("-p", args->preserve, "Same as --preserve=mode,ownership,timestamps");
        // A flag, so that a list is only ever attached with '=' (--preserve SRC DST keeps SRC an
        // operand).
        app.add_flag("--preserve{default}", args->preserve_lists,
                     "Keep what LIST names, comma-separated: mode, ownership, timestamps, xattr, "
                     "links, all "
                     "(without =LIST: mode,ownership,timestamps).  mode: the permission bits, "
                     "set-user/group-ID "
                     "bits only when the owner was kept; ownership: root only (an ordinary user's "
                     "copy stays "
                     "theirs, quietly); timestamps: access and modification times to the "
                     "nanosecond, of symlinks "
                     "too; xattr: extended attributes and ACLs (an attribute that cannot be copied "
                     "is an error); "
                     "links: sources that are hard links of each other are copied once and linked. "
                     " Without it a "
                     "new file gets the source's permission bits less the umask and no set-ID "
                     "bits, and an "
                     "existing file keeps its own mode and owner")
            ->type_name("[=LIST]");
        app.add_option("--no-preserve", args->no_preserve_lists,
                       "Do not keep what LIST names (applied after -p, -a, --preserve); "
                       "with mode (or all) a new file is made 0666 and a new directory "
                       "0777, less the umask, not with the source's bits, as coreutils")
            ->type_name("LIST")
            ->allow_extra_args(false);
        app.add_flag("-a,--archive", args->archive,
                     "Same as -r -P --preserve=all: trees with modes, owners, times, extended "
                     "attributes and ACLs "
                     "(a file system without them is not an error), symbolic links copied as "
                     "links, hard links "
                     "within what is copied kept as hard links");
        auto* no_deref = app.add_flag("-P,--no-dereference", args->no_dereference,
                                      "Copy a symbolic link named as a source as a link (the "
                                      "default with -r; inside a tree links are never followed)");
        auto* deref = app.add_flag("-L,--dereference", args->dereference,
                                   "Follow a symbolic link named as a source (the default without "
                                   "-r).  Not with -r or -a: links inside a tree are never "
                                   "followed (use -H for the operands' links)");
        auto* deref_operands =
            app.add_flag("-H", args->command_line_links,
                         "Follow the symbolic links named as sources, also with -r; links "
                         "inside a tree stay links");
        add_link_and_backup_options(app, args->links);
        auto* no_clobber = app.add_flag("-n,--no-clobber", args->no_clobber,
                                        "Leave an existing destination alone (status 0, as cp)");
        app.add_flag("-f,--force", args->force,
                     "An existing destination file that cannot be opened for writing is removed "
                     "(unlinkat in its directory: a symbolic link itself, never what it names) and "
                     "made anew.  As with coreutils' cp, -i still asks and -n still keeps");
        auto* interactive = app.add_flag(
            "-i,--interactive", args->interactive,
            "Ask \"cp: overwrite 'DST'? \" on stderr before an existing destination is written "
            "or replaced, and read a line from standard input (a terminal or not, as cp): y or "
            "Y copies, anything else (end of input too) keeps it.  Of -i and -n the last one "
            "given decides");
        auto* update_short = app.add_flag(
            "-u", args->update_older,
            "Copy only when the source is newer than the destination (modification times, to "
            "the nanosecond) or the destination is missing: --update=older");
        auto* update =
            app.add_flag("--update{older}", args->update,
                         "WHEN (coreutils 9.3's, an extension to 9.1's -u): all (default) "
                         "writes every existing destination, none none (as -n, status 0), "
                         "older (--update alone) only one older than its source.  "
                         "Directories are always entered")
                ->check(CLI::IsMember({"all", "none", "older"}));
        app.add_flag("--parents", args->parents,
                     "Copy SRC to DIR/SRC: the source's path is appended to the destination "
                     "directory and the directories on the way are made (the source "
                     "directories' permission bits less the umask) or entered, by descriptor, "
                     "never through a symbolic link; a source path with '..' is refused");
        app.add_flag("-v,--verbose", args->verbose,
                     "Print 'SRC' -> 'DST' on stdout for each file, link and directory made "
                     "(removed 'DST' for a destination removed first), as cp 9.1 does; a tree's "
                     "lines come in its order once it is copied");
        app.add_flag(
            "--remove-destination", args->remove_destination,
            "Remove an existing destination that is not a directory and create it anew, instead of "
            "writing it in place.  Unlike coreutils, a symbolic link found inside a destination "
            "tree "
            "(below the operands) is never written through: that entry is refused (status 1) "
            "unless "
            "this option replaces the link");
        app.add_flag("--atomic", args->atomic,
                     "Replace an existing file by a complete copy renamed over it instead of "
                     "writing it in place: "
                     "readers see the old or the new file, never a mix, but it is a new inode "
                     "(other hard links, "
                     "xattrs, ACLs and the owner are not kept; its permission bits are), and the "
                     "file system needs "
                     "room for both copies.  With -r a new tree is built under a temporary name "
                     "and appears only "
                     "when everything was copied");
        app.add_flag("--direct", args->direct,
                     "O_DIRECT where both files allow it (else says so and uses the page cache)");
        app.add_option("--source-reads", args->source_reads,
                       "How a large file's source is read: auto (default) uses O_DIRECT when the "
                       "file is at least "
                       "8 MiB and under half of it is in the page cache (16 x 1m reads in flight), "
                       "else the cache; "
                       "cache: always the page cache; direct: O_DIRECT for any size where the file "
                       "system allows it. "
                       "The destination goes through the page cache unless --direct")
            ->check(CLI::IsMember({"auto", "cache", "direct"}));
        app.add_flag(
            "--sync,--fsync", args->fsync,
            "Make each file durable (fsync) before it is closed, and its directory after a rename");
        auto* qd =
            app.add_option(
                   "--qd", args->qd,
                   "Read/write pairs in flight for a large file (default 8 through the page cache, "
                   "16 when the source is read with O_DIRECT)")
                ->check(CLI::Range(1u, 1024u));
        auto* bs = app.add_option(
            "--bs", args->bs,
            "Bytes per read/write pair, a multiple of 4k (default 256k through the page cache, "
            "1m when the source is read with O_DIRECT)");
        app.add_option("--inflight", args->inflight, "Small files in flight with -r")
            ->check(CLI::Range(1u, 1024u));
        app.add_option(
               "--kernel-workers", args->kernel_workers,
               "With -r: kernel threads (io-wq) that may run the copy's blocking steps: creates, "
               "opens, "
               "buffered writes (default one per CPU; more only spin on a directory's lock)")
            ->check(CLI::Range(1u, 1024u));
        app.add_flag(
               "--reflink{always}", args->reflink,
               "WHEN: auto (default, as coreutils 9), always (--reflink alone), never.  auto "
               "clones each "
               "file (FICLONE: the copy shares the source's extents and uses no new blocks) where "
               "both are "
               "on one file system that can (XFS with reflink, btrfs, bcachefs, OCFS2, NFS 4.2, "
               "SMB) and "
               "copies bytes elsewhere; always fails a file that cannot be cloned (status 1); "
               "never copies "
               "bytes, and so also keeps away from copy_file_range on those file systems, whose "
               "copy_file_range clones")
            ->check(CLI::IsMember({"auto", "always", "never"}));
        app.add_option("--clone-threads", args->clone_threads,
                       "With -r on a file system that shares extents: threads cloning the small "
                       "files (default 4: "
                       "FICLONE blocks, mostly waiting, and 4 threads cloned 10,000 files on XFS "
                       "twice as fast as "
                       "one on 2 CPUs); 0: one by one like any file")
            ->check(CLI::Range(0u, 64u));
        app.add_option("--copy-threads", args->copy_threads,
                       "With -r elsewhere, when the tree's files are in the page cache: threads "
                       "copying the small "
                       "files of the directories the copy creates with read/write (default 4: the "
                       "ring hands every create to a kernel worker, which is slower for a cached "
                       "tree; docs/files.md has the figures); a tree not cached goes on the ring; "
                       "0: always the ring")
            ->check(CLI::Range(0u, 64u));
        app.add_option(
               "--engine", args->engine,
               "How the bytes of a file that is not cloned are copied: auto (default) decides once "
               "per "
               "pair of source and destination file systems: copy_file_range within one ext4, XFS, "
               "btrfs, f2fs, NFS or SMB file system (in the kernel, or on the server), and for a "
               "lone "
               "file of up to 1 MiB anywhere it works; the ring's read/write pairs between file "
               "systems, "
               "on tmpfs, and with --direct or --source-reads direct; the small files of a tree "
               "(-r) go "
               "through the ring's open/read/write/close chains.  ring and kernel "
               "(copy_file_range, the "
               "ring where the kernel refuses it) force one path")
            ->check(CLI::IsMember({"auto", "ring", "kernel"}));
        app.add_flag(
            "--verify", args->verify,
            "After each regular file is copied (cloned ones too; with -r every one), read the "
            "source "
            "and the copy again and compare their XXH3-128, 1 MiB at a time; the copy is read with "
            "O_DIRECT where its file system allows it, so the bytes come from the device, not the "
            "page "
            "cache.  A difference is one line naming the file and the first differing range, "
            "status "
            "1, and the copy is left as it is for you to look at (cp does not remove it).  Costs a "
            "second read of both files (--summary says how much); FIFOs and devices are not "
            "verified");
        auto* progress = app.add_flag(
            "--progress", args->progress,
            "Draw a live line on stderr: files done/total (-r), MiB done/total, MiB/s, "
            "ETA; on a terminal redrawn in place at most 10 times a second and cleared "
            "at the end (by default it appears there once the copy has run a second); "
            "when stderr is not a terminal, a plain line each second and a last one "
            "with the totals in bytes");
        app.add_flag("--no-progress", args->no_progress, "No live line, even on a terminal")
            ->excludes(progress);
        app.add_flag(
            "--summary", args->summary,
            "Print files, MiB/s, system calls and how many files went by each path on stderr (with "
            "--verify also what the check read again and how long it took)");
        name_values(app, {{"paths", "SRC... DST"}, {"--bs", "SIZE"}});
        group_options(app, "Where copies go", {"-t", "-T", "--parents"});
        group_options(app, "What is copied and kept",
                      {"-r", "-a", "-d", "-P", "-L", "-H", "-p", "--preserve", "--no-preserve",
                       "--attributes-only", "--copy-contents", "-l", "-s"});
        group_options(app, "An existing destination",
                      {"-n", "-f", "-i", "-u", "--update", "--remove-destination", "--atomic", "-b",
                       "--backup", "-S"});
        group_options(
            app, "How the bytes move",
            {"--reflink", "--sparse", "--engine", "--direct", "--source-reads", "--sync", "--qd",
             "--bs", "--inflight", "--kernel-workers", "--clone-threads", "--copy-threads"});
        group_options(app, "Checks and reports",
                      {"-v", "--verify", "--progress", "--no-progress", "--summary"});
        describe(
            app,
            Manual{
                .description =
                    "Per file, the cheapest path its file systems allow: a reflink (FICLONE), "
                    "copy_file_range, or linked read/write chains on io_uring (on a few threads "
                    "where "
                    "the source is in the page cache).\n\n"
                    "Like coreutils cp: an existing destination is opened (through a symlink) and "
                    "written in place, keeping its inode, links, mode, owner and attributes; a "
                    "write-protected one is refused unless you are root.  A new file is written "
                    "under "
                    "an unpredictable temporary name beside it (.NAME.uringkit-XXXXXXXXXXXX, "
                    "created "
                    "O_EXCL|O_NOFOLLOW) and renamed into place when complete, so its name never "
                    "shows "
                    "a half-written file.  Every operand and every file of a tree that can be "
                    "copied "
                    "is; each failure is one line, and the status is that of the first.  A FIFO or "
                    "character device operand is read until its end (cp <(cmd) out); inside a tree "
                    "(-r) FIFOs, devices and sockets are made again (mknod needs root for devices; "
                    "otherwise reported).  Sparse files stay sparse.  Without io_uring the copy "
                    "runs "
                    "on read/write and says so once.\n\n"
                    "The destination tree is walked by descriptors, so a root cp -a into a "
                    "directory "
                    "another user can write cannot be raced into writing, chmodding or chowning "
                    "anywhere else.\n\n"
                    "Differences from coreutils cp, on purpose: no SELinux "
                    "context (--preserve=context; with xattr the security.selinux attribute is "
                    "copied as any other); symlinks are never followed inside a tree (cp -P; -L "
                    "with -r is refused, -H follows the operands); --parents does not follow a "
                    "symbolic link on the way in the destination, nor a '..' in the source path; "
                    "-v names what was copied once a tree is done (cp says each as it starts it) "
                    "and -i's questions and -v's names are quoted as in the C locale; and an I/O "
                    "error names the offset and errno "
                    "(\"DST: write at offset N: ... (errno 28)\") to say where the copy "
                    "stopped.\n\n"
                    "Long options may be shortened to any unambiguous start, as with coreutils "
                    "(--parent, --b=simple); where a start fits one of coreutils' options and "
                    "one of uringkit's own, coreutils' is meant.",
                .examples =
                    {{"uringkit cp big.img /backup/",
                      "A reflink, copy_file_range or ring pairs, whichever the file systems "
                      "allow."},
                     {"uringkit cp -a project/ /backup/project",
                      "A tree with modes, owners, times, ACLs and hard links kept."},
                     {"uringkit cp --reflink=never vm.img /xfs/",
                      "Copy the bytes even where extents could be shared."}},
                .exits =
                    {{0, "copied"},
                     {1,
                      "any file could not be copied, as coreutils' cp: a source missing or "
                      "unreadable, a destination directory that does not exist or may not "
                      "be written, a directory without -r, a copy onto itself, no space "
                      "(ENOSPC, EFBIG, EDQUOT), an I/O error, a source that changed while "
                      "copied, a copy that --verify found different (the message says "
                      "which; the other operands are still copied); also a bad option or "
                      "arguments, as coreutils' cp (uringkit's other commands say 2)"},
                     {130,
                      "interrupted by SIGINT (SIGTERM: 143): what is in flight completes, files "
                      "being created are removed, what was copied is reported, then cp "
                      "ends by the signal"}},
                .see_also = "cp(1), rsync(1), copy_file_range(2), ioctl_ficlone(2)",
                .doc = "files.md"});
        return [args, qd, bs, &app, target_dir, no_deref, deref, deref_operands, no_clobber,
                interactive, update_short, update]() -> int {
            const auto block_size = cli::parse_size(args->bs);
            if (!block_size || *block_size < 4096 || *block_size % 4096 ||
                *block_size > (1u << 30)) {
                emit(stderr,
                     "uringkit cp: --bs {}: not a multiple of 4k up to 1g (try 256k or 1m)\n",
                     args->bs);
                return kUsage;
            }
            fs::CopyOptions o;
            o.recursive = args->recursive || args->archive;
            // coreutils: of -i and -n, and of -L, -P, -H and -a's -P, the last one given wins
            // (cp's -f cancels neither -i nor -n).
            enum class Links { unset, never, operands, always } links = Links::unset;
            enum class Existing { write, ask, keep } existing = Existing::write;
            fs::Update when = fs::Update::all;
            for (const CLI::Option* opt : app.parse_order()) {
                if (opt == no_deref || opt->check_name("--archive") || opt->check_name("-d"))
                    links = Links::never;
                if (opt == deref) links = Links::always;
                if (opt == deref_operands) links = Links::operands;
                if (opt == interactive) existing = Existing::ask;
                if (opt == no_clobber) existing = Existing::keep;
                if (opt == update_short) when = fs::Update::older;
                if (opt == update)
                    when = args->update == "none"    ? fs::Update::none
                           : args->update == "older" ? fs::Update::older
                                                     : fs::Update::all;
            }
            if (links == Links::always && o.recursive)
                return usage_error("cp",
                                   "-L with -r or -a: links inside a tree are never followed; "
                                   "-H follows the symbolic links named as sources");
            o.no_dereference = links == Links::never;
            o.dereference_operands = links == Links::operands;
            o.force = args->force;
            o.update = when;
            o.no_target_directory = args->no_target;
            o.parents = args->parents;
            std::vector<std::string> sources = args->paths;
            std::string dest;
            if (target_dir->count() && args->no_target)
                return usage_error("cp",
                                   "cannot combine --target-directory (-t) and "
                                   "--no-target-directory (-T)");
            if (target_dir->count()) {
                struct stat st {};
                dest = args->target_directory;
                if (::stat(dest.c_str(), &st) != 0) {
                    const int err = errno;
                    emit(stderr, "uringkit cp: target directory '{}': {}\n", dest,
                         std::strerror(err));
                    return kFailure;
                }
                if (!S_ISDIR(st.st_mode))
                    return usage_error("cp", "target directory '" + dest + "': Not a directory");
            } else if (sources.size() < 2) {
                return usage_error(
                    "cp", "missing destination file operand after '" + sources.front() + "'");
            } else if (args->no_target && sources.size() > 2) {
                return usage_error("cp", "extra operand '" + sources[2] + "'");
            } else {
                dest = sources.back();
                sources.pop_back();
            }
            // As coreutils 9.1: only sources copied into a directory are
            // stripped (a single SRC DST keeps its slash, and so its directory).
            struct stat dest_st {};
            const bool into_dir =
                !args->no_target && (target_dir->count() || (::stat(dest.c_str(), &dest_st) == 0 &&
                                                             S_ISDIR(dest_st.st_mode)));
            if (args->links.strip_trailing_slashes && into_dir)
                for (std::string& s : sources)
                    while (s.size() > 1 && s.back() == '/') s.pop_back();
            // -a, -p, --preserve and --no-preserve in the order given, as cp: the
            // last one to name something decides it.
            std::size_t kept = 0, dropped = 0;
            for (const CLI::Option* opt : app.parse_order()) {
                std::string list;
                bool on = true;
                if (opt->check_name("--archive"))
                    list = "all";
                else if (opt->check_name("-p"))
                    list = "mode,ownership,timestamps";
                else if (opt->check_name("-d"))
                    list = "links";
                else if (opt->check_name("--preserve") && kept < args->preserve_lists.size())
                    list = args->preserve_lists[kept++];
                else if (opt->check_name("--no-preserve") &&
                         dropped < args->no_preserve_lists.size()) {
                    list = args->no_preserve_lists[dropped++];
                    on = false;
                } else
                    continue;
                if (list == "default") list = "mode,ownership,timestamps";
                if (auto bad = fs::apply_preserve_list(list, on, o.preserve)) {
                    emit(stderr,
                         "uringkit cp: --{}preserve={}: '{}' is not one of mode, ownership, "
                         "timestamps, xattr, links, all\n",
                         on ? "" : "no-", list, *bad);
                    return kUsage;
                }
            }
            if (args->links.backup_short || args->links.backup_option->count() ||
                args->links.suffix_option->count()) {
                if (existing == Existing::keep)
                    return usage_error("cp",
                                       "options --backup and --no-clobber are mutually exclusive");
            }
            o.reflink = args->reflink == "always"  ? fs::Reflink::always
                        : args->reflink == "never" ? fs::Reflink::never
                                                   : fs::Reflink::automatic;
            if (auto bad = apply_link_and_backup(args->links, o)) return usage_error("cp", *bad);
            o.direct = args->direct;
            o.fsync = args->fsync;
            o.atomic = args->atomic;
            o.no_clobber = existing == Existing::keep;
            if (existing == Existing::ask)
                o.ask_overwrite = [replaces = args->force || args->remove_destination](
                                      std::string_view dst, mode_t unwritable) {
                    return ask_overwrite(dst, unwritable, replaces);
                };
            if (args->verbose) o.on_event = print_copy_event;
            o.remove_destination = args->remove_destination;
            o.source_reads = args->source_reads == "auto"    ? fs::SourceReads::automatic
                             : args->source_reads == "cache" ? fs::SourceReads::page_cache
                                                             : fs::SourceReads::direct;
            o.engine = args->engine == "ring"     ? fs::ByteEngine::ring
                       : args->engine == "kernel" ? fs::ByteEngine::kernel
                                                  : fs::ByteEngine::automatic;
            o.inflight = args->inflight;
            o.clone_threads = args->clone_threads;
            o.copy_threads = args->copy_threads;
            o.kernel_workers = args->kernel_workers;
            // A size given on the command line holds for both kinds of source.
            o.qd = args->qd;
            o.block_size = *block_size;
            if (qd->count()) o.direct_read_qd = args->qd;
            if (bs->count()) o.direct_read_block_size = *block_size;
            o.verify = args->verify;
            CopyProgressLine live(args->progress      ? CopyProgressLine::Mode::forced
                                  : args->no_progress ? CopyProgressLine::Mode::off
                                                      : CopyProgressLine::Mode::automatic,
                                  ::isatty(STDERR_FILENO) == 1, o.recursive);
            live.attach(o);
            fs::CopySink sink;
            sink.note = [&live](std::string_view m) { live.message(m, false); };
            sink.error = [&live](std::string_view m) { live.message(m, true); };
            InterruptScope interrupt;
            o.stop = interrupt.flag();
            const fs::CopyResult r = fs::copy(sources, dest, o, sink);
            live.finish();
            if (r.status == fs::CopyStatus::usage) emit(stderr, "uringkit cp: {}\n", r.message);
            if (interrupt.requested()) {
                emit(stderr,
                     "uringkit cp: interrupted by {}: {} files, {} directories, {} symlinks ({} "
                     "bytes) copied; "
                     "the new files being written were removed\n",
                     interrupt.signal_name(), r.files, r.dirs, r.symlinks, r.bytes);
                for (const std::string& p : r.incomplete)
                    emit(stderr,
                         "uringkit cp: '{}' was being written in place and is incomplete: its old "
                         "content is "
                         "gone (--atomic replaces a file only once the copy is whole)\n",
                         p);
            }
            if (args->summary) {
                const double t = r.seconds > 0 ? r.seconds : 1e-9;
                const std::uint64_t items = r.files + r.dirs + r.symlinks;
                emit(stderr,
                     "cp: {} files, {} directories, {} symlinks, {} special files, {} skipped, "
                     "{:.1f} MiB in {:.3f} s "
                     "({:.1f} MiB/s, {:.0f} files/s), {} system calls ({:.3f} per file), {} read "
                     "with O_DIRECT{}\n",
                     r.files, r.dirs, r.symlinks, r.specials, r.skipped,
                     static_cast<double>(r.bytes) / 1048576.0, r.seconds,
                     static_cast<double>(r.bytes) / 1048576.0 / t, static_cast<double>(r.files) / t,
                     r.syscalls,
                     items ? static_cast<double>(r.syscalls) / static_cast<double>(items) : 0.0,
                     r.direct_read_files, r.used_ring ? "" : ", read/write fallback");
                if (o.preserve.links || o.preserve.xattr)
                    emit(stderr, "cp: {} hard links kept, {} extended attributes copied{}\n",
                         r.hard_links, r.xattrs,
                         r.xattrs_on_ring ? " on the ring (IORING_OP_FGETXATTR/FSETXATTR)" : "");
                emit(stderr,
                     "cp: files by path: {} reflink, {} copy_file_range, {} ring, {} read/write\n",
                     r.reflinked_files, r.kernel_copied_files, r.ring_files, r.read_write_files);
                if (!r.path_reason.empty()) emit(stderr, "cp: {}\n", r.path_reason);
                if (o.verify)
                    emit(stderr,
                         "cp: verify: {} files matched, {:.1f} MiB read again (source and copy) in "
                         "{:.3f} s "
                         "({:.1f} MiB/s), {} copies read with O_DIRECT\n",
                         r.verified_files, static_cast<double>(r.verify_bytes) / 1048576.0,
                         r.verify_seconds,
                         r.verify_seconds > 0
                             ? static_cast<double>(r.verify_bytes) / 1048576.0 / r.verify_seconds
                             : 0.0,
                         r.verified_direct);
            }
            return interrupt.exit_status(exit_status(r.status));
        };
    },
    kFailure, true,
    // coreutils 9.1 cp's long options
    "archive attributes-only backup copy-contents dereference force interactive "
    "keep-directory-symlink link no-clobber no-dereference no-preserve no-target-directory "
    "one-file-system parents preserve recursive reflink remove-destination sparse "
    "strip-trailing-slashes suffix symbolic-link target-directory update verbose "
    "help version"}};

}  // namespace
}  // namespace uringkit::cli
