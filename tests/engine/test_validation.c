/* SPDX-License-Identifier: Apache-2.0 */
/* test_validation: a table of malformed models, each refused by the engine with
 * INVALID_ARGUMENT and a message naming what is wrong. Every case starts from one valid
 * model (out = ADD(a, b, act) over [2] floats) and breaks one thing. The signed 8-bit
 * cases first turn it into a valid TENSOR_QUANT8_ASYMM_SIGNED model (checked too). A
 * second table does the same for control flow, from a valid model with an IF and a WHILE
 * over referenced subgraphs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"

enum { A, B, ACT, OUT, T0, N_BASE = 4, MAX_OPERANDS = 8, MAX_OPS = 3 };

typedef struct model {
    eng_operand_desc operands[MAX_OPERANDS];
    eng_operation_desc ops[MAX_OPS];
    uint32_t op_in[MAX_OPS][8], op_out[MAX_OPS][2];
    uint32_t inputs[4], outputs[2];
    uint8_t values[64];
    float scales[4];
    eng_memory_view pools[1];
    eng_model_desc d;
} model;

static eng_operand_desc tensor(int32_t type, uint32_t lifetime) {
    eng_operand_desc o = {.type = type, .rank = 1, .dims = {2}, .lifetime = lifetime};
    return o;
}

static void base(model *m) {
    memset(m, 0, sizeof *m);
    m->operands[A] = tensor(SCHEMA_TENSOR_FLOAT32, SCHEMA_MODEL_INPUT);
    m->operands[B] = tensor(SCHEMA_TENSOR_FLOAT32, SCHEMA_MODEL_INPUT);
    m->operands[ACT] = (eng_operand_desc){
        .type = SCHEMA_INT32, .lifetime = SCHEMA_CONSTANT_COPY, .offset = 0, .length = 4};
    m->operands[OUT] = tensor(SCHEMA_TENSOR_FLOAT32, SCHEMA_MODEL_OUTPUT);
    uint32_t in[3] = {A, B, ACT};
    memcpy(m->op_in[0], in, sizeof in);
    m->op_out[0][0] = OUT;
    m->ops[0] = (eng_operation_desc){SCHEMA_OP_ADD, 3, m->op_in[0], 1, m->op_out[0]};
    m->inputs[0] = A, m->inputs[1] = B, m->outputs[0] = OUT;
    m->d = (eng_model_desc){.n_operands = N_BASE,
                            .operands = m->operands,
                            .n_operations = 1,
                            .operations = m->ops,
                            .n_inputs = 2,
                            .inputs = m->inputs,
                            .n_outputs = 1,
                            .outputs = m->outputs,
                            .operand_values = m->values,
                            .operand_values_len = sizeof m->values,
                            .pools = m->pools};
}

/* Adds a second ADD writing temporary T0 from a and b, read by the first as input b. */
static void with_temporary(model *m) {
    m->operands[T0] = tensor(SCHEMA_TENSOR_FLOAT32, SCHEMA_TEMPORARY);
    m->d.n_operands = T0 + 1;
    uint32_t in[3] = {A, B, ACT};
    memcpy(m->op_in[1], in, sizeof in);
    m->op_out[1][0] = T0;
    m->ops[1] = (eng_operation_desc){SCHEMA_OP_ADD, 3, m->op_in[1], 1, m->op_out[1]};
    m->op_in[0][1] = T0;
    m->d.n_operations = 2;
}

