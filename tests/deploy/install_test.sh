#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `cmake --install` into a fresh prefix, then everything from there: the programs, the man
# pages (man -l), the units (ExecStart under the prefix; systemd-analyze verify where it
# exists), the daemon's default plugin and driver folders under the prefix, a program built with
# `pkg-config --cflags --libs nnd` that includes <android/NeuralNetworks.h> and runs
# against the installed daemon, and libneuralnetworks.so loaded by name from the prefix.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR [SANITIZE]
set -eu
build=$1 src=$2 sanitize=${3:-}
dir=$(mktemp -d /tmp/nnd-install.XXXXXX)
prefix=$dir/prefix
pid=
trap 'if [ -n "$pid" ]; then kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; fi
rm -rf "$dir"' EXIT
fail() {
    echo "install_test: FAILED: $*"
    exit 1
}
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/nnd bin/nndctl lib/libnnd.so lib/libnnd.a lib/libneuralnetworks.so \
    include/nnd/NeuralNetworks.h include/nnd/nnd.h include/nnd/extension.h include/nnd/driver.h \
    include/nnd/ndk/android/NeuralNetworks.h lib/pkgconfig/nnd.pc \
    lib/nnd/extensions-examples/libnnd_fibonacci.so lib/nnd/drivers-examples/libnnd_example.so share/man/man8/nnd.8 share/man/man1/nndctl.1 \
    bin/nnd-exporter share/man/man1/nnd-exporter.1 lib/systemd/system/nnd-exporter.socket \
    lib/systemd/system/nnd-exporter.service \
    share/man/man5/nnd.conf.5 etc/nnd/nnd.conf share/doc/nnd/configuration.md share/doc/nnd/systemd.md \
    lib/systemd/system/nnd.socket lib/systemd/system/nnd.service lib/sysusers.d/nnd.conf; do
    [ -e "$prefix/$f" ] || fail "$f not installed"
done
# The driver host every driver runs in, and nnd-opencl where it was built (its package,
# nnd-driver-opencl, installs it into the drivers directory).
[ -x "$prefix/libexec/nnd/nnd-driver-host" ] || fail "libexec/nnd/nnd-driver-host not installed"
if [ -e "$build/drivers-opencl/libnnd_opencl.so" ]; then
    [ -e "$prefix/lib/nnd/drivers/libnnd_opencl.so" ] || fail "lib/nnd/drivers/libnnd_opencl.so not installed"
fi
"$prefix/bin/nnd" --version | grep -q '^nnd ' || fail "nnd --version"
"$prefix/bin/nndctl" --version | grep -q '^nndctl [0-9]' || fail "nndctl --version"

# Man pages: rendered without a warning, and they are the pages they claim to be.
for page in man8/nnd.8:"SOCKET ACTIVATION" man5/nnd.conf.5:"RELOADING" man1/nndctl.1:"metrics" man1/nnd-exporter.1:"METRICS"; do
    file=$prefix/share/man/${page%%:*}
    MANWIDTH=80 man --warnings -l "$file" >"$dir/page" 2>"$dir/page.err" || fail "man -l $file"
    [ ! -s "$dir/page.err" ] || { cat "$dir/page.err"; fail "man warns about $file"; }
    grep -q "${page#*:}" "$dir/page" || fail "$file does not render its text"
done

# Units: ExecStart under this prefix; systemd accepts both (output is warnings or errors).
grep -q "^ExecStart=$prefix/bin/nnd " "$prefix/lib/systemd/system/nnd.service" ||
    fail "nnd.service does not start $prefix/bin/nnd"
grep -q "^ExecStart=$prefix/bin/nnd-exporter " "$prefix/lib/systemd/system/nnd-exporter.service" ||
    fail "nnd-exporter.service does not start $prefix/bin/nnd-exporter"
"$prefix/bin/nnd-exporter" --version | grep -q '^nnd-exporter [0-9]' || fail "nnd-exporter --version"
if command -v systemd-analyze >/dev/null; then
    (cd "$prefix/lib/systemd/system" &&
        MANPATH=$prefix/share/man SYSTEMD_LOG_LEVEL=notice systemd-analyze verify \
            ./nnd.socket ./nnd.service ./nnd-exporter.socket ./nnd-exporter.service) >"$dir/verify" 2>&1 || { cat "$dir/verify"; fail "systemd-analyze verify"; }
    [ ! -s "$dir/verify" ] || { cat "$dir/verify"; fail "systemd-analyze verify warns"; }
else
    echo "install_test: no systemd-analyze here; units not verified"
fi

