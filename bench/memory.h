/* SPDX-License-Identifier: Apache-2.0 */
/* memory: the memfd_64m row of `make bench`. Execute with a 64 MiB input passed in a
 * memfd against the same with a 4 KiB input, compute subtracted:
 *   (daemon 64 MiB - in process 64 MiB) / (daemon 4 KiB - in process 4 KiB)   (<= 1.1)
 * The model is SLICE of the input's first 1024 floats, so its compute stays small and
 * the same at both sizes, and both sides of each difference run it on the same bytes:
 * what remains is the daemon's per-request work on the pool (passing the fd, checking,
 * mapping), which zero-copy pools and the per-connection mapping cache keep independent
 * of its size. Medians over interleaved trials, after a warm-up. Returns 0 with *out
 * filled, or -1 (message on stderr). */
#ifndef BENCH_MEMORY_H
#define BENCH_MEMORY_H

#include "tests/support/harness.h"

typedef struct bench_memfd {
    double big_ns, small_ns;             /* daemon execute round trips */
    double big_local_ns, small_local_ns; /* the same model run in process */
} bench_memfd;

int bench_memfd_rows(const tst_daemon *d, bench_memfd *out);

#endif
