#!/bin/bash
# Runs coreutils' own tests/cp/*.sh (the suite a drop-in cp is judged by)
# against coreutils' cp and against `uringkit cp`, and fails when uringkit
# fails a test that coreutils' cp passes on this machine, other than the
# deliberate differences listed below.
#
#   run_cp_tests.sh COREUTILS_SRC URINGKIT [TEST...]
#
# COREUTILS_SRC is a coreutils source tree at the version Debian ships (9.1:
# `git archive v9.1 tests/ init.cfg build-aux/` is enough); it stays outside
# this project.  Without it the script exits 77 (skipped) and says why.
# URINGKIT_CP_TESTS_OUT=DIR keeps each test's log there.
set -u

src=${1:-}
uringkit=${2:-}
shift 2 2>/dev/null || true
if [ -z "$src" ] || [ ! -f "$src/tests/init.sh" ] || [ ! -d "$src/tests/cp" ]; then
    echo "coreutils tests/cp: no coreutils source tree given (set URINGKIT_COREUTILS_SRC to one" \
        "at v9.1, the version Debian 12 ships); skipped"
    exit 77
fi
if [ ! -x "$uringkit" ]; then
    echo "run_cp_tests.sh: '$uringkit' is not an executable uringkit" >&2
    exit 2
fi
src=$(cd "$src" && pwd)
uringkit=$(cd "$(dirname "$uringkit")" && pwd)/$(basename "$uringkit")

# Deliberate differences, each documented in `uringkit cp --help` and docs/files.md:
#   cp-deref, link-deref: -L with -r is refused (links inside a tree are never
#     followed, so a link cannot lead a root copy out of the tree);
#   link-preserve: its two -R -L cases, refused for the same reason (its
#     other cases pass);
#   file-perm-race: it waits for the destination's name to appear while cp
#     is still reading a FIFO; uringkit cp writes a new file under a
#     temporary name and gives it its name only once it is complete, so the
#     test's writer never stops (it runs into the timeout below).
deliberate=" cp-deref link-deref link-preserve file-perm-race "

work=$(mktemp -d "${TMPDIR:-/tmp}/uringkit-cp-suite.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
out=${URINGKIT_CP_TESTS_OUT:-$work/logs}
mkdir -p "$out"

# A stand-in for coreutils' build directory: src/ holds the programs the
# tests run, coreutils' own from /usr/bin, and cp (one of the two under test).
make_bin() {  # DIR KIND
    local dir=$1/src p
    mkdir -p "$dir"
    for p in basename cat chgrp chmod chown cmp comm cut date dd df dirname du echo env expr \
        false head id install link ln ls md5sum mkdir mkfifo mknod mktemp mv od printf pwd \
        readlink realpath rm rmdir seq sleep sort stat sync tail tee test timeout touch tr \
        true truncate uname uniq unlink wc yes; do
        [ -x "/usr/bin/$p" ] && ln -s "/usr/bin/$p" "$dir/$p"
    done
    # getlimits is coreutils' test helper; the cp tests need only INT_MAX from it.
    printf '#!/bin/sh\necho INT_MAX=2147483647 UINT_MAX=4294967295\n' >"$dir/getlimits"
    chmod +x "$dir/getlimits"
    if [ "$2" = coreutils ]; then
        ln -s /usr/bin/cp "$dir/cp"
    else
        # The error text may differ only by the program's name.  (Absolute
        # paths: some tests run cp with a PATH that holds only it.)
        cat >"$dir/cp" <<EOF
#!/bin/bash
err=\$(/usr/bin/mktemp "\${TMPDIR:-/tmp}/cp-err.XXXXXX")
"$uringkit" cp "\$@" 2>"\$err"
rc=\$?
/usr/bin/sed 's/^uringkit cp: /cp: /' "\$err" >&2
/usr/bin/rm -f "\$err"
exit \$rc
EOF
        chmod +x "$dir/cp"
    fi
    # What the tests grep coreutils' config.h for: the features this system has.
    printf '#define %s 1\n' HAVE_OPENAT HAVE_UTIMENSAT USE_ACL >"$1/config.h"
    (cd "$dir" && ls) | tr '\n' ' ' >"$1/built_programs"
}

run_one() {  # KIND TEST -> pass | fail | skip
    local build=$work/$1 name=$2 rc limit=300
    # A deliberate difference may hang the test (file-perm-race): not for long.
    case "$1:$deliberate" in uringkit:*" $name "*) limit=30 ;; esac
    (cd "$build" && env -i PATH="/usr/bin:/bin:/usr/sbin:/sbin" HOME="$work" \
        TMPDIR="${TMPDIR:-/tmp}" LC_ALL=C srcdir="$src" abs_srcdir="$src" \
        abs_top_srcdir="$src" abs_top_builddir="$build" top_srcdir="$src" \
        built_programs="$(cat "$build/built_programs")" CC=gcc CONFIG_HEADER="$build/config.h" PERL=perl EGREP="grep -E" \
        SHELL=/bin/bash VERBOSE=yes timeout "$limit" bash "$src/tests/cp/$name.sh" \
        >"$out/$1.$name.log" 2>&1)
    rc=$?
    case $rc in
        0) echo pass ;;
        77) echo skip ;;
        *) echo fail ;;
    esac
}

make_bin "$work/coreutils" coreutils
make_bin "$work/uringkit" uringkit

if [ $# -gt 0 ]; then
    tests=("$@")
else
    tests=()
    for f in "$src"/tests/cp/*.sh; do tests+=("$(basename "$f" .sh)"); done
fi

declare -A count=([coreutils.pass]=0 [coreutils.fail]=0 [coreutils.skip]=0 \
    [uringkit.pass]=0 [uringkit.fail]=0 [uringkit.skip]=0)
regressions=()
for t in "${tests[@]}"; do
    ref=$(run_one coreutils "$t")
    got=$(run_one uringkit "$t")
    count[coreutils.$ref]=$((count[coreutils.$ref] + 1))
    count[uringkit.$got]=$((count[uringkit.$got] + 1))
    note=
    if [ "$ref" = pass ] && [ "$got" != pass ]; then
        case $deliberate in
            *" $t "*) note="  (deliberate difference)" ;;
            *)
                note="  <- coreutils passes"
                regressions+=("$t")
                ;;
        esac
    fi
    printf '%-24s coreutils %-4s  uringkit %-4s%s\n' "$t" "$ref" "$got" "$note"
done
echo "coreutils cp: ${count[coreutils.pass]} pass, ${count[coreutils.fail]} fail," \
    "${count[coreutils.skip]} skip"
echo "uringkit cp:  ${count[uringkit.pass]} pass, ${count[uringkit.fail]} fail," \
    "${count[uringkit.skip]} skip"
if [ ${#regressions[@]} -gt 0 ]; then
    echo "failing where coreutils' cp passes: ${regressions[*]} (logs: $out)"
    [ -n "${URINGKIT_CP_TESTS_OUT:-}" ] || echo "(set URINGKIT_CP_TESTS_OUT=DIR to keep the logs)"
    exit 1
fi
exit 0