# The example driver is installed beside the drivers folder, not in it; enabled as an
# integrator would, by a copy into the prefix's lib/nnd/drivers.
[ -e "$prefix/lib/nnd/drivers/libnnd_example.so" ] && fail "the example driver is enabled by default"
mkdir -p "$prefix/lib/nnd/drivers"
cp "$prefix/lib/nnd/drivers-examples/libnnd_example.so" "$prefix/lib/nnd/drivers/"
# So is the example extension: parked beside lib/nnd/extensions, enabled by a copy.
[ -e "$prefix/lib/nnd/extensions/libnnd_fibonacci.so" ] && fail "the example extension is enabled by default"
mkdir -p "$prefix/lib/nnd/extensions"
cp "$prefix/lib/nnd/extensions-examples/libnnd_fibonacci.so" "$prefix/lib/nnd/extensions/"
# The installed daemon, its plugins found under the prefix with no --extensions-dir.
"$prefix/bin/nnd" --socket "$dir/nnd.sock" --state-dir "$dir/state" --log-level warn &
pid=$!
i=0
while [ ! -S "$dir/nnd.sock" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
"$prefix/bin/nndctl" --socket "$dir/nnd.sock" reload >"$dir/reload" || fail "nndctl reload"
grep -q "^loaded   com.example.fibonacci ($prefix/lib/nnd/extensions/libnnd_fibonacci.so)" \
    "$dir/reload" || { cat "$dir/reload"; fail "the default plugin folder is not under the prefix"; }
# The installed driver is a device (drivers/example), from the prefix's drivers folder.
"$prefix/bin/nndctl" --socket "$dir/nnd.sock" info --json >"$dir/info" || fail "nndctl info"
python3 -c 'import json, sys
sys.exit(not any(d["name"] == "nnd-example" and d["type"] == "ACCELERATOR"
                 for d in json.load(sys.stdin)["devices"]))' <"$dir/info" ||
    { cat "$dir/info"; fail "the installed daemon does not list the installed example driver"; }

# An NNAPI program as it is written for Android, built against the prefix alone.
flags=""
[ -n "$sanitize" ] && flags="-fsanitize=$sanitize"
grep -q '#include <android/NeuralNetworks.h>' "$src/examples/classify.c" ||
    fail "classify.c does not include <android/NeuralNetworks.h>"
# shellcheck disable=SC2046
cc $flags -o "$dir/classify" "$src/examples/classify.c" \
    $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs nnd) -lm ||
    fail "classify.c does not build with pkg-config's flags"
NND_SOCKET=$dir/nnd.sock "$dir/classify" >"$dir/classify.out" ||
    { cat "$dir/classify.out"; fail "classify against the installed daemon"; }
ldd "$dir/classify" | grep -q "$prefix/lib/libnnd.so" || fail "classify did not use the prefix's libnnd"

# The same program linked with libnnd.a: what `pkg-config --static` names is all it needs
# (libnnd's own code static, the libraries it uses shared, as Debian ships them).
# shellcheck disable=SC2046
cc $flags -o "$dir/classify-static" "$src/examples/classify.c" \
    $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --static --cflags --libs nnd |
        sed 's/-lnnd /-Wl,-Bstatic -lnnd -Wl,-Bdynamic /') -lm ||
    fail "classify.c does not link statically with pkg-config --static's flags"
ldd "$dir/classify-static" | grep -q libnnd && fail "classify-static still loads libnnd.so"
NND_SOCKET=$dir/nnd.sock "$dir/classify-static" >"$dir/classify.out" ||
    { cat "$dir/classify.out"; fail "the static classify against the installed daemon"; }

# The public nnd API stands alone: the wire format (generated nnd.pb-c.h, nnd_wire.h) is
# not installed, and a program using nnd.h builds with pkg-config's flags.
for f in include/nnd/nnd.pb-c.h include/nnd/nnd_wire.h; do
    [ -e "$prefix/$f" ] && fail "$f is installed"
done
printf '#include <nnd/nnd.h>\n#include <stdio.h>\nint main(void) {\n    char e[256];\n    nnd_client *c = nnd_client_connect(NULL, "install_test", e, sizeof e);\n    if (!c) return 1;\n    puts(nnd_client_daemon_version(c));\n    nnd_client_close(c);\n    return 0;\n}\n' >"$dir/hello.c"
# shellcheck disable=SC2046
cc $flags -Wall -Werror -o "$dir/hello" "$dir/hello.c" \
    $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs nnd) ||
    fail "a program using <nnd/nnd.h> does not build"
NND_SOCKET=$dir/nnd.sock "$dir/hello" >"$dir/hello.out" || fail "nnd_client_connect from <nnd/nnd.h>"

# libneuralnetworks.so by name, from the prefix's lib folder only.
LD_LIBRARY_PATH=$prefix/lib "$build/test_nnapi_dlopen" "$prefix/include/nnd/NeuralNetworks.h" \
    >"$dir/dlopen" 2>&1 || { cat "$dir/dlopen"; fail "dlopen libneuralnetworks.so from the prefix"; }

kill "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" -eq 0 ] || fail "the installed daemon exited with status $status"
echo "install_test: passed ($prefix)"
