#!/bin/sh
# libnnd.so exports its API and nothing else (client/libnnd.map): the NNAPI calls, the
# generated protobuf-c code (nnd__*) and the nnd_ calls the map names. The engine copy it
# links for operation signatures, the connection internals and the framing stay hidden.
# Usage: libnnd_exports.sh <libnnd.so> <libnnd.map>
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
[ $bad -eq 0 ] && echo "libnnd.so exports its API only"
exit $bad
