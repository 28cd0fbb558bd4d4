#!/bin/bash
# uringkit serve against nginx and its own epoll twin, with wrk on loopback.
#
#   bench/serve_bench.sh [BUILD_DIR] [ROUNDS]        (default: build, 3)
#
# One server thread each (nginx: one worker), all started once and left
# running; runs are interleaved (uring, uring-coro, uring-nobatch, epoll,
# nginx, uring, ...)
# so load drift on a shared machine hits every server alike.  wrk uses one
# thread pinned to CPU 0, the servers are pinned to CPU 1.  Per run:
#   req/s        wrk's figure
#   cpu/req      server utime+stime (/proc/PID/stat) over the run / requests
#   sys/req      system calls per request (our engines count their own; nginx
#                is counted with strace -c in a separate, untimed run)
#   p50/p99      wrk's latency percentiles
# uring-nobatch is the uring engine with --batch-wait 0: what the adaptive
# batching wait (default 20 µs, on only under many clients) buys and costs.
# Two sets: no pipelining (CPU per request is the figure; wrk's single thread
# is the bottleneck) and 16 requests per write (serve_wrk.lua; the server
# saturates, req/s is the figure).  Writes bench/results/serve_wrk.md.
set -euo pipefail
BUILD=${1:-build}
ROUNDS=${2:-3}
DURATION=${DURATION:-5}
CONNS=${CONNS:-"64 256"}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/$BUILD/uringkit
[ -x "$BIN" ] || { echo "serve_bench: $BIN not built (cmake --build $BUILD --target uringkit-cli)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "serve_bench: wrk not installed (apt-get install wrk)" >&2; exit 2; }
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { echo "serve_bench: nginx not installed (apt-get install nginx-light)" >&2; exit 2; }

T=$(mktemp -d /tmp/uringkit-serve-bench.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
BODY=$(python3 - "$ROOT" <<'PY'
# The same 128 bytes uringkit serves (net::make_body).
p = "uringkit-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
b = "".join(p[i % len(p)] for i in range(128))
print(b[:-1] + "\\n", end="")
PY
)

# nginx: one worker, `return 200` with the same body, no access log,
# keep-alive without a request limit (its default closes every 1,000).
NGINX_PORT=$(free_port)
mkdir -p "$T/nginx"
cat > "$T/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
master_process on;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log warn;
events { worker_connections 4096; multi_accept on; }
http {
  access_log off;
  default_type text/plain;
  keepalive_requests 100000000;
  keepalive_timeout 60s;
  client_body_temp_path $T/nginx/body;
  proxy_temp_path $T/nginx/proxy;
  fastcgi_temp_path $T/nginx/fastcgi;
  uwsgi_temp_path $T/nginx/uwsgi;
  scgi_temp_path $T/nginx/scgi;
  server {
    listen 127.0.0.1:$NGINX_PORT backlog=4096;
    location / { return 200 "$BODY"; }
  }
}
CONF
taskset -c 1 "$NGINX" -c "$T/nginx/nginx.conf" -p "$T/nginx" 2>"$T/nginx/stderr" &
PIDS+=($!)
NGINX_MASTER=$!

declare -A PORT PID
OURS="uring uring-coro uring-nobatch epoll"
SERVERS="$OURS nginx"
for eng in $OURS; do
  port=$(free_port)
  args=(--engine "$eng")
  [ "$eng" = uring-nobatch ] && args=(--engine uring --batch-wait 0)
  taskset -c 1 "$BIN" serve "${args[@]}" --port "$port" --idle-timeout 0 >"$T/$eng.out" 2>"$T/$eng.err" &
  PIDS+=($!)
  PID[$eng]=$!
  PORT[$eng]=$port
done
PORT[nginx]=$NGINX_PORT
sleep 1
for eng in $OURS; do grep -q listening "$T/$eng.out" || { cat "$T/$eng.err"; exit 1; }; done
PID[nginx]=$(pgrep -P "$NGINX_MASTER" | head -1)
[ -n "${PID[nginx]}" ] || { cat "$T/nginx/stderr" "$T/nginx/error.log"; exit 1; }
for s in $SERVERS; do
  curl -sf "http://127.0.0.1:${PORT[$s]}/" | cmp -s - <(printf '%b' "$BODY") || { echo "serve_bench: $s does not serve the expected body" >&2; exit 1; }
done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# A latency percentile from wrk's output, in microseconds (it prints 812.00us, 1.20ms, 1.01s).
pct() { echo "$2" | awk -v p="$1%" '$1 == p { v = $2; m = 1;
  if (v ~ /ms$/) m = 1000; else if (v ~ /us$/) m = 1; else if (v ~ /s$/) m = 1000000;
  sub(/[a-z]+$/, "", v); printf "%.0f", v * m }'; }
syscalls() { curl -s "http://127.0.0.1:$1/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["syscalls"])'; }

RAW=$T/raw.tsv
echo -e "round\tserver\tconns\tpipeline\treqs\trps\tcpu_ticks\tsyscalls\tp50_us\tp99_us" > "$RAW"
LOAD_BEFORE=$(cat /proc/loadavg)
echo "load before: $LOAD_BEFORE" >&2
for round in $(seq 1 "$ROUNDS"); do
  for pipe in 1 16; do
    for c in $CONNS; do
      for s in $SERVERS; do
        script=()
        [ "$pipe" = 16 ] && script=(-s "$ROOT/bench/serve_wrk.lua")
        sc0=0; [ "$s" != nginx ] && sc0=$(syscalls "${PORT[$s]}")
        t0=$(cpu_ticks "${PID[$s]}")
        out=$(taskset -c 0 wrk -t1 -c"$c" -d"${DURATION}s" --latency "${script[@]}" "http://127.0.0.1:${PORT[$s]}/" -- 16)
        t1=$(cpu_ticks "${PID[$s]}")
        sc1=0; [ "$s" != nginx ] && sc1=$(syscalls "${PORT[$s]}")
        reqs=$(echo "$out" | awk '/requests in/ {print $1}')
        rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
        p50=$(pct 50 "$out"); p99=$(pct 99 "$out")
        if echo "$out" | grep -q "Non-2xx\|Socket errors"; then echo "$out" >&2; fi
        # The /stats request between runs is one system call batch: subtract nothing, it is noise.
        echo -e "$round\t$s\t$c\t$pipe\t$reqs\t$rps\t$((t1 - t0))\t$((sc1 - sc0))\t$p50\t$p99" >> "$RAW"
        echo "round $round $s c=$c pipeline=$pipe: $rps req/s" >&2
      done
    done
  done
done
LOAD_AFTER=$(cat /proc/loadavg)

# nginx's system calls per request: strace -c on the worker over a short,
# untimed run (strace slows it; only the ratio is kept).
NGINX_SYS=""
if command -v strace >/dev/null; then
  for c in $CONNS; do
    timeout 20 strace -c -f -p "${PID[nginx]}" -o "$T/strace.$c" & sp=$!
    sleep 0.5
    out=$(taskset -c 0 wrk -t1 -c"$c" -d2s "http://127.0.0.1:${PORT[nginx]}/")
    sleep 0.2; kill -INT $sp 2>/dev/null || true; wait $sp 2>/dev/null || true
    reqs=$(echo "$out" | awk '/requests in/ {print $1}')
    # The total line: % time, seconds, usecs/call, calls, [errors,] "total".
    calls=$(awk '$NF == "total" {print $4}' "$T/strace.$c")
    NGINX_SYS="$NGINX_SYS $c:$(python3 -c "print(f'{$calls/$reqs:.3f}')")"
  done
fi

python3 - "$RAW" "$LOAD_BEFORE" "$LOAD_AFTER" "$NGINX_SYS" "$ROUNDS" "$DURATION" "$BUILD" > "$ROOT/bench/results/serve_wrk.md" <<'PY'
import csv, statistics as st, sys, os
raw, load0, load1, nginx_sys, rounds, dur, build = sys.argv[1:8]
rows = list(csv.DictReader(open(raw), delimiter="\t"))
tick = 1.0 / os.sysconf("SC_CLK_TCK")
nsys = dict(x.split(":") for x in nginx_sys.split()) if nginx_sys.strip() else {}
def med(xs): return st.median(xs)
def fmt(xs, f): return f"{f(med(xs))} ({f(min(xs))}–{f(max(xs))})"
servers = ["uring", "uring-coro", "uring-nobatch", "epoll", "nginx"]
out = []
out.append("# uringkit serve vs nginx and the epoll twin (wrk, loopback)\n")
out.append(f"Command: `bench/serve_bench.sh {build} {rounds}` (a RelWithDebInfo build) — {rounds} interleaved rounds of {dur} s runs, "
           "wrk -t1 pinned to CPU 0, each server pinned to CPU 1, one server thread (nginx: one worker, "
           "`return 200` with the same 128-byte body, access_log off).  Median (min–max) over the rounds.\n")
out.append(f"Load average before: `{load0}`, after: `{load1}` (2 cores, shared by wrk and the servers: "
           "figures are noisy; compare within a row).\n")
summary = {}
for pipe in ("1", "16"):
    out.append(f"\n## {'No pipelining' if pipe == '1' else '16 requests pipelined per write (bench/serve_wrk.lua)'}\n")
    out.append("| conns | server | req/s | CPU µs/request | syscalls/request | p50 µs | p99 µs |")
    out.append("|---|---|---|---|---|---|---|")
    for c in sorted({r["conns"] for r in rows}, key=int):
        for s in servers:
            rs = [r for r in rows if r["server"] == s and r["conns"] == c and r["pipeline"] == pipe]
            if not rs: continue
            rps = [float(r["rps"]) for r in rs]
            cpu = [int(r["cpu_ticks"]) * tick * 1e6 / int(r["reqs"]) for r in rs]
            if s == "nginx":
                sysc = f"{nsys[c]} (strace -c)" if (pipe == "1" and c in nsys) else "–"
            else:
                sc = [int(r["syscalls"]) / int(r["reqs"]) for r in rs]
                sysc = fmt(sc, lambda v: f"{v:.3f}")
            summary[(pipe, c, s)] = (med(rps), med(cpu))
            p50 = med([float(r["p50_us"]) for r in rs])
            p99 = med([float(r["p99_us"]) for r in rs])
            # wrk leaves the percentiles out when the script pipelines: say so, not 0.
            lat = lambda v: f"{v:,.0f}" if v > 0 else "–"
            out.append(f"| {c} | {s} | {fmt(rps, lambda v: f'{v:,.0f}')} | {fmt(cpu, lambda v: f'{v:.2f}')} | {sysc} | {lat(p50)} | {lat(p99)} |")
out.append("\n## Ratios (medians)\n")
out.append("| conns | uring CPU/req ÷ nginx | uring CPU/req ÷ epoll | uring-nobatch CPU/req ÷ nginx | uring-nobatch CPU/req ÷ epoll | pipelined req/s uring ÷ nginx | pipelined req/s uring ÷ epoll | uring-coro ÷ uring req/s (pipelined) |")
out.append("|---|---|---|---|---|---|---|---|")
for c in sorted({r["conns"] for r in rows}, key=int):
    g = lambda p, s: summary.get((p, c, s), (float("nan"), float("nan")))
    out.append(f"| {c} | {g('1','uring')[1]/g('1','nginx')[1]:.2f} | {g('1','uring')[1]/g('1','epoll')[1]:.2f} | "
               f"{g('1','uring-nobatch')[1]/g('1','nginx')[1]:.2f} | {g('1','uring-nobatch')[1]/g('1','epoll')[1]:.2f} | "
               f"{g('16','uring')[0]/g('16','nginx')[0]:.2f} | {g('16','uring')[0]/g('16','epoll')[0]:.2f} | "
               f"{g('16','uring-coro')[0]/g('16','uring')[0]:.3f} |")
out.append("\nRaw runs:\n\n```\n" + open(raw).read() + "```")
print("\n".join(out))
PY
echo "wrote bench/results/serve_wrk.md" >&2
