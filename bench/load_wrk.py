#!/usr/bin/env python3
"""`uringkit load` against wrk, the same servers, the same run: client CPU
per request and client headroom.

    bench/load_wrk.py [BUILD_DIR] [ROUNDS] [SECONDS]     (default: build 3 4)

Servers, each pinned to CPU 1 with one thread (nginx: one worker, `return
200` with serve's 128-byte body, access_log off, as bench/serve_bench.sh):
nginx, `uringkit serve --engine epoll`, and `uringkit serve --engine uring`.
Clients, one thread each, pinned to CPU 0: `wrk -t1` (pipelined 16 through
bench/serve_wrk.lua) and `uringkit load -t1 --pipeline 16`.  Connections 64
and 256.  Each round runs every (server, connections, pipelining) cell with
both tools back to back, the tool that goes first alternating per round and
the cells rotated, so drift on this shared machine hits both alike.

Per run the client's CPU is its whole process's user+system time from
wait4(2), divided by the requests it counted (wrk: "N requests in"; load:
its JSON `requests`), so both tools are measured the same way.  Cells
against nginx and epoll answer "how much CPU does the client spend per
request"; the no-pipelining cells against `serve --engine uring` (the
fastest server, so the single client thread is the bottleneck) answer "how
many requests/s can one client thread drive" (headroom).  Writes
bench/results/load_wrk.md.
"""
import json, os, re, shutil, statistics as st, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import http_peers  # noqa: E402

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
build = sys.argv[1] if len(sys.argv) > 1 else "build"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 4
binary = os.path.join(root, build, "uringkit")
conns_list = [int(c) for c in os.environ.get("CONNS", "64 256").split()]
for tool in ("wrk", "nginx", "taskset"):
    if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
        sys.exit(f"load_wrk: {tool} is not installed (see DEB_PACKAGES in the Makefile)")
if not os.access(binary, os.X_OK):
    sys.exit(f"load_wrk: {binary} is not built")

tmp = tempfile.mkdtemp(prefix="uringkit-load-wrk-")
procs = []


def body():
    p = "uringkit-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    b = "".join(p[i % len(p)] for i in range(128))
    return b[:-1] + "\\n"


def start_nginx():
    return http_peers.start_nginx(tmp, procs, f'    location / {{ return 200 "{body()}"; }}',
                                  "  default_type text/plain;")[0]


def start_serve(engine):
    return http_peers.start_serve(binary, engine, procs)[0]


