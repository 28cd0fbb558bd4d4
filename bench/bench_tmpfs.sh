#!/bin/bash
# uringkit bench on tmpfs, where io_uring cannot read inline (tmpfs files
# lack FMODE_NOWAIT) and hands every read to an io-wq worker: pread, uring,
# uring-async (IOSQE_ASYNC: the worker path on purpose) and auto at depth 1
# and 32, with uring listed twice (an A/A pair: the noise), and the
# attribution columns and verdict that say where the time went.
#
#   bench/bench_tmpfs.sh [BUILD_DIR] [OUT.md]   (default build, bench/results/bench_tmpfs.md)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${1:-build}/uringkit
OUT=${2:-$ROOT/bench/results/bench_tmpfs.md}
FILE=$(mktemp /dev/shm/uringkit-bench-tmpfs-XXXXXX)
trap 'rm -f "$FILE"' EXIT
head -c 256M /dev/urandom > "$FILE"
CMD=(bench --filename "$FILE" --engines pread,uring,uring-async,auto,uring --iodepth 1,32
     --runtime 0.2 --wide)
before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s.%N)
table=$(cd "$ROOT" && "$BIN" "${CMD[@]}" 2>/dev/null)
end=$(date +%s.%N)
{
    echo "<!-- Written by bench/bench_tmpfs.sh: do not edit by hand. -->"
    echo "> commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD || echo ' (with changes)');" \
         "Linux $(uname -r); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs;"
    echo "> load average before $before, after $(cut -d' ' -f1-3 /proc/loadavg);" \
         "$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }') s;"
    echo "> command: \`uringkit ${CMD[*]/#$FILE/\/dev\/shm\/FILE}\` on a 256 MiB file of random bytes in /dev/shm"
    echo
    echo "# bench_tmpfs"
    echo
    echo '```'
    echo "${table//$FILE//dev/shm/FILE}"
    echo '```'
} > "$OUT"
echo "bench_tmpfs: $OUT" >&2
