#!/bin/bash
# User-space instructions per request of each serve engine, counted by
# callgrind: the figure wall-clock runs on a noisy machine cannot settle (how
# much the coroutine layer costs against the hand-written engine).
#
#   bench/serve_instructions.sh [BUILD_DIR]        (default: build)
#
# Each engine serves a fixed job twice under valgrind --tool=callgrind: 16
# connections, R rounds in which every connection sends P requests in one
# write and reads the P answers, for R = 10 and R = 60.  The difference of the
# two instruction totals over the difference of the request counts is the
# cost per request, without start-up and shutdown.  Kernel work is not
# counted (callgrind sees user space only); `perf record` puts that at about
# 96% of the engines' CPU at 64 connections (see the README).
# Writes bench/results/serve_instructions.md.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/$BUILD/uringkit
[ -x "$BIN" ] || { echo "serve_instructions: $BIN not built" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "serve_instructions: valgrind not installed (apt-get install valgrind)" >&2; exit 2; }
T=$(mktemp -d /tmp/uringkit-serve-instr.XXXXXX)
trap 'rm -rf "$T"' EXIT
C=16
LOW=10
HIGH=60

cat > "$T/client.py" <<'PY'
# C connections, R rounds of P pipelined "GET /" each; every answer is read.
import socket, sys
port, C, R, P = map(int, sys.argv[1:5])
one = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(C)]
def read_n(s, n):
    b = bytearray()
    while len(b) < n:
        d = s.recv(n - len(b))
        if not d: sys.exit("server closed the connection")
        b += d
socks[0].sendall(one)
size = len(socks[0].recv(65536))  # every answer has this size
for _ in range(R):
    for s in socks: s.sendall(one * P)
    for s in socks: read_n(s, size * P)
PY

# Instructions the server executed by the end of a job of R rounds.
count() {
  local engine=$1 rounds=$2 pipeline=$3 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  rm -f "$T"/cg.*
  valgrind --tool=callgrind --callgrind-out-file="$T/cg.%p" "$BIN" serve --engine "$engine" --port "$port" \
    --idle-timeout 0 >"$T/out" 2>"$T/err" &
  local vp=$!
  # valgrind starts slowly on a loaded machine: up to 180 s (the count does not depend on it)
  for _ in $(seq 1 900); do grep -q listening "$T/out" && break; sleep 0.2; done
  grep -q listening "$T/out" || { cat "$T/err" >&2; exit 1; }
  python3 "$T/client.py" "$port" "$C" "$rounds" "$pipeline"
  callgrind_control -d "$vp" >/dev/null  # counts so far, without waiting for the exit
  sleep 1
  kill -9 "$vp"; wait "$vp" 2>/dev/null || true
  grep -h '^summary:' "$T"/cg.* | awk '{s += $2} END {print s}'
}

{
  echo "# User-space instructions per request (callgrind)"
  echo
  echo "Command: \`bench/serve_instructions.sh $BUILD\`.  $C connections; per round each sends P requests in one"
  echo "write and reads the answers; (instructions after $HIGH rounds - after $LOW) / requests in between."
  echo "Steadier than the wall-clock figures: reruns agree within about 20 instructions per request."
  echo
  echo "| engine | P = 1 (one request per write) | P = 16 (pipelined) |"
  echo "|---|---|---|"
  for engine in uring uring-coro epoll; do
    row="| $engine |"
    for p in 1 16; do
      lo=$(count "$engine" "$LOW" "$p")
      hi=$(count "$engine" "$HIGH" "$p")
      row="$row $(( (hi - lo) / (C * (HIGH - LOW) * p) )) |"
    done
    echo "$row"
  done
} > "$ROOT/bench/results/serve_instructions.md"
cat "$ROOT/bench/results/serve_instructions.md"
