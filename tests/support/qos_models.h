/* SPDX-License-Identifier: Apache-2.0 */
/* qos_models: wire models and requests for the scheduler's tests and benchmarks.
 * A chain is n ADDs over [len] floats: t0 = a + b, t1 = t0 + b, ..., out = a + n * b, so
 * its run time grows with n and len, its temporaries are two [len] tensors, and a wrong
 * or partial run shows in the result. Everything lives in the struct (free with
 * qos_chain_free); requests address one memfd holding a, b and out at given offsets. */
#ifndef TST_SUPPORT_QOS_MODELS_H
#define TST_SUPPORT_QOS_MODELS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nnd.pb-c.h"

typedef struct qos_chain {
    Nnd__Model model;
    Nnd__Subgraph main;
    Nnd__Operand *ops, **opp;
    Nnd__Operation *opn, **opnp;
    uint32_t *lists; /* per operation: 3 inputs, 1 output */
    uint32_t dims[1];
    uint32_t inputs[2], outputs[1];
    Nnd__DataLocation act_loc;
    int32_t act;
    uint32_t n, len;
} qos_chain;

static inline void qos_chain_init(qos_chain *c, uint32_t n, uint32_t len) {
    memset(c, 0, sizeof *c);
    c->n = n;
    c->len = len;
    uint32_t n_ops = n + 3;
    c->ops = calloc(n_ops, sizeof *c->ops);
    c->opp = calloc(n_ops, sizeof *c->opp);
    c->opn = calloc(n, sizeof *c->opn);
    c->opnp = calloc(n, sizeof *c->opnp);
    c->lists = calloc((size_t)n * 4, sizeof *c->lists);
    c->dims[0] = len;
    for (uint32_t i = 0; i < n_ops; i++) {
        nnd__operand__init(&c->ops[i]);
        c->opp[i] = &c->ops[i];
        c->ops[i].type = 3; /* TENSOR_FLOAT32 */
        c->ops[i].n_dimensions = 1;
        c->ops[i].dimensions = c->dims;
        c->ops[i].lifetime = NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE;
    }
    c->ops[0].lifetime = c->ops[1].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    c->ops[2].type = 1; /* INT32: fused activation NONE */
    c->ops[2].n_dimensions = 0;
    c->ops[2].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_COPY;
    nnd__data_location__init(&c->act_loc);
    c->act_loc.length = 4;
    c->ops[2].location = &c->act_loc;
    c->ops[n_ops - 1].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t *l = &c->lists[4 * k];
        l[0] = k == 0 ? 0 : 3 + k - 1;
        l[1] = 1;
        l[2] = 2;
        l[3] = 3 + k;
        nnd__operation__init(&c->opn[k]);
        c->opn[k].type = 0; /* ADD */
        c->opn[k].n_inputs = 3;
        c->opn[k].inputs = l;
        c->opn[k].n_outputs = 1;
        c->opn[k].outputs = &l[3];
        c->opnp[k] = &c->opn[k];
    }
    nnd__subgraph__init(&c->main);
    c->main.n_operands = n_ops;
    c->main.operands = c->opp;
    c->main.n_operations = n;
    c->main.operations = c->opnp;
    c->inputs[0] = 0, c->inputs[1] = 1, c->outputs[0] = n_ops - 1;
    c->main.n_input_indexes = 2;
    c->main.input_indexes = c->inputs;
    c->main.n_output_indexes = 1;
    c->main.output_indexes = c->outputs;
    nnd__model__init(&c->model);
    c->model.main = &c->main;
    c->model.operand_values.data = (uint8_t *)&c->act;
    c->model.operand_values.len = 4;
}

static inline void qos_chain_free(qos_chain *c) {
    free(c->ops);
    free(c->opp);
    free(c->opn);
    free(c->opnp);
    free(c->lists);
}

/* A request over pool 0 (fd index 0, pool_size bytes): a, b and out at byte offsets. */
typedef struct qos_req {
    Nnd__ExecutionRequest req;
    Nnd__RequestArgument args[3], *in_p[2], *out_p[1];
    Nnd__DataLocation locs[3];
    Nnd__MemoryPool pool, *pool_p[1];
} qos_req;

static inline void qos_req_init(qos_req *r, uint32_t len, uint64_t pool_size, uint64_t a_off,
                                uint64_t b_off, uint64_t out_off) {
    memset(r, 0, sizeof *r);
    uint64_t offs[3] = {a_off, b_off, out_off};
    for (int i = 0; i < 3; i++) {
        nnd__data_location__init(&r->locs[i]);
        r->locs[i].offset = offs[i];
        r->locs[i].length = (uint64_t)len * sizeof(float);
        nnd__request_argument__init(&r->args[i]);
        r->args[i].location = &r->locs[i];
    }
    r->in_p[0] = &r->args[0], r->in_p[1] = &r->args[1], r->out_p[0] = &r->args[2];
    nnd__memory_pool__init(&r->pool);
    r->pool.size = pool_size;
    r->pool_p[0] = &r->pool;
    nnd__execution_request__init(&r->req);
    r->req.n_inputs = 2, r->req.inputs = r->in_p;
    r->req.n_outputs = 1, r->req.outputs = r->out_p;
    r->req.n_pools = 1, r->req.pools = r->pool_p;
}

#endif
