/* SPDX-License-Identifier: Apache-2.0 */
/* test_record: recording with NND_RECORD and replaying with `nndctl conformance`, against a
 * real daemon. record_client (an NNAPI program: a float CONV_2D + ADD model with its filter
 * in a memory pool, run synchronously, through a burst and fenced; a quantized ADD) runs
 * with NND_RECORD set:
 * - its recording loads with the conformance loader, one file and case per compilation,
 *   one example per execution, holding the inputs the program gave and the outputs it got,
 *   the pooled filter inline and marked; `nndctl conformance` replays it (also with
 *   --device nnd) and passes, fails a tampered copy, and refuses an unknown device;
 * - with a small NND_RECORD_MAX_BYTES the program's calls all succeed, one message names
 *   the variable and the bound, and the files, complete, hold less than the bound;
 * - with a directory that cannot be made, the calls all succeed and one message says so;
 * - the nnd API records too: nndctl itself, run with NND_RECORD on vectors with control flow
 *   and per-channel quantization (through its pools), gives a recording that replays;
 * - a model the daemon refuses (prepared here with the nnd API) is recorded with the
 *   refusal and no example, and its replay fails as the daemon refuses it again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/conformance/conformance.h"
#include "tests/support/harness.h"
#include "tests/client/record_client.h"
#include "tests/support/subprocess.h"
#include "nnd/nnd_wire.h"

static tst_daemon daemon_;
static char out_[1 << 20];

static int setup(void **state) {
    (void)state;
    if (tst_daemon_start(&daemon_, NULL) != 0) return -1;
    setenv("NND_SOCKET", daemon_.socket_path, 1);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    return daemon_.pid > 0 ? tst_daemon_stop(&daemon_) : 0;
}

/* A fresh directory under the daemon's test directory. */
static void fresh_dir(char *path, size_t len, const char *name) {
    snprintf(path, len, "%s/%s", daemon_.dir, name);
    assert_int_equal(mkdir(path, 0700), 0);
}

/* record_client with NND_RECORD=dir and the bound (NULL: the default); its output (stdout
 * and stderr) in out_. Every call of it must have succeeded. */
static void record(const char *dir, const char *max_bytes) {
    setenv("NND_RECORD", dir, 1);
    if (max_bytes)
        setenv("NND_RECORD_MAX_BYTES", max_bytes, 1);
    else
        unsetenv("NND_RECORD_MAX_BYTES");
    const char *args[] = {NULL};
    int rc = tst_run(RECORD_CLIENT_PATH, args, 0, true, out_, sizeof out_, 60000);
    unsetenv("NND_RECORD");
    unsetenv("NND_RECORD_MAX_BYTES");
    print_message("%s", out_);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out_, "record_client: done"));
}

/* The .json files in dir and their bytes; no other entry (a temporary file) may be left. */
static size_t files_in(const char *dir, size_t *bytes) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    *bytes = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        size_t len = strlen(e->d_name);
        assert_true(len > 5 && !strcmp(e->d_name + len - 5, ".json") && e->d_name[0] != '.');
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        *bytes += (size_t)st.st_size;
        n++;
    }
    closedir(d);
    return n;
}

/* nndctl [--socket S] conformance ARGS... with its output in out_; the exit status. */
static int replay(const char *a, const char *b, const char *c) {
    const char *args[] = {"--socket", daemon_.socket_path, "conformance", a, b, c, NULL};
    int rc = tst_run(NNDCTL_PATH, args, 0, true, out_, sizeof out_, 120000);
    print_message("%s", out_);
    return rc;
}

static size_t count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static const tool_case *case_with(const tool_case *cases, size_t n, size_t n_operations) {
    for (size_t i = 0; i < n; i++)
        if (cases[i].model->main->n_operations == n_operations) return &cases[i];
    fail_msg("no recorded case with %zu operations", n_operations);
    return NULL;
}

