#!/bin/sh
# source_lines_test.sh SOURCE_DIR DIR...
# No source file under the named folders of SOURCE_DIR (src, include,
# apps, tests, bench and examples: the library, its installed headers, the
# command, the tests, benchmarks and examples) is longer than 600 lines.  A longer file does more than one thing; it is split by
# responsibility, not trimmed.  Each file over the limit is named with its
# line count, and the status is 1.
limit=600
root=$1
shift
cd "$root" || exit 2
[ $# -gt 0 ] || { echo "usage: $0 SOURCE_DIR DIR..."; exit 2; }
over=$(find "$@" -type f \( -name '*.[ch]' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cxx' \
        -o -name '*.hh' -o -name '*.hpp' -o -name '*.inl' -o -name 'CMakeLists.txt' -o -name '*.cmake' \) |
    sort | while IFS= read -r f; do
        n=$(wc -l <"$f")
        [ "$n" -le "$limit" ] || echo "$f: $n lines (over $limit: split it by responsibility)"
    done)
if [ -n "$over" ]; then
    echo "$over"
    exit 1
fi
echo "no file in $* is over $limit lines"
