#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The tree's layout rules, checked from the sources and the build's objects:
- every C file starts with its licence line (SPDX-License-Identifier: Apache-2.0); no
  hand-written C file over 800 lines; every #include "..." names its file from the source
  root ("daemon/net/server.h"), except the public headers ("nnd/nnd.h"), generated ones
  (*.pb-c.h) and a plugin's own headers;
- NND_ names the public macros of include/ only: a macro defined elsewhere (a #define, or a
  definition CMake passes to the compiler) takes its module's upper-case prefix (ENG_, SRV_,
  TST_...: docs/design.md); so does an enum constant declared outside include/ (one written
  out, or one a macro inside the enum pastes, NND_OP_##name);
- no circle between files, by includes or by calls: a file and its header are one unit
  (burst.c with burst.h), a.c including b.h or calling a function of b.c is an edge a -> b.
  The calls are read from the symbol tables of the build's objects (nm: what each object
  defines and what it needs), mapped back to their sources;
- layers: a module is a top-level folder; the daemon's and the engine's subfolders are
  modules of their own (engine/backends/ one per backend). LAYERS below lists every module
  in order, bottom first (docs/design.md mirrors it): a module includes and calls only
  modules before it.
Prints the engine's module graph, what each module uses, and every broken rule.
Usage: check-layout.py [SOURCE_DIR [BUILD_DIR]]; BUILD_DIR defaults to SOURCE_DIR/build (the
calls are not checked when it holds no objects); exit status 1 when a rule is broken."""
import os
import re
import subprocess
import sys

MAX_LINES = 800
SPDX = "SPDX-License-Identifier: Apache-2.0"
root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
build = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "build"))
files = subprocess.run(["git", "-C", root, "ls-files", "*.c", "*.h"], capture_output=True,
                       text=True, check=True).stdout.split()
by_name = {}
for f in files:
    by_name.setdefault(os.path.basename(f), []).append(f)

# The layers, bottom first: a module may include and call only the modules before it.
LAYERS = (
    "include",                  # the public headers: libnnd's API, the plugin ABIs
    "proto",                    # the wire schema, framing, default paths
    "schema",                   # codes, operand types, operation names, statuses
    "engine",                   # the engine's contracts: engine.h, op.h, backend.h
    "engine/base",              # what every engine layer counts on (memory account, scratch)
    "engine/ops_common",        # what kernels share
    "engine/ops",               # the kernels and the operation table
    "engine/plugins",           # plugin loading, extension plugins
    "engine/backends/xnnpack",  # the XNNPACK fast paths
    "engine/backends/drivers",  # device driver plugins as backends
    "engine/core",              # model, plan, preparation, execution, control flow
    "sched",                    # the scheduler
    "storage",                  # the compilation cache's files and index
    "metrics",                  # the admin status as Prometheus text
    "driverhost",               # driver plugins in processes of their own: host and proxy
    "daemon/base",
    "daemon/clients",
    "daemon/wire",
    "daemon/devices",
    "daemon/binding",
    "daemon/cache",
    "daemon/stats",
    "daemon/calls",
    "daemon/net",
    "daemon/admin",
    "daemon",                   # main.c and its configuration: puts the layers together
    "client",                   # libnnd
    "tools",                    # nndctl, the conformance runners, the exporter
    "extensions",               # example plugins (the ABIs of include/ only)
    "drivers",
    "examples",
    "tests",
    "bench",                    # its models are the tests' (tests/support/)
)
RANK = {m: i for i, m in enumerate(LAYERS)}
# Call circles waiting for their rewrite, each a pair of units named here until it is gone
# (none now).
CIRCLE_ALLOWED = set()


def module(path):
    parts = path.split("/")
    if parts[0] == "daemon" and len(parts) > 2:
        return "/".join(parts[:2])
    if parts[0] == "engine" and len(parts) > 2:
        return "/".join(parts[:3] if parts[1] == "backends" and len(parts) > 3 else parts[:2])
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


def nnd_enum_constants(text):
    """(name, line) of each NND_ enumerator of text's enums: NND_X written out, or NND_X_
    pasted by a #define inside the enum's braces."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'",
                  lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    found = []
    for head in re.finditer(r"\benum\s*\w*\s*\{", code):
        depth, j = 1, head.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        pos = head.end()
        for line in code[head.end():j - 1].split("\n"):
            if re.match(r"\s*#", line):
                hits = re.finditer(r"\b(NND_\w*)\s*##", line)
            else:
                hits = re.finditer(r"(?:^|[{,])\s*(NND_\w+)\s*(?==(?!=)|,|$)", line)
            for m in hits:
                found.append((m.group(1), code.count("\n", 0, pos + m.start(1)) + 1))
            pos += len(line) + 1
    return found


edges, broken = {}, False  # unit -> unit -> why ('includes x.h', 'calls f')


def edge(a, b, why):
    if a != b:
        edges.setdefault(a, {}).setdefault(b, why)


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
    if not f.startswith(PUBLIC):
        for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(NND_\w+)", text, re.M):
            print(f"layout: {f}:{text.count(chr(10), 0, m.start()) + 1} defines {m.group(1)}: "
                  "NND_ is for the public macros of include/, an internal macro takes its "
                  "module's prefix (docs/design.md)")
            broken = True
        for name, line in nnd_enum_constants(text):
            print(f"layout: {f}:{line} declares the enum constant {name}: NND_ is for the "
                  "public names of include/, an internal constant takes its module's prefix "
                  "(docs/design.md)")
            broken = True
    for name in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
        if not names_its_folder(f, name):
            print(f'layout: {f} includes "{name}": name its folder from the source root')
            broken = True
        to = resolve(f, name)
        if to:
            edge(unit(f), unit(to), f"{f} includes {to}")


