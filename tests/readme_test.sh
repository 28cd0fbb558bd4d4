#!/bin/bash
# Every block of the README marked runnable (```sh runnable) runs as
# written, in order, in a scratch directory where `build` is this build
# tree and $HOME is the scratch directory itself (so `cmake --install
# --prefix ~/.local` stays inside it).  A ```cpp file=NAME block is written
# to NAME first.  A block that fails fails the test, naming it.
#   readme_test.sh SOURCE_DIR BUILD_DIR [DOC...]
set -u
src=$1 build=$2
shift 2
docs=("$@")
[ ${#docs[@]} -gt 0 ] || docs=(README.md)
scratch=$(mktemp -d)
trap 'jobs -p | xargs -r kill 2>/dev/null; rm -rf "$scratch"' EXIT
ln -s "$(cd "$build" && pwd)" "$scratch/build"
fail=0 blocks=0
for doc in "${docs[@]}"; do
    # Split the document into numbered files: runnable shell blocks and named files.
    out=$scratch/.blocks-$(basename "$doc")
    mkdir -p "$out"
    awk -v out="$out" '
        /^```sh runnable[ \t]*$/ { n++; f = sprintf("%s/%03d.sh", out, n); inblock = 1; next }
        /^```[a-z+]* file=/ { sub(/.*file=/, ""); f = sprintf("%s/file-%s", out, $0); inblock = 1; next }
        /^```/ { inblock = 0; next }
        inblock { print > f }
    ' "$src/$doc"
    for f in "$out"/file-*; do
        [ -e "$f" ] && cp "$f" "$scratch/${f##*/file-}"
    done
    for block in "$out"/[0-9]*.sh; do
        [ -e "$block" ] || continue
        blocks=$((blocks + 1))
        if ! (cd "$scratch" && HOME=$scratch TMPDIR=$scratch timeout 300 bash -e "$block") \
            >"$block.out" 2>&1; then
            echo "FAIL: $doc, runnable block ${block##*/}:"
            sed 's/^/    | /' "$block"
            echo "  output:"
            tail -20 "$block.out" | sed 's/^/    > /'
            fail=1
        fi
    done
done
[ "$blocks" -gt 0 ] || { echo "FAIL: no runnable block in ${docs[*]}"; exit 1; }
[ "$fail" = 0 ] && echo "all $blocks runnable blocks ran"
exit "$fail"