static void check_recording(const char *dir) {
    tool_case *cases = NULL;
    size_t n = 0;
    char err[512];
    assert_int_equal(tool_cases_load(dir, &cases, &n, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(n, 2);
    const tool_case *conv = case_with(cases, n, 2), *qadd = case_with(cases, n, 1);
    /* conv: compute, burst, fenced, compute; the filter from the program's pool inline. */
    assert_int_equal(conv->n_examples, RC_CONV_RUNS);
    assert_true(conv->n_pooled >= 1);
    assert_false(conv->expect_failure);
    for (int r = 0; r < RC_CONV_RUNS; r++) {
        const tool_case_example *ex = &conv->examples[r];
        assert_int_equal(ex->n_inputs, 2);
        assert_int_equal(ex->inputs[0].count, RC_CONV_IN);
        assert_int_equal(ex->inputs[1].count, RC_CONV_OUT);
        assert_int_equal(ex->outputs[0].count, RC_CONV_OUT);
        const float *in = ex->inputs[0].data, *addend = ex->inputs[1].data;
        for (size_t i = 0; i < RC_CONV_IN; i++)
            assert_true(in[i] == rc_conv_input(r, i));
        for (size_t i = 0; i < RC_CONV_OUT; i++)
            assert_true(addend[i] == rc_conv_addend(r, i));
        const float *o = ex->outputs[0].data; /* after RELU */
        for (size_t i = 0; i < RC_CONV_OUT; i++)
            assert_true(o[i] >= 0);
    }
    /* qadd: the inputs given, the outputs the program checked. */
    assert_int_equal(qadd->n_examples, RC_QADD_RUNS);
    for (int r = 0; r < RC_QADD_RUNS; r++) {
        const tool_case_example *ex = &qadd->examples[r];
        const uint8_t *a = ex->inputs[0].data, *b = ex->inputs[1].data, *o = ex->outputs[0].data;
        assert_int_equal(ex->outputs[0].rank, 2);
        assert_int_equal(ex->outputs[0].dims[1], 3);
        for (size_t i = 0; i < RC_QADD_N; i++) {
            assert_int_equal(a[i], rc_qadd_a(r, i));
            assert_int_equal(b[i], rc_qadd_b(r, i));
            assert_int_equal(o[i], rc_qadd_expected(r, i));
        }
    }
    tool_cases_free(cases, n);
}

/* The qadd file of dir copied to into with its first expected output 3 steps off. */
static void tampered_copy(const char *dir, const char *into) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    bool done = false;
    while (!done && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len;
        uint8_t *text = tst_read_file(path, &len);
        assert_non_null(text);
        cJSON *root = cJSON_ParseWithLength((const char *)text, len);
        free(text);
        assert_non_null(root);
        cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "cases"), 0);
        cJSON *ops = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "model"), "operations");
        if (cJSON_GetArraySize(ops) == 1) {
            cJSON *ex = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "examples"), 0);
            cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(ex, "outputs"), 0);
            cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "data"), 0);
            assert_non_null(v);
            cJSON_SetNumberValue(v, v->valuedouble + 3);
            char *s = cJSON_Print(root), to[1024];
            snprintf(to, sizeof to, "%s/%s", into, e->d_name);
            FILE *f = fopen(to, "w");
            assert_non_null(f);
            assert_int_equal(fputs(s, f) >= 0, 1);
            fclose(f);
            free(s);
            done = true;
        }
        cJSON_Delete(root);
    }
    closedir(d);
    assert_true(done);
}

static void test_record_and_replay(void **state) {
    (void)state;
    char dir[512], bad[512];
    fresh_dir(dir, sizeof dir, "rec");
    record(dir, NULL);
    assert_non_null(strstr(out_, "NND_RECORD: recording"));
    size_t bytes;
    assert_int_equal(files_in(dir, &bytes), 2); /* one file per compilation */
    check_recording(dir);

    assert_int_equal(replay(dir, NULL, NULL), 0);
    assert_non_null(strstr(out_, "conformance: 2 passed, 0 failed, 0 skipped"));
    assert_int_equal(replay("--device", "nnd-reference", dir), 0);
    assert_non_null(strstr(out_, "conformance: 2 passed, 0 failed, 0 skipped"));
    assert_int_equal(replay("--device", "no-such-device", dir), 2);
    assert_non_null(strstr(out_, "no device named \"no-such-device\""));
    assert_null(strstr(out_, "passed"));

    fresh_dir(bad, sizeof bad, "tampered");
    tampered_copy(dir, bad);
    assert_int_equal(replay(bad, NULL, NULL), 1);
    assert_non_null(strstr(out_, "conformance: 0 passed, 1 failed"));
}

static void test_bound(void **state) {
    (void)state;
    char full[512], dir[512], cap[32];
    fresh_dir(full, sizeof full, "full");
    record(full, NULL);
    size_t whole;
    assert_int_equal(files_in(full, &whole), 2);
    /* A byte less than the whole recording: the bound is hit, whatever the order. */
    snprintf(cap, sizeof cap, "%zu", whole - 1);
    fresh_dir(dir, sizeof dir, "bounded");
    record(dir, cap);
    assert_int_equal(count(out_, "reached its bound"), 1);
    assert_non_null(strstr(out_, "NND_RECORD_MAX_BYTES"));
    assert_non_null(strstr(out_, cap));
    size_t bytes;
    files_in(dir, &bytes);
    assert_true(bytes <= whole - 1);
    tool_case *cases = NULL;
    size_t n = 0, examples = 0;
    char err[512] = "";
    /* An empty directory is all right (nothing fitted); else every file is whole. */
    if (bytes) assert_int_equal(tool_cases_load(dir, &cases, &n, NULL, NULL, err, sizeof err), 0);
    for (size_t i = 0; i < n; i++)
        examples += cases[i].n_examples;
    assert_true(examples < RC_CONV_RUNS + RC_QADD_RUNS);
    tool_cases_free(cases, n);
    if (bytes) assert_int_equal(replay(dir, NULL, NULL), 0); /* what was kept replays */
}

static void test_unwritable(void **state) {
    (void)state;
    char file[512], dir[600];
    snprintf(file, sizeof file, "%s/a-file", daemon_.dir);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(dir, sizeof dir, "%s/rec", file); /* under a file: never a directory */
    record(dir, NULL);
    assert_int_equal(count(out_, "recording is off"), 1);
    assert_non_null(strstr(out_, "cannot write"));
    assert_non_null(strstr(out_, dir));
    assert_null(strstr(out_, "NND_RECORD: recording this program"));
}

