#!/usr/bin/env python3
"""`uringkit serve --root` against nginx's sendfile: server CPU per request
for static files of 4 KiB, 16 KiB, 64 KiB, 256 KiB and 1 MiB, per body path.

    bench/serve_files_bench.py [BUILD_DIR] [ROUNDS] [SECONDS]   (default: build 5 3)

The root is a directory on the file system of /var/tmp (ext4 here, not
tmpfs: tmpfs reads go to io-wq workers on io_uring), its files read once
so they are in the page cache.  Servers, each started once, pinned to CPU 1,
one thread (nginx: one worker, `sendfile on`, `tcp_nopush on`, access_log
off, keepalive_requests raised so no connection is closed mid-run, and
open_file_cache off, its default): nginx; `serve --root` with the uring
engine as it comes (--file-io ring: OPENAT2, READ and CLOSE on the ring,
statx a system call; --body-path auto), with --body-path read and splice
(SPLICE file->pipe->socket on its ring) for every size, with --file-io
ring-statx (STATX on the ring too) and calls (every file operation a
system call); the uring-coro engine (system calls, bodies read); the epoll
engine as it comes (auto), with --body-path read and sendfile; and a
second default uring server (uring#2) for the A/A pair.  The client is
`uringkit load -t1 -c CONNS` pinned to CPU 0, one file per run.  Each
round runs every (size, server) cell, the servers' order rotated per
round, so drift hits every server alike.

Server CPU: utime+stime of the server process (/proc/PID/stat; nginx: its
worker) over the run, divided by the requests the client counted.
System calls per request: a separate, untimed run per cell under
`strace -c -f -p PID` (io_uring_enter counted like any other call), so
every server is counted the same way.  Writes
bench/results/serve_files.md.
"""
import json, os, re, shutil, statistics as st, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_peers  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else "build"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
conns = int(os.environ.get("CONNS", "64"))
binary = os.path.join(root, build, "uringkit")
nginx_bin = shutil.which("nginx") or "/usr/sbin/nginx"
for tool, path in (("nginx", nginx_bin), ("taskset", shutil.which("taskset")),
                   ("strace", shutil.which("strace"))):
    if not path or not os.path.exists(path):
        sys.exit(f"serve_files_bench: {tool} is not installed (see DEB_PACKAGES in the Makefile)")
if not os.access(binary, os.X_OK):
    sys.exit(f"serve_files_bench: {binary} is not built")

tmp = tempfile.mkdtemp(prefix="uringkit-serve-files-", dir="/var/tmp")
www = os.path.join(tmp, "www")
os.makedirs(www)
os.chmod(tmp, 0o755)  # nginx's worker runs as www-data: it must be able to read the files
sizes = [("4k", 4096), ("16k", 16384), ("64k", 65536), ("256k", 256 << 10), ("1m", 1 << 20)]
for name, n in sizes:
    with open(os.path.join(www, "f" + name), "wb") as f:
        f.write(os.urandom(n))
    os.chmod(os.path.join(www, "f" + name), 0o644)
    with open(os.path.join(www, "f" + name), "rb") as f:
        f.read()  # into the page cache
fs_type = subprocess.run(["df", "--output=fstype", www], capture_output=True, text=True).stdout.split()[-1]
procs = []


def start_nginx():
    return http_peers.start_nginx(tmp, procs, f"    root {www};",
                                  "  sendfile on;\n  tcp_nopush on;\n  default_type application/octet-stream;")


def start_serve(engine, file_io=None, body_path=None):
    extra = (("--root", www) + (("--file-io", file_io) if file_io else ())
             + (("--body-path", body_path) if body_path else ()))
    return http_peers.start_serve(binary, engine, procs, extra)


def load(port, name, secs):
    cmd = ["taskset", "-c", "0", binary, "load", "-t1", "-c", str(conns), "-d", f"{secs}s",
           "--json", "-", f"http://127.0.0.1:{port}/f{name}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"serve_files_bench: load failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout)


def run(server, name):
    port, pid = servers[server]
    c0 = http_peers.cpu_seconds(pid)
    j = load(port, name, seconds)
    c1 = http_peers.cpu_seconds(pid)
    if j["non_2xx"] or j["errors"]["total"]:
        sys.exit(f"serve_files_bench: {server} answered {j['non_2xx']} requests for f{name} with an "
                 f"error status and had {j['errors']['total']} errors: its figures would not be for files")
    return {"reqs": j["requests"], "rps": j["requests_per_s"], "cpu_us": (c1 - c0) * 1e6 / j["requests"],
            "errors": j["errors"]["total"], "non_2xx": j["non_2xx"]}


