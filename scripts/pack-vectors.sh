#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Packs DIR/conformance and DIR/realmodels into tests/vectors/*.tar.xz, reproducibly (sorted
# names, owner 0, one fixed time), so that an unchanged folder gives the same bytes.
# Usage: scripts/pack-vectors.sh DIR
set -eu
[ $# -eq 1 ] || { echo "usage: $0 DIR (holding conformance/ and realmodels/)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
for name in conformance realmodels; do
    [ -d "$1/$name" ] || { echo "pack-vectors: no folder $1/$name" >&2; exit 2; }
    tar -C "$1" --sort=name --owner=0 --group=0 --numeric-owner --mtime=2026-01-01 \
        --mode=u+w -cf - "$name" | xz -9 -T2 >"$root/tests/vectors/$name.tar.xz"
    echo "pack-vectors: $root/tests/vectors/$name.tar.xz"
done