static void op_input_out_of_range(model *m) {
    m->op_in[0][1] = 40;
}
static void op_output_out_of_range(model *m) {
    m->op_out[0][0] = 40;
}
static void model_input_out_of_range(model *m) {
    m->inputs[1] = 40;
}
static void model_output_out_of_range(model *m) {
    m->outputs[0] = 40;
}
static void cycle(model *m) {
    with_temporary(m);
    m->op_in[1][0] = T0; /* the ADD writing T0 also reads it */
}
static void written_twice(model *m) {
    with_temporary(m);
    m->op_out[1][0] = OUT;
    m->op_in[0][1] = B;
}
static void temporary_never_written(model *m) {
    with_temporary(m);
    m->d.n_operations = 1; /* the ADD that wrote T0 is gone, T0 is still read */
}
static void too_few_inputs(model *m) {
    m->ops[0].n_inputs = 2;
}
static void too_many_outputs(model *m) {
    m->operands[T0] = tensor(SCHEMA_TENSOR_FLOAT32, SCHEMA_TEMPORARY);
    m->d.n_operands = T0 + 1;
    m->op_out[0][1] = T0;
    m->ops[0].n_outputs = 2;
}
static void input_types_differ(model *m) {
    m->operands[B].type = SCHEMA_TENSOR_INT32;
}
static void activation_not_int32(model *m) {
    m->operands[ACT].type = SCHEMA_FLOAT32;
}
static void activation_out_of_range(model *m) {
    m->values[0] = 7;
}
static void output_type_differs(model *m) {
    m->operands[OUT] = tensor(SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_MODEL_OUTPUT);
    m->operands[OUT].scale = 1.f;
}
static void location_out_of_bounds(model *m) {
    m->operands[ACT].offset = 62;
}
static void constant_length_wrong(model *m) {
    m->operands[ACT].length = 8;
}
static void quant_scale_zero(model *m) {
    for (int i = A; i <= OUT; i += 1)
        if (i != ACT) m->operands[i].type = SCHEMA_TENSOR_QUANT8_ASYMM, m->operands[i].scale = 1.f;
    m->operands[B].scale = 0.f;
}
static void quant_zero_point_out_of_range(model *m) {
    for (int i = A; i <= OUT; i += 1)
        if (i != ACT) m->operands[i].type = SCHEMA_TENSOR_QUANT8_ASYMM, m->operands[i].scale = 1.f;
    m->operands[A].zero_point = 300;
}
static void float_with_scale(model *m) {
    m->operands[A].scale = 0.5f;
}
static void quant16_symm_zero_point(model *m) {
    m->operands[A].type = SCHEMA_TENSOR_QUANT16_SYMM;
    m->operands[A].scale = 1.f;
    m->operands[A].zero_point = 3;
}
static void rank_over_limit(model *m) {
    m->operands[A].rank = ENG_MAX_RANK + 1;
}
static void constant_output(model *m) {
    with_temporary(m);
    m->op_out[1][0] = ACT; /* the inner ADD writes the activation constant */
}
static void writes_model_input(model *m) {
    m->op_out[0][0] = A;
}
static void scalar_with_dimensions(model *m) {
    m->operands[ACT].rank = 1, m->operands[ACT].dims[0] = 1;
}
static void unknown_operand_type(model *m) {
    m->operands[A].type = 77;
}
static void unknown_operation_type(model *m) {
    m->ops[0].type = 9999;
}
static void input_listed_twice(model *m) {
    m->inputs[1] = A;
}
static void input_not_listed(model *m) {
    m->d.n_inputs = 1;
}
static void no_operations(model *m) {
    m->d.n_operations = 0;
}
static void no_inputs(model *m) {
    m->operands[A].lifetime = m->operands[B].lifetime = SCHEMA_TEMPORARY;
    m->d.n_inputs = 0;
}
static void per_channel_scale_count(model *m) {
    m->operands[T0] = (eng_operand_desc){.type = SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL,
                                         .rank = 2,
                                         .dims = {3, 2},
                                         .lifetime = SCHEMA_MODEL_INPUT};
    m->operands[T0].channel_quant = (eng_channel_quant){m->scales, 2, 0};
    m->scales[0] = m->scales[1] = 1.f;
    m->d.n_operands = T0 + 1;
    m->inputs[2] = T0;
    m->d.n_inputs = 3;
}
static void per_channel_dim_out_of_range(model *m) {
    per_channel_scale_count(m);
    m->operands[T0].channel_quant = (eng_channel_quant){m->scales, 3, 5};
}
static void reference_pool_missing(model *m) {
    m->operands[ACT].lifetime = SCHEMA_CONSTANT_REFERENCE;
    m->operands[ACT].pool = 3;
}
static void no_value_with_length(model *m) {
    m->operands[T0] =
        (eng_operand_desc){.type = SCHEMA_INT32, .lifetime = SCHEMA_NO_VALUE, .length = 4};
    m->d.n_operands = T0 + 1;
}
static void temporary_with_location(model *m) {
    with_temporary(m);
    m->operands[T0].length = 8;
}
static void shapes_do_not_broadcast(model *m) {
    m->operands[B].dims[0] = 3;
}
static void output_shape_disagrees(model *m) {
    m->operands[OUT].dims[0] = 3;
}
static void unknown_lifetime(model *m) {
    m->operands[B].lifetime = 42;
}
static void constant_unknown_dims(model *m) {
    m->operands[B] = tensor(SCHEMA_TENSOR_FLOAT32, SCHEMA_CONSTANT_COPY);
    m->operands[B].rank = 0;
    m->d.n_inputs = 1;
}

/* ---- signed 8-bit ------------------------------------------------------------------- */

static void set_quant(eng_operand_desc *o, int32_t type, float scale, int32_t zero_point) {
    o->type = type, o->scale = scale, o->zero_point = zero_point;
}

/* out = ADD(a, b, act) over TENSOR_QUANT8_ASYMM_SIGNED: a valid model. */
static void int8_add(model *m) {
    set_quant(&m->operands[A], SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, 0.5f, -3);
    set_quant(&m->operands[B], SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, 0.25f, 7);
    set_quant(&m->operands[OUT], SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, 1.f, -128);
}
/* out = code(a) over signed 8-bit tensors of a's quantization (b stays an unused input):
 * valid for the RELUs and the movement operations. */
