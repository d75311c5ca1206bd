#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (tests/fuzz/) with clang, ASan and UBSan in their own build
# directory, generates seed corpora from the conformance vectors there, and runs each target
# for a set time, printing the executions per target. Exit status 1 when a target found a
# crash, a hang or a leak (its reproducer is in <build-dir>/artifacts/<target>/).
#
# Usage: scripts/fuzz.sh [--build-dir DIR] [--seconds N] [--per-file N] [--jobs N]
#                        [--build-only | --run-only] [TARGET...]
#   defaults: build-fuzz, 60 s per target, 3 seed cases per vector file, all targets.
# Environment: NND_CONFORMANCE_DIR (default the build directory's vectors/conformance, unpacked
# from tests/vectors/ by cmake),
#   FUZZ_FLAGS (extra libFuzzer flags).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build=build-fuzz
seconds=60
per_file=3
jobs=$(nproc 2>/dev/null || echo 2)
do_build=1
do_run=1
targets=""
while [ $# -gt 0 ]; do
    case "$1" in
    --build-dir) build=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --per-file) per_file=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --build-only) do_run=0 ;;
    --run-only) do_build=0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets="$targets $1" ;;
    esac
    shift
done
[ -n "$targets" ] || targets="frame model request cache burst buffer host"
case "$build" in /*) ;; *) build="$root/$build" ;; esac
vectors=${NND_CONFORMANCE_DIR:-$build/vectors/conformance}

if [ "$do_build" = 1 ]; then
    cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DNND_SANITIZE=fuzzer-no-link,address,undefined -DNND_FUZZ_SMOKE=OFF \
        "-DCMAKE_EXE_LINKER_FLAGS=-rtlib=compiler-rt -unwindlib=libgcc" >/dev/null
    set --
    for t in $targets; do set -- "$@" --target "fuzz_$t"; done
    cmake --build "$build" -j "$jobs" "$@" --target nnd-fuzz-seeds >/dev/null
    # Seeds are made once per build directory; remove corpus/ to make them again.
    if [ ! -e "$build/corpus/.seeded" ]; then
        mkdir -p "$build/corpus"
        if [ -d "$vectors" ]; then
            ASAN_OPTIONS=detect_leaks=0 "$build/nnd-fuzz-seeds" --per-file "$per_file" \
                "$vectors" "$build/corpus"
        else
            echo "fuzz.sh: no conformance vectors at $vectors: starting without seeds" >&2
        fi
        touch "$build/corpus/.seeded"
    fi
fi
[ "$do_run" = 1 ] || exit 0

status=0
for t in $targets; do
    bin="$build/fuzz_$t"
    [ -x "$bin" ] || { echo "fuzz.sh: $bin is not built" >&2; exit 2; }
    mkdir -p "$build/corpus/$t" "$build/artifacts/$t"
    log="$build/artifacts/$t.log"
    rc=0
    # allocator_may_return_null: a request for more memory than there is fails as it would
    # in the daemon, instead of ending the run.
    ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1} \
    UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
        "$bin" -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2560 \
        -malloc_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$build/artifacts/$t/" ${FUZZ_FLAGS:-} \
        "$build/corpus/$t" "$root/tests/fuzz/regress/$t" >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
    if [ "$rc" = 0 ]; then
        echo "fuzz $t: ${execs:-?} executions in ${secs:-$seconds} s, no crash"
    else
        status=1
        echo "fuzz $t: FAILED after ${execs:-?} executions (exit $rc); log $log"
        grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|artifact_prefix|Test unit written)' \
            "$log" | head -n 8 || true
    fi
done
exit $status
