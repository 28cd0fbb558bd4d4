#!/usr/bin/env python3
"""Does the CPU each side is pinned to change the ranking against nginx?

    bench/serve_files_pinning.py [BUILD_DIR] [ROUNDS] [SECONDS]   (default: build 5 2)

serve_files_bench.py pins the servers to CPU 1 and the client to CPU 0;
`uringkit bench net` pins the server to CPU 0 and the client to CPU 1.  At
1 MiB the two put nginx at 286 and 127 µs of CPU per request, so this runs
the same servers (nginx with one worker, sendfile on, tcp_nopush on; the
uring engine and the epoll twin as they come; a second uring server for the
A/A pair) under both pinnings, in the same rounds, the order of the
(pinning, server) cells rotated per round.  Server CPU is utime+stime of the
server process (nginx: its worker) over the run from /proc/PID/stat, divided
by the requests the client counted.  Writes
bench/results/serve_files_pinning.md.
"""
import json, os, shutil, statistics as st, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_peers  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else "build"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
conns = 64
binary = os.path.join(root, build, "uringkit")
if not os.access(binary, os.X_OK):
    sys.exit(f"serve_files_pinning: {binary} is not built")
for tool in ("nginx", "taskset"):
    if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
        sys.exit(f"serve_files_pinning: {tool} is not installed (see DEB_PACKAGES in the Makefile)")

tmp = tempfile.mkdtemp(prefix="uringkit-serve-pin-", dir="/var/tmp")
os.chmod(tmp, 0o755)  # nginx's worker runs as www-data
sizes = [("4k", 4096), ("1m", 1 << 20)]
www = os.path.join(tmp, "www")
os.makedirs(www)
for name, n in sizes:
    p = os.path.join(www, "f" + name)
    with open(p, "wb") as f:
        f.write(os.urandom(n))
    os.chmod(p, 0o644)
    with open(p, "rb") as f:
        f.read()
fs_type = subprocess.run(["df", "--output=fstype", www], capture_output=True, text=True).stdout.split()[-1]
procs = []
# pinning name -> (server CPU, client CPU)
pinnings = {"server 1, client 0": (1, 0), "server 0, client 1": (0, 1)}
servers = {}
for pin, (scpu, _) in pinnings.items():
    d = os.path.join(tmp, f"cpu{scpu}")
    os.makedirs(d)
    servers[(pin, "nginx")] = http_peers.start_nginx(
        d, procs, f"    root {www};", "  sendfile on;\n  tcp_nopush on;\n  default_type application/octet-stream;",
        cpu=scpu)
    for s, engine in (("uring", "uring"), ("epoll", "epoll"), ("uring#2", "uring")):
        servers[(pin, s)] = http_peers.start_serve(binary, engine, procs, ("--root", www), cpu=scpu)
server_names = ["nginx", "uring", "epoll", "uring#2"]


def run(pin, server, name):
    port, pid = servers[(pin, server)]
    ccpu = pinnings[pin][1]
    c0 = http_peers.cpu_seconds(pid)
    r = subprocess.run(["taskset", "-c", str(ccpu), binary, "load", "-t1", "-c", str(conns), "-d",
                        f"{seconds}s", "--json", "-", f"http://127.0.0.1:{port}/f{name}"],
                       capture_output=True, text=True)
    c1 = http_peers.cpu_seconds(pid)
    if r.returncode != 0:
        sys.exit(f"serve_files_pinning: load failed ({r.returncode}): {r.stderr}")
    j = json.loads(r.stdout)
    if j["non_2xx"] or j["errors"]["total"]:
        sys.exit(f"serve_files_pinning: {server} answered {j['non_2xx']} non-2xx, {j['errors']['total']} errors")
    return {"reqs": j["requests"], "cpu_us": (c1 - c0) * 1e6 / j["requests"]}


cells = [(pin, s) for pin in pinnings for s in server_names]
raw = []
try:
    for r in range(rounds):
        order = cells[r % len(cells):] + cells[:r % len(cells)]
        for name, _ in sizes:
            for pin, s in order:
                res = run(pin, s, name)
                res.update(round=r + 1, pin=pin, server=s, size=name)
                raw.append(res)
                print(f"round {r + 1} {name} [{pin}] {s}: {res['cpu_us']:.2f} µs CPU/req", file=sys.stderr)
finally:
    http_peers.stop_all(procs)
    shutil.rmtree(tmp, ignore_errors=True)


def cell(pin, s, name):
    return [x["cpu_us"] for x in sorted(raw, key=lambda x: x["round"])
            if x["pin"] == pin and x["server"] == s and x["size"] == name]


def rng(xs, fmt):
    return f"{fmt(st.median(xs))} ({fmt(min(xs))}–{fmt(max(xs))})"


commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                        text=True).stdout.strip()
out = ["# Server CPU per request against nginx under both pinnings\n",
       f"Command: `bench/serve_files_pinning.py {build} {rounds} {seconds}` — commit {commit}, Linux "
       f"{os.uname().release}, {os.cpu_count()} CPUs; the root on {fs_type}, in the page cache; "
       f"`uringkit load -t1 -c {conns}`, {seconds} s per run, {rounds} rounds, the (pinning, server) "
       "order rotated per round.  Median (min–max) of server CPU µs per request; ratios paired by round.\n",
       "| size | pinning | nginx | uring | epoll | uring#2 | uring ÷ nginx | epoll ÷ nginx | A/A uring#2 ÷ uring |",
       "|---|---|---|---|---|---|---|---|---|"]
for name, _ in sizes:
    for pin in pinnings:
        c = {s: cell(pin, s, name) for s in server_names}
        ratio = lambda a, b: rng([x / y for x, y in zip(c[a], c[b])], lambda v: f"{v:.2f}x")  # noqa: E731
        out.append(f"| {name} | {pin} | " + " | ".join(rng(c[s], lambda v: f"{v:.1f}") for s in server_names)
                   + f" | {ratio('uring', 'nginx')} | {ratio('epoll', 'nginx')} | {ratio('uring#2', 'uring')} |")
out.append("\nRaw runs:\n\n```\nround\tsize\tpinning\tserver\treqs\tcpu_us_per_req")
out += [f"{x['round']}\t{x['size']}\t{x['pin']}\t{x['server']}\t{x['reqs']}\t{x['cpu_us']:.3f}" for x in raw]
out.append("```")
with open(os.path.join(root, "bench", "results", "serve_files_pinning.md"), "w") as f:
    f.write("\n".join(out) + "\n")
print("wrote bench/results/serve_files_pinning.md", file=sys.stderr)
