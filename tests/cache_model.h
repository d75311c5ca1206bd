/* cache_model: the model the caching tests and benchmark compile, and how to run it.
 * out[i] = in[i] + w[i] for n floats, with w a CONSTANT_REFERENCE in a memfd pool (as the
 * NNAPI runtime passes constants over 128 bytes) and w[i] = seed + i / 4. Header-only so
 * test_cache, the other-uid helper cache_client and nnd-bench share it. */
#ifndef NND_TEST_CACHE_MODEL_H
#define NND_TEST_CACHE_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nnd/nnd.h"

typedef struct cache_model {
    Nnd__Model model;
    Nnd__Subgraph main;
    Nnd__Operand ops[4], *opp[4];
    Nnd__DataLocation loc_w, loc_act;
    Nnd__Operation add, *addp;
    uint32_t dims[1], add_in[3], add_out[1], in_idx[1], out_idx[1];
    Nnd__MemoryPool pool, *poolp;
    int32_t act;
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
    m->dims[0] = n;
    for (int i = 0; i < 4; i++) {
        nnd__operand__init(&m->ops[i]);
        m->opp[i] = &m->ops[i];
        m->ops[i].type = 3; /* TENSOR_FLOAT32 */
        m->ops[i].n_dimensions = 1;
        m->ops[i].dimensions = m->dims;
    }
    m->ops[0].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    nnd__data_location__init(&m->loc_w);
    m->loc_w.length = bytes;
    m->ops[1].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE;
    m->ops[1].location = &m->loc_w;
    m->ops[2].type = 1; /* INT32: fused activation NONE */
    m->ops[2].n_dimensions = 0;
    m->ops[2].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_COPY;
    nnd__data_location__init(&m->loc_act);
    m->loc_act.length = 4;
    m->ops[2].location = &m->loc_act;
    m->ops[3].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    nnd__operation__init(&m->add);
    m->add.type = 0; /* ADD */
    m->add_in[0] = 0, m->add_in[1] = 1, m->add_in[2] = 2, m->add_out[0] = 3;
    m->add.n_inputs = 3, m->add.inputs = m->add_in;
    m->add.n_outputs = 1, m->add.outputs = m->add_out;
    m->addp = &m->add;
    nnd__subgraph__init(&m->main);
    m->main.n_operands = 4, m->main.operands = m->opp;
    m->main.n_operations = 1, m->main.operations = &m->addp;
    m->in_idx[0] = 0, m->out_idx[0] = 3;
    m->main.n_input_indexes = 1, m->main.input_indexes = m->in_idx;
    m->main.n_output_indexes = 1, m->main.output_indexes = m->out_idx;
    nnd__memory_pool__init(&m->pool);
    m->pool.kind = NND__POOL_KIND__POOL_MEMFD;
    m->pool.fd_index = 0;
    m->pool.size = bytes;
    m->poolp = &m->pool;
    nnd__model__init(&m->model);
    m->model.main = &m->main;
    m->model.n_pools = 1;
    m->model.pools = &m->poolp;
    m->act = 0;
    m->model.operand_values.data = (uint8_t *)&m->act;
    m->model.operand_values.len = 4;
    return 0;
}

static inline void cache_model_clear(cache_model *m) {
    if (m->pool_fd >= 0) close(m->pool_fd);
    m->pool_fd = -1;
}

/* Runs the prepared model on in[i] = 1 + i and checks every output against in + w exactly.
 * Copies the raw outputs to out_bytes when it is non-NULL (n floats). Returns 0 when right,
 * -1 (and prints why) when not. */
static inline int cache_model_run(nnd_client *c, const cache_model *m, uint64_t handle,
                                  float *out_bytes) {
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
    int rc = 0;
    if (st != 0) {
        fprintf(stderr, "cache_model_run: execute: %s\n", err);
        rc = -1;
    }
    for (uint32_t i = 0; rc == 0 && i < m->n; i++) {
        float want = (1.0f + (float)i) + (m->seed + (float)i / 4);
        if (io[m->n + i] != want) {
            fprintf(stderr, "cache_model_run: out[%u] = %g, want %g\n", i, io[m->n + i], want);
            rc = -1;
        }
    }
    if (rc == 0 && out_bytes) memcpy(out_bytes, io + m->n, bytes);
    munmap(io, 2 * bytes);
    close(fd);
    return rc;
}

#endif
