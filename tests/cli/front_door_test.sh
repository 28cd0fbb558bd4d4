#!/bin/bash
# What a newcomer meets first: unknown commands named with the nearest one,
# --help and --version winning wherever they stand, one error style, help
# without CLI11's type syntax, man pages with every section, and the bash
# completion, all from the one set of option definitions.
#   front_door_test.sh URINGKIT_BINARY MAN_DIR
set -u
bin=$1 man=$2
fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
bad() { echo "FAIL: $*"; fail=1; }
# run EXPECTED_STATUS ARGS...: the command's stdout in $out, stderr in $err.
run() {
    local want=$1; shift
    "$bin" "$@" >"$out" 2>"$err"
    local rc=$?
    [ "$rc" = "$want" ] || bad "uringkit $* exited $rc, expected $want: $(head -c 300 "$err")"
}
has() { grep -qF -- "$2" "$1" || bad "$3: '$2' missing in: $(head -c 400 "$1")"; }

run 2 bnech
has "$err" "uringkit: 'bnech' is not a command; did you mean 'bench'?" "misspelt command"
has "$err" "Try 'uringkit --help' for more information." "misspelt command"
run 2 frobnicate
has "$err" "uringkit: 'frobnicate' is not a command" "unknown command"
grep -q 'did you mean' "$err" && bad "a suggestion for a word near no command"
run 2
has "$err" "a command is required" "no command"

for args in "--version" "cp --version" "bench net --version" "cp a b --version"; do
    # shellcheck disable=SC2086
    run 0 $args
    has "$out" "uringkit " "$args"
done
run 0 bench --replay --help
has "$out" "Usage: uringkit bench" "--help taken as --replay's value"
run 0 bench --filename --help --size 1m
has "$out" "Usage: uringkit bench" "--help after an option that takes a value"
run 0 bench net --json x -h
has "$out" "Usage: uringkit bench net" "bench net -h"
run 1 cp -- --help
has "$err" "uringkit cp: " "after --, --help is an operand"

run 2 bench --no-such-option
has "$err" "uringkit bench: " "parse error prefix"
has "$err" "Try 'uringkit bench --help' for more information." "parse error hint"
run 2 bench net --rounds zero
has "$err" "uringkit bench net: " "nested parse error prefix"
has "$err" "Try 'uringkit bench net --help'" "nested parse error hint"
run 2 bench --engines pread,,uring
has "$err" "uringkit bench: --engines" "value error prefix"
has "$err" "Try 'uringkit bench --help'" "value error hint"
run 1 cp  # coreutils' usage status
has "$err" "uringkit cp: " "missing operands"

# An option given twice: the last one wins (getopt's and fio's rule); a
# list given in one use keeps every item.
run 0 bench --size 16m --size 1m --engines uring --engines pread,uring --iodepth 1 --runtime 0.05 --rounds 3 --no-latency --json -
python3 - "$out" <<'PY' || bad "bench with repeated options: $(head -c 300 "$out")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["job"]["size_bytes"] == 1 << 20, d["job"]["size_bytes"]
assert d["job"]["engines"] == ["pread", "uring"], d["job"]["engines"]
PY

