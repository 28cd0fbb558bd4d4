#!/bin/sh
# The examples do what they say: example_cat copies files (several, an empty
# one, one whose size is no multiple of its chunk, standard input) byte for
# byte and names a missing file; example_nop_batch sees every NOP complete and
# needs fewer io_uring_enter calls in batches.
#
#   examples_test.sh EXAMPLE_CAT EXAMPLE_NOP_BATCH NO_URING
set -eu
cat_bin=$1
nop_bin=$2
no_uring=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "examples_test: $*" >&2; exit 1; }

# 1 MiB + 12345 bytes: eight 128 KiB reads per batch, then a short tail.
head -c 1061121 /dev/urandom > "$dir/a"
: > "$dir/empty"
printf 'small file\n' > "$dir/b"
cat "$dir/a" "$dir/empty" "$dir/b" > "$dir/want"
"$cat_bin" "$dir/a" "$dir/empty" "$dir/b" > "$dir/got" || fail "example_cat failed"
cmp "$dir/want" "$dir/got" || fail "example_cat output differs from cat(1)"

# Standard input is a pipe: no offsets, read at the file position.
cat "$dir/a" | "$cat_bin" > "$dir/got-pipe" || fail "example_cat on a pipe failed"
cmp "$dir/a" "$dir/got-pipe" || fail "example_cat on a pipe differs"

# A missing file: status 1, a message naming it, the other files still copied.
status=0
"$cat_bin" "$dir/b" "$dir/missing" > "$dir/got-missing" 2> "$dir/err" || status=$?
[ "$status" = 1 ] || fail "missing file: status $status, expected 1"
grep -q "$dir/missing: No such file or directory" "$dir/err" || fail "missing file not named: $(cat "$dir/err")"
cmp "$dir/b" "$dir/got-missing" || fail "the file before the missing one was not copied"

# io_uring forbidden: status 3 and the reason.
status=0
"$no_uring" "$cat_bin" "$dir/b" > /dev/null 2> "$dir/err" || status=$?
[ "$status" = 3 ] || fail "without io_uring: status $status, expected 3"
grep -q "io_uring_setup" "$dir/err" || fail "without io_uring: no reason given: $(cat "$dir/err")"

# nop_batch: both runs complete every NOP; batching needs fewer system calls.
"$nop_bin" 4096 32 > "$dir/nop" || fail "example_nop_batch failed: $(cat "$dir/nop")"
one=$(awk '$1 == "1" { print $3 }' "$dir/nop")
batched=$(awk '$1 == "32" { print $3 }' "$dir/nop")
[ "$one" = 4096 ] || fail "batch 1: $one io_uring_enter calls, expected 4096"
[ "$batched" = 128 ] || fail "batch 32: $batched io_uring_enter calls, expected 128"
echo "examples_test: ok"
