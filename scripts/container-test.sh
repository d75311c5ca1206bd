#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The container, end to end: builds the Dockerfile with podman, starts the image with its
# socket and state directories on host folders, and from the host runs `nndctl info`, the
# V1_0 conformance vectors through that socket and `nndctl status`, `events` and `metrics`
# through the state folder; checks that the daemon runs as its own user, sees the host's
# clients as pid 0 without an executable, and stops cleanly. Then removes what it made
# (the container, the image, base images it had to make, the folders).
#
# Needs root (rootful podman), podman, runc and mmdebstrap (`install-deps.sh --container`)
# and the host's nndctl (BUILD_DIR/nndctl). Base images: debian:bookworm and
# debian:bookworm-slim are made from the host's apt sources with mmdebstrap when podman
# has none, so nothing is pulled from a registry.
# Usage: container-test.sh [--build-dir DIR] [--keep-base]
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/podman-env.sh"
build_dir=build
keep_base=0
while [ $# -gt 0 ]; do
    case $1 in
    --build-dir) build_dir=$2; shift 2 ;;
    --keep-base) keep_base=1; shift ;;
    *) echo "usage: $0 [--build-dir DIR] [--keep-base]" >&2; exit 2 ;;
    esac
done
case $build_dir in /*) ;; *) build_dir=$root/$build_dir ;; esac
nndctl=$build_dir/nndctl
vectors=$build_dir/vectors/conformance/V1_0
[ "$(id -u)" -eq 0 ] || { echo "container-test: needs root (rootful podman)" >&2; exit 2; }
[ -x "$nndctl" ] || { echo "container-test: no $nndctl; run make first" >&2; exit 2; }
[ -d "$vectors" ] || { echo "container-test: no conformance vectors at $vectors" >&2; exit 2; }

start=$(date +%s)
work=$(mktemp -d /tmp/nnd-container.XXXXXX)
tag=localhost/nnd-container-test:$$
ctr=nnd-container-test-$$
made_bases=""
events_pid=""
fail() {
    echo "container-test: FAILED: $*" >&2
    exit 1
}
cleanup() {
    status=$?
    set +e # every step below runs, whatever failed
    [ -z "$events_pid" ] || kill "$events_pid" 2>/dev/null
    if podman container exists "$ctr" 2>/dev/null; then
        [ $status -eq 0 ] || podman logs "$ctr" 2>&1 | tail -n 30 >&2
        podman rm -f -t 0 "$ctr" >/dev/null 2>&1 || true
    fi
    podman rmi -f "$tag" >/dev/null 2>&1 || true
    podman image prune -f >/dev/null 2>&1 || true # the build stage's layers
    for b in $made_bases; do podman rmi -f "$b" >/dev/null 2>&1 || true; done
    rm -rf "$work"
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

podman_env_conf "$work"

# Base images from the host's own apt sources, made only when missing.
for base in debian:bookworm debian:bookworm-slim; do
    podman image exists "$base" && continue
    if [ ! -f "$work/base.tar" ]; then
        podman_env_rootfs "$work/base.tar"
    fi
    podman import --quiet "$work/base.tar" "$base" >/dev/null
    [ $keep_base -eq 1 ] || made_bases="$made_bases $base"
done

echo "container-test: building the image"
t0=$(date +%s)
podman build --quiet --pull=never --network=host -t "$tag" -f "$root/Dockerfile" "$root" \
    >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; fail "podman build"; }
t1=$(date +%s)
size=$(podman image inspect --format '{{.Size}}' "$tag")
echo "container-test: image built in $((t1 - t0)) s, $((size / 1048576)) MiB"

# The image's user must own the folders it gets; the host reaches the socket (0666) and,
# as root, the state folder.
uid=$(podman image inspect --format '{{.Config.User}}' "$tag")
[ "$uid" = nnd ] || fail "the image's user is '$uid', not nnd"
mkdir -p "$work/run" "$work/state"
podman run --rm --pull=never --entrypoint /usr/bin/id "$tag" -u >"$work/uid" ||
    fail "cannot run the image"
chown "$(cat "$work/uid")" "$work/run" "$work/state"
podman run -d --name "$ctr" --pull=never --network=none \
    -v "$work/run:/run/nnd" -v "$work/state:/var/lib/nnd" "$tag" >/dev/null
sock=$work/run/nnd.sock
i=0
while [ ! -S "$sock" ] || [ ! -S "$work/state/events.ipc" ]; do
    [ $i -lt 300 ] || fail "no socket at $sock after 30 s"
    podman container exists "$ctr" && [ "$(podman inspect --format '{{.State.Running}}' "$ctr")" = true ] ||
        fail "the container stopped"
    sleep 0.1
    i=$((i + 1))
done
[ "$(podman top "$ctr" huser | tail -n 1)" = "$(cat "$work/uid")" ] || fail "the daemon does not run as uid $(cat "$work/uid")"

# From the host: events while the clients come and go, info, conformance, status.
"$nndctl" --state-dir "$work/state" events --count 2 >"$work/events" &
events_pid=$!
sleep 0.5
"$nndctl" --socket "$sock" info >"$work/info" || fail "nndctl info"
cat "$work/info"
"$nndctl" --socket "$sock" info --json >"$work/info.json" || fail "nndctl info --json"
python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["supported_operation_types"] < 1)' \
    <"$work/info.json" || fail "nndctl info does not count the supported operation types"
"$nndctl" --socket "$sock" conformance "$vectors" >"$work/conformance" ||
    { tail -n 20 "$work/conformance" >&2; fail "conformance"; }
tail -n 1 "$work/conformance"
grep -q '^conformance: [1-9][0-9]* passed, 0 failed, 0 skipped$' "$work/conformance" ||
    fail "conformance: not every V1_0 case passed"
wait "$events_pid" || fail "nndctl events"
events_pid=""
# A host client seen from the container's pid namespace: pid 0, no executable, its client
# id in the events and the log alike.
grep -q '"event":"connect".*"client":1,"pid":0,"uid":0,"exe":""' "$work/events" ||
    { cat "$work/events" >&2; fail "the connect event of a host client"; }
podman logs "$ctr" 2>&1 | grep -q 'client 1 connected: pid 0 uid 0 exe ?' ||
    fail "the log line of a host client"
"$nndctl" --socket "$sock" --state-dir "$work/state" status --json >"$work/status" ||
    fail "nndctl status"
python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["executions"] < 1)' <"$work/status" ||
    fail "status counts no executions"
"$nndctl" --socket "$sock" --state-dir "$work/state" metrics >"$work/metrics" || fail "nndctl metrics"
grep -q '^nnd_executions_total [1-9]' "$work/metrics" || fail "metrics count no executions"

# A clean stop: SIGTERM, exit status 0, the socket gone.
podman stop -t 10 "$ctr" >/dev/null
code=$(podman inspect --format '{{.State.ExitCode}}' "$ctr")
[ "$code" = 0 ] || fail "the daemon exited with status $code"
[ ! -e "$sock" ] || fail "the socket outlived the daemon"
echo "container-test: passed in $(($(date +%s) - start)) s (image build $((t1 - t0)) s, image $((size / 1048576)) MiB)"
