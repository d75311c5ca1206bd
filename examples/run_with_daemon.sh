#!/bin/sh
# Runs a program against a daemon of its own: starts DAEMON on a fresh socket, points
# NND_SOCKET at it, runs PROGRAM [ARGS...] and exits with its status.
# Usage: run_with_daemon.sh DAEMON PROGRAM [ARGS...]
set -eu
daemon=$1
shift
dir=$(mktemp -d /tmp/nnd-example.XXXXXX)
"$daemon" --socket "$dir/nnd.sock" --state-dir "$dir/state" --log-level warn &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
i=0
while [ ! -S "$dir/nnd.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
NND_SOCKET="$dir/nnd.sock" "$@"
