// `uringkit probe`: what io_uring can do here, found by trying it.
#include "command.hpp"
#include "console.hpp"
#include "interrupt.hpp"
#include "manual.hpp"

#include "probe/probe.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace uringkit::cli {
namespace {

Register probe_command{Command{
    "probe", "Find out what io_uring can do on this machine, by trying it", 10,
    [](CLI::App& app) -> std::function<int()> {
        struct Args {
            bool json = false;
            std::string dir, dev;
        };
        auto args = std::make_shared<Args>();
        app.add_flag("--json", args->json, "Print the report as JSON (docs/json.md)");
        app.add_option(
            "--dir", args->dir,
            "Directory for the file trials' temporary files; IOPOLL is tried on its file "
            "system (default: the current directory if writable, else $TMPDIR or /tmp)");
        app.add_option("--dev", args->dev,
                       "A block device to try IOPOLL and, for an NVMe namespace "
                       "(/dev/nvmeXnY), passthrough on: its first 4 KiB are read "
                       "(never written) by polling and through /dev/ngXnY, each compared "
                       "with an O_DIRECT pread");
        name_values(app, {{"--dir", "DIR"}, {"--dev", "BLOCKDEV"}});
        describe(
            app,
            Manual{
                .description =
                    "Each trial creates its own ring and runs a real request, checking the data: "
                    "ok, "
                    "unsupported (with the errno that refused it) or failed.  A NOP round trip "
                    "says "
                    "whether io_uring is usable at all; opcodes, setup flags, registration and the "
                    "file trials follow.",
                .examples = {{"uringkit probe", "A table for people."},
                             {"uringkit probe --json", "The same for scripts."},
                             {"uringkit probe --dir /mnt/nvme",
                              "Try IOPOLL and the file trials on that directory's file system."},
                             {"uringkit probe --dev /dev/nvme0n1",
                              "Also read the device by polling and by NVMe passthrough."}},
                .exits = {{0,
                           "io_uring is usable: a ring can be set up and a NOP goes round it "
                           "(some trials may still be unsupported)"},
                          {2, "bad option"},
                          {3,
                           "io_uring cannot be set up here (sysctl, seccomp, a kernel without "
                           "it; the reason is printed), or io_uring_enter is refused"},
                          {4,
                           "--dir is not a directory a test file can be created in, or --dev "
                           "is not a block device"}},
                .see_also = "io_uring(7), io_uring_setup(2)",
                .doc = "probe.md"});
        return [args]() -> int {
            probe::Options options;
            if (!args->dir.empty()) {
                struct stat st {};
                if (::stat(args->dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
                    emit(stderr,
                         "uringkit probe: --dir {}: not a directory (name an existing "
                         "directory)\n",
                         args->dir);
                    return kBadInput;
                }
                // Tried, not asked of access(2): root passes access() on /proc
                // and on directories of a read-only mount, where no file can be made.
                if (const int err = probe::check_dir(args->dir)) {
                    emit(stderr,
                         "uringkit probe: cannot create a test file in {}: {} (name a "
                         "directory you may create files in with --dir)\n",
                         args->dir, std::strerror(err));
                    return kBadInput;
                }
                options.dir = args->dir;
            }
            if (!args->dev.empty()) {
                struct stat st {};
                const bool found = ::stat(args->dev.c_str(), &st) == 0;
                if (!found || !S_ISBLK(st.st_mode)) {
                    emit(stderr,
                         "uringkit probe: --dev {}: {} (name a block device, like "
                         "/dev/nvme0n1)\n",
                         args->dev, found ? "not a block device" : std::strerror(errno));
                    return kBadInput;
                }
                options.dev = args->dev;
            }
            // SIGINT/SIGTERM: each trial is short and removes its own file,
            // so the trials finish, the report is printed, and probe then
            // ends by the signal.
            InterruptScope interrupt;
            const probe::Report report = probe::run(options);
            const std::string text =
                args->json ? probe::to_json(report) : probe::format_table(report);
            put(stdout, text);
            return interrupt.exit_status(report.usable() ? kOk : kNoUring);
        };
    }}};

}  // namespace
}  // namespace uringkit::cli