# Definitions CMake passes to the compiler: the same rule as a #define.
for f in subprocess.run(["git", "-C", root, "ls-files", "CMakeLists.txt", "*/CMakeLists.txt"],
                        capture_output=True, text=True, check=True).stdout.split():
    with open(os.path.join(root, f), errors="replace") as fh:
        text = fh.read()
    for call in re.finditer(r"\b(?:target_|add_)compile_definitions\s*\(([^)]*)\)", text):
        for name in re.findall(r'(?:^|[\s"])(NND_\w+)', call.group(1)):
            print(f"layout: {f} defines {name} for the compiler: NND_ is for the public macros "
                  "of include/, an internal macro takes its module's prefix (docs/design.md)")
            broken = True


def object_sources():
    """(source, object) for every object of the build that was compiled from a tracked
    source: BUILD/<dir>/CMakeFiles/<target>.dir/<path>.o is SOURCE/<dir>/<path> ("__" for
    "..")."""
    tracked, found = set(files), []
    for d, subdirs, names in os.walk(build):
        subdirs.sort()
        for n in sorted(names):
            if not n.endswith(".c.o"):
                continue
            rel = os.path.relpath(os.path.join(d, n), build)
            m = re.match(r"(?:(.*)/)?CMakeFiles/[^/]+\.dir/(.*)\.o$", rel)
            if m:
                src = os.path.normpath(os.path.join(m.group(1) or "", m.group(2).replace("__", "..")))
                if src in tracked:
                    found.append((src, os.path.join(d, n)))
    return found


# Calls (and references to another file's data) from the objects' symbol tables.
objs = object_sources()
if objs:
    src_of = {o: s for s, o in objs}
    defined, needed = {}, {}
    out = subprocess.run(["nm", "-A", "-g"] + [o for _, o in objs], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        obj, rest = line.rsplit(":", 1) if line.count(":") > 1 else line.split(":", 1)
        fields = rest.split()
        if len(fields) == 2 and fields[0] == "U":
            needed.setdefault(src_of[obj], set()).add(fields[1])
        elif len(fields) == 3 and fields[1] in "TDBRCVWGS":
            defined.setdefault(fields[2], set()).add(src_of[obj])
    for src in sorted(needed):
        for sym in sorted(needed[src]):
            where = defined.get(sym, set())
            if len(where) > 1:  # main, a plugin's entry points: the one in src's module
                where = {w for w in where if module(w) == module(src)}
            if len(where) == 1:
                to = next(iter(where))
                edge(unit(src), unit(to), f"{src} calls {sym} ({to})")
else:
    print(f"layout: no objects under {build}: the calls are not checked (build first)")

graph = {a: {b for b in bs if (a, b) not in CIRCLE_ALLOWED and (b, a) not in CIRCLE_ALLOWED}
         for a, bs in edges.items()}

# Strongly connected components (Tarjan, iterative) of the file graph.
index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
for start in sorted(set(graph) | {unit(f) for f in files}):
    if start in index:
        continue
    work = [(start, iter(sorted(graph.get(start, ()))))]
    index[start] = low[start] = counter[0]; counter[0] += 1
    stack.append(start); on.add(start)
    while work:
        v, it = work[-1]
        nxt = next(it, None)
        if nxt is not None:
            if nxt not in index:
                index[nxt] = low[nxt] = counter[0]; counter[0] += 1
                stack.append(nxt); on.add(nxt)
                work.append((nxt, iter(sorted(graph.get(nxt, ())))))
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
    print(f"layout: circle {kind}: {' '.join(comp)}")
    for a in comp:
        for b in sorted(graph.get(a, ())):
            if b in comp:
                print(f"layout:   {edges[a][b]}")
    broken = True

uses = {}  # module -> module -> first edge that makes it
for a in sorted(edges):
    for b in sorted(edges[a]):
        if module(a) != module(b):
            uses.setdefault(module(a), {}).setdefault(module(b), edges[a][b])
for m in sorted(set(uses) | {module(f) for f in files}):
    if m not in RANK:
        print(f"layout: module {m} is not in the layer table (LAYERS in {sys.argv[0]})")
        broken = True
for m in sorted(uses):
    print(f"layout: {m} uses {' '.join(sorted(uses[m]))}")
print("layout: the engine's modules, each over those it uses:")
for m in LAYERS:
    if m == "engine" or m.startswith("engine/"):
        below = sorted((t for t in uses.get(m, {}) if t == "engine" or t.startswith("engine/")),
                       key=RANK.get)
        print(f"layout:   {m} -> {' '.join(below) or '(nothing of the engine)'}")
for m in sorted(uses, key=lambda m: RANK.get(m, -1)):
    for t in sorted(uses[m], key=lambda t: RANK.get(t, -1)):
        if m in RANK and t in RANK and RANK[t] > RANK[m]:
            print(f"layout: layer broken: {m} uses {t}, a layer after it: {uses[m][t]}")
            broken = True
print("layout: " + ("BROKEN" if broken else
                    f"ok: {len(files)} files, none over {MAX_LINES} lines, each with its licence "
                    "line, every include names its folder, no internal NND_ macro or enum "
                    "constant, no circle of includes or calls, "
                    f"every module within its layer ({len(objs)} objects read)"))
sys.exit(1 if broken else 0)
