#!/usr/bin/env python3
"""Where the server's CPU goes serving one 1 MiB file, per body path:
`serve --root` with the uring engine reading into its output
(`--body-path read`) and splicing (`splice`), the epoll engine with
`sendfile`, and nginx (one worker, sendfile on).

    bench/serve_files_profile.py [BUILD_DIR] [SIZE]   (default: build 1m)

Each server alone, pinned to CPU 1, under `uringkit load -t1 -c 64` pinned
to CPU 0; `perf record -C 1` samples everything that runs on CPU 1 for 2 s
(the server, its io-wq workers, which inherit its CPU, and the softirq
work done there), and `perf report` gives the top symbols and the share of
each thread name.  Writes bench/results/serve_files_profile_SIZE.md.
"""
import os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_peers  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else "build"
size_name = sys.argv[2] if len(sys.argv) > 2 else "1m"
size = int(size_name[:-1]) * {"k": 1024, "m": 1 << 20}[size_name[-1]]
binary = os.path.join(root, build, "uringkit")
for tool in ("perf", "nginx", "taskset"):
    if not shutil.which(tool) and not os.path.exists(f"/usr/sbin/{tool}"):
        sys.exit(f"serve_files_profile: {tool} is not installed")

tmp = tempfile.mkdtemp(prefix="uringkit-serve-profile-", dir="/var/tmp")
www = os.path.join(tmp, "www")
os.makedirs(www)
os.chmod(tmp, 0o755)
path = os.path.join(www, "f")
with open(path, "wb") as f:
    f.write(os.urandom(size))
os.chmod(path, 0o644)
open(path, "rb").read()
procs = []


def report(port, label):
    load = subprocess.Popen(["taskset", "-c", "0", binary, "load", "-t1", "-c", "64", "-d", "4s",
                             f"http://127.0.0.1:{port}/f"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    time.sleep(1)
    data = os.path.join(tmp, "perf.data")
    subprocess.run(["perf", "record", "-q", "-C", "1", "-o", data, "--", "sleep", "2"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    load.wait()

    def top(sort, n):
        r = subprocess.run(["perf", "report", "-i", data, "--no-children", "--sort", sort,
                            "--fields", f"overhead,{sort}", "--stdio", "--percent-limit", "0.8"],
                           capture_output=True, text=True)
        rows = []
        for line in r.stdout.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            words = line.split()
            while words and words[-1] == "-":  # perf's empty columns
                words.pop()
            rows.append((float(words[0].rstrip("%")), f"{words[0]:>8}  " + " ".join(words[1:])))
        return [text for _, text in sorted(rows, reverse=True)[:n]]
    return (f"## {label}\n\nThreads on CPU 1:\n\n```\n" + "\n".join(top("comm", 6)) +
            "\n```\n\nSymbols:\n\n```\n" + "\n".join(top("symbol", 14)) + "\n```\n")


cases = [
    ("uring engine, --body-path read: READ into the output, then SEND",
     lambda: http_peers.start_serve(binary, "uring", procs, ("--root", www, "--body-path", "read"))),
    ("uring engine, --body-path splice (auto's choice at this size): SPLICE file->pipe->socket",
     lambda: http_peers.start_serve(binary, "uring", procs, ("--root", www, "--body-path", "splice"))),
    ("epoll engine, --body-path sendfile (auto's choice at this size)",
     lambda: http_peers.start_serve(binary, "epoll", procs, ("--root", www, "--body-path", "sendfile"))),
    ("nginx, one worker, sendfile on, tcp_nopush on",
     lambda: http_peers.start_nginx(tmp, procs, f"    root {www};",
                                    "  sendfile on;\n  tcp_nopush on;\n"
                                    "  default_type application/octet-stream;")),
]
sections = []
try:
    for label, start in cases:
        port, _ = start()
        time.sleep(0.5)
        sections.append(report(port, label))
        http_peers.stop_all(procs)
        procs.clear()
finally:
    http_peers.stop_all(procs)
    shutil.rmtree(tmp, ignore_errors=True)

commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                        text=True).stdout.strip()
head = (f"# Where the server's CPU goes serving a {size_name} file, per body path\n\n"
        f"Command: `bench/serve_files_profile.py {build} {size_name}` — commit {commit}, Linux "
        f"{os.uname().release}; the file on the file system of /var/tmp, in the page cache.  Each "
        "server alone on CPU 1 (one thread), `uringkit load -t1 -c 64` on CPU 0; `perf record -C 1` "
        "for 2 s, so a server's io-wq workers and the softirq work done on its CPU count.\n\n"
        "This VM has no hardware PMU for the guest: perf samples on a timer, and a sample taken "
        "while interrupts are off is charged to where they are re-enabled (`pvm_irq_enable` or "
        "`_raw_spin_unlock_irqrestore`, as the kernel's build has it), so that row stands for work "
        "done with interrupts off (softirq network processing, mostly: on "
        "loopback the receiver's TCP processing runs on the sender's CPU).\n")
with open(os.path.join(root, "bench", "results", f"serve_files_profile_{size_name}.md"), "w") as f:
    f.write(head + "\n" + "\n".join(sections))
print(f"wrote bench/results/serve_files_profile_{size_name}.md", file=sys.stderr)
