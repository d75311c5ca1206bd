/* SPDX-License-Identifier: Apache-2.0 */
/* test_conformance_lib: the conformance loader and judge, without a daemon. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schema/codes.h"
#include "tools/conformance/conformance.h"

#ifndef TST_CONFORMANCE_DIR
#error "TST_CONFORMANCE_DIR must name the unpacked conformance vectors"
#endif

/* Loads path strictly; a failure names the path and why (a missing vector file included). */
static void load_ok(const char *path, tool_case **cases, size_t *n) {
    char err[1024];
    if (tool_cases_load(path, cases, n, NULL, NULL, err, sizeof err) != 0)
        fail_msg("%s%s%s", strstr(err, path) ? "" : path, strstr(err, path) ? "" : ": ", err);
}

static const tool_case *find_case(const tool_case *cases, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (!strcmp(cases[i].name, name)) return &cases[i];
    return NULL;
}

static void test_load_add(void **state) {
    (void)state;
    tool_case *cases = NULL;
    size_t n = 0;
    load_ok(TST_CONFORMANCE_DIR "/V1_0/add.json", &cases, &n);
    const tool_case *c = find_case(cases, n, "add");
    assert_non_null(c);
    assert_non_null(strstr(c->file, "add.json"));
    assert_false(c->relaxed);
    assert_false(c->dynamic_output_shape);
    const Nnd__Subgraph *g = c->model->main;
    assert_int_equal(g->n_operands, 4);
    assert_int_equal(g->operands[0]->type, SCHEMA_TENSOR_FLOAT32);
    assert_int_equal(g->operands[0]->lifetime, NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT);
    assert_int_equal(g->operands[2]->type, SCHEMA_INT32);
    assert_int_equal(g->operands[2]->lifetime, NND__OPERAND_LIFE_TIME__CONSTANT_COPY);
    assert_int_equal(g->operands[3]->lifetime, NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT);
    assert_int_equal(g->n_operations, 1);
    assert_int_equal(g->operations[0]->type, SCHEMA_OP_ADD);
    assert_int_equal(g->n_input_indexes, 2);
    assert_int_equal(g->output_indexes[0], 3);
    /* "AAAAAA==" is four zero bytes: the fused activation NONE. */
    assert_int_equal(c->model->operand_values.len, 4);
    assert_memory_equal(c->model->operand_values.data, "\0\0\0\0", 4);

    assert_int_equal(c->n_examples, 1);
    const tool_case_example *ex = &c->examples[0];
    assert_int_equal(ex->n_inputs, 2);
    assert_int_equal(ex->inputs[1].count, 2);
    assert_int_equal(ex->inputs[1].bytes, 8);
    assert_true(((float *)ex->inputs[1].data)[1] == 4.0f);
    const tool_case_tensor *out = &ex->outputs[0];
    assert_int_equal(out->rank, 1);
    assert_int_equal(out->dims[0], 2);

    /* The judge: exact values pass, tolerance holds, wrong values and dims fail. */
    char why[256];
    uint32_t dims[1] = {2}, bad_dims[2] = {2, 1};
    float good[2] = {4.0f, 6.0f}, close[2] = {4.0f + 1e-5f, 6.0f}, far[2] = {4.0f, 6.01f};
    assert_true(tool_case_judge(c, out, good, sizeof good, dims, 1, why, sizeof why));
    assert_true(tool_case_judge(c, out, close, sizeof close, dims, 1, why, sizeof why));
    assert_false(tool_case_judge(c, out, far, sizeof far, dims, 1, why, sizeof why));
    assert_non_null(strstr(why, "element 1"));
    assert_false(tool_case_judge(c, out, good, sizeof good, bad_dims, 2, why, sizeof why));
    assert_non_null(strstr(why, "dimensions"));
    assert_false(tool_case_judge(c, out, good, 4, dims, 1, why, sizeof why));

    const tool_case *dyn = find_case(cases, n, "add_dynamic_output_shape");
    assert_non_null(dyn);
    assert_true(dyn->dynamic_output_shape);
    assert_int_equal(dyn->model->main->operands[3]->n_dimensions, 1);
    assert_int_equal(dyn->model->main->operands[3]->dimensions[0], 0);
    tool_cases_free(cases, n);
}