static void int8_unary(model *m, int32_t code) {
    int8_add(m);
    m->operands[OUT].scale = m->operands[A].scale;
    m->operands[OUT].zero_point = m->operands[A].zero_point;
    m->ops[0].type = code;
    m->ops[0].n_inputs = 1;
}
/* Operation 0 becomes code over in[0..n), whose bias t0 [1] (TENSOR_INT32 of the given
 * scale) is a third model input. */
static void weighted_op(model *m, int32_t code, const uint32_t *in, uint32_t n, float bias_scale) {
    m->operands[T0] = tensor(SCHEMA_TENSOR_INT32, SCHEMA_MODEL_INPUT);
    m->operands[T0].dims[0] = 1;
    m->operands[T0].scale = bias_scale;
    if (m->d.n_operands <= T0) m->d.n_operands = T0 + 1;
    m->inputs[2] = T0;
    m->d.n_inputs = 3;
    memcpy(m->op_in[0], in, n * sizeof *in);
    m->ops[0] = (eng_operation_desc){code, n, m->op_in[0], 1, m->op_out[0]};
}

/* out = FULLY_CONNECTED(a [1, 2], weights b [1, 2], bias t0 [1], act) over signed 8-bit:
 * a valid model. */
static void int8_fc(model *m) {
    int8_add(m);
    m->operands[A].rank = m->operands[B].rank = m->operands[OUT].rank = 2;
    m->operands[A].dims[0] = m->operands[B].dims[0] = m->operands[OUT].dims[0] = 1;
    m->operands[A].dims[1] = m->operands[B].dims[1] = 2;
    m->operands[OUT].dims[1] = 1;
    uint32_t in[4] = {A, B, T0, ACT};
    weighted_op(m, SCHEMA_OP_FULLY_CONNECTED, in, 4, 0.5f * 0.25f);
}

static void int8_zero_point_over(model *m) {
    int8_add(m);
    m->operands[A].zero_point = 128;
}
static void int8_zero_point_under(model *m) {
    int8_add(m);
    m->operands[B].zero_point = -129;
}
static void int8_scale_zero(model *m) {
    int8_add(m);
    m->operands[A].scale = 0.f;
}
static void int8_scale_negative(model *m) {
    int8_add(m);
    m->operands[OUT].scale = -0.5f;
}
/* Weights b as int8 quantized per channel along dim (one scale of 0.25 per channel). */
static void per_channel_weights(model *m, uint32_t dim) {
    set_quant(&m->operands[B], SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL, 0.f, 0);
    m->operands[B].channel_quant = (eng_channel_quant){m->scales, m->operands[B].dims[dim], dim};
    for (uint32_t k = 0; k < m->operands[B].dims[dim]; k++)
        m->scales[k] = 0.25f;
}
/* out [1, 1, 1, 1] = CONV_2D(a [1, 1, 1, 2], filter b [1, 1, 1, 2] int8 per channel, bias t0
 * [1], SAME padding, strides 1, act) with signed 8-bit input and output: a valid model.
 * Operand T0 + 1 is the INT32 constant 1 (padding scheme and both strides). */
