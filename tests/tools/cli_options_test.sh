#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The programs' own options, as a user tries them: -h/--help print the usage on stdout and
# exit 0, -V/--version print "PROGRAM VERSION" and exit 0, an unknown option exits 2 with
# a message naming it on stderr and nothing on stdout. nndctl(1) is checked against
# nndctl --help: every command and every option the help names is in the page.
# Usage: cli_options_test.sh BUILD_DIR SOURCE_DIR
set -eu
build=$1 src=$2
dir=$(mktemp -d /tmp/nnd-cli.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() {
    echo "cli_options_test: FAILED: $*"
    exit 1
}
for prog in nndctl nnd-bench; do
    for opt in -h --help; do
        rc=0
        "$build/$prog" $opt >"$dir/out" 2>"$dir/err" || rc=$?
        [ "$rc" -eq 0 ] || fail "$prog $opt: exit status $rc"
        head -n 1 "$dir/out" | grep -q "^usage: $prog " || fail "$prog $opt: no usage on stdout"
    done
    for opt in -V --version; do
        rc=0
        "$build/$prog" $opt >"$dir/out" 2>"$dir/err" || rc=$?
        [ "$rc" -eq 0 ] || fail "$prog $opt: exit status $rc"
        grep -q "^$prog [0-9][0-9.]*\$" "$dir/out" || fail "$prog $opt: printed $(cat "$dir/out")"
    done
    rc=0
    "$build/$prog" --no-such-option >"$dir/out" 2>"$dir/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "$prog --no-such-option: exit status $rc, not 2"
    grep -q "unknown option --no-such-option" "$dir/err" ||
        fail "$prog --no-such-option: the message does not name it"
    [ ! -s "$dir/out" ] || fail "$prog --no-such-option: printed on stdout"
done

"$build/nndctl" --help >"$dir/help"
page=$src/deploy/man/nndctl.1.scd
commands=$(sed -n '/^commands:/,$ s/^  \([a-z][a-z]*\) .*/\1/p' "$dir/help" | sort -u)
[ -n "$commands" ] || fail "no commands found in nndctl --help"
for c in $commands; do
    grep -q "^\*${c}[* ]" "$page" || fail "nndctl(1) does not describe the command $c"
done
for o in $(grep -o -- '--[a-z][a-z-]*' "$dir/help" | sort -u); do
    grep -q -- "\*$o\*" "$page" || fail "nndctl(1) does not name the option $o"
done
echo "cli_options_test: passed"
