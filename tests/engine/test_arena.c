/* SPDX-License-Identifier: Apache-2.0 */
/* test_arena (unit): the engine's arena plan (engine/core/arena_plan.h) on chains of ADDs, x_{k+1}
 * = x_k + x_0 over [16] floats: each temporary lives from the step that writes it to the next, so
 * the plan needs two temporaries' bytes whatever the length (neighbours overlap, the others share),
 * and a chain of 100,000 operations plans (a quadratic plan took minutes); the chains compute
 * right. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

#define ELEMS 16

typedef struct chain {
    eng_operand_desc *operands;
    eng_operation_desc *ops;
    uint32_t *lists;
    uint32_t inputs[1], outputs[1];
    int32_t act;
    eng_model_desc d;
} chain;

/* Operands: 0 the input, 1 the activation, then x_1 .. x_n (x_n the output). */
static void chain_init(chain *c, uint32_t n) {
    memset(c, 0, sizeof *c);
    c->operands = calloc(n + 2, sizeof *c->operands);
    c->ops = calloc(n, sizeof *c->ops);
    c->lists = calloc(4 * (size_t)n, sizeof *c->lists);
    assert_true(c->operands && c->ops && c->lists);
    eng_operand_desc t = {.type = SCHEMA_TENSOR_FLOAT32, .rank = 1, .dims = {ELEMS}};
    c->operands[0] = t;
    c->operands[0].lifetime = SCHEMA_MODEL_INPUT;
    c->operands[1] =
        (eng_operand_desc){.type = SCHEMA_INT32, .lifetime = SCHEMA_CONSTANT_COPY, .length = 4};
    for (uint32_t k = 0; k < n; k++) {
        c->operands[2 + k] = t;
        c->operands[2 + k].lifetime = k + 1 < n ? SCHEMA_TEMPORARY : SCHEMA_MODEL_OUTPUT;
        uint32_t *l = &c->lists[4 * (size_t)k];
        l[0] = k ? 1 + k : 0, l[1] = 0, l[2] = 1, l[3] = 2 + k;
        c->ops[k] = (eng_operation_desc){SCHEMA_OP_ADD, 3, l, 1, l + 3};
    }
    c->inputs[0] = 0;
    c->outputs[0] = 1 + n;
    c->d = (eng_model_desc){.n_operands = n + 2,
                            .operands = c->operands,
                            .n_operations = n,
                            .operations = c->ops,
                            .n_inputs = 1,
                            .inputs = c->inputs,
                            .n_outputs = 1,
                            .outputs = c->outputs,
                            .operand_values = (const uint8_t *)&c->act,
                            .operand_values_len = sizeof c->act};
}

static void chain_free(chain *c) {
    free(c->operands);
    free(c->ops);
    free(c->lists);
}

/* Prepares a chain of n, checks its arena, runs it: out = (n + 1) * in. */
static void check_chain(uint32_t n, bool reference) {
    chain c;
    chain_init(&c, n);
    c.d.reference_only = reference;
    eng_prepared *p = NULL;
    char err[256] = "";
    assert_int_equal(eng_prepare(&c.d, &p, err, sizeof err), SCHEMA_OK);
    size_t one = (ELEMS * sizeof(float) + 63) & ~(size_t)63;
    assert_int_equal(eng_prepared_arena_bytes(p), n > 2 ? 2 * one : n == 2 ? one : 0);
    float in[ELEMS], out[ELEMS];
    for (int i = 0; i < ELEMS; i++)
        in[i] = (float)i;
    eng_exec *e = eng_exec_create(p);
    assert_non_null(e);
    eng_io i = {.data = in, .length = sizeof in}, o = {.data = out, .length = sizeof out};
    assert_int_equal(eng_exec_run(e, &i, &o, NULL, NULL, err, sizeof err), SCHEMA_OK);
    for (int k = 0; k < ELEMS; k++)
        assert_true(out[k] == (float)(n + 1) * in[k]);
    eng_exec_free(e);
    eng_prepared_free(p);
    chain_free(&c);
}

static void test_short_chains(void **state) {
    (void)state;
    for (uint32_t n = 1; n <= 9; n++) {
        check_chain(n, true);
        check_chain(n, false);
    }
}

static void test_long_chain(void **state) {
    (void)state;
    check_chain(100000, true);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_chains),
        cmocka_unit_test(test_long_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