static void int8_conv(model *m) {
    int8_add(m);
    uint32_t image[4] = {1, 1, 1, 2}, one_pixel[4] = {1, 1, 1, 1};
    m->operands[A].rank = m->operands[B].rank = m->operands[OUT].rank = 4;
    memcpy(m->operands[A].dims, image, sizeof image);
    memcpy(m->operands[B].dims, image, sizeof image);
    memcpy(m->operands[OUT].dims, one_pixel, sizeof one_pixel);
    per_channel_weights(m, 0);
    m->operands[T0 + 1] = (eng_operand_desc){
        .type = SCHEMA_INT32, .lifetime = SCHEMA_CONSTANT_COPY, .offset = 4, .length = 4};
    m->values[4] = 1;
    m->d.n_operands = T0 + 2;
    uint32_t in[7] = {A, B, T0, T0 + 1, T0 + 1, T0 + 1, ACT};
    weighted_op(m, SCHEMA_OP_CONV_2D, in, 7, 0.f);
}
static void per_channel_weights_zero_point(model *m) {
    int8_conv(m);
    m->operands[B].zero_point = 2;
}
static void per_channel_weights_scale_count(model *m) {
    int8_conv(m);
    m->operands[B].channel_quant.n_scales = 2;
    m->scales[1] = 0.25f;
}
static void per_channel_weights_scale_zero(model *m) {
    int8_conv(m);
    m->scales[0] = 0.f;
}
static void per_channel_weights_wrong_dimension(model *m) {
    int8_conv(m);
    per_channel_weights(m, 3); /* CONV_2D filters are quantized along their output channels */
}
static void per_channel_weights_in_fc(model *m) {
    int8_fc(m);
    per_channel_weights(m, 0); /* well formed, but FULLY_CONNECTED takes no per-channel weights */
}
static void int8_weights_unsigned(model *m) {
    int8_fc(m);
    set_quant(&m->operands[B], SCHEMA_TENSOR_QUANT8_ASYMM, 0.25f, 128);
}
static void int8_bias_scale_wrong(model *m) {
    int8_fc(m);
    m->operands[T0].scale = 0.5f;
}
static void int8_bias_zero_point(model *m) {
    int8_fc(m);
    m->operands[T0].zero_point = 1;
}
static void int8_add_with_uint8(model *m) {
    int8_add(m);
    set_quant(&m->operands[B], SCHEMA_TENSOR_QUANT8_ASYMM, 0.25f, 135);
}
static void int8_output_unsigned(model *m) {
    int8_add(m);
    set_quant(&m->operands[OUT], SCHEMA_TENSOR_QUANT8_ASYMM, 1.f, 0);
}
static void int8_mul_output_scale(model *m) {
    int8_add(m);
    m->ops[0].type = SCHEMA_OP_MUL;
    m->operands[OUT].scale = 0.5f * 0.25f; /* must exceed the product of the input scales */
}
static void int8_relu_requantizes(model *m) {
    int8_unary(m, SCHEMA_OP_RELU);
    m->operands[OUT].zero_point = 0;
}
static void int8_transpose_requantizes(model *m) {
    int8_unary(m, SCHEMA_OP_TRANSPOSE);
    m->operands[OUT].scale = 0.75f;
}
static void int8_logistic_zero_point(model *m) {
    int8_unary(m, SCHEMA_OP_LOGISTIC);
    m->operands[OUT].scale = 1.f / 256;
    m->operands[OUT].zero_point = 0; /* the unsigned form's; signed outputs sit at -128 */
}
static void int8_tanh_scale(model *m) {
    int8_unary(m, SCHEMA_OP_TANH);
    m->operands[OUT].scale = 1.f / 256;
    m->operands[OUT].zero_point = 0;
}
static void int8_softmax_zero_point(model *m) {
    int8_unary(m, SCHEMA_OP_SOFTMAX);
    m->operands[ACT].type = SCHEMA_FLOAT32; /* beta = 1.0 */
    float beta = 1.f;
    memcpy(m->values, &beta, sizeof beta);
    m->ops[0].n_inputs = 2;
    m->op_in[0][1] = ACT;
    m->operands[OUT].scale = 1.f / 256;
    m->operands[OUT].zero_point = -127;
}
static void quantize_to_float(model *m) {
    m->ops[0].type = SCHEMA_OP_QUANTIZE;
    m->ops[0].n_inputs = 1;
}

typedef struct bad_case {
    const char *name;
    void (*breaks)(model *m);
    const char *message; /* a fragment the error must contain */
} bad_case;

