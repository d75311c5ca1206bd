#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Debian packages under a real systemd: boots systemd as PID 1 in a podman container
# (--systemd=always) whose image is a Debian bookworm root made with mmdebstrap (systemd
# and the packages' dependencies in it), installs nnd and libnnd0 with apt, and checks from
# inside:
#   - the nnd user made, nnd.socket enabled and listening, nnd.service not yet started;
#   - `nndctl conformance` over the V1_0 vectors (mounted read-only) through the socket:
#     socket activation starts the hardened service, as user nnd, with its sandbox in
#     force (no capabilities, seccomp, its own network and mount namespaces), and every
#     case passes;
#   - a client that prepares a model with a cache token (cache_client of the build tree);
#     `systemctl stop`, a clean exit; the next connection starts the service again and
#     the same token is a cache hit;
#   - nnd-exporter: its socket enabled, curl on 127.0.0.1:9464 starts it as user nnd, and
#     the metrics pass promtool;
#   - the daemon as a service: /etc/nnd/nnd.conf a conffile; `systemctl show -p
#     StatusText` the daemon's status line (Type=notify); `systemctl reload nnd` with a
#     quota changed in /etc/nnd/nnd.conf.d while a client (hold_client of the build tree)
#     stays connected: the new limit holds for it; a bad file refused (the reload fails,
#     the service runs on), and `journalctl -p err -u nnd` shows that error and no info
#     line; the watchdog (WatchdogSec=2s in a drop-in) restarts a daemon stopped by
#     SIGSTOP;
#   - `apt purge`: no user or group nnd, no /var/lib/nnd or /run/nnd, no unit or enablement
#     link, and no file the packages had (the file system as it was before the install).
#   - libnnd-dev alone: examples/classify.c links with `pkg-config --static`, then purged;
# The container gets CAP_SYS_ADMIN and CAP_NET_ADMIN so that systemd can set up the
# service's namespaces (without them it skips PrivateNetwork, ProtectSystem and the
# like, and the hardening would go untested). Then removes what it made.
#
# Needs root (rootful podman), podman, runc, mmdebstrap (`install-deps.sh --systemd`), the
# packages (`make deb`) and BUILD_DIR/cache_client and hold_client (`make`).
# --keep-image keeps the image (tagged by what it holds) for the next run, which then
# skips mmdebstrap.
# Usage: systemd-test.sh [--debs DIR] [--build-dir DIR] [--keep-image]
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/scripts/podman-env.sh"
debs=build-deb
build_dir=build
keep_image=0
while [ $# -gt 0 ]; do
    case $1 in
    --debs) debs=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --keep-image) keep_image=1; shift ;;
    *) echo "usage: $0 [--debs DIR] [--build-dir DIR] [--keep-image]" >&2; exit 2 ;;
    esac
done
case $debs in /*) ;; *) debs=$root/$debs ;; esac
case $build_dir in /*) ;; *) build_dir=$root/$build_dir ;; esac
vectors=$build_dir/vectors/conformance/V1_0
cache_client=$build_dir/cache_client
hold_client=$build_dir/hold_client
[ "$(id -u)" -eq 0 ] || { echo "systemd-test: needs root (rootful podman)" >&2; exit 2; }
ls "$debs"/nnd_*.deb "$debs"/libnnd0_*.deb "$debs"/libnnd-dev_*.deb >/dev/null 2>&1 ||
    { echo "systemd-test: no packages in $debs; run make deb first" >&2; exit 2; }
for f in "$cache_client" "$hold_client"; do
    [ -x "$f" ] || { echo "systemd-test: no $f; run make first" >&2; exit 2; }
done
[ -d "$vectors" ] || { echo "systemd-test: no conformance vectors at $vectors" >&2; exit 2; }

start=$(date +%s)
work=$(mktemp -d /tmp/nnd-systemd.XXXXXX)
ctr=nnd-systemd-test-$$
tag=""
fail() {
    echo "systemd-test: FAILED: $*" >&2
    exit 1
}
cleanup() {
    status=$?
    set +e # every step below runs, whatever failed
    if podman container exists "$ctr" 2>/dev/null; then
        if [ $status -ne 0 ]; then
            echo "systemd-test: the container's journal, last lines:" >&2
            podman exec "$ctr" journalctl --no-pager -n 40 >&2
        fi
        podman rm -f -t 0 "$ctr" >/dev/null 2>&1 || true
    fi
    [ $keep_image -eq 1 ] || [ -z "$tag" ] || podman rmi -f "$tag" >/dev/null 2>&1 || true
    rm -rf "$work"
    exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM
in_ctr() { podman exec "$ctr" sh -c "$1"; }

podman_env_conf "$work"

# The image: systemd and what the packages depend on (their Depends, first alternatives),
# so that apt installs the packages from /debs with no network.
mkdir "$work/debs"
cp "$debs"/nnd_*.deb "$debs"/libnnd0_*.deb "$debs"/libnnd-dev_*.deb "$work/debs/"
deps=$(for d in "$work"/debs/*.deb; do dpkg-deb -f "$d" Depends; done | tr ',' '\n' |
    sed 's/|.*//; s/(.*)//; s/ //g' | grep -v '^libnnd0$' | grep . | sort -u | paste -sd, -)
