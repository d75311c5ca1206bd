#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs a program against a daemon of its own: starts DAEMON on a fresh socket, points
# NND_SOCKET at it, runs PROGRAM [ARGS...] and exits with its status, or 1 when the daemon
# does not then shut down with status 0.
# Usage: run_with_daemon.sh DAEMON PROGRAM [ARGS...]
set -eu
daemon=$1
shift
dir=$(mktemp -d /tmp/nnd-example.XXXXXX)
"$daemon" --socket "$dir/nnd.sock" --state-dir "$dir/state" --log-level warn &
pid=$!
# || true: under set -e a daemon already gone would end the trap before the rm.
trap 'if [ -n "$pid" ]; then kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; fi
rm -rf "$dir"' EXIT
i=0
while [ ! -S "$dir/nnd.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
NND_SOCKET="$dir/nnd.sock" "$@"
# Then the daemon must shut down cleanly: a crash or a sanitizer report at exit (a leak
# under `make leakcheck`) fails the run.
kill "$pid"
status=0
wait "$pid" || status=$?
pid=
if [ "$status" -ne 0 ]; then
    echo "run_with_daemon: the daemon exited with status $status" >&2
    exit 1
fi
