/* SPDX-License-Identifier: Apache-2.0 */
/* prepare_rows: the preparation rows of `make bench` (group prepare), for the FP32 MobileNet
 * v1 of mobilenet.h (17 MB of weights) compiled through the NNAPI names, against XNNPACK
 * creating the same network's operators in this process (mobilenet_xnn.h: subgraph defined,
 * runtime created, weights packed). Medians over alternating rounds.
 *   prep_cold_xnn  a cold compile on a daemon with default settings (the content cache on),
 *                  every trial a model never seen before (all its weights scaled by a
 *                  trial's factor, as a retrained model differs), over XNNPACK's creation
 *                  (target <= 1.5);
 *   prep_hit_xnn   a compile with the cache directory and token an earlier compile of the
 *                  same model used (ANeuralNetworksCompilation_setCaching), the model built
 *                  anew each trial as an app's next run builds it, on a daemon with
 *                  the content cache off (nothing held in memory), over XNNPACK's creation
 *                  (reported); its own target, in the notes: at most a cold compile on that
 *                  daemon, alternated with it, within BENCH_PREP_HIT_NOISE (two medians of
 *                  the same cold compile on this machine differed by up to 1.7%). A load from
 * cache files decodes and prepares again (XNNPACK cannot take packed weights back) after reading
 * and hashing them, so the daemon saves none for a model over --cache-save-max-bytes (default 4
 * MiB; this one has 17 MB) and libnnd compiles such a model as without caching: files_saved says
 * whether the daemon saved any. Returns 0 and fills *out, or -1 with a message on stderr. */
#ifndef BENCH_PREPARE_ROWS_H
#define BENCH_PREPARE_ROWS_H

#include <stdbool.h>

#include "bench/kernels.h"

#define BENCH_PREP_HIT_NOISE 0.03

typedef struct bench_prepare {
    bench_pair cold_xnn; /* a: cold compile, b: XNNPACK creation */
    bench_pair hit_xnn;  /* a: compile from the cache, b: XNNPACK creation */
    double hit_cold_ns;  /* cold compile on the cache-off daemon, alternated with the hits */
    bool files_saved;    /* whether the first compile with the cache directory saved files */
    double file_bytes;   /* of the two cache files, when saved */
} bench_prepare;

int bench_prepare_rows(bench_prepare *out);

#endif
