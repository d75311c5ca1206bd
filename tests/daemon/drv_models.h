/* SPDX-License-Identifier: Apache-2.0 */
/* drv_models: a small builder of wire models for test_drivers (float32 tensors, int32 and
 * float32 constant scalars, constant tensors), and one-pool requests: every input and
 * output of an execution in one memfd, nothing else. Everything lives in the struct (too
 * large for a stack: allocate it); limits are the arrays' sizes. */
#ifndef TST_DAEMON_DRV_MODELS_H
#define TST_DAEMON_DRV_MODELS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nnd.pb-c.h"

/* NNAPI operation codes the tests use */
#define OP_ADD       0
#define OP_CONV_2D   3
#define OP_DEPTHWISE 4
#define OP_FC        9
#define OP_MAX_POOL  17
#define OP_RELU      19
#define OP_RESHAPE   22
#define OP_SOFTMAX   25
#define OP_TANH      28
#define OP_SUB       36

#define MB_OPERANDS   2048
#define MB_OPERATIONS 1536

typedef struct mb {
    Nnd__Model model;
    Nnd__Subgraph main;
    Nnd__Operand ops[MB_OPERANDS], *opp[MB_OPERANDS];
    Nnd__DataLocation locs[MB_OPERANDS];
    uint32_t dims[MB_OPERANDS][4];
    Nnd__Operation opn[MB_OPERATIONS], *opnp[MB_OPERATIONS];
    uint32_t lists[MB_OPERATIONS][16];
    uint8_t *values;
    size_t n_values, cap_values;
    uint32_t ins[4], outs[4];
} mb;

static inline void mb_init(mb *m) {
    memset(m, 0, sizeof *m);
    m->cap_values = 1 << 20;
    m->values = calloc(1, m->cap_values);
    nnd__subgraph__init(&m->main);
    m->main.operands = m->opp;
    m->main.operations = m->opnp;
    nnd__model__init(&m->model);
    m->model.main = &m->main;
}

static inline void mb_free(mb *m) {
    free(m->values);
}

static inline uint32_t mb_operand(mb *m, int32_t type, uint32_t rank, const uint32_t *dims,
                                  Nnd__OperandLifeTime life) {
    uint32_t i = (uint32_t)m->main.n_operands++;
    Nnd__Operand *o = &m->ops[i];
    nnd__operand__init(o);
    o->type = type;
    o->n_dimensions = rank;
    if (rank) memcpy(m->dims[i], dims, sizeof(uint32_t) * rank);
    o->dimensions = m->dims[i];
    o->lifetime = life;
    m->opp[i] = o;
    return i;
}

/* A constant of len bytes at data. */
static inline uint32_t mb_constant(mb *m, int32_t type, uint32_t rank, const uint32_t *dims,
                                   const void *data, size_t len) {
    uint32_t i = mb_operand(m, type, rank, dims, NND__OPERAND_LIFE_TIME__CONSTANT_COPY);
    nnd__data_location__init(&m->locs[i]);
    m->locs[i].offset = m->n_values;
    m->locs[i].length = len;
    memcpy(m->values + m->n_values, data, len);
    m->n_values += (len + 7) & ~(size_t)7;
    m->ops[i].location = &m->locs[i];
    return i;
}

static inline uint32_t mb_i32(mb *m, int32_t v) {
    return mb_constant(m, 1, 0, NULL, &v, 4);
}
static inline uint32_t mb_f32(mb *m, float v) {
    return mb_constant(m, 0, 0, NULL, &v, 4);
}
static inline uint32_t mb_temp(mb *m, uint32_t rank, const uint32_t *dims) {
    return mb_operand(m, 3, rank, dims, NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
}

static inline void mb_op(mb *m, int32_t type, uint32_t n_in, const uint32_t *in, uint32_t out) {
    uint32_t k = (uint32_t)m->main.n_operations++;
    uint32_t *l = m->lists[k];
    memcpy(l, in, sizeof(uint32_t) * n_in);
    l[n_in] = out;
    nnd__operation__init(&m->opn[k]);
    m->opn[k].type = type;
    m->opn[k].n_inputs = n_in;
    m->opn[k].inputs = l;
    m->opn[k].n_outputs = 1;
    m->opn[k].outputs = &l[n_in];
    m->opnp[k] = &m->opn[k];
}

/* Marks the model's inputs and its one output (operand out, made a subgraph output). */
static inline void mb_finish(mb *m, uint32_t n_in, const uint32_t *in, uint32_t out) {
    for (uint32_t i = 0; i < n_in; i++) {
        m->ins[i] = in[i];
        m->ops[in[i]].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    }
    m->outs[0] = out;
    m->ops[out].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    m->main.n_input_indexes = n_in;
    m->main.input_indexes = m->ins;
    m->main.n_output_indexes = 1;
    m->main.output_indexes = m->outs;
    m->model.operand_values.data = m->values;
    m->model.operand_values.len = m->n_values;
}

/* A request over one pool (fd index 0): inputs of in_bytes[i] bytes one after the other,
 * then the output of out_bytes. */
typedef struct mb_req {
    Nnd__ExecutionRequest req;
    Nnd__RequestArgument args[5], *in_p[4], *out_p[1];
    Nnd__DataLocation locs[5];
    Nnd__MemoryPool pool, *pool_p[1];
    size_t out_offset, size;
} mb_req;

static inline void mb_req_init(mb_req *r, uint32_t n_in, const size_t *in_bytes, size_t out_bytes) {
    memset(r, 0, sizeof *r);
    size_t at = 0;
    for (uint32_t i = 0; i <= n_in; i++) {
        size_t len = i < n_in ? in_bytes[i] : out_bytes;
        nnd__data_location__init(&r->locs[i]);
        r->locs[i].offset = at;
        r->locs[i].length = len;
        nnd__request_argument__init(&r->args[i]);
        r->args[i].location = &r->locs[i];
        if (i < n_in)
            r->in_p[i] = &r->args[i];
        else
            r->out_p[0] = &r->args[i], r->out_offset = at;
        at += len;
    }
    r->size = at;
    nnd__memory_pool__init(&r->pool);
    r->pool.size = at;
    r->pool_p[0] = &r->pool;
    nnd__execution_request__init(&r->req);
    r->req.n_inputs = n_in, r->req.inputs = r->in_p;
    r->req.n_outputs = 1, r->req.outputs = r->out_p;
    r->req.n_pools = 1, r->req.pools = r->pool_p;
}

/* A chain for tests of devices taking turns: */
/* n steps over [len], step k ops[k] if ops, else `even` for even k and `odd` for odd k
 * (RELU: x only, else x, b, act). Inputs a and b, output the last step's. */
static inline void ops_model(mb *m, uint32_t n, uint32_t len, const int32_t *ops, int32_t even,
                             int32_t odd) {
    mb_init(m);
    uint32_t a = mb_temp(m, 1, &len), b = mb_temp(m, 1, &len), act = mb_i32(m, 0), x = a;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t y = mb_temp(m, 1, &len);
        int32_t op = ops ? ops[k] : k % 2 ? odd : even;
        if (op == OP_RELU)
            mb_op(m, op, 1, &x, y);
        else
            mb_op(m, op, 3, (const uint32_t[]){x, b, act}, y);
        x = y;
    }
    mb_finish(m, 2, (const uint32_t[]){a, b}, x);
}

static inline void chain_model(mb *m, uint32_t n, uint32_t len, int32_t even, int32_t odd) {
    ops_model(m, n, len, NULL, even, odd);
}

#endif