static void test_quant_and_relaxed(void **state) {
    (void)state;
    tool_case *cases = NULL;
    size_t n = 0;
    char why[256];
    load_ok(TST_CONFORMANCE_DIR "/V1_0/add_quant8.json", &cases, &n);
    const tool_case *q = &cases[0];
    const tool_case_tensor *out = &q->examples[0].outputs[0];
    assert_int_equal(out->type, SCHEMA_TENSOR_QUANT8_ASYMM);
    assert_int_equal(out->bytes, out->count);
    uint8_t *a = malloc(out->bytes);
    memcpy(a, out->data, out->bytes);
    a[0] = (uint8_t)(a[0] == 255 ? 254 : a[0] + 1); /* off by one passes */
    assert_true(tool_case_judge(q, out, a, out->bytes, out->dims, out->rank, why, sizeof why));
    a[0] = (uint8_t)(a[0] == 254 ? 252 : a[0] + 1); /* off by two fails */
    assert_false(tool_case_judge(q, out, a, out->bytes, out->dims, out->rank, why, sizeof why));
    free(a);

    /* Loading appends: a second file adds its cases after the first's. */
    size_t before = n;
    load_ok(TST_CONFORMANCE_DIR "/V1_1/div_relaxed.json", &cases, &n);
    assert_true(n > before);
    const tool_case *r = &cases[before];
    assert_true(r->relaxed);
    const tool_case_tensor *ro = &r->examples[0].outputs[0];
    float *f = malloc(ro->bytes);
    memcpy(f, ro->data, ro->bytes);
    f[0] += 0.004f; /* inside FP16 tolerance, far outside FP32's */
    assert_true(tool_case_judge(r, ro, f, ro->bytes, ro->dims, ro->rank, why, sizeof why));
    f[0] += 0.1f;
    assert_false(tool_case_judge(r, ro, f, ro->bytes, ro->dims, ro->rank, why, sizeof why));
    free(f);
    tool_cases_free(cases, n);
}

static void test_float16_and_zero_sized(void **state) {
    (void)state;
    tool_case *cases = NULL;
    size_t n = 0;
    char why[256];
    load_ok(TST_CONFORMANCE_DIR "/V1_2/add_v1_2.json", &cases, &n);
    const tool_case *h = find_case(cases, n, "add_v1_2");
    assert_non_null(h);
    const tool_case_tensor *ho = &h->examples[0].outputs[0];
    assert_int_equal(ho->type, SCHEMA_TENSOR_FLOAT16);
    assert_int_equal(ho->bytes, ho->count * 2);
    assert_true(tool_case_judge(h, ho, ho->data, ho->bytes, ho->dims, ho->rank, why, sizeof why));

    const tool_case *z = find_case(cases, n, "add_v1_2_zero_sized");
    assert_non_null(z);
    const tool_case_example *zx = &z->examples[0];
    for (size_t i = 0; i < zx->n_outputs; i++) {
        const tool_case_tensor *t = &zx->outputs[i];
        size_t elems = 1;
        for (uint32_t d = 0; d < t->rank; d++)
            elems *= t->dims[d];
        if (elems == 0) {
            assert_int_equal(t->count, 0);
            assert_int_equal(t->bytes, 0);
            assert_true(tool_case_judge(z, t, "", 0, t->dims, t->rank, why, sizeof why));
        }
    }
    tool_cases_free(cases, n);
}

static void test_omitted_inputs(void **state) {
    (void)state;
    tool_case *cases = NULL;
    size_t n = 0;
    load_ok(TST_CONFORMANCE_DIR "/V1_0/lstm.json", &cases, &n);
    size_t omitted = 0;
    for (size_t i = 0; i < cases[0].examples[0].n_inputs; i++) {
        const tool_case_tensor *t = &cases[0].examples[0].inputs[i];
        if (!t->count) {
            assert_null(t->data);
            omitted++;
        }
    }
    assert_true(omitted > 0);
    tool_cases_free(cases, n);
}

static void test_multinomial(void **state) {
    (void)state;
    tool_case *cases = NULL;
    size_t n = 0;
    char why[256];
    load_ok(TST_CONFORMANCE_DIR "/V1_2/random_multinomial_float16.json", &cases, &n);
    const tool_case *c = &cases[0];
    const tool_case_example *ex = &c->examples[0];
    const tool_case_tensor *out = &ex->outputs[0];
    assert_true(ex->multinomial_tolerance > 0);
    /* Spread the samples over many classes: every share stays within the tolerance. */
    int32_t *s = malloc(out->bytes);
    for (size_t i = 0; i < out->count; i++)
        s[i] = (int32_t)(i * 7 % 1024);
    assert_true(tool_case_judge(c, out, s, out->bytes, out->dims, out->rank, why, sizeof why));
    /* All samples in one class: that share is far above its probability. */
    for (size_t i = 0; i < out->count; i++)
        s[i] = 3;
    assert_false(tool_case_judge(c, out, s, out->bytes, out->dims, out->rank, why, sizeof why));
    s[0] = 5000; /* out of range */
    assert_false(tool_case_judge(c, out, s, out->bytes, out->dims, out->rank, why, sizeof why));
    assert_non_null(strstr(why, "out of range"));
    free(s);
    tool_cases_free(cases, n);
}

