#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# nnd under systemd's socket-activation protocol (systemd-socket-activate, as nnd.socket
# would start it): it serves the socket it is given, a client gets correct results (the
# V1_0 conformance vectors), status names that socket, and at SIGTERM the daemon exits 0
# leaving the socket file to systemd. Also: a passed fd that is not a SOCK_SEQPACKET
# listener stops the daemon with a message. Exit 77 (skipped) without the tool.
# Usage: socket_activation_test.sh BUILD_DIR VECTORS_DIR
set -eu
build=$1 vectors=$2
command -v systemd-socket-activate >/dev/null || { echo "no systemd-socket-activate"; exit 77; }
dir=$(mktemp -d /tmp/nnd-activate.XXXXXX)
pid=
trap 'if [ -n "$pid" ]; then kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; fi
rm -rf "$dir"' EXIT
fail() {
    echo "socket_activation_test: FAILED: $*"
    cat "$dir/log" 2>/dev/null || true
    exit 1
}
sock=$dir/nnd.sock
systemd-socket-activate --seqpacket -l "$sock" \
    "$build/nnd" --state-dir "$dir/state" --log-level info >"$dir/log" 2>&1 &
pid=$! # systemd-socket-activate execs the daemon in this process
i=0
while [ ! -S "$sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$build/nndctl" --socket "$sock" conformance "$vectors" >"$dir/conformance" || true
tail -n 1 "$dir/conformance"
grep -q '^conformance: [1-9][0-9]* passed, 0 failed, 0 skipped$' "$dir/conformance" ||
    fail "conformance through the activated socket"
grep -q "listening on $sock (from systemd)" "$dir/log" || fail "the daemon did not take systemd's socket"
"$build/nndctl" --socket "$sock" status --json >"$dir/status" || fail "nndctl status"
[ "$(python3 -c 'import json, sys; print(json.load(sys.stdin)["socket"])' <"$dir/status")" = "$sock" ] ||
    fail "status does not name the socket"
kill "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" -eq 0 ] || fail "the daemon exited with status $status"
[ -S "$sock" ] || fail "the daemon removed systemd's socket file"

# A passed fd 3 that is a plain file: refused, exit status 1, the reason logged.
: >"$dir/not-a-socket"
status=0
sh -c 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --state-dir "$1" 3<"$2"' "$build/nnd" \
    "$dir/state2" "$dir/not-a-socket" >"$dir/log" 2>&1 || status=$?
[ "$status" -eq 1 ] || fail "a bad activation fd: exit status $status, not 1"
grep -q "is not a listening AF_UNIX SOCK_SEQPACKET socket" "$dir/log" || fail "no reason logged"
echo "socket_activation_test: passed"
