#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""libnnd links the operations' checks and shape rules, not their kernels (docs/design.md):
fails when libnnd.so defines a function of the kernels or the engine behind them. Kernels
are recognised by the names this tree gives them: run functions (`*_run`), element lanes
(`lane_*`), the quantized kernel helpers (`eng_q8_*`), XNNPACK and its thread pool
(`xnn*`, `pthreadpool*`), preparation and execution (`eng_prepare*`, `eng_exec*`).
Usage: check-libnnd-kernels.py LIBNND_SO"""
import re
import subprocess
import sys

KERNEL = re.compile(r"(_run$|^lane_|^eng_q8_|^xnn|^pthreadpool|^eng_prepare|^eng_exec)")

lib = sys.argv[1]
out = subprocess.run(["nm", "--defined-only", lib], capture_output=True, text=True, check=True)
functions = {f[2].split(".")[0] for f in (l.split() for l in out.stdout.splitlines())
             if len(f) == 3 and f[1] in "tTwW"}
kernels = sorted(n for n in functions if KERNEL.search(n))
for name in kernels:
    print(f"libnnd-kernels: {lib} defines {name}")
print(f"libnnd-kernels: {'BROKEN' if kernels else 'ok'}: {len(functions)} functions, "
      f"{len(kernels)} of kernels")
sys.exit(1 if kernels else 0)
