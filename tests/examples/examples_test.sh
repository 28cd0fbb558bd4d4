#!/bin/sh
# The examples do what they say: example_cat copies files (several, an empty
# one, one whose size is no multiple of its chunk, standard input) byte for
# byte and names a missing file; example_nop_batch sees every NOP complete and
# needs fewer io_uring_enter calls in batches; example_read_with_timeouts
# writes back the file it read as 100 coroutines (and names a piece that
# cannot be read); example_open_and_stat agrees with stat(1).
#
#   examples_test.sh EXAMPLE_CAT EXAMPLE_NOP_BATCH NO_URING EXAMPLE_READ_WITH_TIMEOUTS EXAMPLE_OPEN_AND_STAT
set -eu
cat_bin=$1
nop_bin=$2
no_uring=$3
pieces_bin=$4
open_stat_bin=$5
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
# read_with_timeouts: 100 concurrent reads with a deadline each give back the file.
"$pieces_bin" "$dir/a" 100 5000 > "$dir/got-pieces" || fail "example_read_with_timeouts failed"
cmp "$dir/a" "$dir/got-pieces" || fail "example_read_with_timeouts output differs"
"$pieces_bin" "$dir/b" 100 5000 > "$dir/got-small" || fail "example_read_with_timeouts on 11 bytes failed"
cmp "$dir/b" "$dir/got-small" || fail "example_read_with_timeouts on 11 bytes differs"
# A directory opens but cannot be read: status 1, the piece and reason named, nothing written.
status=0
"$pieces_bin" "$dir" 4 5000 > "$dir/got-dir" 2> "$dir/err" || status=$?
[ "$status" = 1 ] || fail "read_with_timeouts on a directory: status $status, expected 1"
grep -q "piece 0 at offset 0: Is a directory" "$dir/err" || fail "read_with_timeouts: no reason given: $(cat "$dir/err")"
[ ! -s "$dir/got-dir" ] || fail "read_with_timeouts wrote output after a failed piece"

# open_and_stat: the same sizes and modes as stat(1); a missing file named, status 1.
chmod 640 "$dir/b"
stat -c '%n %s %a' "$dir/a" "$dir/empty" "$dir/b" > "$dir/want-stat"
"$open_stat_bin" "$dir/a" "$dir/empty" "$dir/b" > "$dir/got-stat" || fail "example_open_and_stat failed"
cmp "$dir/want-stat" "$dir/got-stat" || fail "example_open_and_stat differs from stat(1): $(cat "$dir/got-stat")"
status=0
"$open_stat_bin" "$dir/b" "$dir/missing" > "$dir/got-stat" 2> "$dir/err" || status=$?
[ "$status" = 1 ] || fail "open_and_stat with a missing file: status $status, expected 1"
grep -q "$dir/missing: No such file or directory" "$dir/err" || fail "open_and_stat: missing file not named: $(cat "$dir/err")"
grep -q "^$dir/b 11 640$" "$dir/got-stat" || fail "open_and_stat did not go on after the missing file"
echo "examples_test: ok"
