#!/bin/bash
# Where the client's CPU goes: `perf record` of `uringkit load -t1` and of
# `wrk -t1` against the same server (nginx, one worker, the 128-byte body),
# both pinned to CPU 0, the server to CPU 1.
#
#   bench/load_profile.sh [BUILD_DIR] [SECONDS]      (default: build 4)
#   CONNS=64 PIPELINE=1 SERVER=nginx (the defaults) pick the shape and the
#   server (SERVER=epoll: `uringkit serve --engine epoll`, one thread); OUT
#   names the results file (default bench/results/load_profile.md).
#
# Writes each tool's CPU per request (from perf's own sample periods, the
# same clock for both), split by where it runs (kernel or user, by DSO), and
# its hottest symbols, self time.
set -euo pipefail
BUILD=${1:-build}
SECONDS_RUN=${2:-4}
CONNS=${CONNS:-64}
PIPELINE=${PIPELINE:-1}
SERVER=${SERVER:-nginx}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/$BUILD/uringkit
[ -x "$BIN" ] || { echo "load_profile: $BIN not built" >&2; exit 2; }
command -v perf >/dev/null || { echo "load_profile: perf not installed (linux-perf)" >&2; exit 2; }
T=$(mktemp -d /tmp/uringkit-load-profile.XXXXXX)
NGINX_PID=
cleanup() { [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$T"; }
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BODY=$(python3 -c 'p="uringkit-0123456789-abcdefghijklmnopqrstuvwxyz-ABCDEFGHIJKLMNOPQRSTUVWXYZ"; b="".join(p[i%len(p)] for i in range(128)); print(b[:-1]+"\\n", end="")')
mkdir -p "$T/nginx"
cat > "$T/nginx/nginx.conf" <<CONF
worker_processes 1; daemon off; master_process on; pid $T/nginx/nginx.pid; error_log $T/nginx/error.log warn;
events { worker_connections 4096; }
http { access_log off; default_type text/plain; keepalive_requests 100000000; keepalive_timeout 60s;
  client_body_temp_path $T/nginx/body; proxy_temp_path $T/nginx/proxy; fastcgi_temp_path $T/nginx/fastcgi;
  uwsgi_temp_path $T/nginx/uwsgi; scgi_temp_path $T/nginx/scgi;
  server { listen 127.0.0.1:$PORT backlog=4096; location / { return 200 "$BODY"; } } }
CONF
case $SERVER in
  nginx) taskset -c 1 "$(command -v nginx || echo /usr/sbin/nginx)" -c "$T/nginx/nginx.conf" -p "$T/nginx" 2>/dev/null & ;;
  epoll) taskset -c 1 "$BIN" serve --engine epoll --threads 1 --idle-timeout 0 --port "$PORT" > /dev/null 2>&1 & ;;
  *) echo "load_profile: SERVER must be nginx or epoll" >&2; exit 2 ;;
esac
NGINX_PID=$!
sleep 0.5
URL=http://127.0.0.1:$PORT/
LOAD0=$(cat /proc/loadavg)
WRK_PIPE=()
[ "$PIPELINE" -gt 1 ] && WRK_PIPE=(-s "$ROOT/bench/serve_wrk.lua")
perf record -q -F 4999 -o "$T/load.data" -- taskset -c 0 "$BIN" load -t1 -c "$CONNS" --pipeline "$PIPELINE" \
    -d "${SECONDS_RUN}s" "$URL" > "$T/load.out" 2>&1
perf record -q -F 4999 -o "$T/wrk.data" -- taskset -c 0 wrk -t1 -c"$CONNS" -d"${SECONDS_RUN}s" "${WRK_PIPE[@]}" \
    "$URL" -- "$PIPELINE" > "$T/wrk.out" 2>&1
# CPU per request from the samples' periods (cpu-clock, ns), and the kernel's share of it.
requests_of() {
  case $1 in
    load) grep -oE '^ *requests +[0-9,]+' "$T/load.out" | tr -dc '0-9' ;;
    wrk) grep -oE '^ *[0-9]+ requests in' "$T/wrk.out" | tr -dc '0-9' ;;
  esac
}
cpu_line() {
  local ns kernel_ns n
  ns=$(perf report -q -i "$T/$1.data" --sort dso -F period --stdio 2>/dev/null | awk '{s += $1} END {print s + 0}')
  kernel_ns=$(perf report -q -i "$T/$1.data" --sort dso -F period,dso --stdio 2>/dev/null | awk '/kernel/ {s += $1} END {print s + 0}')
  n=$(requests_of "$1")
  awk -v ns="$ns" -v k="$kernel_ns" -v n="$n" 'BEGIN { if (n > 0) printf "CPU per request (perf samples): %.2f µs, %.2f µs of it in the kernel (%.0f%%), %d requests\n", ns / n / 1000, k / n / 1000, 100 * k / (ns ? ns : 1), n }'
}
LOAD1=$(cat /proc/loadavg)
{
  echo "# Where the client's CPU goes: uringkit load against wrk (perf record)"
  echo
  echo "Command: \`SERVER=$SERVER CONNS=$CONNS PIPELINE=$PIPELINE bench/load_profile.sh $BUILD $SECONDS_RUN\` — commit $(git -C "$ROOT" rev-parse --short HEAD), Linux $(uname -r)."
  echo "Both clients: one thread pinned to CPU 0, $CONNS connections, $([ "$PIPELINE" -gt 1 ] && echo "$PIPELINE pipelined" || echo "no pipelining"), against $([ "$SERVER" = nginx ] && echo "nginx (one worker" || echo "\`uringkit serve --engine epoll\` (one thread"), CPU 1,"
  echo "the 128-byte body), ${SECONDS_RUN} s each, \`perf record -F 4999\` of the client process."
  echo "Load average before: \`$LOAD0\`, after: \`$LOAD1\` ($(nproc) CPUs)."
  for tool in load wrk; do
    echo
    echo "## $tool"
    echo
    echo '```'
    grep -E "requests|Requests/sec|client" "$T/$tool.out" || true
    cpu_line "$tool"
    echo
    echo "CPU by DSO (self):"
    perf report -q -i "$T/$tool.data" --sort dso --stdio 2>/dev/null | grep -v '^$' | head -8 || true
    echo
    echo "Hottest symbols (self):"
    perf report -q -i "$T/$tool.data" --sort sym --stdio 2>/dev/null | grep -v '^$' | head -25 || true
    echo '```'
  done
} > "${OUT:=$ROOT/bench/results/load_profile.md}"
echo "wrote $OUT" >&2
