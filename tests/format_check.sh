#!/bin/sh
# Fails, naming each file, when a C or C++ source of the project is not as
# clang-format leaves it (.clang-format at the root), so that diffs stay
# about content.  Exit 77 (ctest: skipped) where clang-format-14 is missing.
#   tests/format_check.sh SOURCE_DIR        fix with: make format
root=${1:?usage: format_check.sh SOURCE_DIR}
fmt=${CLANG_FORMAT:-clang-format-14}
if ! command -v "$fmt" >/dev/null 2>&1; then
    echo "$fmt not found (Debian package clang-format-14): formatting not checked"
    exit 77
fi
cd "$root" || exit 2
files=$(find src include apps tests bench examples -type f \
            \( -name '*.cpp' -o -name '*.hpp' -o -name '*.c' -o -name '*.h' \) | sort)
[ -n "$files" ] || { echo "no source files found under $root: nothing was checked"; exit 1; }
# -Werror: a file it would change makes the status non-zero, and so does a
# clang-format that could not run (an unreadable .clang-format, a crash):
# that must fail the check too, not pass it with nothing named.
out=$("$fmt" --dry-run -Werror $files 2>&1)
status=$?
bad=$(printf '%s\n' "$out" | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
if [ -n "$bad" ]; then
    for f in $bad; do echo "$f: not as $fmt formats it (make format fixes it)"; done
    exit 1
fi
if [ "$status" -ne 0 ]; then
    printf '%s\n' "$out" | head -20
    echo "$fmt failed (status $status) without naming a file to format"
    exit 1
fi
echo "$(echo "$files" | wc -l) files formatted as .clang-format says"
