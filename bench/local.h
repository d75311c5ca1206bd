/* SPDX-License-Identifier: Apache-2.0 */
/* local: a wire model prepared and executed by the engine library in this process, for
 * the inproc row. Kept apart from kernels.c so that no file includes both the client
 * library's header and the engine's. */
#ifndef BENCH_LOCAL_H
#define BENCH_LOCAL_H

#include <stddef.h>

#include "nnd.pb-c.h"

typedef struct bench_local bench_local;

/* Prepares m (one input, one output) bound to the given buffers; NULL on failure. */
bench_local *bench_local_open(const Nnd__Model *m, const void *input, size_t in_bytes, void *output,
                              size_t out_bytes);
/* One execution; its duration in nanoseconds, or -1 on failure. */
double bench_local_run(bench_local *l);
void bench_local_close(bench_local *l);

#endif
