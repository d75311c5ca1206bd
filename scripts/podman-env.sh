# SPDX-License-Identifier: Apache-2.0
# podman-env.sh: what the container tests share, sourced by container-test.sh and
# systemd-test.sh (POSIX sh; functions only, nothing runs when sourced).
#
# podman_env_conf DIR: writes DIR/containers.conf and exports CONTAINERS_CONF. This host's
#   limits: crun refuses a mixed (hybrid) cgroup layout where runc works, and podman's
#   default open files and processes may exceed what root may set here.
# podman_env_rootfs TAR [PACKAGES]: a Debian bookworm root (minbase) as a tarball, made with
#   mmdebstrap from the host's own apt sources, so nothing is pulled from a registry;
#   PACKAGES (comma-separated) are installed into it too.

podman_env_conf() {
    cat >"$1/containers.conf" <<'CONF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]
[engine]
runtime = "runc"
CONF
    CONTAINERS_CONF="$1/containers.conf"
    export CONTAINERS_CONF
}

podman_env_rootfs() {
    sources=/etc/apt/sources.list.d/debian.sources
    [ -f "$sources" ] || sources=/etc/apt/sources.list
    echo "podman-env: making a bookworm root with mmdebstrap from $sources${2:+ (with $2)}"
    mmdebstrap --quiet --variant=minbase ${2:+--include="$2"} bookworm "$1" "$sources"
}
