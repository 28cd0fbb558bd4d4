#!/bin/bash
# `uringkit cp` next to coreutils' cp on the options scripts use beyond a
# plain copy (-l, -s, -b/--backup/-S, -d, --sparse, --attributes-only,
# --parents -p, --preserve order, abbreviated long options, POSIXLY_CORRECT,
# exit statuses): each case runs in two fresh directories, once with each
# cp, and what they leave (types, modes, link counts, sizes, link targets,
# contents) and their exit statuses must be the same.
#   cp_like_coreutils_test.sh URINGKIT
set -u
uk=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
[ -x /usr/bin/cp ] || { echo "no coreutils cp at /usr/bin/cp; skipped"; exit 77; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
umask 022
failures=0

manifest() {  # what a directory holds, in a form that compares across runs
    # type, permission bits, link count, link target, size; then contents
    (cd "$1" && find . -mindepth 1 -printf '%p %y %m %n %l %s\n' | LC_ALL=C sort &&
        find . -type f -exec md5sum {} + | LC_ALL=C sort -k2)
}

# check NAME SETUP COMMAND [output]: SETUP (shell) prepares the directory,
# COMMAND runs there with `cp` standing for the cp under test; with
# `output`, what both print must be the same too.
check() {
    local name=$1 setup=$2 cmd=$3 whole=${4:-} side rc
    for side in coreutils uringkit; do
        rm -rf "$work/$side" && mkdir "$work/$side"
        (cd "$work/$side" && eval "$setup") || { echo "FAIL $name: setup"; failures=$((failures + 1)); return; }
        if [ $side = coreutils ]; then
            (cd "$work/$side" && cp() { /usr/bin/cp "$@"; } && eval "$cmd") >"$work/$side.out" 2>&1
        else
            (cd "$work/$side" && cp() { "$uk" cp "$@"; } && eval "$cmd") >"$work/$side.out" 2>&1
        fi
        echo "status $?" >>"$work/$side.out"
        manifest "$work/$side" >"$work/$side.tree"
    done
    local differs=
    [ -n "$whole" ] && ! cmp -s "$work/coreutils.out" "$work/uringkit.out" && differs=output
    if [ -n "$differs" ] || ! cmp -s "$work/coreutils.tree" "$work/uringkit.tree" ||
        [ "$(tail -1 "$work/coreutils.out")" != "$(tail -1 "$work/uringkit.out")" ]; then
        echo "FAIL $name: $cmd"
        diff -u "$work/coreutils.tree" "$work/uringkit.tree" | sed 's/^/  /'
        diff -u "$work/coreutils.out" "$work/uringkit.out" | sed 's/^/  /'
        failures=$((failures + 1))
    else
        echo "ok   $name ($(tail -1 "$work/uringkit.out"))"
    fi
}

files='echo one >a; echo two >b; mkdir d; echo three >d/f; ln d/f d/g; ln -s a sl'

check "-l a file" "$files" 'cp -l a c'
check "-l onto an existing file" "$files" 'cp -l a b'
check "-fl onto an existing file" "$files" 'cp -fl a b'
check "-rl a tree" "$files" 'cp -rl d e'
check "-l a symlink operand follows it" "$files" 'cp -l sl c'
check "-Pl a symlink operand links it" "$files" 'cp -Pl sl c'
check "-s absolute" "$files" 'cp -s /etc/hostname c'
check "-s relative, here" "$files" 'cp -s a c'
check "-s relative, elsewhere" "$files" 'cp -s a d/c'
check "-ls together" "$files" 'cp -l -s a c'
check "-b" "$files" 'cp -b a b'
check "--backup=numbered twice" "$files" 'cp --backup=numbered a b && cp --backup=numbered d/f b'
check "--backup=existing, none numbered" "$files" 'cp --backup=existing a b'
check "--backup=existing, one numbered" "$files; echo old >b.~1~" 'cp --backup=existing a b'
check "-S .bak" "$files" 'cp -S .bak a b'
check "-v -b names the backup" "$files" 'cp -v -b a b && cp -v --backup=t a b d' output
check "-v -rb into a tree" "$files; mkdir e; cp -r d e/" 'cp -v -rb d e/' output
check "VERSION_CONTROL=numbered -b" "$files" 'VERSION_CONTROL=numbered cp -b a b'
check "--backup=bogus" "$files" 'cp --backup=bogus a b'
check "-b with -n" "$files" 'cp -bn a b'
check "-f --backup F F" "$files" 'cp -f --backup=simple a a'
check "backup would be the source" "$files; echo x >b~" 'cp --backup=simple b~ b'
check "-rb into a tree" "$files; mkdir e; cp -r d e/" 'cp -rb d e/'
check "-d keeps links and hard links" "$files" 'cp -d sl d/f d/g b 2>/dev/null; mkdir x; cp -d sl d/f d/g x'
check "--attributes-only onto a file" "$files; chmod 600 a" 'cp -p --attributes-only a b'
check "--attributes-only, a new file" "$files" 'cp --attributes-only a c'
check "--sparse=always" 'printf x >s; dd if=/dev/zero bs=64k count=4 >>s 2>/dev/null; printf y >>s' \
    'cp --sparse=always s c && test $(stat -c %b c) -lt $(stat -c %b s)'
check "--sparse=never" 'truncate -s 1m s; printf y >>s' \
    'cp --sparse=never s c && test $(stat -c %b c) -ge 2048'
check "--sparse with --reflink=always" "$files" 'cp --sparse=always --reflink=always a c'
check "--parents -p keeps the directories' modes" \
    'mkdir -p p/q; chmod 750 p; chmod 705 p/q; echo z >p/q/f; mkdir out' 'cp -p --parents p/q/f out'
check "--no-preserve=mode then --preserve=all" "$files; chmod 600 a" \
    'cp --no-preserve=mode --preserve=all a c'
check "--preserve=all then --no-preserve=mode" "$files; chmod 600 a" \
    'cp --preserve=all --no-preserve=mode a c'
check "abbreviated --parent" 'mkdir -p p/q out; echo z >p/q/f' 'cp --parent p/q/f out'
check "abbreviated --b=simple" "$files" 'cp --b=simple a b'
check "ambiguous --re" "$files" 'cp --re a c'
check "a missing operand" "$files" 'cp a'
check "an unknown option" "$files" 'cp --no-such-option a c'
check "POSIXLY_CORRECT through a dangling link" 'echo hi >f; ln -s no-such dangle' \
    'POSIXLY_CORRECT=1 cp f dangle'
check "a dangling link without it" 'echo hi >f; ln -s no-such dangle' 'cp f dangle'
# A link put in place of the file it names would lose the file's data.
same='echo data >foo; ln -s foo symlink'
check "-d a link onto the file it names" "$same" 'cp -d symlink foo'
check "-P a link onto the file it names" "$same" 'cp -P symlink foo'
check "-s a link onto the file it names" "$same" 'cp -s symlink foo'
check "-sf a link onto the file it names" "$same" 'cp -sf symlink foo'
check "-sf a file onto itself" "$same" 'cp -sf foo foo'
check "--remove-destination a link onto the file it names" "$same" 'cp --remove-destination symlink foo'
check "-b a link onto the file it names" "$same" 'cp -b symlink foo'
check "-bf a link onto the file it names" "$same" 'cp -bf symlink foo'
check "--remove-destination a file onto a link to it" "$same" 'cp --remove-destination foo symlink'
check "-b a file onto its hard link" "$same; ln foo hard" 'cp -b foo hard'
check "-bfl a file onto itself" "$same" 'cp -bfl foo foo'
check "-dl a link onto the file it names" "$same" 'cp -dl symlink foo'
check "-f onto a symlink loop" 'echo hi >f; ln -s loop loop' 'cp -f f loop'

[ $failures -eq 0 ] || { echo "$failures case(s) differ from coreutils' cp"; exit 1; }
echo "every case matches coreutils' cp"
