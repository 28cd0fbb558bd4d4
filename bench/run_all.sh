#!/bin/bash
# Regenerates every bench/results/*.md from the code, one script, so that no
# committed figure outlives the code that produced it.
#
#   bench/run_all.sh [--build DIR] [--out DIR] [--quick] [--force] [--only NAME]...
#
# NAME: bench_default, bench_fio_comparison, bench_overhead, files, xxhsum, ring_nop, bench_net,
# bench_net_aa, serve_wrk, serve_instructions, serve_churn (default: all).  Each results file gets a
# provenance block: the commit (and whether the tree had changes), kernel,
# CPU, cores, load average before and after, the wall time and the exact
# command.
#
# A busy machine measures the other work: the script refuses to start when
# the 1-minute load average is above the CPU count or other work used more
# than a quarter of the CPUs over two seconds, and marks a file BUSY when
# other processes used more than 10% of the CPUs during its run (measured by
# bench/run_measured.py: the machine's CPU time less the job's own; the
# load average would count the job's own threads).  --force runs anyway and
# marks every file BUSY MACHINE.
#
# --quick: tiny runs that check the pipeline only (seconds, figures
# meaningless), written to --out (default: a new temporary directory, never
# bench/results); the serve scripts, which write bench/results themselves,
# are skipped.
#
# Exit status: 0 every job ran; 1 a job failed (the others still ran);
# 2 bad option; 3 refused: the machine is busy.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=build
OUT=
QUICK=0
FORCE=0
ONLY=()
while [ $# -gt 0 ]; do
    case $1 in
        --build) BUILD=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --quick) QUICK=1; shift ;;
        --force) FORCE=1; shift ;;
        --only) ONLY+=("$2"); shift 2 ;;
        -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run_all: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=$BUILD/uringkit
[ -x "$BIN" ] || { echo "run_all: $BIN is not built (make build, or --build DIR)" >&2; exit 2; }
if [ -z "$OUT" ]; then
    if [ $QUICK = 1 ]; then OUT=$(mktemp -d /tmp/uringkit-run-all-XXXXXX); else OUT=$ROOT/bench/results; fi
fi
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)

CPUS=$(nproc)
load1() { cut -d' ' -f1 /proc/loadavg; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
# "1" when the 1-minute load average is above the CPU count.
busy() { awk -v l="$(load1)" -v c="$CPUS" 'BEGIN { print (l > c) ? 1 : 0 }'; }

# The share of the CPUs busy over two idle seconds.
idle_share() { python3 "$ROOT/bench/run_measured.py" /dev/stdout sleep 2 | cut -d' ' -f4; }
if [ $FORCE = 0 ]; then
    share=$(idle_share)
    if [ "$(busy)" = 1 ] || awk -v s="$share" 'BEGIN { exit !(s > 0.25) }'; then
        echo "run_all: refused: load average $(loadavg) on $CPUS CPUs, other work using" \
             "$(awk -v s="$share" 'BEGIN { printf "%.0f%%", s * 100 }') of them; the figures would" \
             "measure the other work.  Wait for a quiet machine, or --force to run and mark" \
             "every file BUSY." >&2
        exit 3
    fi
fi

COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] && COMMIT="$COMMIT (with uncommitted changes)"
KERNEL=$(uname -r)
CPU_MODEL=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')

wanted() {
    [ ${#ONLY[@]} = 0 ] && return 0
    local n
    for n in "${ONLY[@]}"; do [ "$n" = "$1" ] && return 0; done
    return 1
}

FAILED=0
# job NAME FILE... -- COMMAND...: runs COMMAND from the repository root and
# puts the provenance block at the top of each FILE it wrote.  A COMMAND
# that prints its table on stdout (and writes no file itself) gets it
# written to the first FILE.
job() {
    local name=$1; shift
    local files=()
    while [ "$1" != -- ]; do files+=("$1"); shift; done
    shift
    wanted "$name" || return 0
    local before after start end status mark="" log
    before=$(loadavg)
    [ $FORCE = 1 ] && [ "$(busy)" = 1 ] && mark="BUSY MACHINE: "
    log=$(mktemp)
    echo "run_all: $name: $*" >&2
    start=$(date +%s.%N)
    (cd "$ROOT" && python3 bench/run_measured.py "$log.cpu" "$@") > "$log" 2>&1
    status=$?
    end=$(date +%s.%N)
    after=$(loadavg)
    # WALL JOB OTHER SHARE: the other work's share of the CPUs during the run.
    local other
    other=$(awk '{ printf "%.0f", $4 * 100 }' "$log.cpu" 2>/dev/null || echo "?")
    rm -f "$log.cpu"
    if [ "$other" != "?" ] && [ "$other" -gt 10 ]; then
        mark="BUSY: other work used ${other}% of the CPUs during the run; "
    fi
    if [ $status != 0 ]; then
        echo "run_all: $name failed (status $status):" >&2
        tail -20 "$log" >&2
        FAILED=1
        rm -f "$log"
        return
    fi
    local first=1 f
    for f in "${files[@]}"; do
        if [ $first = 1 ] && [ ! -s "$OUT/$f" ]; then
            { echo "# $name"; echo; echo '```'; cat "$log"; echo '```'; } > "$OUT/$f"
        fi
        first=0
        [ -f "$OUT/$f" ] || continue
        case $f in *.md) ;; *) continue ;; esac
        {
            echo "<!-- Regenerated by bench/run_all.sh: do not edit by hand. -->"
            echo "> ${mark}commit $COMMIT; Linux $KERNEL; $CPU_MODEL, $CPUS CPUs;"
            echo "> other work ${other}% of the CPUs during the run; load average before $before, after $after; $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.1f", e - s }') s;"
            echo "> command: \`${*/#$ROOT\//}\`"
            [ $QUICK = 1 ] && echo "> QUICK RUN: checks the pipeline only, the figures mean nothing."
            echo
            cat "$OUT/$f"
        } > "$OUT/$f.tmp" && mv "$OUT/$f.tmp" "$OUT/$f"
    done
    rm -f "$log"
}

