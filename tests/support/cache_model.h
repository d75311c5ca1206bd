/* SPDX-License-Identifier: Apache-2.0 */
/* cache_model: the model the caching tests and benchmark compile, and how to run it.
 * out[i] = in[i] + w[i] for n floats, with w a CONSTANT_REFERENCE in a memfd pool (as the
 * NNAPI runtime passes constants over 128 bytes) and w[i] = seed + i / 4. Header-only so
 * test_cache, the other-uid helper cache_client and nnd-bench share it. */
#ifndef TST_SUPPORT_CACHE_MODEL_H
#define TST_SUPPORT_CACHE_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nnd/nnd_wire.h"
#include "tests/support/wire.h"

typedef struct cache_model {
    wire_add_model add; /* add.model: one input, w the CONSTANT_REFERENCE in pool fd 0 */
    uint32_t n;
    float seed;
    int pool_fd; /* the weights; pass it as pool fd 0 */
} cache_model;

static inline int cache_model_init(cache_model *m, uint32_t n, float seed) {
    memset(m, 0, sizeof *m);
    m->n = n;
    m->seed = seed;
    size_t bytes = (size_t)n * sizeof(float);
    float *w = NULL;
    m->pool_fd = nnd_memfd_create("cache-model-weights", bytes, (void **)&w);
    if (m->pool_fd < 0) return -1;
    for (uint32_t i = 0; i < n; i++)
        w[i] = seed + (float)i / 4;
    munmap(w, bytes);
    wire_add_model_init_n(&m->add, n, 0);
    return 0;
}

static inline void cache_model_clear(cache_model *m) {
    if (m->pool_fd >= 0) close(m->pool_fd);
    m->pool_fd = -1;
}

/* Runs the prepared model on in[i] = 1 + i and copies its n outputs to out. Returns 0, or
 * -1 (and prints why) when the execution fails. */
static inline int cache_model_run_raw(nnd_client *c, const cache_model *m, uint64_t handle,
                                      float *out) {
    size_t bytes = (size_t)m->n * sizeof(float);
    float *io = NULL;
    int fd = nnd_memfd_create("cache-model-io", 2 * bytes, (void **)&io);
    if (fd < 0) return -1;
    for (uint32_t i = 0; i < m->n; i++)
        io[i] = 1.0f + (float)i;
    Nnd__DataLocation loc[2];
    Nnd__RequestArgument args[2], *inp[1] = {&args[0]}, *outp[1] = {&args[1]};
    for (int i = 0; i < 2; i++) {
        nnd__data_location__init(&loc[i]);
        loc[i].offset = (uint64_t)i * bytes;
        loc[i].length = bytes;
        nnd__request_argument__init(&args[i]);
        args[i].location = &loc[i];
    }
    Nnd__MemoryPool pool = NND__MEMORY_POOL__INIT, *poolp = &pool;
    pool.size = 2 * bytes;
    Nnd__ExecutionRequest req = NND__EXECUTION_REQUEST__INIT;
    req.n_inputs = 1, req.inputs = inp, req.n_outputs = 1, req.outputs = outp;
    req.n_pools = 1, req.pools = &poolp;
    char err[256];
    int st = nnd_client_execute(c, handle, &req, &fd, 1, false, 0, NULL, err, sizeof err);
    if (st != 0)
        fprintf(stderr, "cache_model_run: execute: %s\n", err);
    else
        memcpy(out, io + m->n, bytes);
    munmap(io, 2 * bytes);
    close(fd);
    return st != 0 ? -1 : 0;
}

/* Runs the prepared model on in[i] = 1 + i and checks every output against in + w exactly.
 * Copies the raw outputs to out_bytes when it is non-NULL (n floats). Returns 0 when right,
 * -1 (and prints why) when not. */
static inline int cache_model_run(nnd_client *c, const cache_model *m, uint64_t handle,
                                  float *out_bytes) {
    float *out = malloc((size_t)m->n * sizeof(float) + 1);
    int rc = out ? cache_model_run_raw(c, m, handle, out) : -1;
    for (uint32_t i = 0; rc == 0 && i < m->n; i++) {
        float want = (1.0f + (float)i) + (m->seed + (float)i / 4);
        if (out[i] != want) {
            fprintf(stderr, "cache_model_run: out[%u] = %g, want %g\n", i, out[i], want);
            rc = -1;
        }
    }
    if (rc == 0 && out_bytes) memcpy(out_bytes, out, (size_t)m->n * sizeof(float));
    free(out);
    return rc;
}

#endif
