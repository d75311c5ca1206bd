/* SPDX-License-Identifier: Apache-2.0 */
/* memory.c: the memfd_64m row. See memory.h. */
#include "bench/memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench/local.h"
#include "nnd/nnd_wire.h"
#include "tests/support/timing.h"

#define TRIALS    2000
#define WARMUP    50
#define OUT_ELEMS 1024u
#define BIG_ELEMS (16u << 20) /* 64 MiB of floats */

/* out[1024] = SLICE(in[n], begin {0}, size {1024}). */
typedef struct slice_model {
    Nnd__Operand ops[4], *opp[4];
    uint32_t in_dims[1], one[1], out_dims[1];
    Nnd__DataLocation begin_loc, size_loc;
    Nnd__Operation op, *opp_op;
    uint32_t op_in[3], op_out[1], ins[1], outs[1];
    Nnd__Subgraph main;
    Nnd__Model model;
    int32_t values[2];
} slice_model;

static void slice_model_init(slice_model *m, uint32_t n) {
    memset(m, 0, sizeof *m);
    m->in_dims[0] = n, m->one[0] = 1, m->out_dims[0] = OUT_ELEMS;
    for (int i = 0; i < 4; i++) {
        nnd__operand__init(&m->ops[i]);
        m->opp[i] = &m->ops[i];
        m->ops[i].n_dimensions = 1;
    }
    m->ops[0].type = m->ops[3].type = 3; /* TENSOR_FLOAT32 */
    m->ops[0].dimensions = m->in_dims;
    m->ops[0].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    m->ops[3].dimensions = m->out_dims;
    m->ops[3].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    for (int i = 1; i <= 2; i++) {
        m->ops[i].type = 4; /* TENSOR_INT32 */
        m->ops[i].dimensions = m->one;
        m->ops[i].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_COPY;
    }
    nnd__data_location__init(&m->begin_loc);
    nnd__data_location__init(&m->size_loc);
    m->begin_loc.length = m->size_loc.length = 4;
    m->size_loc.offset = 4;
    m->ops[1].location = &m->begin_loc;
    m->ops[2].location = &m->size_loc;
    m->values[0] = 0, m->values[1] = (int32_t)OUT_ELEMS;
    nnd__operation__init(&m->op);
    m->op.type = 86; /* SLICE */
    m->op_in[0] = 0, m->op_in[1] = 1, m->op_in[2] = 2, m->op_out[0] = 3;
    m->op.n_inputs = 3, m->op.inputs = m->op_in;
    m->op.n_outputs = 1, m->op.outputs = m->op_out;
    m->opp_op = &m->op;
    nnd__subgraph__init(&m->main);
    m->main.n_operands = 4, m->main.operands = m->opp;
    m->main.n_operations = 1, m->main.operations = &m->opp_op;
    m->ins[0] = 0, m->outs[0] = 3;
    m->main.n_input_indexes = 1, m->main.input_indexes = m->ins;
    m->main.n_output_indexes = 1, m->main.output_indexes = m->outs;
    nnd__model__init(&m->model);
    m->model.main = &m->main;
    m->model.operand_values.data = (uint8_t *)m->values;
    m->model.operand_values.len = sizeof m->values;
}

/* One side (big or small) through the daemon: its model, its input memfd. */
typedef struct side {
    slice_model m;
    uint64_t handle;
    int fds[2]; /* input memfd, output memfd */
    float *in, *out;
    size_t in_bytes;
    Nnd__DataLocation locs[2];
    Nnd__RequestArgument args[2], *inp[1], *outp[1];
    Nnd__MemoryPool pools[2], *poolp[2];
    Nnd__ExecutionRequest req;
    bench_local *local;
    float *local_in, local_out[OUT_ELEMS];
} side;

