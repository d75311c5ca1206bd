#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# nnd-exporter as Prometheus sees it: a real daemon and the exporter on a free loopback
# port, a client that prepares and runs models and disconnects, then a scrape over HTTP
# (curl, else python3) that promtool accepts and that holds the latency histograms per
# device and for prepare time, the executions of the client's uid after it left, and the
# process_* metrics. Also: other paths 404, HEAD, an oversized request 431, a daemon
# that is gone 503, and the socket passed by systemd (systemd-socket-activate, when
# there). Exit 77 (skipped) without promtool.
# Usage: exporter_test.sh BUILD_DIR
set -eu
build=$1
command -v promtool >/dev/null ||
    { echo "exporter_test: skipped: no promtool (scripts/install-deps.sh installs it: prometheus)"; exit 77; }
dir=$(mktemp -d /tmp/nnd-exporter.XXXXXX)
daemon= exporter=
trap 'for p in $exporter $daemon; do kill $p 2>/dev/null || true; wait $p 2>/dev/null || true; done
rm -rf "$dir"' EXIT
fail() {
    echo "exporter_test: FAILED: $*"
    for f in daemon.log exporter.log; do [ -f "$dir/$f" ] && { echo "--- $f"; cat "$dir/$f"; }; done
    exit 1
}
# GET (or HEAD) url: the status line into $dir/code, the body into $dir/body.
fetch() {
    if command -v curl >/dev/null; then
        curl -s -o "$dir/body" -w '%{http_code}\n' ${2:+-I} "$1" >"$dir/code" || echo 000 >"$dir/code"
    else
        python3 - "$1" "${2:-}" >"$dir/code" <<'PY' || echo 000 >"$dir/code"
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], method="HEAD" if sys.argv[2] else "GET")
try:
    r = urllib.request.urlopen(req, timeout=10); code, body = r.status, r.read()
except urllib.error.HTTPError as e:
    code, body = e.code, e.read()
open(sys.argv[0] if False else __import__("os").environ["BODY"], "wb").write(body)
print(code)
PY
    fi
}
export BODY="$dir/body"
value() { # the value of the sample named exactly $1 in the body
    awk -v n="$1" '$1 == n { print $2 }' "$dir/body"
}

"$build/nnd" --socket "$dir/nnd.sock" --state-dir "$dir/state" --log-level warn >"$dir/daemon.log" 2>&1 &
daemon=$!
i=0
while [ ! -S "$dir/nnd.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -S "$dir/nnd.sock" ] || fail "the daemon did not start"

"$build/nnd-exporter" --listen 127.0.0.1:0 --socket "$dir/nnd.sock" >"$dir/exporter.log" 2>&1 &
exporter=$!
i=0
while ! grep -qs 'serving http' "$dir/exporter.log" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
url=$(sed -n 's/^nnd-exporter: serving \(http:[^ ]*\)$/\1/p' "$dir/exporter.log")
[ -n "$url" ] || fail "the exporter did not say where it listens"
base=${url%/metrics}

# A client of this uid prepares and runs a model, then goes.
NND_SOCKET=$dir/nnd.sock "$build/classify" >"$dir/classify.out" 2>&1 ||
    { cat "$dir/classify.out"; fail "the example client"; }

fetch "$url"
[ "$(cat "$dir/code")" = 200 ] || fail "GET /metrics answered $(cat "$dir/code")"
promtool check metrics <"$dir/body" >"$dir/promtool" 2>&1 ||
    { cat "$dir/promtool"; fail "promtool check metrics"; }
for m in process_cpu_seconds_total process_resident_memory_bytes process_virtual_memory_bytes \
    process_open_fds process_max_fds process_start_time_seconds; do
    v=$(value "$m")
    [ -n "$v" ] || fail "no $m"
done
[ "$(value process_resident_memory_bytes | cut -d. -f1 | cut -de -f1)" != 0 ] || fail "process_resident_memory_bytes is 0"
uid=$(id -u)
[ "$(value nnd_connections)" = 0 ] || fail "the client is still connected"
n=$(value "nnd_app_executions_total{uid=\"$uid\"}")
[ -n "$n" ] && [ "$n" -ge 1 ] || fail "no executions of uid $uid after it disconnected (got '$n')"
[ -n "$(value "nnd_app_executions_failed_total{uid=\"$uid\"}")" ] || fail "no failures counter for uid $uid"
# Per device: one histogram each, the executions on the device that ran them.
for d in nnd-cpu nnd-reference; do
    grep -q "^nnd_device_execution_latency_seconds_bucket{device=\"$d\",le=\"+Inf\"}" "$dir/body" ||
        fail "no latency histogram for $d"
done
n=$(awk '/^nnd_device_execution_latency_seconds_count\{/ { n += $2 } END { print n + 0 }' "$dir/body")
[ "$n" -ge 1 ] || fail "the per-device latency histograms count no execution"
n=$(value nnd_prepare_duration_seconds_count)
[ -n "$n" ] && [ "$n" -ge 1 ] || fail "no prepare-time histogram (count '$n')"
echo "exporter_test: scrape of $(wc -l <"$dir/body") lines passes promtool"

# What else it answers.
fetch "$base/"
[ "$(cat "$dir/code")" = 404 ] || fail "GET / answered $(cat "$dir/code"), not 404"
fetch "$base/metricsx"
[ "$(cat "$dir/code")" = 404 ] || fail "GET /metricsx answered $(cat "$dir/code"), not 404"
fetch "$url?x=1" head
[ "$(cat "$dir/code")" = 200 ] || fail "HEAD /metrics?x=1 answered $(cat "$dir/code")"
if command -v curl >/dev/null; then
    big=$(head -c 9000 /dev/zero | tr '\0' a)
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $big" "$url")
    [ "$code" = 431 ] || fail "an oversized request answered $code, not 431"
    code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")
    [ "$code" = 405 ] || fail "POST answered $code, not 405"
fi

# Socket activation: the exporter serves the socket systemd passes.
if command -v systemd-socket-activate >/dev/null; then
    port=${base##*:}
    kill "$exporter"
    wait "$exporter" 2>/dev/null || true
    systemd-socket-activate -l "127.0.0.1:$port" "$build/nnd-exporter" --state-dir "$dir/state" \
        >"$dir/exporter.log" 2>&1 &
    exporter=$!
    i=0
    until fetch "$url" && [ "$(cat "$dir/code")" = 200 ]; do
        i=$((i + 1))
        [ $i -lt 50 ] || fail "no scrape through the socket systemd passed"
        sleep 0.1
    done
    promtool check metrics <"$dir/body" >/dev/null 2>&1 || fail "promtool on the activated exporter"
    grep -q "serving http" "$dir/exporter.log" && fail "the activated exporter opened its own socket"
    echo "exporter_test: served the socket systemd-socket-activate passed"
fi

# The daemon gone: 503 with the reason, and the exporter still serving.
kill "$daemon"
wait "$daemon" 2>/dev/null || true
daemon=
fetch "$url"
[ "$(cat "$dir/code")" = 503 ] || fail "a scrape with the daemon gone answered $(cat "$dir/code"), not 503"
grep -q "admin" "$dir/body" || fail "the 503 does not say why: $(cat "$dir/body")"
echo "exporter_test: passed"
