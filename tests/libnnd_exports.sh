#!/bin/sh
# libnnd.so exports its API and nothing else (client/libnnd.map): the NNAPI calls, the
# generated protobuf-c code (nnd__*) and the nnd_ calls the map names. The engine copy it
# links for operation signatures, the connection internals and the framing stay hidden.
# Usage: libnnd_exports.sh <libnnd.so> <libnnd.map> [<debian symbols file>]
set -eu
lib=$1
map=$2
named=$(sed -n 's/^ *\(nnd_[a-z_]*\);$/\1/p' "$map")
bad=0
for sym in $(nm -D --defined-only "$lib" | awk '{print $3}'); do
    case "$sym" in
    ANeuralNetworks*|nnd__*) continue ;;
    esac
    if ! printf '%s\n' "$named" | grep -qx "$sym"; then
        echo "libnnd.so exports $sym, which is not its API" >&2
        bad=1
    fi
done
# And every call of the API is there.
for sym in $named ANeuralNetworksModel_addOperation ANeuralNetworksExecution_setReusable; do
    nm -D --defined-only "$lib" | awk '{print $3}' | grep -qx "$sym" ||
        { echo "libnnd.so does not export $sym" >&2; bad=1; }
done
# The Debian symbols file (when given) lists exactly what the library exports, so that
# `make deb` does not fail on an API change that forgot it.
if [ -n "${3:-}" ]; then
    tmp=$(mktemp -d)
    sed -n 's/^ \([^@]*\)@Base .*/\1/p' "$3" | LC_ALL=C sort >"$tmp/listed"
    nm -D --defined-only "$lib" | awk '{print $3}' | LC_ALL=C sort >"$tmp/exported"
    if ! diff -u "$tmp/listed" "$tmp/exported" >&2; then
        echo "$3 does not list what libnnd.so exports (diff above: + exported, not listed)" >&2
        bad=1
    fi
    rm -rf "$tmp"
fi
[ $bad -eq 0 ] && echo "libnnd.so exports its API only"
exit $bad
