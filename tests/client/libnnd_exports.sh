#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libnnd.so exports its API and nothing else: the NNAPI calls and the nnd_ calls that
# include/nnd/nnd.h declares (client/libnnd.map names the same ones). Nothing generated
# (protobuf-c's nnd__*, protobuf_c_*), none of the wire-level calls of nnd_wire.h, nothing
# of the engine copy it links for operation signatures nor of its internals.
# Usage: libnnd_exports.sh <libnnd.so> <libnnd.map> <nnd.h> [<debian symbols file>]
set -eu
lib=$1
map=$2
header=$3
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | LC_ALL=C sort)
mapped=$(sed -n 's/^ *\(nnd_[a-z_]*\);$/\1/p' "$map" | LC_ALL=C sort)
declared=$(grep -o '\bnnd_[a-z_]*(' "$header" | tr -d '(' | LC_ALL=C sort -u)
bad=0
if [ "$mapped" != "$declared" ]; then
    echo "$map and $header name different nnd_ calls:" >&2
    printf '%s\n' "$mapped" >"${TMPDIR:-/tmp}/nnd_mapped.$$"
    printf '%s\n' "$declared" | diff -u "${TMPDIR:-/tmp}/nnd_mapped.$$" - >&2 || true
    rm -f "${TMPDIR:-/tmp}/nnd_mapped.$$"
    bad=1
fi
for sym in $exported; do
    case "$sym" in
    ANeuralNetworks*) continue ;;
    esac
    if ! printf '%s\n' "$declared" | grep -qx "$sym"; then
        echo "libnnd.so exports $sym, which is not its API (include/nnd/nnd.h)" >&2
        bad=1
    fi
done
# Said outright, for the generated code the wire format brings.
if printf '%s\n' "$exported" | grep -E '^(nnd__|protobuf_c)'; then
    echo "libnnd.so exports generated protobuf-c code (above)" >&2
    bad=1
fi
# And every call of the API is there.
for sym in $declared ANeuralNetworksModel_addOperation ANeuralNetworksExecution_setReusable; do
    printf '%s\n' "$exported" | grep -qx "$sym" ||
        { echo "libnnd.so does not export $sym" >&2; bad=1; }
done
# The Debian symbols file (when given) lists exactly what the library exports, so that
# `make deb` does not fail on an API change that forgot it.
if [ -n "${4:-}" ]; then
    tmp=$(mktemp -d)
    sed -n 's/^ \([^@]*\)@Base .*/\1/p' "$4" | LC_ALL=C sort >"$tmp/listed"
    printf '%s\n' "$exported" >"$tmp/exported"
    if ! diff -u "$tmp/listed" "$tmp/exported" >&2; then
        echo "$4 does not list what libnnd.so exports (diff above: + exported, not listed)" >&2
        bad=1
    fi
    rm -rf "$tmp"
fi
[ $bad -eq 0 ] && echo "libnnd.so exports $(printf '%s\n' "$exported" | wc -l) symbols, its API only"
exit $bad
