#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs `nndctl conformance` over a folder of vectors against a real daemon and fails if
# the pass count drops below the committed floor (a ratchet raised as the engine grows).
# Usage: conformance_floor.sh BUILD_DIR VECTORS_DIR FLOOR [DEVICE] (VECTORS_DIR may list
# several files or folders, separated by colons; DEVICE: every model prepared for it alone)
set -eu
build=$1 vectors=$2 floor=$3 device=${4:-}
old_ifs=$IFS
IFS=:
# shellcheck disable=SC2086 # split on the colons on purpose
set -- $vectors
IFS=$old_ifs
for p in "$@"; do
    [ -e "$p" ] || { echo "conformance_floor: no vectors at $p (cmake unpacks" \
        "tests/vectors/conformance.tar.xz into the build tree when it configures)"; exit 1; }
done
dir=$(mktemp -d /tmp/nnd-floor.XXXXXX)
"$build/nnd" --socket "$dir/nnd.sock" --state-dir "$dir/state" --log-level warn &
pid=$!
# || true: under set -e a daemon already gone would end the trap before the rm.
trap 'if [ -n "$pid" ]; then kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; fi
rm -rf "$dir"' EXIT
i=0
while [ ! -S "$dir/nnd.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
rc=0
if [ -n "$device" ]; then set -- --device "$device" "$@"; fi
out=$("$build/nndctl" --socket "$dir/nnd.sock" conformance "$@") || rc=$?
echo "$out" | tail -n 40
# nndctl exits 1 when a case failed, which the floor judges; any other status is an error
# (2 usage, 23 a sanitizer report under `make leakcheck`, 128 and up a signal).
if [ "$rc" -gt 1 ]; then
    echo "conformance_floor: nndctl exited with status $rc"
    exit 1
fi
line=$(echo "$out" | grep '^conformance: ' | tail -n 1)
passed=$(echo "$line" | sed -n 's/^conformance: \([0-9]*\) passed.*/\1/p')
if [ -z "$passed" ]; then
    echo "conformance_floor: no summary line from nndctl"
    exit 1
fi
echo "conformance_floor: $passed passed, floor $floor"
# The daemon must shut down cleanly: a crash or a sanitizer report at exit (a leak under
# `make leakcheck`) is a failure too.
kill "$pid"
status=0
wait "$pid" || status=$?
pid=
if [ "$status" -ne 0 ]; then
    echo "conformance_floor: the daemon exited with status $status"
    exit 1
fi
[ "$passed" -ge "$floor" ]
