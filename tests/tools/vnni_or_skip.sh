#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the command when this CPU has AVX-512 VNNI, where nnd-cpu's 8-bit convolutions are
# bit-exact with the reference kernels (engine/qconv.h); else exits 77, ctest's skip.
if ! grep -qw avx512_vnni /proc/cpuinfo; then
    echo "no AVX-512 VNNI on this CPU: the 8-bit convolutions keep XNNPACK's rounding; skipped"
    exit 77
fi
exec "$@"