static void test_folder_and_errors(void **state) {
    (void)state;
    tool_case *cases = NULL;
    size_t n = 0;
    char err[512];
    load_ok(TST_CONFORMANCE_DIR "/V1_0", &cases, &n);
    assert_true(n > 100);
    for (size_t i = 1; i < n; i++)
        assert_true(strcmp(cases[i - 1].file, cases[i].file) <= 0);
    tool_cases_free(cases, n);

    cases = NULL;
    n = 0;
    assert_int_equal(
        tool_cases_load("/nonexistent/x.json", &cases, &n, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/x.json"));
    assert_int_equal(n, 0);

    char path[] = "/tmp/nnd-conf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *bad = "{\"cases\":[{\"name\":\"x\",\"model\":{\"operands\":[{\"type\":\"NOPE\","
                      "\"lifetime\":\"MODEL_INPUT\"}],\"operations\":[]},\"examples\":[]}]}";
    FILE *f = fdopen(fd, "w");
    fputs(bad, f);
    fclose(f);
    assert_int_equal(tool_cases_load(path, &cases, &n, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "NOPE"));
    assert_int_equal(n, 0);
    unlink(path);
    free(cases);
}

typedef struct skips {
    int count;
    char last[600];
} skips;

static void note_skip(void *ctx, const char *file, const char *case_name, const char *reason) {
    skips *s = ctx;
    s->count++;
    snprintf(s->last, sizeof s->last, "%s|%s|%s", file, case_name ? case_name : "-", reason);
}

/* Tolerant loading: an unreadable case or file is reported and the rest still loads. */
static void test_tolerant_load(void **state) {
    (void)state;
    char dir[] = "/tmp/nnd-conf-dir-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char a[600], b[600];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    FILE *f = fopen(a, "w");
    assert_non_null(f);
    fputs("{\"cases\":[{\"name\":\"bad\",\"model\":{\"operands\":[],\"operations\":"
          "[{\"type\":\"NOT_AN_OP\",\"inputs\":[],\"outputs\":[]}]},\"examples\":[]},"
          "{\"name\":\"good\",\"model\":{\"operands\":[],\"operations\":[]},"
          "\"examples\":[]}]}",
          f);
    fclose(f);
    f = fopen(b, "w");
    assert_non_null(f);
    fputs("{ this is not json", f);
    fclose(f);

    tool_case *cases = NULL;
    size_t n = 0;
    char err[512];
    skips s = {0};
    assert_int_equal(tool_cases_load(dir, &cases, &n, note_skip, &s, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_string_equal(cases[0].name, "good");
    assert_int_equal(s.count, 2);
    assert_non_null(strstr(s.last, "b.json|-|not valid JSON"));
    tool_cases_free(cases, n);

    cases = NULL;
    n = 0;
    s.count = 0;
    assert_int_equal(tool_cases_load(a, &cases, &n, note_skip, &s, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(s.count, 1);
    assert_non_null(strstr(s.last, "a.json|bad|operation 0: unknown operation type NOT_AN_OP"));
    tool_cases_free(cases, n);
    unlink(a);
    unlink(b);
    rmdir(dir);
}

/* The newer folders' fields: expect_failure, min_supported_version, folder, rank over 8. */
static void test_newer_fields(void **state) {
    (void)state;
    tool_case *cases = NULL;
    size_t n = 0;
    char err[512], why[160];
    load_ok(TST_CONFORMANCE_DIR "/V1_3_cts_only/cast_mismatching_shapes.json", &cases, &n);
    assert_int_equal(n, 1);
    assert_true(cases[0].expect_failure);
    assert_false(cases[0].infinite_loop_timeout);
    assert_string_equal(cases[0].folder, "V1_3_cts_only");
    assert_int_equal(cases[0].min_version, TOOL_CASE_VERSION_UNKNOWN);
    assert_true(tool_case_refusal_passes(&cases[0], false, why, sizeof why));
    /* An endless loop passes only on a missed deadline; a valid case never on a refusal. */
    cases[0].infinite_loop_timeout = true;
    assert_false(tool_case_refusal_passes(&cases[0], false, why, sizeof why));
    assert_non_null(strstr(why, "MISSED_DEADLINE"));
    assert_true(tool_case_refusal_passes(&cases[0], true, why, sizeof why));
    cases[0].expect_failure = false;
    assert_false(tool_case_refusal_passes(&cases[0], true, why, sizeof why));
    tool_cases_free(cases, n);

    cases = NULL;
    n = 0;
    load_ok(TST_CONFORMANCE_DIR "/AIDL_V3/mirror_pad.json", &cases, &n);
    const tool_case *c = find_case(cases, n, "mirror_pad_two_reflect");
    assert_non_null(c);
    assert_false(c->expect_failure);
    assert_int_equal(c->min_version, TOOL_CASE_VERSION_AIDL_V3);
    assert_string_equal(tool_case_version_name(c->min_version), "AIDL_V3");
    assert_int_equal(c->examples[0].inputs[0].rank, 10);
    assert_int_equal(c->examples[0].outputs[0].dims[9], 3);
    tool_cases_free(cases, n);

    /* The HAL 1.0 folder comes from the newer data and carries the fields too. */
    cases = NULL;
    n = 0;
    load_ok(TST_CONFORMANCE_DIR "/V1_0/add.json", &cases, &n);
    assert_false(cases[0].expect_failure);
    assert_string_equal(cases[0].folder, "V1_0");
    assert_int_equal(cases[0].min_version, TOOL_CASE_VERSION_V1_0);
    tool_cases_free(cases, n);

    /* A file in the older format, with none of the fields, loads with their defaults. */
    char old_path[] = "/tmp/nnd-conf-old-XXXXXX";
    int old_fd = mkstemp(old_path);
    assert_true(old_fd >= 0);
    FILE *old = fdopen(old_fd, "w");
    fputs("{\"cases\":[{\"name\":\"x\",\"model\":{\"operands\":[],\"operations\":[]},"
          "\"examples\":[]}]}",
          old);
    fclose(old);
    cases = NULL;
    n = 0;
    load_ok(old_path, &cases, &n);
    assert_int_equal(n, 1);
    assert_false(cases[0].expect_failure);
    assert_string_equal(cases[0].folder, "");
    assert_int_equal(cases[0].min_version, TOOL_CASE_VERSION_UNKNOWN);
    tool_cases_free(cases, n);
    unlink(old_path);

    char path[] = "/tmp/nnd-conf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"cases\":[{\"name\":\"x\",\"min_supported_version\":\"V9_9\",\"model\":"
          "{\"operands\":[],\"operations\":[]},\"examples\":[]}]}",
          f);
    fclose(f);
    cases = NULL;
    n = 0;
    assert_int_equal(tool_cases_load(path, &cases, &n, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "min_supported_version \"V9_9\""));
    assert_int_equal(n, 0);
    unlink(path);
    free(cases);
}

static void test_names(void **state) {
    (void)state;
    assert_string_equal(schema_hal_operation_name(SCHEMA_OP_RESIZE_NEAREST_NEIGHBOR),
                        "RESIZE_NEAREST_NEIGHBOR");
    assert_int_equal(schema_hal_operation_code("MUL"), SCHEMA_OP_MUL);
    assert_int_equal(schema_hal_operation_code("NOPE"), -1);
    assert_int_equal(schema_hal_type_code("TENSOR_QUANT8_SYMM_PER_CHANNEL"),
                     SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL);
    assert_string_equal(schema_hal_type_name(SCHEMA_TENSOR_BOOL8), "TENSOR_BOOL8");
    assert_int_equal(schema_hal_element_size(SCHEMA_TENSOR_FLOAT16), 2);
}

/* Without the vectors every test would fail alike: say once where they were looked for. */
static int vectors_present(void **state) {
    (void)state;
    if (access(TST_CONFORMANCE_DIR, R_OK) == 0) return 0;
    fprintf(stderr,
            "test_conformance_lib: no conformance vectors at %s (cmake unpacks them there from "
            "tests/vectors/conformance.tar.xz when it configures the build)\n",
            TST_CONFORMANCE_DIR);
    return -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_load_add),
        cmocka_unit_test(test_quant_and_relaxed),
        cmocka_unit_test(test_float16_and_zero_sized),
        cmocka_unit_test(test_omitted_inputs),
        cmocka_unit_test(test_multinomial),
        cmocka_unit_test(test_folder_and_errors),
        cmocka_unit_test(test_tolerant_load),
        cmocka_unit_test(test_newer_fields),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, vectors_present, NULL);
}
