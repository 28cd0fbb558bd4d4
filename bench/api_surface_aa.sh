#!/bin/sh
# A/A for the API-surface change (hand_loop.hpp in load's workers, serve's
# uring engine and bench's engines): two binaries, each run twice,
# interleaved with the order rotated (before after, after before).
#   bench/api_surface_aa.sh BEFORE_BINARY AFTER_BINARY OUT_DIR
# Writes OUT_DIR/{bench,load}-{before,after}-{1,2}.json; summarise with
# bench/api_surface_aa.py OUT_DIR.  BENCH_ENGINE (default uring) and
# SERVE_ENGINE (default uring) pick what is compared: uring-async and coro
# run on the async layer, uring on the hand-written loops.
set -eu
BEFORE=$1 AFTER=$2 OUT=$3
BENCH_ENGINE=${BENCH_ENGINE:-uring} SERVE_ENGINE=${SERVE_ENGINE:-uring}
mkdir -p "$OUT"
run_pair() {  # $1 label, $2 binary, $3 round
    "$2" bench --engines "$BENCH_ENGINE,$BENCH_ENGINE" --iodepth 32 --runtime 2 --json "$OUT/bench-$1-$3.json" >/dev/null
    log=$(mktemp)
    "$2" serve --engine "$SERVE_ENGINE" --port 0 >"$log" 2>&1 &
    pid=$!
    i=0
    until grep -q "listening on" "$log"; do
        i=$((i + 1)); [ $i -lt 100 ] || { cat "$log"; kill $pid; exit 1; }; sleep 0.1
    done
    addr=$(sed -n 's/.*listening on \([^ ]*\) .*/\1/p' "$log")
    "$2" load --connections 64 --duration 3s --json "$OUT/load-$1-$3.json" "http://$addr/" >/dev/null
    kill -TERM $pid; wait $pid || true
    rm -f "$log"
}
run_pair before "$BEFORE" 1
run_pair after "$AFTER" 1
run_pair after "$AFTER" 2
run_pair before "$BEFORE" 2