# curl for the exporter's check; a C compiler and pkg-config for the static link with
# libnnd-dev (whose own Depends are in $deps).
deps="$deps,curl,gcc,libc6-dev,pkg-config"
tag=localhost/nnd-systemd-test:$(echo "$deps" | sha256sum | cut -c1-12)
t0=$(date +%s)
if ! podman image exists "$tag"; then
    podman_env_rootfs "$work/root.tar" "systemd,systemd-sysv,$deps"
    podman import --quiet --change 'CMD=["/sbin/init"]' "$work/root.tar" "$tag" >/dev/null
    rm -f "$work/root.tar"
fi
t1=$(date +%s)
echo "systemd-test: image ready in $((t1 - t0)) s"

podman run -d --name "$ctr" --pull=never --systemd=always --network=none \
    --cap-add=SYS_ADMIN,NET_ADMIN \
    -v "$work/debs:/debs:ro" -v "$vectors:/vectors/V1_0:ro" \
    -v "$cache_client:/usr/local/bin/nnd-cache-client:ro" \
    -v "$root/examples/classify.c:/src/classify.c:ro" \
    -v "$hold_client:/usr/local/bin/nnd-hold-client:ro" "$tag" >/dev/null
# Until systemd has booted (its bus may not answer at first).
i=0
state=$(podman exec "$ctr" systemctl is-system-running --wait 2>/dev/null) || true
while [ "$state" != running ] && [ "$state" != degraded ] && [ $i -lt 60 ]; do
    sleep 1
    i=$((i + 1))
    state=$(podman exec "$ctr" systemctl is-system-running --wait 2>/dev/null) || true
done
[ "$state" = running ] || { podman exec "$ctr" systemctl --failed --no-pager >&2 || true
    fail "systemd in the container is '$state', not running"; }

# The file system before the packages, to compare with after the purge. Left out: what
# changes on its own (journal, logs, apt and dpkg bookkeeping, caches, /proc and the like).
snapshot() {
    in_ctr 'find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run \
        -o -path /var/log -o -path /var/cache -o -path /var/lib/dpkg -o -path /var/lib/apt \
        -o -path /tmp -o -path /var/tmp -o -path /debs -o -path /vectors \) -prune \
        -o -print | sort'
}
snapshot >"$work/before"

in_ctr 'apt-get install -y -q /debs/nnd_*.deb /debs/libnnd0_*.deb' >"$work/apt.log" 2>&1 ||
    { tail -n 30 "$work/apt.log" >&2; fail "apt-get install"; }
in_ctr 'getent passwd nnd' >/dev/null || fail "no user nnd after the install"
[ "$(in_ctr 'systemctl is-enabled nnd.socket')" = enabled ] || fail "nnd.socket is not enabled"
[ "$(in_ctr 'systemctl is-active nnd.socket')" = active ] || fail "nnd.socket is not listening"
[ "$(in_ctr 'systemctl is-active nnd.service' || true)" = inactive ] ||
    fail "nnd.service runs before any client came"

# The V1_0 vectors through the socket: socket activation starts the hardened service.
in_ctr 'nndctl --socket /run/nnd/nnd.sock conformance /vectors/V1_0' >"$work/conformance" 2>&1 ||
    { tail -n 20 "$work/conformance" >&2; fail "conformance"; }
tail -n 1 "$work/conformance"
grep -q '^conformance: [1-9][0-9]* passed, 0 failed, 0 skipped$' "$work/conformance" ||
    fail "conformance: not every V1_0 case passed"