def timed(cmd):
    """Runs cmd; returns (stdout, user+system seconds of its whole process tree)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = p.communicate()
    # communicate() reaped it; the children's times are in RUSAGE_CHILDREN:
    # take the difference around the call instead.
    return out, err, p.returncode


def run_client(tool, port, conns, pipe):
    url = f"http://127.0.0.1:{port}/"
    if tool == "wrk":
        cmd = ["taskset", "-c", "0", "wrk", "-t1", f"-c{conns}", f"-d{seconds}s"]
        if pipe > 1:
            cmd += ["-s", os.path.join(root, "bench", "serve_wrk.lua"), url, "--", str(pipe)]
        else:
            cmd += [url]
    else:
        cmd = ["taskset", "-c", "0", binary, "load", "-t1", "-c", str(conns), "-d", f"{seconds}s",
               "--pipeline", str(pipe), "--json", "-", url]
    before = os.times()
    out, err, rc = timed(cmd)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    if tool == "wrk":
        m = re.search(r"(\d+) requests in", out)
        errs = re.search(r"Socket errors:.*|Non-2xx.*", out)
        if not m or rc != 0:
            sys.exit(f"load_wrk: wrk failed: {out}{err}")
        reqs = int(m.group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
        sysc = None
        note = errs.group(0) if errs else ""
    else:
        if rc != 0:
            sys.exit(f"load_wrk: load failed ({rc}): {err}")
        j = json.loads(out)
        reqs, rps, sysc = j["requests"], j["requests_per_s"], j["syscalls_per_request"]
        note = ""
    return {"reqs": reqs, "rps": rps, "cpu_us": cpu * 1e6 / reqs, "sys": sysc, "note": note}


servers = {"nginx": start_nginx(), "epoll": start_serve("epoll"), "uring": start_serve("uring")}
time.sleep(0.5)
cells = [(s, c, p) for s in ("nginx", "epoll") for c in conns_list for p in (1, 16)]
cells += [("uring", c, 1) for c in conns_list]
load0 = open("/proc/loadavg").read().strip()
raw = []
try:
    for r in range(rounds):
        order = cells[r % len(cells):] + cells[:r % len(cells)]
        tools = ("wrk", "load") if r % 2 == 0 else ("load", "wrk")
        for (s, c, p) in order:
            for t in tools:
                res = run_client(t, servers[s], c, p)
                res.update(round=r + 1, server=s, conns=c, pipe=p, tool=t)
                raw.append(res)
                print(f"round {r + 1} {s} c={c} pipeline={p} {t}: {res['rps']:,.0f} req/s, "
                      f"{res['cpu_us']:.2f} µs CPU/req", file=sys.stderr)
finally:
    http_peers.stop_all(procs)
    shutil.rmtree(tmp, ignore_errors=True)
load1 = open("/proc/loadavg").read().strip()

commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
kernel = os.uname().release
cpu_model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")


def med(xs):
    return st.median(xs)


def rng(xs, f):
    return f"{f(med(xs))} ({f(min(xs))}–{f(max(xs))})"


out = ["# `uringkit load` against wrk: client CPU per request and headroom\n",
       f"Command: `bench/load_wrk.py {build} {rounds} {seconds}` — commit {commit}{' (with uncommitted changes)' if dirty else ''}, "
       f"Linux {kernel}, {cpu_model}, {os.cpu_count()} CPUs.  {rounds} rounds; in each, every cell ran both tools "
       f"back to back for {seconds} s each, the first tool alternating per round, the cells rotated.  "
       "Clients pinned to CPU 0 with one thread (`wrk -t1`, `uringkit load -t1`), servers to CPU 1 with one "
       "thread.  Client CPU: the client process's user+system time (wait4) over the requests it counted.  "
       "Median (min–max) over the rounds.\n",
       f"Load average before: `{load0}`, after: `{load1}` on {os.cpu_count()} CPUs "
       f"({'busy: other work ran, ' if float(load0.split()[0]) > 0.5 * (os.cpu_count() or 1) else ''}"
       "figures move between runs): compare the two tools within a row, and treat a ratio whose ranges "
       "overlap as the same within the noise.\n"]
out.append("| server | conns | pipelined | wrk req/s | load req/s | wrk CPU µs/req | load CPU µs/req | load ÷ wrk CPU/req | load syscalls/req |")
out.append("|---|---|---|---|---|---|---|---|---|")
summary = []
for (s, c, p) in cells:
    w = [x for x in raw if (x["server"], x["conns"], x["pipe"], x["tool"]) == (s, c, p, "wrk")]
    l = [x for x in raw if (x["server"], x["conns"], x["pipe"], x["tool"]) == (s, c, p, "load")]
    # Paired by round: each round's two runs were back to back.
    ratios = [b["cpu_us"] / a["cpu_us"] for a, b in zip(sorted(w, key=lambda x: x["round"]), sorted(l, key=lambda x: x["round"]))]
    rps_ratios = [b["rps"] / a["rps"] for a, b in zip(sorted(w, key=lambda x: x["round"]), sorted(l, key=lambda x: x["round"]))]
    summary.append((s, c, p, med(ratios), min(ratios), max(ratios), med(rps_ratios), min(rps_ratios), max(rps_ratios)))
    out.append(f"| {s} | {c} | {p if p > 1 else 'no'} | {rng([x['rps'] for x in w], lambda v: f'{v:,.0f}')} | "
               f"{rng([x['rps'] for x in l], lambda v: f'{v:,.0f}')} | {rng([x['cpu_us'] for x in w], lambda v: f'{v:.2f}')} | "
               f"{rng([x['cpu_us'] for x in l], lambda v: f'{v:.2f}')} | {rng(ratios, lambda v: f'{v:.2f}')} | "
               f"{rng([x['sys'] for x in l], lambda v: f'{v:.3f}')} |")
out.append("\n## Against the targets\n")
out.append("| cell | measured | target |")
out.append("|---|---|---|")
for (s, c, p, m, lo, hi, rm, rlo, rhi) in summary:
    if s == "uring":
        ok = "met" if rlo >= 1.3 else ("**not met**" if rhi < 1.3 else "inside the noise")
        out.append(f"| headroom, serve uring, {c} conns, one client thread | load drives {rm:.2f}x wrk's req/s ({rlo:.2f}–{rhi:.2f}) | ≥ 1.3x: {ok} |")
    else:
        ok = "met" if hi <= 0.7 else ("**not met**" if lo > 0.7 else "inside the noise")
        out.append(f"| CPU/request, {s}, {c} conns, {'pipelined 16' if p > 1 else 'no pipelining'} | {m:.2f}x wrk ({lo:.2f}–{hi:.2f}) | ≤ 0.7x: {ok} |")
notes = sorted({x["note"] for x in raw if x["note"]})
if notes:
    out.append("\nwrk reported: " + "; ".join(notes))
out.append("\nRaw runs:\n\n```")
out.append("round\tserver\tconns\tpipeline\ttool\treqs\trps\tcpu_us_per_req\tsyscalls_per_req")
for x in raw:
    out.append(f"{x['round']}\t{x['server']}\t{x['conns']}\t{x['pipe']}\t{x['tool']}\t{x['reqs']}\t{x['rps']:.0f}\t{x['cpu_us']:.3f}\t{x['sys'] if x['sys'] is not None else ''}")
out.append("```")
with open(os.path.join(root, "bench", "results", "load_wrk.md"), "w") as f:
    f.write("\n".join(out) + "\n")
print("wrote bench/results/load_wrk.md", file=sys.stderr)
