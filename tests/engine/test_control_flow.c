/* SPDX-License-Identifier: Apache-2.0 */
/* test_control_flow (unit): IF and WHILE in the engine, in process: both branches, shapes
 * known only at execution (a branch's, a loop-carried value that grows), outputs too
 * small, the checkpoint inside loops (its index, stopping and resuming mid-loop, a fresh
 * run after an abandoned one), the loop timeout, and the nesting limit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "daemon/wire/convert.h"
#include "engine/engine.h"
#include "tests/support/flow_models.h"

static eng_prepared *prepare(Nnd__Model *w) {
    eng_model_desc d;
    char err[SCHEMA_ERR_LEN] = "";
    eng_prepared *p = NULL;
    schema_status s = srv_model_from_proto(w, NULL, 0, &d, err, sizeof err);
    if (!s) s = eng_prepare(&d, &p, err, sizeof err);
    srv_model_desc_clear(&d);
    nnd__model__free_unpacked(w, NULL);
    if (s) fail_msg("prepare: %s: %s", schema_engine_status_name(s), err);
    return p;
}

static eng_io io_of(void *data, size_t len, uint32_t rank, uint32_t dim0) {
    eng_io io = {.data = data, .length = len, .rank = rank};
    io.dims[0] = dim0;
    return io;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- IF ---------------------------------------------------------------------------------- */

static void test_if_both_ways(void **state) {
    (void)state;
    eng_prepared *p = prepare(flow_if_model(3));
    eng_exec *e = eng_exec_create(p);
    float x[3] = {1, -2, 3}, y[3];
    char err[SCHEMA_ERR_LEN];
    for (int c = 0; c < 2; c++) {
        uint8_t cond = (uint8_t)c;
        eng_io in[2] = {io_of(&cond, 1, 0, 0), io_of(x, sizeof x, 0, 0)};
        eng_io out[1] = {io_of(y, sizeof y, 0, 0)};
        assert_int_equal(eng_exec_run(e, in, out, NULL, NULL, err, sizeof err), SCHEMA_OK);
        for (int i = 0; i < 3; i++)
            assert_true(y[i] == (c ? 2 * x[i] : 0.f));
    }
    eng_exec_free(e);
    eng_prepared_free(p);
}

/* The branches' shapes come with the request: the output's shape is learned by running. */
static void test_if_shape_at_execution(void **state) {
    (void)state;
    eng_prepared *p = prepare(flow_if_model(0));
    assert_int_equal(eng_prepared_output(p, 0)->dims[0], 0);
    eng_exec *e = eng_exec_create(p);
    float x[5] = {1, 2, 3, 4, 5}, y[5] = {0};
    uint8_t cond = 1;
    char err[SCHEMA_ERR_LEN];
    eng_output_shape shape;
    eng_io in[2] = {io_of(&cond, 1, 0, 0), io_of(x, sizeof x, 1, 5)};
    eng_io out[1] = {io_of(y, sizeof y, 0, 0)};
    assert_int_equal(eng_exec_run(e, in, out, &shape, NULL, err, sizeof err), SCHEMA_OK);
    assert_int_equal(shape.rank, 1);
    assert_int_equal(shape.dims[0], 5);
    assert_true(shape.sufficient);
    assert_true(y[4] == 10.f);
    out[0].length = 4 * sizeof(float);
    assert_int_equal(eng_exec_run(e, in, out, &shape, NULL, err, sizeof err),
                     SCHEMA_OUTPUT_INSUFFICIENT_SIZE);
    assert_false(shape.sufficient);
    assert_int_equal(shape.dims[0], 5);
    eng_exec_free(e);
    eng_prepared_free(p);
}

/* ---- WHILE ------------------------------------------------------------------------------- */

/* The inputs live here: a stopped run resumes on the memory it was started with. */
static float counter_in[2];

static schema_status run_counter(eng_exec *e, float x, float n, float *y, const eng_checkpoint *cp,
                                 char *err) {
    counter_in[0] = x, counter_in[1] = n;
    eng_io in[2] = {io_of(&counter_in[0], 4, 0, 0), io_of(&counter_in[1], 4, 0, 0)};
    eng_io out[1] = {io_of(y, 4, 0, 0)};
    return eng_exec_run(e, in, out, NULL, cp, err, SCHEMA_ERR_LEN);
}

