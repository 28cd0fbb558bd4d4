#!/bin/sh
# make_labels_test.sh MAKEFILE BUILD_DIR
# Every label the Makefile passes to ctest (-L NAME, -LE NAME) must select at
# least one test: a filter that matches nothing silently runs (or excludes)
# nothing, and the suite then claims more than it tested.
makefile=$1
build=$2
labels=$(grep -o -- '-LE\? [A-Za-z0-9_-]*' "$makefile" | awk '{print $2}' | sort -u)
[ -n "$labels" ] || { echo "no ctest label filters in $makefile"; exit 0; }
status=0
for label in $labels; do
    n=$(ctest --test-dir "$build" -N -L "^$label\$" | sed -n 's/^Total Tests: //p')
    if [ "${n:-0}" -eq 0 ]; then
        echo "the Makefile filters on ctest label '$label', which no test has"
        status=1
    else
        echo "label '$label': $n tests"
    fi
done
exit $status