static const bad_case cases[] = {
    {"operation input out of range", op_input_out_of_range, "input 1 names operand 40"},
    {"operation output out of range", op_output_out_of_range, "output 0 names operand 40"},
    {"model input out of range", model_input_out_of_range, "names operand 40"},
    {"model output out of range", model_output_out_of_range, "names operand 40"},
    {"cycle", cycle, "cycle"},
    {"operand written twice", written_twice, "written by operations"},
    {"temporary never written", temporary_never_written, "never written"},
    {"too few inputs", too_few_inputs, "takes 3 inputs"},
    {"too many outputs", too_many_outputs, "outputs"},
    {"input types differ", input_types_differ, "different types"},
    {"activation not INT32", activation_not_int32, "must be INT32"},
    {"activation out of range", activation_out_of_range, "fused activation 7"},
    {"output type differs", output_type_differs, "output 0 has type"},
    {"location out of bounds", location_out_of_bounds, "outside"},
    {"constant length wrong", constant_length_wrong, "constant length"},
    {"quant8 scale zero", quant_scale_zero, "scale"},
    {"quant8 zero point out of range", quant_zero_point_out_of_range, "zero point 300"},
    {"float tensor with a scale", float_with_scale, "takes no scale"},
    {"quant16 symm zero point", quant16_symm_zero_point, "zero point must be 0"},
    {"rank over the limit", rank_over_limit, "over the limit"},
    {"constant output", constant_output, "constant"},
    {"operation writes a model input", writes_model_input, "model input"},
    {"scalar with dimensions", scalar_with_dimensions, "scalar type INT32"},
    {"unknown operand type", unknown_operand_type, "unknown or unsupported operand type 77"},
    {"unknown operation type", unknown_operation_type, "unknown operation type 9999"},
    {"model input listed twice", input_listed_twice, "twice"},
    {"model input not listed", input_not_listed, "not in the model's input list"},
    {"no operations", no_operations, "no operations"},
    {"no inputs", no_inputs, "at least one input"},
    {"per-channel scale count", per_channel_scale_count, "channel scales"},
    {"per-channel dimension out of range", per_channel_dim_out_of_range, "channel dimension"},
    {"reference to a missing pool", reference_pool_missing, "pool 3 does not exist"},
    {"NO_VALUE with a length", no_value_with_length, "NO_VALUE"},
    {"temporary with a location", temporary_with_location, "must not have a location"},
    {"shapes do not broadcast", shapes_do_not_broadcast, "broadcast"},
    {"declared output shape disagrees", output_shape_disagrees, "declared"},
    {"unknown lifetime", unknown_lifetime, "lifetime 42"},
    {"constant with unknown dimensions", constant_unknown_dims, "unknown dimensions"},
    {"int8 zero point over 127", int8_zero_point_over, "zero point 128 outside -128..127"},
    {"int8 zero point under -128", int8_zero_point_under, "zero point -129 outside -128..127"},
    {"int8 scale zero", int8_scale_zero, "TENSOR_QUANT8_ASYMM_SIGNED scale 0 must be > 0"},
    {"int8 scale negative", int8_scale_negative, "TENSOR_QUANT8_ASYMM_SIGNED scale -0.5"},
    {"per-channel int8 weights with a zero point", per_channel_weights_zero_point,
     "scale 0 and zero point 0"},
    {"per-channel int8 weights, scale count", per_channel_weights_scale_count,
     "2 channel scales for a channel dimension of 1"},
    {"per-channel int8 weights, scale zero", per_channel_weights_scale_zero,
     "channel scale 0 is 0"},
    {"per-channel int8 weights along the wrong dimension", per_channel_weights_wrong_dimension,
     "quantized per channel along dimension 0"},
    {"per-channel weights in FULLY_CONNECTED", per_channel_weights_in_fc,
     "cannot be TENSOR_QUANT8_SYMM_PER_CHANNEL"},
    {"int8 input with uint8 weights", int8_weights_unsigned,
     "has type TENSOR_QUANT8_ASYMM, not TENSOR_QUANT8_ASYMM_SIGNED"},
    {"int8 bias scale not input * weights", int8_bias_scale_wrong, "bias (input 2) scale 0.5"},
    {"TENSOR_INT32 bias with a zero point", int8_bias_zero_point, "TENSOR_INT32 zero point"},
    {"int8 added to uint8", int8_add_with_uint8, "different types"},
    {"int8 inputs, uint8 output", int8_output_unsigned, "output 0 has type"},
    {"int8 MUL output scale too small", int8_mul_output_scale, "must exceed the product"},
    {"int8 RELU changes the zero point", int8_relu_requantizes,
     "must have the scale and zero point of input 0"},
    {"int8 TRANSPOSE changes the scale", int8_transpose_requantizes,
     "must have the scale and zero point of input 0"},
    {"int8 LOGISTIC output zero point", int8_logistic_zero_point,
     "must have scale 1/256 and zero point -128"},
    {"int8 TANH output scale", int8_tanh_scale, "must have scale 1/128 and zero point 0"},
    {"int8 SOFTMAX output zero point", int8_softmax_zero_point,
     "must have scale 1/256 and zero point -128"},
    {"QUANTIZE to a float", quantize_to_float, "expected an 8-bit quantized type"},
};

/* The models the cases break are valid as they start. */
static void test_base_model_is_valid(void **state) {
    (void)state;
    void (*starts[])(model *) = {with_temporary, int8_add, int8_fc, int8_conv};
    for (size_t i = 0; i <= sizeof starts / sizeof starts[0]; i++) {
        model m;
        base(&m);
        if (i) starts[i - 1](&m);
        char err[SCHEMA_ERR_LEN] = "";
        eng_prepared *p = NULL;
        if (eng_prepare(&m.d, &p, err, sizeof err) != SCHEMA_OK) fail_msg("start %zu: %s", i, err);
        eng_prepared_free(p);
    }
    static const int32_t unary[] = {SCHEMA_OP_RELU, SCHEMA_OP_RELU1, SCHEMA_OP_RELU6,
                                    SCHEMA_OP_TRANSPOSE};
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        model m;
        base(&m);
        int8_unary(&m, unary[i]);
        char err[SCHEMA_ERR_LEN] = "";
        eng_prepared *p = NULL;
        if (eng_prepare(&m.d, &p, err, sizeof err) != SCHEMA_OK)
            fail_msg("%s over int8: %s", schema_operation_name(unary[i]), err);
        eng_prepared_free(p);
    }
}

/* Both prepare and validate refuse d with INVALID_ARGUMENT and a message holding `message`;
 * otherwise the case is printed and false returned. */
