#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs nnd-conformance-local (the engine in process, no daemon) over vectors and fails if
# the pass count drops below the committed floor, or if the runner ended abnormally.
# Usage: conformance_local_floor.sh BUILD_DIR VECTORS FLOOR [RUNNER_OPTION...] (VECTORS:
# files or folders, separated by colons; RUNNER_OPTION: e.g. --guard-pages)
set -eu
build=$1 vectors=$2 floor=$3
shift 3
options="$*"
IFS=:
# shellcheck disable=SC2086 # split on the colons on purpose
set -- $vectors
unset IFS
for p in "$@"; do
    [ -e "$p" ] || { echo "conformance_local_floor: no vectors at $p (cmake unpacks" \
        "tests/vectors/conformance.tar.xz into the build tree when it configures)"; exit 1; }
done
rc=0
# shellcheck disable=SC2086 # the options are words
out=$("$build/nnd-conformance-local" $options "$@") || rc=$?
echo "$out" | tail -n 40
# 1: a case failed, which the floor judges; anything else is an error (23: a sanitizer
# report under `make leakcheck`, 128 and up: a signal).
if [ "$rc" -gt 1 ]; then
    echo "conformance_local_floor: nnd-conformance-local exited with status $rc"
    exit 1
fi
passed=$(echo "$out" | sed -n 's/^conformance: \([0-9]*\) passed.*/\1/p' | tail -n 1)
[ -n "$passed" ] || { echo "conformance_local_floor: no summary line"; exit 1; }
echo "conformance_local_floor: $passed passed, floor $floor"
[ "$passed" -ge "$floor" ]