def syscalls_per_request(server, name):
    port, pid = servers[server]
    out = os.path.join(tmp, "strace.txt")
    s = subprocess.Popen(["strace", "-c", "-f", "-o", out, "-p", str(pid)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    j = load(port, name, 1)
    s.send_signal(2)
    s.wait()
    # The per-call lines between the two dashed rules: "% secs usecs/call calls [errors] name".
    total, inside = 0, False
    for line in open(out):
        if line.startswith("------"):
            if inside:
                break
            inside = True
            continue
        if inside:
            total += int(line.split()[3])
    return total / j["requests"]


servers = {"nginx": start_nginx(), "uring": start_serve("uring"),
           "uring read": start_serve("uring", body_path="read"),
           "uring splice": start_serve("uring", body_path="splice"),
           "uring ring-statx": start_serve("uring", "ring-statx"), "uring calls": start_serve("uring", "calls"),
           "uring-coro": start_serve("uring-coro"), "epoll": start_serve("epoll"),
           "epoll read": start_serve("epoll", body_path="read"),
           "epoll sendfile": start_serve("epoll", body_path="sendfile"), "uring#2": start_serve("uring")}
names = list(servers)
time.sleep(0.5)
load0 = open("/proc/loadavg").read().strip()
raw = []
try:
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name, _ in sizes:
            for s in order:
                res = run(s, name)
                res.update(round=r + 1, server=s, size=name)
                raw.append(res)
                print(f"round {r + 1} {name} {s}: {res['rps']:,.0f} req/s, {res['cpu_us']:.2f} µs CPU/req",
                      file=sys.stderr)
    calls = {(s, name): syscalls_per_request(s, name) for name, _ in sizes for s in names}
finally:
    http_peers.stop_all(procs)
    shutil.rmtree(tmp, ignore_errors=True)
load1 = open("/proc/loadavg").read().strip()

commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
kernel = os.uname().release
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")


def cell(s, name):
    return sorted((x for x in raw if x["server"] == s and x["size"] == name), key=lambda x: x["round"])


def rng(xs, f):
    return f"{f(st.median(xs))} ({f(min(xs))}–{f(max(xs))})"


out = ["# `uringkit serve --root` against nginx (sendfile), static files on loopback\n",
       f"Command: `bench/serve_files_bench.py {build} {rounds} {seconds}` (CONNS={conns}) — commit {commit}, "
       f"Linux {kernel}, {cpu_model}, {os.cpu_count()} CPUs; the root on {fs_type}, every file in the page "
       f"cache.  Servers pinned to CPU 1 with one thread (nginx: one worker, sendfile on, tcp_nopush on, "
       f"access_log off, open_file_cache off); the client, `uringkit load -t1 -c {conns}`, pinned to CPU 0, "
       f"{seconds} s per run, {rounds} rounds with the servers' order rotated.  Median (min–max) over the rounds; "
       "a ratio is paired by round.\n",
       f"Load average before: `{load0}`, after: `{load1}`.\n",
       "Body path: `uring`, `uring#2` and `epoll` are the default `--body-path auto`: bodies under "
       "64 KiB read, larger ones spliced (uring) or sent with sendfile (epoll).  `epoll sendfile` "
       "sends every body with sendfile(2) after its head, as nginx does (one copy, from the page "
       "cache into the socket); `uring splice` moves every body with SPLICE file->pipe and "
       "pipe->socket on the ring (no user-space copy; the kernel hands every SPLICE to an io-wq "
       "worker); `uring read`, `epoll read` and the other engines "
       "(`--body-path read`), reads the file into the connection's output and sends it with its own "
       "send, head and body together (one copy from the page cache into user memory, one into the "
       "socket).  Where the file operations are made: `uring` "
       "(and `uring#2`, its A/A twin) is the default `--file-io ring`: OPENAT2, READ and CLOSE on the ring, "
       "statx(2) a system call; `uring ring-statx` puts STATX on the ring too (the kernel hands every "
       "STATX to an io-wq worker); `uring calls`, uring-coro and epoll make openat2, statx, pread and "
       "close as system calls from the engine thread.\n"]
out.append("| size | server | req/s | server CPU µs/req | ÷ nginx CPU/req | syscalls/req (strace) | not 2xx / errors |")
out.append("|---|---|---|---|---|---|---|")
verdicts = []
for name, _ in sizes:
    ng = cell("nginx", name)
    aa = [b["cpu_us"] / a["cpu_us"] for a, b in zip(cell("uring", name), cell("uring#2", name))]
    aa_spread = max(abs(max(aa) - 1), abs(min(aa) - 1))
    for s in names:
        xs = cell(s, name)
        ratios = [x["cpu_us"] / n["cpu_us"] for x, n in zip(xs, ng)]
        ratio_text = "—" if s == "nginx" else rng(ratios, lambda v: f"{v:.2f}x")
        bad = sum(x["non_2xx"] for x in xs), sum(x["errors"] for x in xs)
        out.append(f"| {name} | {s} | {rng([x['rps'] for x in xs], lambda v: f'{v:,.0f}')} | "
                   f"{rng([x['cpu_us'] for x in xs], lambda v: f'{v:.2f}')} | {ratio_text} | "
                   f"{calls[(s, name)]:.2f} | {bad[0]} / {bad[1]} |")
        if s not in ("nginx", "uring#2"):
            m = st.median(ratios)
            if abs(m - 1) <= aa_spread:
                word = "the same as nginx (inside the A/A spread)"
            else:
                word = f"{'less' if m < 1 else 'more'} CPU per request than nginx"
            verdicts.append(f"- {name}, {s}: {m:.2f}x nginx's CPU per request, {word}; "
                            f"A/A uring#2 ÷ uring {st.median(aa):.2f}x ({min(aa):.2f}–{max(aa):.2f})")
out.append("\n## In words\n")
out += verdicts
out.append("\nRaw runs:\n\n```")
out.append("round\tsize\tserver\treqs\trps\tcpu_us_per_req")
for x in raw:
    out.append(f"{x['round']}\t{x['size']}\t{x['server']}\t{x['reqs']}\t{x['rps']:.0f}\t{x['cpu_us']:.3f}")
out.append("```")
with open(os.path.join(root, "bench", "results", "serve_files.md"), "w") as f:
    f.write("\n".join(out) + "\n")
print("wrote bench/results/serve_files.md", file=sys.stderr)
