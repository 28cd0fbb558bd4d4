#!/bin/bash
# The group-commit log (examples/append_log.hpp) against its two peers, in
# the same run, rounds interleaved: bench/log_bench.cpp says what each engine
# does.  A second, shorter run puts uring-group against itself (A/A): its
# spread is this machine's noise, and a difference smaller than that between
# the engines is "the same".
#
#   bench/log_bench.sh [BUILD_DIR [DIR]]     (defaults: build, /var/tmp)
#
# DIR must be on a real disk (fdatasync on tmpfs does nothing).  Writes
# bench/results/log_group_commit.md with the commit, kernel, CPU, load
# average before and after and the exact commands.
set -euo pipefail
BUILD=${1:-build}
DIR=${2:-/var/tmp}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/$BUILD/bench/log_bench
[ -x "$BIN" ] || { echo "log_bench.sh: $BIN not built (cmake --build $BUILD --target log_bench)" >&2; exit 2; }
[ "$(stat -f -c %T "$DIR")" != tmpfs ] || { echo "log_bench.sh: $DIR is tmpfs: fdatasync would do nothing" >&2; exit 4; }
OUT=$ROOT/bench/results/log_group_commit.md
MAIN="$BIN --dir $DIR --appenders 32 --appends 50 --size 128 --rounds 7"
AA="$BIN --dir $DIR --appenders 32 --appends 50 --size 128 --rounds 4 --engines uring-group,uring-group"

COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] && COMMIT="$COMMIT (with uncommitted changes)"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date +%s)
TMP=$(mktemp -d /tmp/uringkit-log-bench.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
$MAIN > "$TMP/main.md" 2> "$TMP/main.log"
$AA > "$TMP/aa.md" 2> "$TMP/aa.log"
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
{
  echo "# Group commit: io_uring against pwrite+fdatasync"
  echo
  echo "- commit: $COMMIT; kernel $(uname -r); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
  echo "- file system: $(stat -f -c %T "$DIR") on $(df --output=source "$DIR" | tail -1)"
  echo "- load average before: $LOAD_BEFORE; after: $LOAD_AFTER; wall time $(( $(date +%s) - START )) s"
  if awk -v a="${LOAD_BEFORE%% *}" -v b="${LOAD_AFTER%% *}" -v c="$(nproc)" 'BEGIN { exit !(a > c || b > c) }'; then
    echo "- **BUSY MACHINE**: the load average was above the $(nproc) CPUs (a shared machine, other builds"
    echo "  running); the disk's fdatasync latency wandered with it.  Read the A/A spread before any"
    echo "  difference in appends/s or latency: only a difference larger than it is a finding."
  fi
  echo "- command: \`bench/log_bench.sh $BUILD $DIR\`, which runs"
  echo "  \`${MAIN#$ROOT/}\` and the A/A run \`${AA#$ROOT/}\`"
  echo
  cat "$TMP/main.md"
  echo
  echo "A/A (uring-group twice per round; the spread between the two rows is the noise):"
  echo
  cat "$TMP/aa.md"
  echo
  echo "Every round (the order rotates):"
  echo
  echo '```'
  cat "$TMP/main.log"
  echo '```'
} > "$OUT"
cat "$OUT"