# The outputs are regenerated, never appended to: a stale file must not survive.
clear_out() { local f; for f in "$@"; do rm -f "$OUT/$f"; done; }

if [ $QUICK = 1 ]; then
    wanted bench_default && clear_out bench_default.md
    job bench_default bench_default.md -- "$BIN" bench --size 8m --runtime 0.02 --ramp 0 \
        --rounds 2 --engines pread,uring --iodepth 1,8
    if command -v fio > /dev/null; then
        job bench_fio_comparison bench_fio_comparison.md -- bench/compare_fio.py \
            --uringkit "$BIN" --rounds 1 --runtime 1 --size 16m --out "$OUT/bench_fio_comparison.md"
    fi
    if [ -x "$BUILD/bench/bare_read_loop" ]; then
        wanted bench_overhead && clear_out bench_overhead.md
        job bench_overhead bench_overhead.md -- bench/overhead_bench.py --uringkit "$BIN" \
            --bare "$BUILD/bench/bare_read_loop" --rounds 2 --runtime 0.2 --size 16m \
            --out "$OUT/bench_overhead.md"
    fi
    job files files_readfiles.md files_cp.md -- bench/files_bench.py --uringkit "$BIN" \
        --rounds 1 --big 8m --dir "$OUT/files-work" --out "$OUT"
    rm -rf "$OUT/files-work"
    if command -v xxhsum > /dev/null; then
        job xxhsum xxhsum.md -- bench/xxhsum_bench.py --uringkit "$BIN" --rounds 1 --files 300 \
            --big 8m --dir "$OUT/xxhsum-work" --out "$OUT/xxhsum.md"
        rm -rf "$OUT/xxhsum-work"
    fi
    if [ -x "$BUILD/bench/ring_nop_bench" ]; then
        wanted ring_nop && clear_out ring_nop.md
        job ring_nop ring_nop.md ring_nop.json -- bench/ring_nop.py --build "$BUILD" \
            --repetitions 2 --json "$OUT/ring_nop.json"
    fi
    wanted bench_net && clear_out bench_net.md
    job bench_net bench_net.md -- "$BIN" bench net --engines uring,epoll --workloads echo:4:64 \
        --rounds 2 -d 100ms
    echo "run_all: quick run: serve_wrk, serve_instructions and serve_churn skipped (they write bench/results themselves)" >&2
else
    wanted bench_default && clear_out bench_default.md
    job bench_default bench_default.md -- "$BIN" bench
    job bench_fio_comparison bench_fio_comparison.md -- bench/compare_fio.py \
        --uringkit "$BIN" --rounds 11 --runtime 1 --size 1g --out "$OUT/bench_fio_comparison.md"
    if [ -x "$BUILD/bench/bare_read_loop" ]; then
        wanted bench_overhead && clear_out bench_overhead.md
        job bench_overhead bench_overhead.md -- bench/overhead_bench.py --uringkit "$BIN" \
            --bare "$BUILD/bench/bare_read_loop" --rounds 9 --runtime 1 --size 1g \
            --out "$OUT/bench_overhead.md"
    fi
    job files files_readfiles.md files_cp.md -- bench/files_bench.py --uringkit "$BIN" --out "$OUT"
    if command -v xxhsum > /dev/null; then
        job xxhsum xxhsum.md -- bench/xxhsum_bench.py --uringkit "$BIN" --out "$OUT/xxhsum.md"
    fi
    if [ -x "$BUILD/bench/ring_nop_bench" ]; then
        wanted ring_nop && clear_out ring_nop.md
        job ring_nop ring_nop.md ring_nop.json -- bench/ring_nop.py --build "$BUILD" \
            --repetitions 11 --json "$OUT/ring_nop.json"
    fi
    wanted bench_net && clear_out bench_net.md
    job bench_net bench_net.md -- "$BIN" bench net
    # A/A: each engine against itself, to show what "the same" looks like here.
    wanted bench_net_aa && clear_out bench_net_aa.md
    job bench_net_aa bench_net_aa.md -- "$BIN" bench net --engines epoll,epoll,uring,uring \
        --workloads echo:1:64,echo:64:64,echo:16:64k,http:64:16
    if [ "$OUT" = "$ROOT/bench/results" ]; then
        job serve_wrk serve_wrk.md -- bench/serve_bench.sh "${BUILD#$ROOT/}" 5
        job serve_instructions serve_instructions.md -- bench/serve_instructions.sh "${BUILD#$ROOT/}"
        job serve_churn serve_churn.md -- bench/serve_churn.py "${BUILD#$ROOT/}"
    else
        echo "run_all: serve_* skipped: those scripts write bench/results themselves" >&2
    fi
fi
echo "run_all: results in $OUT" >&2
exit $FAILED
