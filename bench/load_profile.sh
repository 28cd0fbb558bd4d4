#!/bin/bash
# Where the client's CPU goes: `perf record` of `uringkit load -t1` and of
# `wrk -t1` against the same server (nginx, one worker, the 128-byte body),
# 64 connections, no pipelining, both pinned to CPU 0, the server to CPU 1.
#
#   bench/load_profile.sh [BUILD_DIR] [SECONDS]      (default: build 4)
#
# Writes bench/results/load_profile.md: each tool's CPU split by where it
# runs (kernel or user, by DSO) and its hottest symbols, self time.
set -euo pipefail
BUILD=${1:-build}
SECONDS_RUN=${2:-4}
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
taskset -c 1 "$(command -v nginx || echo /usr/sbin/nginx)" -c "$T/nginx/nginx.conf" -p "$T/nginx" 2>/dev/null &
NGINX_PID=$!
sleep 0.5
URL=http://127.0.0.1:$PORT/
LOAD0=$(cat /proc/loadavg)
perf record -q -F 4999 -o "$T/load.data" -- taskset -c 0 "$BIN" load -t1 -c 64 -d "${SECONDS_RUN}s" "$URL" > "$T/load.out" 2>&1
perf record -q -F 4999 -o "$T/wrk.data" -- taskset -c 0 wrk -t1 -c64 -d"${SECONDS_RUN}s" "$URL" > "$T/wrk.out" 2>&1
LOAD1=$(cat /proc/loadavg)
{
  echo "# Where the client's CPU goes: uringkit load against wrk (perf record)"
  echo
  echo "Command: \`bench/load_profile.sh $BUILD $SECONDS_RUN\` — commit $(git -C "$ROOT" rev-parse --short HEAD), Linux $(uname -r)."
  echo "Both clients: one thread pinned to CPU 0, 64 connections, no pipelining, against nginx (one worker, CPU 1,"
  echo "the 128-byte body), ${SECONDS_RUN} s each, \`perf record -F 4999\` of the client process."
  echo "Load average before: \`$LOAD0\`, after: \`$LOAD1\` ($(nproc) CPUs)."
  for tool in load wrk; do
    echo
    echo "## $tool"
    echo
    echo '```'
    grep -E "requests|Requests/sec|client" "$T/$tool.out" || true
    echo
    echo "CPU by DSO (self):"
    perf report -q -i "$T/$tool.data" --sort dso --stdio 2>/dev/null | grep -v '^$' | head -8 || true
    echo
    echo "Hottest symbols (self):"
    perf report -q -i "$T/$tool.data" --sort sym --stdio 2>/dev/null | grep -v '^$' | head -25 || true
    echo '```'
  done
} > "$ROOT/bench/results/load_profile.md"
echo "wrote bench/results/load_profile.md" >&2
