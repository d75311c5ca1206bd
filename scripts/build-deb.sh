#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds nnd's Debian packages (debian/), source and binary, with dpkg-buildpackage -us -uc and checks them
# with lintian. The source tree is copied first (the files git knows, committed or not, and
# untracked ones it does not ignore) into OUT/nnd-VERSION, so the checkout gets no
# obj-*/ or debian/<package>/ folders; the packages, .buildinfo and .changes land in OUT
# (default build-deb/), and lintian's output in OUT/lintian.txt. Fails when lintian
# reports an error or a warning that debian/*.lintian-overrides does not explain.
# Needs the build dependencies of debian/control, debhelper and lintian
# (`install-deps.sh --deb`).
# Usage: build-deb.sh [--out DIR]
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build-deb
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--out DIR]" >&2; exit 2 ;;
    esac
done
case $out in /*) ;; *) out=$(pwd)/$out ;; esac

version=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
src=$out/nnd-$version
rm -rf "$out"
mkdir -p "$src"
# Files deleted in the work tree but still known to git are skipped (--ignore-failed-read).
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
    tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$src"

echo "build-deb: dpkg-buildpackage -us -uc in $src"
t0=$(date +%s)
(cd "$src" && dpkg-buildpackage -us -uc) >"$out/build.log" 2>&1 ||
    { tail -n 40 "$out/build.log" >&2; echo "build-deb: FAILED: dpkg-buildpackage (log: $out/build.log)" >&2; exit 1; }
rm -rf "$src"
changes=$(ls "$out"/nnd_"$version"_*.changes)
echo "build-deb: built in $(($(date +%s) - t0)) s:"
ls "$out"/*.deb

# lintian on the source and binary packages with every tag shown (-I -E --pedantic); it fails
# on an error or a warning; overrides (debian/*.lintian-overrides) are counted, not shown.
lintian -I -E --pedantic --fail-on error,warning "$changes" >"$out/lintian.txt" 2>&1 || status=$?
cat "$out/lintian.txt"
[ "${status:-0}" -eq 0 ] || { echo "build-deb: FAILED: lintian" >&2; exit 1; }
echo "build-deb: lintian clean; packages in $out"
