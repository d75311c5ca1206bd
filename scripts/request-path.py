#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""request-path.py: the daemon's source files that one PrepareModel and one Execute pass
through, in the order each is first entered, read from a real daemon under gdb.

A breakpoint that never stops sits on every function of the daemon's own sources
(daemon/, sched/, engine/, proto/, storage/, metrics/); `nndctl conformance` then runs one
case (a tiny model: one PrepareModel, one Execute) against that daemon. Each request starts
where the daemon receives a frame; it is named by the call-table handler it reaches.
The operation kernels and their shared helpers (engine/ops/, engine/ops_common/) count as one
entry.
Usage: scripts/request-path.py [BUILD_DIR] [CASE_JSON]   (needs gdb)"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(here)
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build"))
case = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else
                       os.path.join(build, "vectors", "conformance", "V1_0", "add.json"))
if not shutil.which("gdb"):
    sys.exit("request-path: gdb is not installed")
if not os.path.exists(case):
    sys.exit(f"request-path: no case file {case}")

TRACER = r'''
import gdb, re
FOLDERS = ("daemon/", "sched/", "engine/", "proto/", "storage/", "metrics/")
log = open(LOG, "w", buffering=1)
class Entry(gdb.Breakpoint):
    def __init__(self, spec, where):
        super().__init__(spec, internal=True)
        self.where = where
    def stop(self):
        log.write(self.where + "\n")
        return False
out = gdb.execute("info functions -n .", to_string=True)
current = None
for line in out.splitlines():
    if line.startswith("File "):
        path = line[5:].rstrip(":")
        rel = path[len(ROOT) + 1:] if path.startswith(ROOT + "/") else None
        current = rel if rel and rel.startswith(FOLDERS) and rel.endswith(".c") else None
        continue
    if current is None:
        continue
    m = re.match(r"^\d+:\s+(.*?)\b([A-Za-z_][A-Za-z0-9_]*)\(", line.strip())
    if m:
        try:
            Entry(f"-source {current} -function {m.group(2)}", f"{current} {m.group(2)}")
        except gdb.error:
            pass
gdb.execute("handle SIGTERM nostop noprint pass")
gdb.execute("handle SIGPIPE nostop noprint pass")
gdb.execute("handle SIGUSR1 nostop noprint pass")
gdb.execute("handle SIGCHLD nostop noprint pass")
gdb.execute("set detach-on-fork on")
gdb.execute("set follow-fork-mode parent")
gdb.execute("run")
'''

work = tempfile.mkdtemp(prefix="nnd-path.")
try:
    log = os.path.join(work, "entries")
    with open(os.path.join(work, "tracer.py"), "w") as fh:
        fh.write(f"LOG = {log!r}\nROOT = {root!r}\n" + TRACER)
    sock = os.path.join(work, "nnd.sock")
    gdb = subprocess.Popen(["gdb", "-q", "-batch", "-x", os.path.join(work, "tracer.py"),
                            "--args", os.path.join(build, "nnd"), "--socket", sock,
                            "--state-dir", os.path.join(work, "state"), "--log-level", "warn",
                            "--cache-max-bytes", "0"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(1200):
        if os.path.exists(sock):
            break
        time.sleep(0.1)
    else:
        sys.exit("request-path: the daemon did not start under gdb")
    time.sleep(0.5)
    mark = sum(1 for _ in open(log))
    run = subprocess.run([os.path.join(build, "nndctl"), "--socket", sock, "conformance",
                          "--device", "nnd-cpu", case], capture_output=True, text=True)
    time.sleep(0.5)
    subprocess.run(["pkill", "-TERM", "-f", f"nnd --socket {sock}"])
    gdb.wait(timeout=60)
    entries = [line.split() for line in open(log)][mark:]
finally:
    shutil.rmtree(work, ignore_errors=True)
if run.returncode != 0:
    sys.exit(f"request-path: nndctl conformance failed: {run.stdout}{run.stderr}")

# A request starts where the daemon reads a frame (the frame receive's caller comes first);
# it is named by the first call-table handler it reaches (*on_<call>).
starts = [i for i, (p, f) in enumerate(entries) if p.startswith("proto/") and "frame_recv" in f]
found = {}
for n, s in enumerate(starts):
    seg = entries[s - 1 if s > 0 else s:starts[n + 1] - 1 if n + 1 < len(starts) else len(entries)]
    name = next((f.split("on_", 1)[1] for p, f in seg if p.startswith("daemon/") and "on_" in f),
                None)
    files = ["engine/ops/*" if p.startswith(("engine/ops/", "engine/ops_common/")) else p
             for p, _ in seg]
    order = list(dict.fromkeys(files))
    visits = {p: 0 for p in order}
    for k, p in enumerate(files):
        if k == 0 or files[k - 1] != p:
            visits[p] += 1
    found.setdefault(name, (order, visits, len(seg)))
for want in ("prepare_model", "execute"):
    if want not in found:
        print(f"{want}: not seen (calls: {', '.join(str(k) for k in found)})")
        continue
    order, visits, n = found[want]
    print(f"{want}: {len(order)} files, {sum(visits.values())} entries into a file from "
          f"another, {n} function entries")
    for i, p in enumerate(order, 1):
        print(f"  {i:2d}. {p}" + (f" (entered {visits[p]} times)" if visits[p] > 1 else ""))
