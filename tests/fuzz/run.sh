#!/bin/sh
# run.sh BUILD_DIR [SECONDS]
# Runs every fuzz target of BUILD_DIR for SECONDS (default 20) from its
# checked-in corpus (tests/fuzz/CORPUS, read only: new inputs go to a
# scratch directory).  A crash, leak or timeout fails the run; the input that
# caused it is kept as BUILD_DIR/fuzz-artifacts/crash-* (turn it into a
# regression test and add it to the corpus).
set -u
build=$1
seconds=${2:-20}
here=$(cd "$(dirname "$0")" && pwd)
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
status=0
for pair in http_parser:http_corpus file_plan:file_plan_corpus size_parser:size_parser_corpus path_list:path_list_corpus \
            buffer_ring:buffer_ring_corpus option_parsers:option_parsers_corpus recv_stream:recv_stream_corpus; do
    name=${pair%%:*}
    corpus=${pair#*:}
    bin=$build/tests/fuzz/${name}_fuzz
    [ -x "$bin" ] || { echo "fuzz: $bin was not built"; status=1; continue; }
    scratch=$(mktemp -d)
    echo "fuzz: ${name}_fuzz for ${seconds}s from tests/fuzz/$corpus"
    if ! "$bin" "$scratch" "$here/$corpus" -max_total_time="$seconds" -timeout=10 \
            -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/${name}-" \
            >"$build/fuzz-${name}.log" 2>&1; then
        tail -40 "$build/fuzz-${name}.log"
        echo "fuzz: ${name}_fuzz FAILED (log: $build/fuzz-${name}.log)"
        status=1
    else
        grep -E 'stat::number_of_executed_runs|stat::new_units_added' "$build/fuzz-${name}.log" | tr '\n' ' '
        echo
    fi
    rm -rf "$scratch"
done
exit $status
