#!/usr/bin/env python3
"""The tree's layout rules, checked from the sources: no hand-written C file over 800 lines,
and no circle of #include "..." between files, inside a module (top-level folder) or across
modules. A file and its header are one unit (burst.c with burst.h): a.c including b.h while
b.c includes a.h is a circle of two.
Prints the modules each module includes and every circle.
Usage: check-layout.py [SOURCE_DIR]; exit status 1 when a rule is broken."""
import os
import re
import subprocess
import sys

MAX_LINES = 800
root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
files = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"], capture_output=True,
                       text=True, check=True).stdout.split()
by_name = {}
for f in files:
    by_name.setdefault(os.path.basename(f), []).append(f)


def module(path):
    return path.split("/")[0]


def unit(path):
    return os.path.splitext(path)[0]


def resolve(src, name):
    """The file an #include "name" in src means: beside src, else the one file of that name
    (the one in src's own module when several share it)."""
    here = os.path.normpath(os.path.join(os.path.dirname(src), name))
    if here in by_name.get(os.path.basename(name), []):
        return here
    cands = [c for c in by_name.get(os.path.basename(name), []) if c.endswith(name)]
    same = [c for c in cands if module(c) == module(src)]
    return (same or cands or [None])[0]


edges, broken = {}, False
for f in files:
    with open(os.path.join(root, f), errors="replace") as fh:
        text = fh.read()
    lines = text.count("\n")
    if lines > MAX_LINES:
        print(f"layout: {f} has {lines} lines, more than {MAX_LINES}")
        broken = True
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        to = resolve(f, name)
        if to and unit(to) != unit(f):
            edges.setdefault(unit(f), set()).add(unit(to))

# Strongly connected components (Tarjan, iterative) of the file graph.
index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
for start in sorted({unit(f) for f in files}):
    if start in index:
        continue
    work = [(start, iter(sorted(edges.get(start, ()))))]
    index[start] = low[start] = counter[0]; counter[0] += 1
    stack.append(start); on.add(start)
    while work:
        v, it = work[-1]
        nxt = next(it, None)
        if nxt is not None:
            if nxt not in index:
                index[nxt] = low[nxt] = counter[0]; counter[0] += 1
                stack.append(nxt); on.add(nxt)
                work.append((nxt, iter(sorted(edges.get(nxt, ())))))
            elif nxt in on:
                low[v] = min(low[v], index[nxt])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

for comp in sccs:
    mods = sorted({module(f) for f in comp})
    kind = "across modules" if len(mods) > 1 else f"inside {mods[0]}"
    print(f"layout: include circle {kind}: {' '.join(comp)}")
    broken = True

uses = {}
for f, tos in edges.items():
    for t in tos:
        if module(t) != module(f):
            uses.setdefault(module(f), set()).add(module(t))
for m in sorted(uses):
    print(f"layout: {m} includes {' '.join(sorted(uses[m]))}")
print("layout: " + ("BROKEN" if broken else f"ok: {len(files)} files, none over {MAX_LINES} lines, "
                    "no include circle"))
sys.exit(1 if broken else 0)