pid=$(in_ctr 'systemctl show -p MainPID --value nnd.service')
[ "$pid" -gt 0 ] || fail "nnd.service has no main process"
in_ctr "grep -E '^(Uid|CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/$pid/status" >"$work/proc_status"
grep -q "^Uid:[[:space:]]*$(in_ctr 'id -u nnd')[[:space:]]" "$work/proc_status" ||
    fail "the daemon does not run as nnd"
for want in 'CapEff:[[:space:]]*0000000000000000' 'CapBnd:[[:space:]]*0000000000000000' \
    'NoNewPrivs:[[:space:]]*1' 'Seccomp:[[:space:]]*2'; do
    grep -q "^$want\$" "$work/proc_status" || { cat "$work/proc_status" >&2; fail "not $want"; }
done
# PrivateNetwork: only a loopback interface. ProtectSystem=strict: / read-only.
[ "$(in_ctr "tail -n +3 /proc/$pid/net/dev | cut -d: -f1 | tr -d ' '")" = lo ] ||
    fail "the daemon sees more than a loopback interface"
in_ctr "awk '\$5 == \"/\" { print \$6 }' /proc/$pid/mountinfo" | grep -q '^ro,' ||
    fail "the daemon's root is not read-only"
# A resource call the filter lets through: the event loop's 100 us kernel slice
# (sched_setattr; the workers keep the default slice).
in_ctr "cat /proc/$pid/task/*/sched" | grep -q '^se.slice  *: *100000$' ||
    fail "no thread of the daemon has the loop's 100 us slice: sched_setattr was refused"
# systemd says so when it cannot set up a namespace and runs the service without it.
if in_ctr 'journalctl -u nnd.service --no-pager' | grep 'is configured, but\|ignoring namespace' >&2; then
    fail "systemd left some of the hardening out"
fi

# The compilation cache across a stop: a cache token prepared, the service stopped (a
# clean exit), started again by the next connection, and the token found.
token=00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff
in_ctr 'mkdir -p /tmp/nnd-client-cache' # the client's own cache files, not the package's
cached() { in_ctr "nnd-cache-client /run/nnd/nnd.sock /tmp/nnd-client-cache $token 4096 1.5"; }
[ "$(cached)" = from_cache=0 ] || fail "the first preparation with the token was not a miss"
in_ctr 'systemctl stop nnd.service'
[ "$(in_ctr 'systemctl is-active nnd.service' || true)" = inactive ] || fail "nnd.service did not stop"
[ "$(in_ctr 'systemctl show -p Result --value nnd.service')" = success ] ||
    fail "nnd.service did not exit cleanly"
[ "$(in_ctr 'systemctl is-active nnd.socket')" = active ] || fail "nnd.socket stopped with the service"
[ "$(cached)" = from_cache=1 ] || fail "the token was not a cache hit after the restart"
[ "$(in_ctr 'systemctl is-active nnd.service')" = active ] || fail "the socket did not start nnd.service"
in_ctr 'nndctl --state-dir /var/lib/nnd status --json' >"$work/status" || fail "nndctl status"
python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["cache"]["hits"] < 1)' <"$work/status" ||
    { cat "$work/status" >&2; fail "status counts no cache hit"; }

# The exporter: nnd-exporter.socket (enabled at the install) listens on 127.0.0.1:9464, the
# first scrape starts nnd-exporter as user nnd, and what curl gets passes promtool (the
# host's: scripts/install-deps.sh installs it), with the metrics of the clients above.
[ "$(in_ctr 'systemctl is-enabled nnd-exporter.socket')" = enabled ] || fail "nnd-exporter.socket is not enabled"
[ "$(in_ctr 'systemctl is-active nnd-exporter.socket')" = active ] || fail "nnd-exporter.socket is not listening"
in_ctr 'curl -sf http://127.0.0.1:9464/metrics' >"$work/metrics" || fail "curl on the exporter's port"
if command -v promtool >/dev/null; then
    promtool check metrics <"$work/metrics" >&2 || fail "promtool check metrics on the exporter's text"
else
    echo "systemd-test: no promtool on this host: the exporter's text is not checked by it" >&2
fi
for m in '^process_cpu_seconds_total ' '^nnd_app_executions_total{uid="0"} [1-9]' \
    '^nnd_prepare_duration_seconds_count [1-9]' '^nnd_device_execution_latency_seconds_count{device="nnd-cpu"} [1-9]'; do
    grep -q "$m" "$work/metrics" || fail "the exporter's text has no $m"
