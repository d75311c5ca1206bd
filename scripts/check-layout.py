#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tree's layout rules, checked from the sources: every C file starts with its licence
line (SPDX-License-Identifier: Apache-2.0); no hand-written C file over 800 lines;
every #include "..." names its file from the source root ("daemon/net/server.h"), except the
public headers ("nnd/nnd.h"), generated ones (*.pb-c.h) and a plugin's own headers; no
circle of includes between modules, neither between files nor between the modules
themselves. A module is a top-level folder; the daemon's subfolders (its layers along the
request path, docs/design.md) are modules of their own.
A file and its header are one unit (burst.c with burst.h): a.c including b.h while b.c
includes a.h is a circle of two, inside a module as across modules.
Prints the modules each module includes and every circle.
Usage: check-layout.py [SOURCE_DIR]; exit status 1 when a rule is broken."""
import os
import re
import subprocess
import sys

MAX_LINES = 800
SPDX = "SPDX-License-Identifier: Apache-2.0"
root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
files = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"], capture_output=True,
                       text=True, check=True).stdout.split()
by_name = {}
for f in files:
    by_name.setdefault(os.path.basename(f), []).append(f)


def module(path):
    parts = path.split("/")
    if parts[0] == "daemon" and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


PUBLIC = ("include/",)
PLUGINS = ("drivers/", "extensions/")


def names_its_folder(src, name):
    if name in files or name.endswith(".pb-c.h") or any(p + name in files for p in PUBLIC):
        return True
    return src.startswith(PLUGINS) and os.path.join(os.path.dirname(src), name) in files


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
    if SPDX not in "\n".join(text.split("\n", 3)[:3]):
        print(f"layout: {f} does not start with the licence line ({SPDX})")
        broken = True
    if lines > MAX_LINES:
        print(f"layout: {f} has {lines} lines, more than {MAX_LINES}")
        broken = True
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        if not names_its_folder(f, name):
            print(f'layout: {f} includes "{name}": name its folder from the source root')
            broken = True
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


def reaches(start, goal):
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        if m == goal:
            return True
        if m not in seen:
            seen.add(m)
            todo.extend(uses.get(m, ()))
    return False


for m in sorted(uses):
    for t in sorted(uses[m]):
        if reaches(t, m):
            print(f"layout: modules {m} and {t} include each other (through files)")
            broken = True
print("layout: " + ("BROKEN" if broken else f"ok: {len(files)} files, none over {MAX_LINES} lines, "
                    "each with its licence line, every include names its folder, no include circle"))
sys.exit(1 if broken else 0)
