#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The README's commands, run exactly as the README writes them: each line below is looked
# up in README.md (an indented command line starting with it) and run from a folder that
# looks like the source root (build/ is this build tree, examples/ the sources'), with
# NND_SOCKET naming a daemon this test starts, as the README says. A line the README no
# longer has fails the test: change the list when the README changes.
# Usage: readme_test.sh BUILD_DIR SOURCE_DIR [SANITIZE]
set -eu
build=$1 src=$2 sanitize=${3:-}
if [ -n "$sanitize" ]; then
    echo "readme_test: skipped: the README's plain cc line cannot link a libnnd built with" \
        "-fsanitize=$sanitize"
    exit 77
fi
dir=$(mktemp -d /tmp/nnd-readme.XXXXXX)
pid=
trap 'if [ -n "$pid" ]; then kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; fi
rm -rf "$dir"' EXIT
fail() {
    echo "readme_test: FAILED: $*"
    exit 1
}
# The README's commands, in the order a reader runs them (a prefix of each line).
commands='cc examples/classify.c -o classify $(PKG_CONFIG_PATH=build
LD_LIBRARY_PATH=build ./classify
build/nndctl info
build/nndctl status
build/nndctl status --json
NND_RECORD=rec ./classify
build/nndctl conformance rec
build/nndctl conformance --device nnd-reference rec
tar czf recording.tar.gz rec'

mkdir "$dir/root"
ln -s "$(cd "$build" && pwd)" "$dir/root/build"
ln -s "$src/examples" "$dir/root/examples"
# What a reader's shell would not have: nothing points pkg-config or the loader anywhere.
unset PKG_CONFIG_PATH LD_LIBRARY_PATH NND_STATE_DIR
export NND_SOCKET="$dir/nnd.sock"
"$build/nnd" --socket "$NND_SOCKET" --state-dir "$dir/state" --log-level warn 2>"$dir/log" &
pid=$!
i=0
while [ ! -S "$NND_SOCKET" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$NND_SOCKET" ] || { cat "$dir/log"; fail "the daemon did not start"; }

n=0
echo "$commands" | while IFS= read -r prefix; do
    n=$((n + 1))
    line=$(awk -v p="    $prefix" 'index($0, p) == 1 { print substr($0, 5); exit }' \
        "$src/README.md")
    [ -n "$line" ] || fail "README.md has no command line starting with: $prefix"
    echo "\$ $line"
    (cd "$dir/root" && sh -c "$line") >"$dir/out.$n" 2>&1 ||
        { cat "$dir/out.$n"; fail "README command failed: $line"; }
    cat "$dir/out.$n"
    case $prefix in
    *--json) python3 -m json.tool "$dir/out.$n" >/dev/null || fail "not JSON: $line" ;;
    esac
done
grep -q '^classify: ok$' "$dir"/out.* || fail "the example did not say ok"
# The template driver (build/drivers) ranks after nnd-cpu: the README's program ran there.
python3 - "$dir/out.5" <<'PY' || fail "the README's program did not run on nnd-cpu alone"
import json, sys
d = {x["name"]: x for x in json.load(open(sys.argv[1]))["devices"]}
assert d["nnd-cpu"]["prepares"] >= 1, d["nnd-cpu"]
assert d.get("nnd-example", {"prepares": 0})["prepares"] == 0, d["nnd-example"]
PY
# The recording replayed: one case, passed, on the default devices and on nnd-reference.
[ "$(cat "$dir"/out.* | grep -c '^conformance: 1 passed, 0 failed, 0 skipped$')" -eq 2 ] ||
    fail "the recording did not replay as one passing case, twice"
tar tzf "$dir/root/recording.tar.gz" | grep -q '^rec/nnd-rec-classify-.*\.json$' ||
    fail "recording.tar.gz holds no recorded case"
echo "readme_test: passed"
