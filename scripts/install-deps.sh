#!/bin/sh
# Installs the Debian packages nnd needs to build, test and run, only when missing.
# Quiet and quick when everything is present; runs apt-get update only before an install.
set -eu

PACKAGES="cmake make gcc pkg-config libuv1-dev libprotobuf-c-dev protobuf-c-compiler \
libnanomsg-dev libsqlite3-dev libb2-dev libxxhash-dev libcjson-dev libcmocka-dev \
libxnnpack-dev libpthreadpool-dev clang libclang-rt-14-dev scdoc"

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