static bool refused(const eng_model_desc *d, const char *name, const char *message) {
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p = NULL;
    schema_status s = eng_prepare(d, &p, err, sizeof err);
    schema_status v = eng_validate(d, err, sizeof err);
    bool ok =
        s == SCHEMA_INVALID_ARGUMENT && v == SCHEMA_INVALID_ARGUMENT && !p && strstr(err, message);
    if (!ok)
        print_error("case \"%s\": prepare %s, validate %s, message \"%s\" (want \"%s\")\n", name,
                    schema_engine_status_name(s), schema_engine_status_name(v), err, message);
    eng_prepared_free(p);
    return ok;
}

static void test_malformed_models(void **state) {
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model m;
        base(&m);
        cases[i].breaks(&m);
        failures += !refused(&m.d, cases[i].name, cases[i].message);
    }
    assert_int_equal(failures, 0);
    assert_true(sizeof cases / sizeof cases[0] >= 30);
}

/* ---- control flow ---------------------------------------------------------------------
 * The valid base: y = IF(c, then, else, x) and z = WHILE(cond, body, w), with
 * then = else = (a + a) over [2] floats, cond = (a < ten) and body = (a + one) over [1]. */

enum { C, THEN, ELSE, X, Y, COND, BODY, W, Z, N_MAIN };
enum { SA, SACT, SB, SK, N_SUB = 6, N_REFS = 5 }; /* subgraph operands: in, act, out, const */

typedef struct flow_model {
    eng_operand_desc main[N_MAIN + 1];
    eng_operation_desc ops[2];
    uint32_t if_in[5], if_out[1], while_in[3], while_out[1], inputs[3], outputs[2];
    eng_operand_desc sub[N_REFS][N_SUB];
    eng_operation_desc sub_op[N_REFS];
    uint32_t sub_in[N_REFS][3], sub_out[N_REFS][1], sub_inputs[N_REFS][1], sub_outputs[N_REFS][1];
    eng_subgraph_desc refs[N_REFS];
    uint8_t values[16];
    eng_model_desc d;
} flow_model;

static eng_operand_desc ref_to(uint32_t r) {
    return (eng_operand_desc){
        .type = SCHEMA_SUBGRAPH_TYPE, .lifetime = SCHEMA_SUBGRAPH, .offset = r};
}

static eng_operand_desc shaped(int32_t type, uint32_t lifetime, uint32_t n) {
    return (eng_operand_desc){.type = type, .rank = 1, .dims = {n}, .lifetime = lifetime};
}

/* Subgraph r: out = op(in, second, act) over [n] floats; second is the input itself, or a
 * constant at value offset k_at when k_at >= 0. A LESS takes no activation. */
static void sub_graph(flow_model *m, uint32_t r, int32_t op, uint32_t n, int k_at) {
    eng_operand_desc *o = m->sub[r];
    o[SA] = shaped(SCHEMA_TENSOR_FLOAT32, SCHEMA_MODEL_INPUT, n);
    o[SACT] =
        (eng_operand_desc){.type = SCHEMA_INT32, .lifetime = SCHEMA_CONSTANT_COPY, .length = 4};
    o[SB] = op == SCHEMA_OP_LESS ? shaped(SCHEMA_TENSOR_BOOL8, SCHEMA_MODEL_OUTPUT, 1)
                                 : shaped(SCHEMA_TENSOR_FLOAT32, SCHEMA_MODEL_OUTPUT, n);
    o[SK] = shaped(SCHEMA_TENSOR_FLOAT32, SCHEMA_CONSTANT_COPY, 1);
    o[SK].offset = (uint64_t)(k_at < 0 ? 0 : k_at);
    o[SK].length = 4;
    uint32_t second = k_at < 0 ? SA : SK;
    uint32_t in[3] = {SA, second, SACT};
    memcpy(m->sub_in[r], in, sizeof in);
    m->sub_out[r][0] = SB;
    m->sub_op[r] =
        (eng_operation_desc){op, op == SCHEMA_OP_LESS ? 2 : 3, m->sub_in[r], 1, m->sub_out[r]};
    m->sub_inputs[r][0] = SA, m->sub_outputs[r][0] = SB;
    m->refs[r] = (eng_subgraph_desc){.n_operands = SK + 1,
                                     .operands = o,
                                     .n_operations = 1,
                                     .operations = &m->sub_op[r],
                                     .n_inputs = 1,
                                     .inputs = m->sub_inputs[r],
                                     .n_outputs = 1,
                                     .outputs = m->sub_outputs[r]};
}