static void test_counter_loop(void **state) {
    (void)state;
    eng_prepared *p = prepare(flow_counter_model(1.f));
    eng_exec *e = eng_exec_create(p);
    float y = 0;
    char err[SCHEMA_ERR_LEN];
    assert_int_equal(run_counter(e, 0, 1000, &y, NULL, err), SCHEMA_OK);
    assert_true(y == 1000.f);
    assert_int_equal(run_counter(e, 5, 1, &y, NULL, err), SCHEMA_OK); /* no iteration at all */
    assert_true(y == 5.f);
    eng_exec_free(e);
    eng_prepared_free(p);
}

/* A carried value whose length grows each iteration: y = [x, x + 1, ..., n]. */
static void test_growing_loop(void **state) {
    (void)state;
    eng_prepared *p = prepare(flow_growing_model());
    eng_exec *e = eng_exec_create(p);
    char err[SCHEMA_ERR_LEN];
    for (int round = 0; round < 2; round++) { /* the second reuses every buffer */
        float x = 5, n = 9, y[8] = {0};
        eng_output_shape shape;
        eng_io in[2] = {io_of(&x, 4, 0, 0), io_of(&n, 4, 0, 0)};
        eng_io out[1] = {io_of(y, 3 * sizeof(float), 0, 0)};
        assert_int_equal(eng_exec_run(e, in, out, &shape, NULL, err, sizeof err),
                         SCHEMA_OUTPUT_INSUFFICIENT_SIZE);
        assert_int_equal(shape.dims[0], 5);
        assert_false(shape.sufficient);
        out[0].length = sizeof y;
        assert_int_equal(eng_exec_run(e, in, out, &shape, NULL, err, sizeof err), SCHEMA_OK);
        assert_int_equal(shape.rank, 1);
        assert_int_equal(shape.dims[0], 5);
        for (int i = 0; i < 5; i++)
            assert_true(y[i] == x + (float)i);
    }
    eng_exec_free(e);
    eng_prepared_free(p);
}

/* ---- the checkpoint inside loops ------------------------------------------------------------ */

typedef struct watch {
    unsigned calls, stops, every;
    bool other_index; /* called with an index other than the WHILE's (0) */
} watch;

static schema_status watch_check(void *ctx, uint32_t next_op) {
    watch *w = ctx;
    w->other_index |= next_op != 0;
    if (w->every && ++w->calls % w->every == 0) {
        w->stops++;
        return SCHEMA_MISSED_DEADLINE_TRANSIENT; /* any status: the engine stops there */
    }
    if (!w->every) w->calls++;
    return SCHEMA_OK;
}

static void test_checkpoint_in_loop(void **state) {
    (void)state;
    eng_prepared *p = prepare(flow_counter_model(1.f));
    eng_exec *e = eng_exec_create(p);
    float y = 0;
    char err[SCHEMA_ERR_LEN];
    /* Every operation of every iteration passes the checkpoint, with the WHILE's index. */
    watch w = {0};
    eng_checkpoint cp = {.check = watch_check, .ctx = &w};
    assert_int_equal(run_counter(e, 0, 200, &y, &cp, err), SCHEMA_OK);
    assert_true(y == 200.f);
    assert_false(w.other_index);
    assert_true(w.calls >= 2 * 200 + 1);

    /* Stopped every 7th checkpoint, resumed each time where it stopped: same result, and
     * no iteration runs twice (the counter would overshoot), none is skipped. */
    watch s = {.every = 7};
    cp.ctx = &s;
    schema_status st = run_counter(e, 0, 200, &y, &cp, err);
    while (st == SCHEMA_MISSED_DEADLINE_TRANSIENT)
        st = eng_exec_resume(e, 0, NULL, &cp, err, sizeof err);
    assert_int_equal(st, SCHEMA_OK);
    assert_true(y == 200.f);
    assert_true(s.stops >= w.calls / 7 - 1);

    /* A run abandoned inside its loop does not leak into the next one. */
    watch once = {.every = 50};
    cp.ctx = &once;
    assert_int_equal(run_counter(e, 0, 200, &y, &cp, err), SCHEMA_MISSED_DEADLINE_TRANSIENT);
    assert_int_equal(run_counter(e, 10, 20, &y, NULL, err), SCHEMA_OK);
    assert_true(y == 20.f);
    eng_exec_free(e);
    eng_prepared_free(p);
}

