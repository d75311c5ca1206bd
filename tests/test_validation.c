/* test_validation: a table of malformed models, each refused by the engine with
 * INVALID_ARGUMENT and a message naming what is wrong. Every case starts from one valid
 * model (out = ADD(a, b, act) over [2] floats) and breaks one thing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"

enum { A, B, ACT, OUT, T0, N_BASE = 4, MAX_OPERANDS = 8, MAX_OPS = 3 };

typedef struct model {
    nnd_operand_desc operands[MAX_OPERANDS];
    nnd_operation_desc ops[MAX_OPS];
    uint32_t op_in[MAX_OPS][4], op_out[MAX_OPS][2];
    uint32_t inputs[4], outputs[2];
    uint8_t values[64];
    float scales[4];
    nnd_memory_view pools[1];
    nnd_model_desc d;
} model;

static nnd_operand_desc tensor(int32_t type, uint32_t lifetime) {
    nnd_operand_desc o = {.type = type, .rank = 1, .dims = {2}, .lifetime = lifetime};
    return o;
}

static void base(model *m) {
    memset(m, 0, sizeof *m);
    m->operands[A] = tensor(NND_TENSOR_FLOAT32, NND_MODEL_INPUT);
    m->operands[B] = tensor(NND_TENSOR_FLOAT32, NND_MODEL_INPUT);
    m->operands[ACT] = (nnd_operand_desc){
        .type = NND_INT32, .lifetime = NND_CONSTANT_COPY, .offset = 0, .length = 4};
    m->operands[OUT] = tensor(NND_TENSOR_FLOAT32, NND_MODEL_OUTPUT);
    uint32_t in[3] = {A, B, ACT};
    memcpy(m->op_in[0], in, sizeof in);
    m->op_out[0][0] = OUT;
    m->ops[0] = (nnd_operation_desc){NND_OP_ADD, 3, m->op_in[0], 1, m->op_out[0]};
    m->inputs[0] = A, m->inputs[1] = B, m->outputs[0] = OUT;
    m->d = (nnd_model_desc){.n_operands = N_BASE,
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
    m->operands[T0] = tensor(NND_TENSOR_FLOAT32, NND_TEMPORARY);
    m->d.n_operands = T0 + 1;
    uint32_t in[3] = {A, B, ACT};
    memcpy(m->op_in[1], in, sizeof in);
    m->op_out[1][0] = T0;
    m->ops[1] = (nnd_operation_desc){NND_OP_ADD, 3, m->op_in[1], 1, m->op_out[1]};
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
    m->operands[T0] = tensor(NND_TENSOR_FLOAT32, NND_TEMPORARY);
    m->d.n_operands = T0 + 1;
    m->op_out[0][1] = T0;
    m->ops[0].n_outputs = 2;
}
static void input_types_differ(model *m) {
    m->operands[B].type = NND_TENSOR_INT32;
}
static void activation_not_int32(model *m) {
    m->operands[ACT].type = NND_FLOAT32;
}
static void activation_out_of_range(model *m) {
    m->values[0] = 7;
}
static void output_type_differs(model *m) {
    m->operands[OUT] = tensor(NND_TENSOR_QUANT8_ASYMM, NND_MODEL_OUTPUT);
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
        if (i != ACT) m->operands[i].type = NND_TENSOR_QUANT8_ASYMM, m->operands[i].scale = 1.f;
    m->operands[B].scale = 0.f;
}
static void quant_zero_point_out_of_range(model *m) {
    for (int i = A; i <= OUT; i += 1)
        if (i != ACT) m->operands[i].type = NND_TENSOR_QUANT8_ASYMM, m->operands[i].scale = 1.f;
    m->operands[A].zero_point = 300;
}
static void float_with_scale(model *m) {
    m->operands[A].scale = 0.5f;
}
static void quant16_symm_zero_point(model *m) {
    m->operands[A].type = NND_TENSOR_QUANT16_SYMM;
    m->operands[A].scale = 1.f;
    m->operands[A].zero_point = 3;
}
static void rank_over_limit(model *m) {
    m->operands[A].rank = NND_MAX_RANK + 1;
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
    m->operands[A].lifetime = m->operands[B].lifetime = NND_TEMPORARY;
    m->d.n_inputs = 0;
}
static void per_channel_scale_count(model *m) {
    m->operands[T0] = (nnd_operand_desc){.type = NND_TENSOR_QUANT8_SYMM_PER_CHANNEL,
                                         .rank = 2,
                                         .dims = {3, 2},
                                         .lifetime = NND_MODEL_INPUT};
    m->operands[T0].channel_quant = (nnd_channel_quant){m->scales, 2, 0};
    m->scales[0] = m->scales[1] = 1.f;
    m->d.n_operands = T0 + 1;
    m->inputs[2] = T0;
    m->d.n_inputs = 3;
}
static void per_channel_dim_out_of_range(model *m) {
    per_channel_scale_count(m);
    m->operands[T0].channel_quant = (nnd_channel_quant){m->scales, 3, 5};
}
static void reference_pool_missing(model *m) {
    m->operands[ACT].lifetime = NND_CONSTANT_REFERENCE;
    m->operands[ACT].pool = 3;
}
static void no_value_with_length(model *m) {
    m->operands[T0] = (nnd_operand_desc){.type = NND_INT32, .lifetime = NND_NO_VALUE, .length = 4};
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
    m->operands[B] = tensor(NND_TENSOR_FLOAT32, NND_CONSTANT_COPY);
    m->operands[B].rank = 0;
    m->d.n_inputs = 1;
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
};

static void test_base_model_is_valid(void **state) {
    (void)state;
    model m;
    base(&m);
    char err[NND_ERR_LEN] = "";
    nnd_prepared *p = NULL;
    assert_int_equal(nnd_prepare(&m.d, &p, err, sizeof err), NND_OK);
    nnd_prepared_free(p);
    base(&m);
    with_temporary(&m);
    assert_int_equal(nnd_prepare(&m.d, &p, err, sizeof err), NND_OK);
    nnd_prepared_free(p);
}

static void test_malformed_models(void **state) {
    (void)state;
    int failures = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model m;
        base(&m);
        cases[i].breaks(&m);
        char err[NND_ERR_LEN] = "";
        nnd_prepared *p = NULL;
        nnd_status s = nnd_prepare(&m.d, &p, err, sizeof err);
        nnd_status v = nnd_validate(&m.d, err, sizeof err);
        if (s != NND_INVALID_ARGUMENT || v != NND_INVALID_ARGUMENT || p ||
            !strstr(err, cases[i].message)) {
            print_error("case \"%s\": prepare %s, validate %s, message \"%s\" (want \"%s\")\n",
                        cases[i].name, nnd_status_name(s), nnd_status_name(v), err,
                        cases[i].message);
            failures++;
        }
        nnd_prepared_free(p);
    }
    assert_int_equal(failures, 0);
    assert_true(sizeof cases / sizeof cases[0] >= 30);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_model_is_valid),
        cmocka_unit_test(test_malformed_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
