#!/bin/sh
# Runs `nndctl conformance` over a folder of vectors against a real daemon and fails if
# the pass count drops below the committed floor (a ratchet raised as the engine grows).
# Usage: conformance_floor.sh BUILD_DIR VECTORS_DIR FLOOR
set -eu
build=$1 vectors=$2 floor=$3
dir=$(mktemp -d /tmp/nnd-floor.XXXXXX)
"$build/nnd" --socket "$dir/nnd.sock" --state-dir "$dir/state" --log-level warn &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
i=0
while [ ! -S "$dir/nnd.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
out=$("$build/nndctl" --socket "$dir/nnd.sock" conformance "$vectors" || true)
echo "$out" | tail -n 40
line=$(echo "$out" | grep '^conformance: ' | tail -n 1)
passed=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed.*/\1/p')
if [ -z "$passed" ]; then
    echo "conformance_floor: no summary line from nndctl"
    exit 1
fi
echo "conformance_floor: $passed passed, floor $floor"
[ "$passed" -ge "$floor" ]