done
epid=$(in_ctr 'systemctl show -p MainPID --value nnd-exporter.service')
[ "$epid" -gt 0 ] || fail "the scrape did not start nnd-exporter.service"
in_ctr "grep '^Uid:' /proc/$epid/status" | grep -q "^Uid:[[:space:]]*$(in_ctr 'id -u nnd')[[:space:]]" ||
    fail "nnd-exporter does not run as nnd"
[ "$(in_ctr 'curl -s -o /dev/null -w %{http_code} http://127.0.0.1:9464/')" = 404 ] ||
    fail "the exporter answers another path than /metrics"
echo "systemd-test: the exporter's $(wc -l <"$work/metrics") lines pass"

# The settings file: shipped as a conffile, every key commented out.
in_ctr 'dpkg-query -W -f="\${Conffiles}" nnd' | grep -q '^ /etc/nnd/nnd.conf ' ||
    fail "/etc/nnd/nnd.conf is not a conffile of nnd"
[ -z "$(in_ctr "grep -v '^#' /etc/nnd/nnd.conf | grep -v '^\$'")" ] ||
    fail "/etc/nnd/nnd.conf sets something"

# Reload: a client holds models up to quota.connection.prepared_models (2, from a drop-in),
# the quota goes up to 5 with `systemctl reload nnd`, and the same connection holds 5.
in_ctr 'mkdir -p /etc/nnd/nnd.conf.d && echo "quota.connection.prepared_models = 2" >/etc/nnd/nnd.conf.d/test.conf'
in_ctr 'systemctl reload nnd.service' || fail "systemctl reload nnd (2 models)"
podman exec -d "$ctr" sh -c 'nnd-hold-client /run/nnd/nnd.sock /tmp/hold-go >/tmp/hold.out 2>/tmp/hold.err' >/dev/null
wait_for() { # wait_for SECONDS COMMAND: until COMMAND succeeds in the container
    n=0
    until in_ctr "$2" >/dev/null 2>&1; do
        n=$((n + 1))
        [ $n -lt $(($1 * 10)) ] || return 1
        sleep 0.1
    done
}
wait_for 20 'grep -qx "held 2" /tmp/hold.out' ||
    { in_ctr 'cat /tmp/hold.out /tmp/hold.err' >&2; fail "the client did not hold 2 models"; }
# Type=notify: the daemon's status line, kept current (every 2 s).
wait_for 10 'systemctl show -p StatusText --value nnd.service | grep -q "^serving 1 client, 2 prepared models, "' ||
    fail "StatusText is '$(in_ctr 'systemctl show -p StatusText --value nnd.service')'"
pid=$(in_ctr 'systemctl show -p MainPID --value nnd.service')
in_ctr 'echo "quota.connection.prepared_models = 5" >/etc/nnd/nnd.conf.d/test.conf'
in_ctr 'systemctl reload nnd.service' || fail "systemctl reload nnd (5 models)"
in_ctr 'touch /tmp/hold-go'
wait_for 20 'grep -qx "held 5" /tmp/hold.out' ||
    { in_ctr 'cat /tmp/hold.out /tmp/hold.err' >&2; fail "the connected client did not get the new quota"; }
in_ctr 'nndctl --state-dir /var/lib/nnd metrics' |
    grep -q '^nnd_quota_limit{scope="connection",quota="prepared_models"} 5$' ||
    fail "nndctl metrics does not show the new limit"
[ "$(in_ctr 'systemctl show -p MainPID --value nnd.service')" = "$pid" ] ||
    fail "the reload restarted the daemon"
in_ctr 'journalctl -u nnd.service --no-pager' |
    grep -q 'reload: quota.connection.prepared_models: 2 -> 5' || fail "the reload logged no change"

# A bad file: the reload fails, the daemon runs on with what it had, and the error is
# the only line at priority err or above in the unit's journal.
in_ctr 'echo "quota.connection.prepared_models = lots" >/etc/nnd/nnd.conf.d/test.conf'
! in_ctr 'systemctl reload nnd.service' 2>/dev/null || fail "a reload with a bad file succeeded"
[ "$(in_ctr 'systemctl is-active nnd.service')" = active ] || fail "a bad reload stopped nnd"
in_ctr 'journalctl -p err -u nnd.service --no-pager -o cat' >"$work/errors"
grep -q 'reload refused, the settings in force are kept: /etc/nnd/nnd.conf.d/test.conf:1: ' \
    "$work/errors" || { cat "$work/errors" >&2; fail "journalctl -p err shows no reload error"; }
! grep -q 'listening on\|reload: quota' "$work/errors" ||
    { cat "$work/errors" >&2; fail "journalctl -p err shows info lines"; }