static void flow_base(flow_model *m) {
    memset(m, 0, sizeof *m);
    const float ten = 10.f, one = 1.f;
    memcpy(m->values + 4, &ten, 4);
    memcpy(m->values + 8, &one, 4);
    sub_graph(m, 0, SCHEMA_OP_ADD, 2, -1); /* then */
    sub_graph(m, 1, SCHEMA_OP_ADD, 2, -1); /* else */
    sub_graph(m, 2, SCHEMA_OP_LESS, 1, 4); /* cond: a < 10 */
    sub_graph(m, 3, SCHEMA_OP_ADD, 1, 8);  /* body: a + 1 */
    sub_graph(m, 4, SCHEMA_OP_ADD, 2, -1); /* spare, for the cases that need one */
    eng_operand_desc *o = m->main;
    o[C] = shaped(SCHEMA_TENSOR_BOOL8, SCHEMA_MODEL_INPUT, 1);
    o[THEN] = ref_to(0), o[ELSE] = ref_to(1), o[COND] = ref_to(2), o[BODY] = ref_to(3);
    o[X] = shaped(SCHEMA_TENSOR_FLOAT32, SCHEMA_MODEL_INPUT, 2);
    o[Y] = shaped(SCHEMA_TENSOR_FLOAT32, SCHEMA_MODEL_OUTPUT, 2);
    o[W] = shaped(SCHEMA_TENSOR_FLOAT32, SCHEMA_MODEL_INPUT, 1);
    o[Z] = shaped(SCHEMA_TENSOR_FLOAT32, SCHEMA_MODEL_OUTPUT, 1);
    uint32_t if_in[5] = {C, THEN, ELSE, X}, while_in[3] = {COND, BODY, W};
    memcpy(m->if_in, if_in, sizeof if_in);
    memcpy(m->while_in, while_in, sizeof while_in);
    m->if_out[0] = Y, m->while_out[0] = Z;
    m->ops[0] = (eng_operation_desc){SCHEMA_OP_IF, 4, m->if_in, 1, m->if_out};
    m->ops[1] = (eng_operation_desc){SCHEMA_OP_WHILE, 3, m->while_in, 1, m->while_out};
    m->inputs[0] = C, m->inputs[1] = X, m->inputs[2] = W;
    m->outputs[0] = Y, m->outputs[1] = Z;
    m->d = (eng_model_desc){.n_operands = N_MAIN,
                            .operands = o,
                            .n_operations = 2,
                            .operations = m->ops,
                            .n_inputs = 3,
                            .inputs = m->inputs,
                            .n_outputs = 2,
                            .outputs = m->outputs,
                            .operand_values = m->values,
                            .operand_values_len = sizeof m->values,
                            .n_referenced = N_REFS,
                            .referenced = m->refs};
}

static void ref_out_of_range(flow_model *m) {
    m->main[ELSE].offset = 9;
}
static void ref_wrong_lifetime(flow_model *m) {
    m->main[THEN].lifetime = SCHEMA_CONSTANT_COPY;
}
static void lifetime_without_type(flow_model *m) {
    m->main[THEN].type = SCHEMA_TENSOR_FLOAT32;
}
static void ref_with_length(flow_model *m) {
    m->main[ELSE].length = 4;
}
/* The spare subgraph's second input becomes a reference to itself, read by nothing. */
static void references_itself(flow_model *m) {
    m->sub[4][SK] = ref_to(4);
    m->main[ELSE].offset = 4;
}
/* Subgraph 4 names 0, and 0 names 4. */
static void reference_cycle(flow_model *m) {
    m->sub[4][SK] = ref_to(0);
    m->sub[0][SK] = ref_to(4);
}
static void condition_not_bool(flow_model *m) {
    m->main[C].type = SCHEMA_TENSOR_FLOAT32;
}
static void condition_two_elements(flow_model *m) {
    m->main[C].dims[0] = 2;
}
static void condition_omitted(flow_model *m) {
    m->main[C].lifetime = SCHEMA_NO_VALUE;
    m->inputs[0] = W, m->inputs[1] = X, m->d.n_inputs = 2;
}
static void branch_not_a_subgraph(flow_model *m) {
    m->if_in[2] = X;
}
static void branch_input_count(flow_model *m) {
    m->if_in[4] = X;
    m->ops[0].n_inputs = 5;
}
static void branch_input_type(flow_model *m) {
    m->sub[1][SA].type = m->sub[1][SB].type = SCHEMA_TENSOR_INT32;
}
static void branch_output_dims(flow_model *m) {
    m->sub[0][SA].dims[0] = m->sub[0][SB].dims[0] = 3;
}
static void branch_output_scale(flow_model *m) {
    m->main[Y].type = SCHEMA_TENSOR_QUANT8_ASYMM, m->main[Y].scale = 0.5f;
}
static void while_without_inputs(flow_model *m) {
    m->ops[1].n_inputs = 2;
}
static void while_condition_not_bool(flow_model *m) {
    m->main[COND].offset = 3; /* the body (a float) as the condition */
}
static void while_body_changes_shape(flow_model *m) {
    m->sub[3][SB].dims[0] = 2; /* a + [1, 1]: the carried value would become [2] */
    m->sub[3][SK].dims[0] = 2;
    m->sub[3][SK].length = 8;
    m->main[Z].dims[0] = 0;
}
static void while_condition_inputs(flow_model *m) {
    m->main[W].type = SCHEMA_TENSOR_INT32; /* the condition takes a float */
}
static void plain_op_reads_reference(flow_model *m) {
    m->ops[0] = (eng_operation_desc){SCHEMA_OP_ADD, 3, m->if_in, 1, m->if_out};
    m->if_in[0] = X, m->if_in[1] = THEN, m->if_in[2] = X;
}
static void subgraph_error_named(flow_model *m) {
    m->sub[1][SACT].offset = 14; /* past the operand values */
}
static void subgraph_without_outputs(flow_model *m) {
    m->refs[4].n_outputs = 0;
    m->main[ELSE].offset = 4;
}