/* A loop that never ends stops once it has run longer than its timeout. */
static void test_loop_timeout(void **state) {
    (void)state;
    eng_prepared *p = prepare(flow_counter_model(1.f));
    eng_exec *e = eng_exec_create(p);
    float y = 0;
    char err[SCHEMA_ERR_LEN];
    eng_checkpoint cp = {.loop_timeout_ns = 50000000ull};
    uint64_t t0 = now_ns();
    assert_int_equal(run_counter(e, 0, INFINITY, &y, &cp, err), SCHEMA_MISSED_DEADLINE_TRANSIENT);
    uint64_t ms = (now_ns() - t0) / 1000000;
    print_message("# infinite loop, timeout 50 ms: stopped after %llu ms: %s\n",
                  (unsigned long long)ms, err);
    assert_true(ms >= 50 && ms < 150);
    assert_non_null(strstr(err, "WHILE #0"));
    /* The exec runs normally afterwards. */
    assert_int_equal(run_counter(e, 0, 3, &y, &cp, err), SCHEMA_OK);
    assert_true(y == 3.f);
    eng_exec_free(e);
    eng_prepared_free(p);
}

/* ---- nesting ------------------------------------------------------------------------------- */

/* Referenced subgraph k (k < depth - 1) is IF(c, k + 1, k + 1, x); the last is x + x. The
 * main graph runs subgraph 0 through an IF: depth levels of subgraphs in all. */
static Nnd__Model *nested_ifs(uint32_t depth) {
    Nnd__Model *m = flow_model_new();
    const uint32_t two[1] = {2}, one[1] = {1};
    const int32_t none = 0;
    for (uint32_t k = 0; k <= depth; k++) {
        uint32_t r;
        Nnd__Subgraph *g = flow_graph(m, k < depth ? &r : NULL);
        uint32_t c =
            flow_operand(g, SCHEMA_TENSOR_BOOL8, 1, one, NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT);
        uint32_t x =
            flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, two, NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT);
        uint32_t y =
            flow_operand(g, SCHEMA_TENSOR_FLOAT32, 1, two, NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT);
        if (k == depth - 1) {
            uint32_t act = flow_constant(m, g, SCHEMA_INT32, 0, NULL, &none, 4);
            flow_operation(g, SCHEMA_OP_ADD, 3, (uint32_t[]){x, x, act}, 1, &y);
        } else {
            uint32_t next = k < depth ? k + 1 : 0;
            uint32_t ref = flow_reference(g, next);
            flow_operation(g, SCHEMA_OP_IF, 5, (uint32_t[]){c, ref, ref, c, x}, 1, &y);
        }
        flow_io(g, 2, (uint32_t[]){c, x}, 1, &y);
    }
    return m;
}

static void test_nesting_limit(void **state) {
    (void)state;
    eng_prepared *p = prepare(nested_ifs(ENG_MAX_SUBGRAPH_DEPTH));
    eng_exec *e = eng_exec_create(p);
    uint8_t c = 1;
    float x[2] = {1.5f, -2}, y[2] = {0};
    char err[SCHEMA_ERR_LEN];
    eng_io in[2] = {io_of(&c, 1, 0, 0), io_of(x, sizeof x, 0, 0)};
    eng_io out[1] = {io_of(y, sizeof y, 0, 0)};
    assert_int_equal(eng_exec_run(e, in, out, NULL, NULL, err, sizeof err), SCHEMA_OK);
    assert_true(y[0] == 3.f && y[1] == -4.f);
    eng_exec_free(e);
    eng_prepared_free(p);

    Nnd__Model *w = nested_ifs(ENG_MAX_SUBGRAPH_DEPTH + 1);
    eng_model_desc d;
    assert_int_equal(srv_model_from_proto(w, NULL, 0, &d, err, sizeof err), SCHEMA_OK);
    assert_int_equal(eng_validate(&d, err, sizeof err), SCHEMA_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "nest"));
    srv_model_desc_clear(&d);
    nnd__model__free_unpacked(w, NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_if_both_ways),       cmocka_unit_test(test_if_shape_at_execution),
        cmocka_unit_test(test_counter_loop),       cmocka_unit_test(test_growing_loop),
        cmocka_unit_test(test_checkpoint_in_loop), cmocka_unit_test(test_loop_timeout),
        cmocka_unit_test(test_nesting_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
