#!/bin/sh
# example_append_log does what its header says: two runs on one file leave
# every record of both, in order per appender (checked here with od-free
# counting of the payload texts it writes); a file that is not a log is left
# untouched (status 4), so is a symlink; a bad count is a usage error (2).
#
#   append_log_example_test.sh EXAMPLE_APPEND_LOG
set -eu
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "append_log_example_test: $*" >&2; exit 1; }

"$bin" "$dir/log" 8 25 > "$dir/out1" || fail "first run failed: $(cat "$dir/out1")"
grep -q "^200 records appended by 8 appenders" "$dir/out1" || fail "first run: $(cat "$dir/out1")"
grep -q "the log holds 200 records$" "$dir/out1" || fail "first run: $(cat "$dir/out1")"
"$bin" "$dir/log" 8 25 > "$dir/out2" || fail "second run failed: $(cat "$dir/out2")"
grep -q "the log holds 400 records$" "$dir/out2" || fail "second run: $(cat "$dir/out2")"
# Appender 3's records 0..49, each once, in order (the payloads are text).
tr -c 'a-z0-9 ' '\n' < "$dir/log" | grep -o "appender 3 record [0-9]*" | awk '{print $4}' > "$dir/seq3"
seq 0 49 > "$dir/want3"
cmp -s "$dir/seq3" "$dir/want3" || fail "appender 3's records are not 0..49 in order: $(tr '\n' ' ' < "$dir/seq3")"

# Someone else's file: refused, not truncated.
printf 'not a log at all\n' > "$dir/notes"
status=0
"$bin" "$dir/notes" 2 2 > /dev/null 2> "$dir/err" || status=$?
[ "$status" = 4 ] || fail "a file that is not a log: status $status, expected 4"
grep -q "$dir/notes: not a log" "$dir/err" || fail "not named: $(cat "$dir/err")"
[ "$(cat "$dir/notes")" = "not a log at all" ] || fail "the file that is not a log was changed"
# A symlink is not followed.
ln -s "$dir/log" "$dir/link"
status=0
"$bin" "$dir/link" 2 2 > /dev/null 2> "$dir/err" || status=$?
[ "$status" = 4 ] || fail "a symlink: status $status, expected 4"
# A torn tail (half a record) is cut off and the log goes on.
head -c 10 "$dir/log" >> "$dir/log"
"$bin" "$dir/log" 1 1 > "$dir/out3" 2> "$dir/err" || fail "after a torn tail: $(cat "$dir/err")"
grep -q "cutting a torn tail of 10 bytes" "$dir/err" || fail "torn tail not reported: $(cat "$dir/err")"
grep -q "the log holds 401 records$" "$dir/out3" || fail "after a torn tail: $(cat "$dir/out3")"
# Usage.
status=0
"$bin" "$dir/log" 0 > /dev/null 2>&1 || status=$?
[ "$status" = 2 ] || fail "0 appenders: status $status, expected 2"
echo "append_log_example_test: ok"