typedef struct flow_case {
    const char *name;
    void (*breaks)(flow_model *m);
    const char *message; /* a fragment the error must contain */
} flow_case;

static const flow_case flow_cases[] = {
    {"subgraph reference out of range", ref_out_of_range, "names subgraph 9"},
    {"SUBGRAPH type without its lifetime", ref_wrong_lifetime, "goes with lifetime SUBGRAPH"},
    {"SUBGRAPH lifetime without its type", lifetime_without_type, "goes with lifetime SUBGRAPH"},
    {"subgraph reference with a length", ref_with_length, "no length"},
    {"subgraph referencing itself", references_itself, "referenced subgraph 4, operand 3"},
    {"two subgraphs referencing each other", reference_cycle, "leads back to it"},
    {"IF condition not TENSOR_BOOL8", condition_not_bool, "IF #0: the condition (operand 0)"},
    {"IF condition of two elements", condition_two_elements, "TENSOR_BOOL8 of one element"},
    {"IF condition omitted", condition_omitted, "input 0 is omitted"},
    {"IF branch not a subgraph", branch_not_a_subgraph, "input 2 (operand 3), its else branch"},
    {"IF branch input count", branch_input_count, "then branch, subgraph 0, has 1 inputs"},
    {"IF input type against its branch", branch_input_type, "subgraph 1: types TENSOR_FLOAT32"},
    {"IF output dimensions against its branch", branch_output_dims, "dimension 0 is 2 and 3"},
    {"IF output type against its branch", branch_output_scale, "output 0 (operand 2)"},
    {"WHILE without loop inputs", while_without_inputs, "WHILE #1 has 2 inputs"},
    {"WHILE condition not TENSOR_BOOL8", while_condition_not_bool, "must be a TENSOR_BOOL8"},
    {"WHILE body changes a carried shape", while_body_changes_shape, "unlike input 0"},
    {"WHILE condition against its inputs", while_condition_inputs,
     "input 0 (operand 0) of its condition"},
    {"a plain operation reads a subgraph", plain_op_reads_reference, "only IF and WHILE"},
    {"an error inside a subgraph is named", subgraph_error_named,
     "referenced subgraph 1: operand 1"},
    {"a subgraph without outputs", subgraph_without_outputs,
     "referenced subgraph 4: subgraph needs"},
};

static void test_flow_base_is_valid(void **state) {
    (void)state;
    flow_model m;
    flow_base(&m);
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p = NULL;
    if (eng_prepare(&m.d, &p, err, sizeof err) != SCHEMA_OK) fail_msg("base: %s", err);
    eng_exec *e = eng_exec_create(p);
    uint8_t c = 1;
    float x[2] = {1, 2}, w = 0.5f, y[2], z;
    eng_io in[3] = {{.data = &c, .length = 1}, {.data = x, .length = 8}, {.data = &w, .length = 4}};
    eng_io out[2] = {{.data = y, .length = 8}, {.data = &z, .length = 4}};
    assert_int_equal(eng_exec_run(e, in, out, NULL, NULL, err, sizeof err), SCHEMA_OK);
    assert_true(y[0] == 2 && y[1] == 4 && z == 10.5f);
    eng_exec_free(e);
    eng_prepared_free(p);
}

static void test_malformed_flow_models(void **state) {
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof flow_cases / sizeof flow_cases[0]; i++) {
        flow_model m;
        flow_base(&m);
        flow_cases[i].breaks(&m);
        failures += !refused(&m.d, flow_cases[i].name, flow_cases[i].message);
    }
    assert_int_equal(failures, 0);
    assert_true(sizeof flow_cases / sizeof flow_cases[0] >= 15);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_model_is_valid),
        cmocka_unit_test(test_malformed_models),
        cmocka_unit_test(test_flow_base_is_valid),
        cmocka_unit_test(test_malformed_flow_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
