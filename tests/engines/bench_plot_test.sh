#!/bin/sh
# bench_plot_test.sh URINGKIT
# `uringkit bench --plot` draws what the verdict rests on: an error bar (the
# median's interval) and a verdict mark for every point, the A/A noise band
# of an engine listed twice, axis labels with units, a title and a legend;
# and rsvg-convert (Debian: librsvg2-bin) renders it to a PNG that is more
# than a blank page.  Exit 77 (skipped) without rsvg-convert.
set -u
cli=$1
if ! command -v rsvg-convert >/dev/null 2>&1; then
    echo "skipped: rsvg-convert is not installed (Debian package librsvg2-bin)"
    exit 77
fi
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
status=0
fail() {
    echo "FAIL: $*"
    status=1
}

# pread, uring and uring again (A/A) at two depths, three rounds.
if ! TMPDIR=$dir "$cli" bench --size 4m --ios 2000 --ramp 0 --rounds 3 --iodepth 1,8 \
    --engines pread,uring,uring --plot "$dir/plot.svg" >"$dir/out" 2>&1; then
    cat "$dir/out"
    echo "FAIL: bench --plot did not succeed"
    exit 1
fi
svg=$dir/plot.svg
count() { grep -o -- "$1" "$svg" | wc -l; }

# Two panels x three engines x two depths.
points=$(count 'class="point"')
[ "$points" -eq 12 ] || fail "$points points, expected 12"
bars=$(count 'class="error-bar"')
[ "$bars" -eq "$points" ] || fail "$bars error bars for $points points"
marks=$(grep -oE 'class="point"[^>]*data-verdict="(faster|slower|same|too_few_samples|reference)"' \
    "$svg" | wc -l)
[ "$marks" -eq "$points" ] || fail "$marks verdict marks for $points points"
# pread is what the others are compared with: the reference at each depth, in both panels.
refs=$(grep -oE 'data-engine="pread" data-depth="[0-9]+" data-verdict="reference"' "$svg" | wc -l)
[ "$refs" -eq 4 ] || fail "pread is the reference at $refs points, expected 4"
# The A/A band of uring#2 against uring, at each depth in both panels.
bands=$(count 'class="aa-band"')
[ "$bands" -eq 4 ] || fail "$bands A/A bands, expected 4"
for label in 'I/O depth (I/Os in flight per job)' 'I/Os per second (IOPS)' 'µs of CPU per I/O' \
    'IOPS (higher is better)' 'CPU per I/O (lower is better)' 'class="title"'; do
    grep -qF -- "$label" "$svg" || fail "no '$label'"
done
axis=$(count 'class="axis-label"')
[ "$axis" -eq 4 ] || fail "$axis axis labels, expected 4"
for engine in pread uring 'uring#2'; do
    grep -q "<g class=\"legend\">.*>$engine</text></g>" "$svg" || fail "no legend entry for $engine"
done
for verdict in faster slower same too_few_samples reference; do
    grep -q "class=\"legend verdict-key\" data-verdict=\"$verdict\"" "$svg" ||
        fail "no legend entry for the mark '$verdict'"
done
grep -q 'error bar: the median' "$svg" || fail "the legend does not explain the error bars"
grep -q 'A/A noise band:' "$svg" || fail "the legend does not explain the A/A band"
grep -q 'uring#2 against uring (A/A)' "$svg" || fail "the legend does not say who is compared with whom"
grep -qi '<script' "$svg" && fail "the SVG carries a script"

if ! rsvg-convert -o "$dir/plot.png" "$svg"; then
    fail "rsvg-convert could not render the SVG"
else
    # A PNG (its signature), as wide as the SVG, and more than a blank page:
    # text, axes and points compress to tens of kilobytes, white to a few.
    signature=$(od -An -tx1 -N8 "$dir/plot.png" | tr -d ' \n')
    [ "$signature" = 89504e470d0a1a0a ] || fail "not a PNG: $signature"
    width=$(od -An -tu1 -j16 -N4 "$dir/plot.png" | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}')
    [ "$width" -eq 1000 ] || fail "PNG $width pixels wide, expected 1000"
    bytes=$(wc -c <"$dir/plot.png")
    [ "$bytes" -gt 20000 ] || fail "PNG of only $bytes bytes: nothing drawn?"
fi
[ $status -eq 0 ] && echo "ok: $points points with error bars and marks, $bands A/A bands, PNG $bytes bytes"
exit $status
