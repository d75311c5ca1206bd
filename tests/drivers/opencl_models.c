/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_models.c: see opencl_models.h. */
#include "tests/drivers/opencl_models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/codes.h"

void om_init(om_model *m, unsigned seed) {
    memset(m, 0, sizeof *m);
    m->seed = seed;
}

void om_free(om_model *m) {
    for (uint32_t i = 0; i < m->n_inputs; i++)
        free(m->input_data[i]);
    free(m->values);
    memset(m, 0, sizeof *m);
}

uint32_t om_rand(om_model *m, uint32_t lo, uint32_t hi) {
    return lo + (uint32_t)rand_r(&m->seed) % (hi - lo + 1);
}

static float frand(om_model *m, float lim) {
    return lim * (2.f * (float)rand_r(&m->seed) / (float)RAND_MAX - 1.f);
}

size_t om_elems(const om_model *m, uint32_t operand) {
    const eng_operand_desc *o = &m->operands[operand];
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++)
        n *= o->dims[i];
    return n;
}

static uint32_t add(om_model *m, int32_t type, uint32_t rank, const uint32_t *dims,
                    uint32_t lifetime) {
    if (m->n_operands >= OM_MAX_OPERANDS) abort();
    eng_operand_desc *o = &m->operands[m->n_operands];
    *o = (eng_operand_desc){.type = type, .rank = rank, .lifetime = lifetime};
    if (rank) memcpy(o->dims, dims, sizeof(uint32_t) * rank);
    return m->n_operands++;
}

static void *value_space(om_model *m, uint32_t operand, size_t bytes) {
    size_t at = (m->n_values + 15) & ~(size_t)15;
    if (at + bytes > m->cap_values) {
        size_t cap = m->cap_values ? m->cap_values : 4096;
        while (cap < at + bytes)
            cap *= 2;
        uint8_t *v = realloc(m->values, cap);
        if (!v) abort();
        m->values = v, m->cap_values = cap;
    }
    m->operands[operand].offset = at;
    m->operands[operand].length = bytes;
    m->n_values = at + bytes;
    return m->values + at;
}

uint32_t om_input(om_model *m, uint32_t rank, const uint32_t *dims) {
    uint32_t i = add(m, SCHEMA_TENSOR_FLOAT32, rank, dims, SCHEMA_MODEL_INPUT);
    size_t n = om_elems(m, i);
    float *v = malloc(n * sizeof(float) + 1);
    if (!v) abort();
    for (size_t k = 0; k < n; k++)
        v[k] = frand(m, 2.f);
    m->input_data[m->n_inputs] = v;
    m->inputs[m->n_inputs++] = i;
    return i;
}

uint32_t om_tensor(om_model *m, int32_t type, uint32_t rank, const uint32_t *dims) {
    return add(m, type, rank, dims, SCHEMA_TEMPORARY);
}

void om_output(om_model *m, uint32_t operand) {
    m->operands[operand].lifetime = SCHEMA_MODEL_OUTPUT;
    m->outputs[m->n_outputs++] = operand;
}

uint32_t om_const_f32(om_model *m, uint32_t rank, const uint32_t *dims, const float *data,
                      float lim) {
    uint32_t i = add(m, SCHEMA_TENSOR_FLOAT32, rank, dims, SCHEMA_CONSTANT_COPY);
    size_t n = om_elems(m, i);
    float *v = value_space(m, i, n * sizeof(float));
    for (size_t k = 0; k < n; k++)
        v[k] = data ? data[k] : frand(m, lim);
    return i;
}

uint32_t om_const_i32s(om_model *m, uint32_t rank, const uint32_t *dims, const int32_t *data) {
    uint32_t i = add(m, SCHEMA_TENSOR_INT32, rank, dims, SCHEMA_CONSTANT_COPY);
    memcpy(value_space(m, i, om_elems(m, i) * sizeof(int32_t)), data,
           om_elems(m, i) * sizeof(int32_t));
    return i;
}

static uint32_t scalar(om_model *m, int32_t type, const void *v, size_t size) {
    uint32_t i = add(m, type, 0, NULL, SCHEMA_CONSTANT_COPY);
    memcpy(value_space(m, i, size), v, size);
    return i;
}
uint32_t om_i32(om_model *m, int32_t v) {
    return scalar(m, SCHEMA_INT32, &v, sizeof v);
}
uint32_t om_f32(om_model *m, float v) {
    return scalar(m, SCHEMA_FLOAT32, &v, sizeof v);
}
uint32_t om_bool(om_model *m, bool v) {
    uint8_t b = v;
    return scalar(m, SCHEMA_BOOL, &b, 1);
}
uint32_t om_omitted(om_model *m, int32_t type) {
    return add(m, type, 0, NULL, SCHEMA_NO_VALUE);
}

void om_op(om_model *m, int32_t code, uint32_t n_in, const uint32_t *in, uint32_t out) {
    uint32_t k = m->n_ops++;
    if (k >= OM_MAX_OPS || n_in > OM_MAX_OP_IN) abort();
    memcpy(m->op_in[k], in, sizeof(uint32_t) * n_in);
    m->op_out[k] = out;
    m->ops[k] = (eng_operation_desc){code, n_in, m->op_in[k], 1, &m->op_out[k]};
}