for sub in "" probe bench "bench net" cp readfiles xxhsum serve load; do
    # shellcheck disable=SC2086
    run 0 $sub --help
    for want in "Usage: uringkit" "Examples:" "Exit status:" "Full manual: man uringkit"; do
        has "$out" "$want" "uringkit $sub --help"
    done
    # CLI11's own syntax is not for people: type names, validators, defaults braces.
    for residue in "TEXT" "UINT" "FLOAT" "REQUIRED" "{default}" ":{" " in [" "docs/"; do
        grep -qF -- "$residue" "$out" && bad "uringkit $sub --help shows '$residue'"
    done
    page=uringkit${sub:+-${sub// /-}}
    f=$man/$page.1
    [ -s "$f" ] || { bad "no man page $f"; continue; }
    upper=$(echo "$page" | tr a-z A-Z)
    has "$f" ".TH \"$upper\" 1" "$page.1 header"
    for section in NAME SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" EXAMPLES "SEE ALSO"; do
        has "$f" ".SH $section" "$page.1"
    done
    # groff's warnings, less a long command line that cannot be broken.
    warnings=$(groff -man -ww -z "$f" 2>&1 | grep -v "cannot adjust line\|can't break line")
    [ -z "$warnings" ] || bad "$page.1: $warnings"
done
has "$man/uringkit-cp.1" "cp(1)" "cp's peer in SEE ALSO"
has "$man/uringkit-bench.1" "fio(1)" "bench's peer in SEE ALSO"
has "$man/uringkit-readfiles.1" "xxhsum(1)" "readfiles' peer in SEE ALSO"
has "$man/uringkit-xxhsum.1" "xxhsum(1)" "xxhsum mode's peer in SEE ALSO"
has "$man/uringkit-load.1" "wrk(1)" "load's peer in SEE ALSO"

# The bash completion, driven as bash drives it.
complete_words() {
    bash -c 'source "$1"; shift
        COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
        _uringkit 2>/dev/null; ((${#COMPREPLY[@]})) && printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' \
        _ "$man/uringkit.bash" "$@"
}
expect_completion() {
    local want=$1; shift
    local got
    got=$(complete_words "$@")
    [ "$got" = "$want" ] || bad "completing '$*': got '$got', expected '$want'"
}
expect_completion "bench " uringkit be
expect_completion "net " uringkit bench ""
expect_completion "--engines " uringkit bench --eng
expect_completion "pread,uring pread,uring-async pread,uring-cmd pread,uring-cmd-reg pread,uring-hybrid pread,uring-iopoll pread,uring-reg pread,uring-sqpoll " \
    uringkit bench --engines pread,ur
expect_completion "epoll epoll-read " uringkit bench net --engines ep
expect_completion "uring,epoll-read " uringkit bench net --engines uring,epoll-
expect_completion "always auto never " uringkit cp --reflink ""
expect_completion "always auto never " uringkit cp --reflink = ""
expect_completion "randread randrw randwrite " uringkit bench --rw rand
expect_completion "" uringkit bench --bs ""
dir=$(mktemp -d)
touch "$dir/trace-one.txt"
expect_completion "$dir/trace-one.txt " uringkit bench --replay "$dir/trace-o"
expect_completion "$dir/trace-one.txt " uringkit cp "$dir/trace"
rm -r "$dir"
if command -v zsh >/dev/null; then
    zsh -n "$man/_uringkit" || bad "_uringkit is not valid zsh"
fi

# The default bench on a terminal shows its live line from the first second:
# engine, depth, round, run and the whole benchmark's ETA.
if command -v script >/dev/null; then
    tmp=$(mktemp -d)
    TMPDIR=$tmp script -qec "timeout -s INT 1.5 $bin bench --size 8m" /dev/null >"$out" 2>&1
    grep -aqE 'pread +depth 1 +round 1/11 +run 1/[0-9]+ .*IOPS +ETA [0-9]+ s' "$out" ||
        bad "no progress line in the first 1.5 s of bench on a terminal: $(head -c 300 "$out")"
    rm -rf "$tmp"
fi

# readfiles of more than a second, stdout to a file and stderr on a
# terminal, shows its count (while it lists a cold tree: the files found);
# a read that ended sooner has nothing to show.
if command -v script >/dev/null; then
    started=$(date +%s%N)
    script -qec "timeout -s INT 4 $bin readfiles --engine sync --hash none /usr >/dev/null" \
        /dev/null >"$out" 2>&1
    took_ms=$((($(date +%s%N) - started) / 1000000))
    if [ "$took_ms" -ge 2000 ]; then
        grep -aqE 'readfiles: ([0-9]+ files, [0-9.]+ MiB, [0-9]+ files/s|listing: [0-9]+ files in [0-9]+ directories)' "$out" ||
            bad "readfiles ran ${took_ms} ms on a terminal without a live line: $(head -c 300 "$out")"
    fi
fi

[ "$fail" = 0 ] && echo "front door: all checks passed"
exit "$fail"
