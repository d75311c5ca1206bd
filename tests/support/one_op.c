/* SPDX-License-Identifier: Apache-2.0 */
/* one_op.c: see one_op.h. */
#include "tests/support/one_op.h"

#include <setjmp.h>
#include <stdarg.h>
#include <string.h>

#include <cmocka.h>

#include "engine/core/internal.h" /* schema_shape_bytes */

static uint32_t add(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                    int32_t zero_point, uint32_t lifetime) {
    assert_true(m->n_operands < ONE_OP_MAX_OPERANDS);
    eng_operand_desc *o = &m->operands[m->n_operands];
    *o = (eng_operand_desc){
        .type = type, .rank = rank, .scale = scale, .zero_point = zero_point, .lifetime = lifetime};
    if (rank) memcpy(o->dims, dims, rank * sizeof *dims);
    return m->n_operands++;
}

void one_op_start(one_op *m, int32_t code) {
    memset(m, 0, sizeof *m);
    m->code = code;
}

void one_op_in(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
               int32_t zero_point, const void *data) {
    assert_true(m->n_inputs < ONE_OP_MAX_INPUTS);
    uint32_t i = add(m, type, rank, dims, scale, zero_point, SCHEMA_MODEL_INPUT);
    m->input_data[m->n_inputs] = data;
    m->inputs[m->n_inputs++] = i;
    m->op_in[m->n_op_in++] = i;
}

void one_op_constant(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, const void *data,
                     size_t bytes) {
    uint32_t i = add(m, type, rank, dims, 0.f, 0, SCHEMA_CONSTANT_COPY);
    m->n_values = (m->n_values + 7) & ~(size_t)7;
    assert_true(m->n_values + bytes <= sizeof m->values);
    memcpy(m->values + m->n_values, data, bytes);
    m->operands[i].offset = m->n_values;
    m->operands[i].length = bytes;
    m->n_values += bytes;
    m->op_in[m->n_op_in++] = i;
}

void one_op_i32(one_op *m, int32_t v) {
    one_op_constant(m, SCHEMA_INT32, 0, NULL, &v, sizeof v);
}

void one_op_f32(one_op *m, float v) {
    one_op_constant(m, SCHEMA_FLOAT32, 0, NULL, &v, sizeof v);
}

void one_op_bool(one_op *m, bool v) {
    uint8_t b = v;
    one_op_constant(m, SCHEMA_BOOL, 0, NULL, &b, 1);
}

void one_op_ints(one_op *m, uint32_t n, const int32_t *v) {
    one_op_constant(m, SCHEMA_TENSOR_INT32, 1, (uint32_t[]){n}, v, n * sizeof *v);
}

void one_op_omitted(one_op *m, int32_t type) {
    m->op_in[m->n_op_in++] = add(m, type, 0, NULL, 0.f, 0, SCHEMA_NO_VALUE);
}

void one_op_out(one_op *m, int32_t type, uint32_t rank, const uint32_t *dims, float scale,
                int32_t zero_point) {
    assert_true(m->n_op_out < ONE_OP_MAX_OUTPUTS);
    m->op_out[m->n_op_out++] = add(m, type, rank, dims, scale, zero_point, SCHEMA_MODEL_OUTPUT);
}

eng_model_desc one_op_desc(one_op *m, eng_operation_desc *op) {
    *op = (eng_operation_desc){m->code, m->n_op_in, m->op_in, m->n_op_out, m->op_out};
    return (eng_model_desc){.n_operands = m->n_operands,
                            .operands = m->operands,
                            .n_operations = 1,
                            .operations = op,
                            .n_inputs = m->n_inputs,
                            .inputs = m->inputs,
                            .n_outputs = m->n_op_out,
                            .outputs = m->op_out,
                            .operand_values = m->values,
                            .operand_values_len = m->n_values};
}

bool one_op_supported(one_op *m) {
    eng_operation_desc op;
    eng_model_desc d = one_op_desc(m, &op);
    bool supported = false;
    char err[SCHEMA_ERR_LEN] = "";
    return eng_supported_operations(&d, &supported, err, sizeof err) == SCHEMA_OK && supported;
}

void one_op_run(one_op *m, void *out, size_t out_bytes) {
    eng_operation_desc op;
    eng_model_desc d = one_op_desc(m, &op);
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p = NULL;
    if (eng_prepare(&d, &p, err, sizeof err))
        fail_msg("%s: %s", schema_operation_name(m->code), err);
    eng_exec *e = eng_exec_create(p);
    assert_non_null(e);
    eng_io io_in[ONE_OP_MAX_INPUTS] = {{0}}, io_out[ONE_OP_MAX_OUTPUTS] = {{0}};
    for (uint32_t i = 0; i < m->n_inputs; i++) {
        const eng_operand_desc *o = &m->operands[m->inputs[i]];
        io_in[i] = (eng_io){.data = (void *)m->input_data[i],
                            .length = schema_shape_bytes(o->type, o->rank, o->dims)};
    }
    /* Output 0 goes to the caller, the others to scratch. */
    static uint8_t rest[ONE_OP_MAX_OUTPUTS - 1][4096];
    io_out[0] = (eng_io){.data = out, .length = out_bytes};
    for (uint32_t o = 1; o < m->n_op_out; o++)
        io_out[o] = (eng_io){.data = rest[o - 1], .length = sizeof rest[o - 1]};
    if (eng_exec_run(e, io_in, io_out, NULL, NULL, err, sizeof err))
        fail_msg("%s: %s", schema_operation_name(m->code), err);
    eng_exec_free(e);
    eng_prepared_free(p);
}
