#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages nnd needs, only when missing. Quiet and quick when
# everything is present; runs apt-get update only before an install.
# Usage: install-deps.sh [--build-only | --container | --deb | --systemd]
#   (none)        what `make`, `make test` and `make leakcheck` need
#   --build-only  what building nnd, nndctl, libnnd and the man pages needs (the image's
#                 build stage)
#   --container   the above and what `make container-test` needs (podman, runc,
#                 mmdebstrap for the base images)
#   --deb         what building nnd and `make deb` need (debhelper, lintian)
#   --systemd     what `make systemd-test` needs: --deb's and --container's together
set -eu

# Building: compiler, CMake, the libraries, protoc-c, scdoc for the man pages, the OpenCL
# headers and ICD loader (nnd-opencl is built only with them).
BUILD="cmake make gcc pkg-config libuv1-dev libprotobuf-c-dev protobuf-c-compiler \
libnanomsg-dev libsqlite3-dev libb2-dev libxxhash-dev libcjson-dev libcmocka-dev \
libxnnpack-dev libpthreadpool-dev libsystemd-dev scdoc ocl-icd-opencl-dev opencl-c-headers"
# Testing: clang and its runtimes (fuzz targets), systemd (systemd-socket-activate,
# systemd-analyze), man-db (man -l), prometheus (promtool check metrics), python3 and git
# (scripts/check-layout.py reads the tracked files), PoCL (an OpenCL CPU device for the
# nnd-opencl tests), clinfo (the bench's and docs' device listing) and CLBlast (the bench's
# fc_opencl baseline; the row is not measured without it).
TEST="clang libclang-rt-14-dev systemd man-db prometheus python3 git pocl-opencl-icd clinfo \
libclblast-dev"
CONTAINER="podman runc uidmap mmdebstrap"
# Packaging: dpkg-buildpackage with debhelper (dh-sequence-installsysusers is debhelper's),
# and lintian to check the packages.
DEB="debhelper dpkg-dev fakeroot lintian"

case "${1:-}" in
"") PACKAGES="$BUILD $TEST" ;;
--build-only) PACKAGES="$BUILD" ;;
--container) PACKAGES="$BUILD $TEST $CONTAINER" ;;
--deb) PACKAGES="$BUILD $DEB" ;;
--systemd) PACKAGES="$BUILD $TEST $CONTAINER $DEB" ;;
*)
    echo "usage: $0 [--build-only | --container | --deb | --systemd]" >&2
    exit 2
    ;;
esac

missing=""
for p in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: installing$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