in_ctr 'rm -rf /etc/nnd/nnd.conf.d'

# The watchdog: with WatchdogSec=2s (a drop-in), a daemon whose loop is stopped (SIGSTOP)
# misses its pings; systemd kills it and Restart= starts it again.
in_ctr 'mkdir -p /etc/systemd/system/nnd.service.d && printf "[Service]\nWatchdogSec=2s\nLimitCORE=0\n" >/etc/systemd/system/nnd.service.d/watchdog.conf && systemctl daemon-reload && systemctl restart nnd.service'
pid=$(in_ctr 'systemctl show -p MainPID --value nnd.service')
[ "$pid" -gt 0 ] || fail "nnd.service did not restart with the watchdog drop-in"
sleep 3 # pings every second: the daemon lives past WatchdogSec
[ "$(in_ctr 'systemctl show -p MainPID --value nnd.service')" = "$pid" ] ||
    fail "the watchdog killed a daemon that was pinging"
in_ctr "kill -STOP $pid"
wait_for 30 "systemctl show -p MainPID --value nnd.service | grep -qvx '0\|$pid' && systemctl is-active nnd.service" ||
    fail "the watchdog did not restart a stopped daemon"
in_ctr 'journalctl -u nnd.service --no-pager' | grep -q 'Watchdog timeout' ||
    fail "systemd logged no watchdog timeout"
in_ctr 'rm -rf /etc/systemd/system/nnd.service.d && systemctl daemon-reload'

# (the exporter's check, curl and promtool on its port, goes here)

# Purge: nothing of the packages left.
in_ctr 'apt-get purge -y -q nnd libnnd0' >"$work/purge.log" 2>&1 ||
    { tail -n 30 "$work/purge.log" >&2; fail "apt-get purge"; }
! in_ctr 'getent passwd nnd' >/dev/null || fail "the user nnd outlived the purge"
! in_ctr 'getent group nnd' >/dev/null || fail "the group nnd outlived the purge"
for p in /var/lib/nnd /run/nnd /lib/systemd/system/nnd.service /lib/systemd/system/nnd.socket \
    /etc/systemd/system/sockets.target.wants/nnd.socket /lib/systemd/system/nnd-exporter.socket \
    /lib/systemd/system/nnd-exporter.service /etc/systemd/system/sockets.target.wants/nnd-exporter.socket \
    /etc/nnd; do
    ! in_ctr "test -e $p -o -L $p" || fail "$p outlived the purge"
done
[ -z "$(in_ctr 'systemctl list-units --all --no-legend "nnd*"')" ] || fail "systemd still knows nnd units"
snapshot >"$work/after"
diff "$work/before" "$work/after" >"$work/diff" || { cat "$work/diff" >&2; fail "the purge left files behind"; }

# The development package alone (with libnnd0, its dependency) in the clean system: an
# NNAPI program links statically with what `pkg-config --static` names (libnnd's own code
# static, the libraries Debian ships shared), then the purge leaves nothing.
in_ctr 'apt-get install -y -q /debs/libnnd-dev_*.deb /debs/libnnd0_*.deb' >"$work/apt-dev.log" 2>&1 ||
    { tail -n 30 "$work/apt-dev.log" >&2; fail "apt-get install libnnd-dev"; }
in_ctr 'cc -o /tmp/classify /src/classify.c $(pkg-config --static --cflags --libs nnd |
    sed "s/-lnnd /-Wl,-Bstatic -lnnd -Wl,-Bdynamic /") -lm' >&2 ||
    fail "classify.c does not link statically with libnnd-dev and pkg-config --static"
! in_ctr 'ldd /tmp/classify' | grep libnnd >&2 || fail "the static classify still loads libnnd"
in_ctr 'test ! -e /usr/include/nnd/nnd.pb-c.h' || fail "libnnd-dev installs the generated nnd.pb-c.h"
in_ctr 'rm -f /tmp/classify; apt-get purge -y -q libnnd-dev libnnd0' >"$work/purge-dev.log" 2>&1 ||
    { tail -n 30 "$work/purge-dev.log" >&2; fail "apt-get purge libnnd-dev"; }
snapshot >"$work/after-dev"
diff "$work/before" "$work/after-dev" >"$work/diff" || { cat "$work/diff" >&2; fail "the purge of libnnd-dev left files behind"; }
echo "systemd-test: classify.c links statically against libnnd-dev alone"

echo "systemd-test: passed in $(($(date +%s) - start)) s (image $((t1 - t0)) s)"