/* The passed count of nndctl's closing line in out_. */
static unsigned passed_count(void) {
    const char *last = strstr(out_, "conformance: ");
    assert_non_null(last);
    unsigned passed = 0, failed = 1;
    assert_int_equal(sscanf(last, "conformance: %u passed, %u failed", &passed, &failed), 2);
    assert_int_equal(failed, 0);
    return passed;
}

static void test_nnd_api(void **state) {
    (void)state;
    char dir[512];
    fresh_dir(dir, sizeof dir, "nndctl");
    setenv("NND_RECORD", dir, 1);
    int rc = replay(TST_CONFORMANCE_DIR "/V1_3/if_simple.json",
                    TST_CONFORMANCE_DIR "/V1_2/conv2d_per_channel.json", NULL);
    unsetenv("NND_RECORD");
    assert_int_equal(rc, 0);
    unsigned ran = passed_count();
    assert_true(ran > 0);
    tool_case *cases = NULL;
    size_t n = 0, referenced = 0, per_channel = 0;
    char err[512];
    assert_int_equal(tool_cases_load(dir, &cases, &n, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(n, ran); /* one file a compilation, each case compiled once */
    for (size_t i = 0; i < n; i++) {
        assert_true(cases[i].n_examples >= 1);
        referenced += cases[i].model->n_referenced > 0;
        const Nnd__Subgraph *g = cases[i].model->main;
        for (size_t k = 0; k < g->n_operands; k++)
            if (g->operands[k]->extra_params_case == NND__OPERAND__EXTRA_PARAMS_CHANNEL_QUANT) {
                per_channel++;
                break;
            }
    }
    tool_cases_free(cases, n);
    assert_true(referenced > 0);
    assert_true(per_channel > 0);
    assert_int_equal(replay(dir, NULL, NULL), 0);
    assert_int_equal(passed_count(), ran);
}

static void test_refused(void **state) {
    (void)state;
    char dir[512];
    fresh_dir(dir, sizeof dir, "refused");
    setenv("NND_RECORD", dir, 1); /* read at this process's first prepare */
    /* ADD of operands 0 and 1 with activation operand 7, which does not exist. */
    uint32_t dims[] = {2};
    Nnd__Operand ops[3], *op_p[3];
    for (int i = 0; i < 3; i++) {
        nnd__operand__init(&ops[i]);
        ops[i].type = 3; /* TENSOR_FLOAT32 */
        ops[i].n_dimensions = 1;
        ops[i].dimensions = dims;
        ops[i].lifetime = i < 2 ? NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT
                                : NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
        op_p[i] = &ops[i];
    }
    uint32_t in[] = {0, 1, 7}, out[] = {2}, ins[] = {0, 1};
    Nnd__Operation add = NND__OPERATION__INIT, *add_p = &add;
    add.n_inputs = 3, add.inputs = in, add.n_outputs = 1, add.outputs = out;
    Nnd__Subgraph g = NND__SUBGRAPH__INIT;
    g.n_operands = 3, g.operands = op_p, g.n_operations = 1, g.operations = &add_p;
    g.n_input_indexes = 2, g.input_indexes = ins, g.n_output_indexes = 1, g.output_indexes = out;
    Nnd__Model m = NND__MODEL__INIT;
    m.main = &g;
    char err[256];
    nnd_client *cl = nnd_client_connect(daemon_.socket_path, "test_record", err, sizeof err);
    assert_non_null(cl);
    uint64_t handle;
    int st = nnd_client_prepare(cl, &m, NULL, 0, 0, 0, 0, &handle, err, sizeof err);
    nnd_client_close(cl);
    unsetenv("NND_RECORD");
    assert_int_equal(st, NND__ERROR_STATUS__INVALID_ARGUMENT);
    tool_case *cases = NULL;
    size_t n = 0;
    char why[512];
    assert_int_equal(tool_cases_load(dir, &cases, &n, NULL, NULL, why, sizeof why), 0);
    assert_int_equal(n, 1);
    assert_int_equal(cases[0].n_examples, 0);
    tool_cases_free(cases, n);
    size_t bytes;
    assert_int_equal(files_in(dir, &bytes), 1);
    char path[1024];
    DIR *d = opendir(dir);
    struct dirent *e;
    while ((e = readdir(d)) && e->d_name[0] == '.')
        continue;
    assert_non_null(e);
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    closedir(d);
    size_t len;
    char *text = (char *)tst_read_file(path, &len);
    assert_non_null(text);
    assert_non_null(strstr(text, "\"prepare\":\"INVALID_ARGUMENT\""));
    free(text);
    assert_int_equal(replay(dir, NULL, NULL), 1);
    assert_non_null(strstr(out_, "conformance: 0 passed, 1 failed"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_and_replay), cmocka_unit_test(test_bound),
        cmocka_unit_test(test_unwritable),        cmocka_unit_test(test_nnd_api),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
