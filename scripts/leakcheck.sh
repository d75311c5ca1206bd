#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the ctest suite of a sanitizer build (`make leakcheck`: build-sanitize, ASan and
# UBSan) with LeakSanitizer on and strict in every process of the run: the tests, the
# daemons they start and the clients those start (nndctl, cache_client, qos_flood, also
# when run as another uid). Exit status 1 when a test failed or any process made a report.
#
# - Every report (a leak, a memory error, undefined behaviour) ends its process with status
#   23 (tests/support/harness.h: TST_SANITIZER_STATUS), so the test that ran it fails; the
#   harness and the daemon scripts check the daemon's status at shutdown.
# - A report from a process whose status nobody reads still fails the run: ASan and LSan
#   write theirs to <build>/sanitizer-reports/ (printed at the end), and UBSan's, which GCC's
#   runtime prints only to stderr, are looked for in every test's output (ctest's JUnit file
#   there).
# - Leak suppressions: scripts/lsan.supp, third-party libraries only.
# - Left out: fuzz_build and fuzz_smoke_*, which build and run clang libFuzzer binaries of
#   their own with ASan, UBSan and libFuzzer's leak detection already (`make test` runs
#   them), and which take their sanitizer options from scripts/fuzz.sh.
#
# Usage: scripts/leakcheck.sh [--build-dir DIR] [--jobs N] [CTEST_ARGS...]
#   defaults: build-sanitize, 2 jobs; e.g. `scripts/leakcheck.sh -R test_cache` for one test.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
build="build-sanitize"
jobs=2
while [ $# -gt 0 ]; do
    case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) break ;;
    esac
done
case "$build" in /*) ;; *) build="$root/$build" ;; esac
[ -f "$build/CTestTestfile.cmake" ] || { echo "leakcheck: no build in $build" >&2; exit 2; }

reports="$build/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
chmod 1777 "$reports" # processes run as another uid (setpriv) write their reports here too

# halt_on_error: the first report ends the process. detect_stack_use_after_return and
# strict_string_checks catch more than the defaults. GCC's UBSan runtime is a library of its
# own that reads only UBSAN_OPTIONS, hence its own exitcode.
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:exitcode=23:detect_stack_use_after_return=1:strict_string_checks=1:log_path=$reports/asan:log_exe_name=1"
export LSAN_OPTIONS="suppressions=$root/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=23"

status=0
junit="$reports/ctest.xml"
(cd "$build" && ctest --output-on-failure -j "$jobs" -E '^fuzz_(build|smoke)' \
    --output-junit "$junit" --test-output-size-passed 100000000 \
    --test-output-size-failed 100000000 "$@") || status=1

found=0
for f in "$reports"/asan.*; do
    [ -f "$f" ] || continue
    found=$((found + 1))
    echo "==== sanitizer report: $f"
    cat "$f"
done
if [ -f "$junit" ] && grep -q 'runtime error:' "$junit"; then
    found=$((found + $(grep -c 'runtime error:' "$junit")))
    echo "==== UBSan reports in the tests' output ($junit):"
    grep 'runtime error:' "$junit"
fi
if [ "$found" -gt 0 ]; then
    echo "leakcheck: $found sanitizer report(s), above"
    status=1
else
    echo "leakcheck: no sanitizer reports"
fi
exit $status