static int side_open(nnd_client *c, side *s, uint32_t n) {
    char err[256];
    memset(s, 0, sizeof *s);
    s->fds[0] = s->fds[1] = -1;
    slice_model_init(&s->m, n);
    if (nnd_client_prepare(c, &s->m.model, NULL, 0, 0, 0, 0, &s->handle, err, sizeof err) != 0) {
        fprintf(stderr, "bench: memfd row: prepare: %s\n", err);
        return -1;
    }
    s->in_bytes = (size_t)n * 4;
    s->fds[0] = nnd_memfd_create("bench-in", s->in_bytes, (void **)&s->in);
    s->fds[1] = nnd_memfd_create("bench-out", OUT_ELEMS * 4, (void **)&s->out);
    s->local_in = malloc(s->in_bytes);
    if (s->fds[0] < 0 || s->fds[1] < 0 || !s->local_in) {
        fprintf(stderr, "bench: memfd row: out of memory\n");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) /* every page real, on both sides */
        s->in[i] = s->local_in[i] = (float)(i % 4093);
    for (int i = 0; i < 2; i++) {
        nnd__data_location__init(&s->locs[i]);
        s->locs[i].pool_index = (uint32_t)i;
        s->locs[i].length = i ? OUT_ELEMS * 4 : s->in_bytes;
        nnd__request_argument__init(&s->args[i]);
        s->args[i].location = &s->locs[i];
        nnd__memory_pool__init(&s->pools[i]);
        s->pools[i].kind = NND__POOL_KIND__POOL_MEMFD;
        s->pools[i].fd_index = (uint32_t)i;
        s->pools[i].size = s->locs[i].length;
        s->poolp[i] = &s->pools[i];
    }
    s->inp[0] = &s->args[0], s->outp[0] = &s->args[1];
    nnd__execution_request__init(&s->req);
    s->req.n_inputs = 1, s->req.inputs = s->inp;
    s->req.n_outputs = 1, s->req.outputs = s->outp;
    s->req.n_pools = 2, s->req.pools = s->poolp;
    s->local =
        bench_local_open(&s->m.model, s->local_in, s->in_bytes, s->local_out, sizeof s->local_out);
    return s->local ? 0 : -1;
}

static void side_close(nnd_client *c, side *s) {
    if (s->handle) nnd_client_release(c, s->handle);
    for (int i = 0; i < 2; i++)
        if (s->fds[i] >= 0) close(s->fds[i]);
    if (s->in) munmap(s->in, s->in_bytes);
    if (s->out) munmap(s->out, OUT_ELEMS * 4);
    free(s->local_in);
    bench_local_close(s->local);
}

/* One execution through the daemon; its round trip in ns, or -1. */
static double side_execute(nnd_client *c, side *s) {
    char err[256];
    Nnd__Reply *r = NULL;
    uint64_t t0 = bench_now_ns();
    int st = nnd_client_execute(c, s->handle, &s->req, s->fds, 2, false, 0, &r, err, sizeof err);
    double t = (double)(bench_now_ns() - t0);
    if (r) nnd__reply__free_unpacked(r, NULL);
    if (st != 0) {
        fprintf(stderr, "bench: memfd row: execute: %s\n", err);
        return -1;
    }
    return t;
}

int bench_memfd_rows(const tst_daemon *d, bench_memfd *out) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, "nnd-bench-memfd", err, sizeof err);
    if (!c) {
        fprintf(stderr, "bench: memfd row: connect: %s\n", err);
        return -1;
    }
    static side big, small;
    static double t[4][TRIALS];
    int rc = -1;
    if (side_open(c, &big, BIG_ELEMS) || side_open(c, &small, OUT_ELEMS)) goto out;
    for (int i = -WARMUP; i < TRIALS; i++) {
        double v[4] = {side_execute(c, &big), side_execute(c, &small), bench_local_run(big.local),
                       bench_local_run(small.local)};
        for (int k = 0; k < 4; k++)
            if (v[k] < 0) goto out;
        if (i >= 0)
            for (int k = 0; k < 4; k++)
                t[k][i] = v[k];
    }
    for (uint32_t i = 0; i < OUT_ELEMS; i++)
        if (big.out[i] != big.in[i] || small.out[i] != small.in[i]) {
            fprintf(stderr, "bench: memfd row: wrong SLICE result at %u\n", i);
            goto out;
        }
    out->big_ns = bench_median(t[0], TRIALS);
    out->small_ns = bench_median(t[1], TRIALS);
    out->big_local_ns = bench_median(t[2], TRIALS);
    out->small_local_ns = bench_median(t[3], TRIALS);
    rc = 0;
out:
    side_close(c, &big);
    side_close(c, &small);
    nnd_client_close(c);
    return rc;
}