bool om_reference(om_model *m, float **outs, char *err, size_t errlen) {
    eng_model_desc d = {.n_operands = m->n_operands,
                        .operands = m->operands,
                        .n_operations = m->n_ops,
                        .operations = m->ops,
                        .n_inputs = m->n_inputs,
                        .inputs = m->inputs,
                        .n_outputs = m->n_outputs,
                        .outputs = m->outputs,
                        .operand_values = m->values,
                        .operand_values_len = m->n_values,
                        .reference_only = true};
    eng_prepared *p = NULL;
    if (eng_prepare(&d, &p, err, errlen)) return false;
    eng_exec *e = eng_exec_create(p);
    eng_io in[OM_MAX_IO] = {{0}}, out[OM_MAX_IO] = {{0}};
    for (uint32_t i = 0; i < m->n_inputs; i++)
        in[i].data = m->input_data[i], in[i].length = om_elems(m, m->inputs[i]) * sizeof(float);
    for (uint32_t i = 0; i < m->n_outputs; i++)
        out[i].data = outs[i], out[i].length = om_elems(m, m->outputs[i]) * sizeof(float);
    bool ok = e && eng_exec_run(e, in, out, NULL, NULL, err, errlen) == SCHEMA_OK;
    eng_exec_free(e);
    eng_prepared_free(p);
    return ok;
}

void om_driver_model(om_model *m, nnd_driver_model *d) {
    for (uint32_t i = 0; i < m->n_operands; i++) {
        const eng_operand_desc *o = &m->operands[i];
        nnd_driver_operand *t = &m->d_operands[i];
        *t = (nnd_driver_operand){.type = o->type, .rank = o->rank};
        memcpy(t->dims, o->dims, sizeof(uint32_t) * o->rank);
        switch (o->lifetime) {
        case SCHEMA_MODEL_INPUT: t->lifetime = NND_DRIVER_INPUT; break;
        case SCHEMA_MODEL_OUTPUT: t->lifetime = NND_DRIVER_OUTPUT; break;
        case SCHEMA_CONSTANT_COPY:
            t->lifetime = NND_DRIVER_CONSTANT;
            t->data = m->values + o->offset;
            t->length = o->length;
            break;
        case SCHEMA_NO_VALUE: t->lifetime = NND_DRIVER_OMITTED; break;
        default: t->lifetime = NND_DRIVER_TEMPORARY;
        }
    }
    for (uint32_t k = 0; k < m->n_ops; k++)
        m->d_ops[k] = (nnd_driver_operation){.type = m->ops[k].type,
                                             .n_inputs = m->ops[k].n_inputs,
                                             .n_outputs = 1,
                                             .inputs = m->op_in[k],
                                             .outputs = &m->op_out[k],
                                             .index = k};
    *d = (nnd_driver_model){.n_operands = m->n_operands,
                            .operands = m->d_operands,
                            .n_operations = m->n_ops,
                            .operations = m->d_ops,
                            .n_inputs = m->n_inputs,
                            .n_outputs = m->n_outputs,
                            .inputs = m->inputs,
                            .outputs = m->outputs};
}

double om_compare(const float *got, const float *want, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - (double)want[i]) / fmax(1.0, fabs((double)want[i]));
        if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

/* The bench's MobileNet as a model of ours: each layer one operation. */
void om_mobilenet(om_model *m, const bench_net *net) {
    uint32_t x = om_input(m, 4, (uint32_t[]){1, 224, 224, 3}), outs[BENCH_NET_MAX_LAYERS];
    float *img = bench_net_input(net);
    memcpy(m->input_data[0], img, net->in_elems * sizeof(float));
    free(img);
    for (size_t i = 0; i < net->n_layers; i++) {
        const bench_layer *l = &net->layers[i];
        uint32_t in[12], n = 0, dims[4] = {1, l->out_h, l->out_w, l->out_c}, rank = 4, code;
        in[n++] = x;
        switch (l->kind) {
        case BL_CONV:
        case BL_DEPTHWISE: {
            bool dw = l->kind == BL_DEPTHWISE;
            uint32_t wd[4] = {dw ? 1 : l->out_c, l->k, l->k, dw ? l->out_c : l->in_c};
            in[n++] = om_const_f32(m, 4, wd, l->weights, 0);
            in[n++] = om_const_f32(m, 1, &l->out_c, l->bias, 0);
            in[n++] = om_i32(m, 1), in[n++] = om_i32(m, (int32_t)l->stride);
            in[n++] = om_i32(m, (int32_t)l->stride);
            if (dw) in[n++] = om_i32(m, 1);
            in[n++] = om_i32(m, l->linear ? 0 : 3);
            code = dw ? SCHEMA_OP_DEPTHWISE_CONV_2D : SCHEMA_OP_CONV_2D;
            break;
        }
        case BL_ADD:
            in[n++] = outs[l->skip], in[n++] = om_i32(m, 0);
            code = SCHEMA_OP_ADD;
            break;
        case BL_AVG_POOL:
            in[n++] = om_i32(m, 2), in[n++] = om_i32(m, (int32_t)l->stride);
            in[n++] = om_i32(m, (int32_t)l->stride), in[n++] = om_i32(m, (int32_t)l->k);
            in[n++] = om_i32(m, (int32_t)l->k), in[n++] = om_i32(m, 0);
            code = SCHEMA_OP_AVERAGE_POOL_2D;
            break;
        case BL_FC:
            in[n++] = om_const_f32(m, 2, (uint32_t[]){l->out_c, l->in_c}, l->weights, 0);
            in[n++] = om_const_f32(m, 1, &l->out_c, l->bias, 0);
            in[n++] = om_i32(m, 0);
            dims[1] = l->out_c, rank = 2;
            code = SCHEMA_OP_FULLY_CONNECTED;
            break;
        default:
            in[n++] = om_f32(m, 1.f);
            dims[1] = l->out_c, rank = 2;
            code = SCHEMA_OP_SOFTMAX;
        }
        x = outs[i] = om_tensor(m, SCHEMA_TENSOR_FLOAT32, rank, dims);
        om_op(m, (int32_t)code, n, in, x);
    }
    om_output(m, x);
}
