/* SPDX-License-Identifier: Apache-2.0 */
/* test_drivers (integration): device driver plugins through real daemons.
 * With this build's drivers (the example driver): the NDK lists three devices; a small CNN
 * compiled for every device is partitioned between nnd-example and nnd-cpu (the prepared
 * log line and the per-device counters say so, and the execution crosses each device's
 * queue), gives the nnd-reference compilation's results, and its execution request holds
 * the client's one pool of inputs and outputs only; saved to cache files and loaded back
 * (the example's blobs), and with its input in a buffer of the example's device memory, it
 * gives those results still; a model alternating example and CPU steps is overtaken by a
 * HIGH execution and still right; createForDevices([nnd-example]) of a model with an
 * operation the example lacks fails at finish with BAD_DATA (INVALID_ARGUMENT naming it on
 * the wire).
 * With a directory of test drivers: one owned by another user, one writable by everyone
 * and one that crashes in its constructor are refused with log lines naming them while the
 * daemon serves; a driver whose execute fails fails that execution only; a deadline that
 * expires while a driver step runs stops the execution at the next step; with nnd-test
 * held in a step (DRV_TEST_HOLD) until the test releases it: nnd-cpu serves another
 * execution meanwhile, the held one's timing covers its steps on both devices, a second one queues
 * on nnd-test (`nndctl metrics` shows the depth), a HIGH execution preempts a LOW one of the same
 * app at the boundary after the held step, and a deadline that passes during the held step stops
 * the execution at that boundary; a driver that faults in execute fails that execution, is
 * disabled, and the daemon serves on with the CPU taking its steps. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/daemon/drv_models.h"
#include "tests/support/harness.h"
#include "tests/support/subprocess.h"
#include "nnd/NeuralNetworks.h"
#include "nnd/nnd_wire.h"

#define MS 1000000ull

static tst_daemon g_ex;   /* this build's drivers */
static tst_daemon g_test; /* the test drivers' directory */
static char g_ex_log[300], g_test_log[300], g_test_dir[300];

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static nnd_client *connect_to(const tst_daemon *d) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, "test-drivers", err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    return c;
}

/* A device's counter from a fresh status; -1 when absent. */
static double device_count(const tst_daemon *d, const char *name, const char *field) {
    cJSON *status = tst_admin_status(d);
    double v = tst_status_device_figure(status, name, field);
    cJSON_Delete(status);
    return v;
}

static double sched_count(const tst_daemon *d, const char *field) {
    cJSON *status = tst_admin_status(d);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(status, "scheduler"), field);
    double n = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(status);
    return n;
}

static bool file_has(const char *path, const char *needle) {
    size_t len = 0;
    uint8_t *text = tst_read_file(path, &len);
    if (!text) return false;
    char *s = realloc(text, len + 1);
    if (!s) return free(text), false;
    s[len] = '\0';
    bool found = strstr(s, needle) != NULL;
    free(s);
    return found;
}

/* ---- one pool of inputs and outputs ------------------------------------------------------ */

typedef struct pool {
    mb_req r;
    int fd;
    uint8_t *map;
} pool;

static void pool_open(pool *p, uint32_t n_in, const size_t *in_bytes, size_t out_bytes) {
    mb_req_init(&p->r, n_in, in_bytes, out_bytes);
    void *map;
    p->fd = nnd_memfd_create("test-drivers", p->r.size, &map);
    assert_true(p->fd >= 0);
    p->map = map;
}

static void pool_close(pool *p) {
    munmap(p->map, p->r.size);
    close(p->fd);
}

static float *pool_in(pool *p, uint32_t i) {
    return (float *)(p->map + p->r.locs[i].offset);
}
static float *pool_out(pool *p) {
    return (float *)(p->map + p->r.out_offset);
}

static int execute(nnd_client *c, uint64_t h, pool *p, const nnd_exec_opts *o, char *err,
                   size_t errlen) {
    return nnd_client_execute_opts(c, h, &p->r.req, &p->fd, 1, o, NULL, err, errlen);
}

static uint64_t prepare_on(nnd_client *c, const char *const *devs, size_t n, const mb *m,
                           int priority) {
    char err[512];
    uint64_t h = 0;
    int st =
        nnd_client_prepare_on(c, devs, n, &m->model, NULL, 0, 0, priority, 0, &h, err, sizeof err);
    if (st) fail_msg("prepare: %d %s", st, err);
    return h;
}

/* ---- the small CNN ------------------------------------------------------------------------ */

static const uint32_t in_dims[] = {1, 8, 8, 3};
#define CNN_IN  (8 * 8 * 3)
#define CNN_OUT 10

static float wave(uint32_t i, float scale) {
    return scale * (float)((int)(i * 7919u % 23u) - 11) / 11.f;
}

static void constant_tensor(mb *m, uint32_t rank, const uint32_t *dims, float scale, uint32_t *id) {
    uint32_t n = 1;
    for (uint32_t r = 0; r < rank; r++)
        n *= dims[r];
    float *v = malloc(sizeof(float) * n);
    for (uint32_t i = 0; i < n; i++)
        v[i] = wave(i, scale);
    *id = mb_constant(m, 3, rank, dims, v, sizeof(float) * n);
    free(v);
}

/* input [1,8,8,3] -> CONV_2D 3x3x4 SAME -> RELU -> ADD bias [4] -> DEPTHWISE_CONV_2D 3x3
 * VALID (the example has none) -> MAX_POOL 2x2/2 -> RESHAPE [1,36] -> FULLY_CONNECTED 10 ->
 * SOFTMAX. Eight steps, seven the example runs. */
static void cnn_model(mb *m) {
    mb_init(m);
    uint32_t x = mb_operand(m, 3, 4, in_dims, NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t f, b, add_b, dw_f, dw_b, fc_w, fc_b;
    constant_tensor(m, 4, (const uint32_t[]){4, 3, 3, 3}, 0.5f, &f);
    constant_tensor(m, 1, (const uint32_t[]){4}, 0.1f, &b);
    constant_tensor(m, 1, (const uint32_t[]){4}, 0.3f, &add_b);
    constant_tensor(m, 4, (const uint32_t[]){1, 3, 3, 4}, 0.4f, &dw_f);
    constant_tensor(m, 1, (const uint32_t[]){4}, 0.05f, &dw_b);
    constant_tensor(m, 2, (const uint32_t[]){10, 36}, 0.2f, &fc_w);
    constant_tensor(m, 1, (const uint32_t[]){10}, 0.1f, &fc_b);
    uint32_t t1 = mb_temp(m, 4, (const uint32_t[]){1, 8, 8, 4});
    mb_op(m, OP_CONV_2D, 7,
          (const uint32_t[]){x, f, b, mb_i32(m, 1), mb_i32(m, 1), mb_i32(m, 1), mb_i32(m, 0)}, t1);
    uint32_t t2 = mb_temp(m, 4, (const uint32_t[]){1, 8, 8, 4});
    mb_op(m, OP_RELU, 1, (const uint32_t[]){t1}, t2);
    uint32_t t3 = mb_temp(m, 4, (const uint32_t[]){1, 8, 8, 4});
    mb_op(m, OP_ADD, 3, (const uint32_t[]){t2, add_b, mb_i32(m, 0)}, t3);
    uint32_t t4 = mb_temp(m, 4, (const uint32_t[]){1, 6, 6, 4});
    mb_op(m, OP_DEPTHWISE, 8,
          (const uint32_t[]){t3, dw_f, dw_b, mb_i32(m, 2), mb_i32(m, 1), mb_i32(m, 1), mb_i32(m, 1),
                             mb_i32(m, 0)},
          t4);
    uint32_t t5 = mb_temp(m, 4, (const uint32_t[]){1, 3, 3, 4});
    mb_op(m, OP_MAX_POOL, 7,
          (const uint32_t[]){t4, mb_i32(m, 2), mb_i32(m, 2), mb_i32(m, 2), mb_i32(m, 2),
                             mb_i32(m, 2), mb_i32(m, 0)},
          t5);
    int32_t shape[2] = {1, 36};
    uint32_t shape_id = mb_constant(m, 4, 1, (const uint32_t[]){2}, shape, sizeof shape);
    uint32_t t6 = mb_temp(m, 2, (const uint32_t[]){1, 36});
    mb_op(m, OP_RESHAPE, 2, (const uint32_t[]){t5, shape_id}, t6);
    uint32_t t7 = mb_temp(m, 2, (const uint32_t[]){1, 10});
    mb_op(m, OP_FC, 4, (const uint32_t[]){t6, fc_w, fc_b, mb_i32(m, 0)}, t7);
    uint32_t y = mb_temp(m, 2, (const uint32_t[]){1, 10});
    mb_op(m, OP_SOFTMAX, 2, (const uint32_t[]){t7, mb_f32(m, 1.0f)}, y);
    mb_finish(m, 1, &x, y);
}

static void run_cnn(nnd_client *c, uint64_t h, float *out) {
    pool p;
    size_t in_bytes = sizeof(float) * CNN_IN;
    pool_open(&p, 1, &in_bytes, sizeof(float) * CNN_OUT);
    for (uint32_t i = 0; i < CNN_IN; i++)
        pool_in(&p, 0)[i] = wave(i * 3 + 1, 1.0f);
    char err[512];
    int st = execute(c, h, &p, NULL, err, sizeof err);
    if (st) fail_msg("execute: %d %s", st, err);
    /* One pool, exactly the client's input and output: no temporary came this way. */
    assert_int_equal(p.r.req.n_pools, 1);
    assert_int_equal(p.r.size, in_bytes + sizeof(float) * CNN_OUT);
    memcpy(out, pool_out(&p), sizeof(float) * CNN_OUT);
    pool_close(&p);
}

static void test_device_list(void **state) {
    (void)state;
    uint32_t n = 0;
    assert_int_equal(ANeuralNetworks_getDeviceCount(&n), ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(n, 3);
    ANeuralNetworksDevice *d;
    const char *name, *version;
    int32_t type;
    assert_int_equal(ANeuralNetworks_getDevice(2, &d), ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksDevice_getName(d, &name), ANEURALNETWORKS_NO_ERROR);
    assert_string_equal(name, "nnd-example");
    assert_int_equal(ANeuralNetworksDevice_getType(d, &type), ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(type, ANEURALNETWORKS_DEVICE_ACCELERATOR);
    assert_int_equal(ANeuralNetworksDevice_getVersion(d, &version), ANEURALNETWORKS_NO_ERROR);
    assert_string_equal(version, "example 2.0");
}

static void test_cnn_partitioned(void **state) {
    (void)state;
    static mb m; /* too large for the stack */
    cnn_model(&m);
    nnd_client *c = connect_to(&g_ex);
    double ex0 = device_count(&g_ex, "nnd-example", "executions");
    double cpu0 = device_count(&g_ex, "nnd-cpu", "executions");
    double ex_in = device_count(&g_ex, "nnd-example", "arrived");
    double cpu_in = device_count(&g_ex, "nnd-cpu", "arrived");
    const char *ex_cpu[] = {"nnd-example", "nnd-cpu"}; /* it ranks after nnd-cpu: named */
    uint64_t all = prepare_on(c, ex_cpu, 2, &m, 0);
    const char *ref_dev[] = {"nnd-reference"};
    uint64_t ref = prepare_on(c, ref_dev, 1, &m, 0);
    float got[CNN_OUT], want[CNN_OUT];
    run_cnn(c, all, got);
    run_cnn(c, ref, want);
    float sum = 0;
    for (int i = 0; i < CNN_OUT; i++) {
        if (fabsf(got[i] - want[i]) > 1e-5f)
            fail_msg("out[%d] %g, reference %g", i, got[i], want[i]);
        sum += got[i];
    }
    assert_true(fabsf(sum - 1.f) < 1e-4f); /* a softmax, not zeros */
    /* Seven steps on the example driver, the depthwise convolution on the CPU. */
    assert_true(file_has(g_ex_log, "on nnd-example: 8 operations"));
    assert_true(file_has(g_ex_log, "(steps: nnd-example 7, nnd-cpu 1)"));
    assert_true(file_has(g_ex_log, "(steps: nnd-reference 8)"));
    prepare_on(c, NULL, 0, &m, 0); /* named by nobody, a template gets nothing */
    assert_true(file_has(g_ex_log, "(steps: nnd-cpu 8)"));
    assert_int_equal(device_count(&g_ex, "nnd-example", "executions"), ex0 + 1);
    assert_int_equal(device_count(&g_ex, "nnd-cpu", "executions"), cpu0 + 1);
    /* It crossed to nnd-cpu's queue for the depthwise step and back: once each way. */
    assert_int_equal(device_count(&g_ex, "nnd-cpu", "arrived"), cpu_in + 1);
    assert_int_equal(device_count(&g_ex, "nnd-example", "arrived"), ex_in + 1);
    nnd_client_close(c);
    mb_free(&m);
}

/* The example's optional parts: the CNN's compilation is saved to cache files and loaded
 * back (its seven steps from their blobs), and a buffer allocated for its input lives in
 * the example's device memory; both give the reference's results. */
static void test_example_cache_and_memory(void **state) {
    (void)state;
    static mb m; /* too large for the stack */
    cnn_model(&m);
    nnd_client *c = connect_to(&g_ex);
    const char *ref_dev[] = {"nnd-reference"};
    float want[CNN_OUT], got[CNN_OUT];
    run_cnn(c, prepare_on(c, ref_dev, 1, &m, 0), want);
    char dir[300], err[512];
    snprintf(dir, sizeof dir, "/tmp/test-drivers-cache-%d", (int)getpid());
    assert_int_equal(mkdir(dir, 0700), 0);
    const uint8_t token[NND_CACHE_TOKEN_BYTES] = {'c', 'n', 'n'};
    uint64_t h[2];
    for (int i = 0; i < 2; i++) {
        bool from_cache = false;
        const char *ex_cpu[] = {"nnd-example", "nnd-cpu"};
        int st = nnd_client_prepare_cached_on(c, ex_cpu, 2, &m.model, NULL, 0, 0, 0, 0, dir, token,
                                              &h[i], &from_cache, err, sizeof err);
        if (st) fail_msg("prepare cached: %d %s", st, err);
        assert_true(from_cache == (i == 1));
        run_cnn(c, h[i], got);
        for (int k = 0; k < CNN_OUT; k++)
            if (fabsf(got[k] - want[k]) > 1e-5f)
                fail_msg("run %d out[%d] %g, want %g", i, k, got[k], want[k]);
    }
    assert_true(file_has(g_ex_log, "from its cache on nnd-example: 8 operations"));
    char mp[600], dp[600];
    assert_int_equal(nnd_cache_paths(dir, token, mp, dp, sizeof mp), 0);
    unlink(mp), unlink(dp), rmdir(dir);

    /* The input in a buffer of the example's memory. */
    cJSON *status = tst_admin_status(&g_ex);
    bool device_memory = false;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(status, "devices")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(e, "name");
        if (cJSON_IsString(n) && !strcmp(n->valuestring, "nnd-example"))
            device_memory = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "device_memory"));
    }
    cJSON_Delete(status);
    assert_true(device_memory);
    nnd_buffer_role role = {0, 0, 1.0f};
    uint64_t buf, buf_token;
    int st = nnd_client_allocate(c, in_dims, 4, &h[0], 1, &role, 1, NULL, 0, &buf, &buf_token, err,
                                 sizeof err);
    if (st) fail_msg("allocate: %d %s", st, err);
    pool p;
    size_t in_bytes = sizeof(float) * CNN_IN;
    pool_open(&p, 1, &in_bytes, sizeof(float) * CNN_OUT);
    for (uint32_t i = 0; i < CNN_IN; i++)
        pool_in(&p, 0)[i] = wave(i * 3 + 1, 1.0f);
    st = nnd_client_buffer_copy_to(c, buf, NND__POOL_KIND__POOL_MEMFD, p.fd, 0, in_bytes, NULL, 0,
                                   err, sizeof err);
    if (st) fail_msg("copy to: %d %s", st, err);
    Nnd__MemoryPool bp, *pools[2] = {&p.r.pool, &bp};
    nnd__memory_pool__init(&bp);
    bp.kind = NND__POOL_KIND__POOL_DRIVER_BUFFER;
    bp.token = buf_token;
    p.r.req.n_pools = 2, p.r.req.pools = pools;
    p.r.locs[0].pool_index = 1, p.r.locs[0].offset = 0, p.r.locs[0].length = 0;
    memset(pool_out(&p), 0, sizeof(float) * CNN_OUT);
    st = execute(c, h[0], &p, NULL, err, sizeof err);
    if (st) fail_msg("execute: %d %s", st, err);
    for (int k = 0; k < CNN_OUT; k++)
        if (fabsf(pool_out(&p)[k] - want[k]) > 1e-5f) fail_msg("out[%d] %g", k, pool_out(&p)[k]);
    pool_close(&p);
    nnd_client_close(c);
    mb_free(&m);
}

/* The model the example cannot cover, for exactly [nnd-example]: refused at finish. */
static void test_named_device_must_cover(void **state) {
    (void)state;
    static mb m; /* too large for the stack */
    cnn_model(&m);
    nnd_client *c = connect_to(&g_ex);
    const char *only[] = {"nnd-example"};
    char err[512];
    uint64_t h = 0;
    assert_int_equal(
        nnd_client_prepare_on(c, only, 1, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err),
        NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_non_null(strstr(err, "DEPTHWISE_CONV_2D"));
    nnd_client_close(c);
    mb_free(&m);

    /* Through the NDK: TANH on [4], which the example does not have. */
    ANeuralNetworksModel *model;
    ANeuralNetworksOperandType t = {.type = ANEURALNETWORKS_TENSOR_FLOAT32,
                                    .dimensionCount = 1,
                                    .dimensions = (const uint32_t[]){4}};
    assert_int_equal(ANeuralNetworksModel_create(&model), ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksModel_addOperand(model, &t), ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksModel_addOperand(model, &t), ANEURALNETWORKS_NO_ERROR);
    uint32_t in = 0, out = 1;
    assert_int_equal(
        ANeuralNetworksModel_addOperation(model, ANEURALNETWORKS_TANH, 1, &in, 1, &out),
        ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(model, 1, &in, 1, &out),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksModel_finish(model), ANEURALNETWORKS_NO_ERROR);
    ANeuralNetworksDevice *ex;
    assert_int_equal(ANeuralNetworks_getDevice(2, &ex), ANEURALNETWORKS_NO_ERROR);
    const ANeuralNetworksDevice *devs[] = {ex};
    bool sup[1] = {true};
    assert_int_equal(ANeuralNetworksModel_getSupportedOperationsForDevices(model, devs, 1, sup),
                     ANEURALNETWORKS_NO_ERROR);
    assert_false(sup[0]);
    ANeuralNetworksCompilation *comp;
    assert_int_equal(ANeuralNetworksCompilation_createForDevices(model, devs, 1, &comp),
                     ANEURALNETWORKS_NO_ERROR);
    assert_int_equal(ANeuralNetworksCompilation_finish(comp), ANEURALNETWORKS_BAD_DATA);
    ANeuralNetworksCompilation_free(comp);
    ANeuralNetworksModel_free(model);
}

/* ---- a chain alternating devices ------------------------------------------------------------ */

static void chain_pool(pool *p, uint32_t len, float a0, float b) {
    size_t bytes[2] = {sizeof(float) * len, sizeof(float) * len};
    pool_open(p, 2, bytes, bytes[0]);
    for (uint32_t i = 0; i < len; i++)
        pool_in(p, 0)[i] = i ? (float)(i % 100) : a0, pool_in(p, 1)[i] = b;
}

static void wait_running(const tst_daemon *d) {
    cJSON *status;
    for (int i = 0; i < 2000; i++) {
        status = tst_admin_status(d);
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(status, "scheduler"), "running");
        bool running = cJSON_IsNumber(r) && r->valuedouble >= 1;
        cJSON_Delete(status);
        if (running) return;
        sleep_ms(2);
    }
    fail_msg("nothing started running");
}

/* A LOW execution of 1201 steps alternating nnd-example (ADD) and nnd-cpu (SUB); a HIGH one
 * of the same app overtakes it (on nnd-example's queue, preempting it there when both want
 * that device, or on its idle worker while the LOW one is on the CPU), and both are right. */
static void test_preempted_across_devices(void **state) {
    (void)state;
    const uint32_t n = 1201, len = 262144;
    static mb lng, tiny;
    chain_model(&lng, n, len, OP_ADD, OP_SUB);
    chain_model(&tiny, 1, 4, OP_ADD, OP_SUB);
    nnd_client *a = connect_to(&g_ex), *b = connect_to(&g_ex);
    const char *ex_cpu[] = {"nnd-example", "nnd-cpu"};
    uint64_t hl = prepare_on(a, ex_cpu, 2, &lng, NND__PRIORITY__PRIORITY_LOW);
    uint64_t hh = prepare_on(b, ex_cpu, 2, &tiny, NND__PRIORITY__PRIORITY_HIGH);
    assert_true(file_has(g_ex_log, "(steps: nnd-example 601, nnd-cpu 600)"));
    pool pl, ph;
    chain_pool(&pl, len, 0, 1);
    chain_pool(&ph, 4, 0, 2);
    char err[512];
    uint64_t ticket;
    assert_int_equal(
        nnd_client_execute_start(a, hl, &pl.r.req, &pl.fd, 1, NULL, &ticket, err, sizeof err), 0);
    wait_running(&g_ex);
    sleep_ms(20);
    uint64_t t0 = now_ns();
    int st = execute(b, hh, &ph, NULL, err, sizeof err);
    uint64_t high_ns = now_ns() - t0;
    if (st) fail_msg("HIGH: %d %s", st, err);
    for (uint32_t i = 0; i < 4; i++)
        assert_true(pool_out(&ph)[i] == pool_in(&ph, 0)[i] + 2);
    assert_int_equal(nnd_client_execute_wait(a, ticket, 60000, NULL, err, sizeof err), 0);
    uint64_t low_ns = now_ns() - t0;
    /* 601 ADDs and 600 SUBs of 1: a + 1, every step run once. */
    for (uint32_t i = 0; i < len; i += 997)
        if (pool_out(&pl)[i] != pool_in(&pl, 0)[i] + 1)
            fail_msg("out[%u] = %g, want %g", i, pool_out(&pl)[i], pool_in(&pl, 0)[i] + 1);
    print_message("# HIGH answered in %.2f ms while a LOW chain of %u steps ran (%.0f ms after)\n",
                  (double)high_ns / 1e6, n, (double)low_ns / 1e6);
    assert_true(high_ns < low_ns);
    pool_close(&pl);
    pool_close(&ph);
    nnd_client_close(a);
    nnd_client_close(b);
    mb_free(&lng);
    mb_free(&tiny);
}

/* ---- test drivers: refusals, a failing execute, a deadline inside a driver step --------- */

static void test_refused_drivers(void **state) {
    (void)state;
    const char *names[] = {"foreign.so", "writable.so", "crash.so", "abi1.so"};
    for (int i = 0; i < 4; i++) {
        char line[600];
        snprintf(line, sizeof line, "driver %s/%s refused", g_test_dir, names[i]);
        if (!file_has(g_test_log, line)) fail_msg("no log line \"%s\"", line);
    }
    assert_true(file_has(g_test_log, "crash.so refused: crashed while loading (SIGSEGV"));
    assert_true(file_has(g_test_log, "abi1.so refused: built for driver ABI 1, which this daemon "
                                     "no longer loads: rebuild it against nnd/driver.h of ABI 2"));
    cJSON *status = tst_admin_status(&g_test);
    assert_int_equal(
        cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(status, "drivers_refused")), 4);
    cJSON_Delete(status);
    /* The good one is a device, and the daemon serves. */
    assert_true(device_count(&g_test, "nnd-test", "prepares") == 0);
}

/* RELU steps (nnd-test) alternating with SUB steps (nnd-cpu). */
static void test_failing_execute(void **state) {
    (void)state;
    static mb m; /* too large for the stack */
    chain_model(&m, 5, 8, OP_SUB, OP_RELU);
    nnd_client *c = connect_to(&g_test);
    uint64_t h = prepare_on(c, NULL, 0, &m, 0);
    assert_true(file_has(g_test_log, "(steps: nnd-test 2, nnd-cpu 3)"));
    pool p;
    chain_pool(&p, 8, 6666.f, 0);
    char err[512];
    assert_int_equal(execute(c, h, &p, NULL, err, sizeof err), NND__ERROR_STATUS__GENERAL_FAILURE);
    assert_non_null(strstr(err, "fails on 6666"));
    pool_in(&p, 0)[0] = -5;
    assert_int_equal(execute(c, h, &p, NULL, err, sizeof err), 0);
    assert_true(pool_out(&p)[0] == 0 && pool_out(&p)[3] == 3);
    pool_close(&p);
    nnd_client_close(c);
    mb_free(&m);
}

static void test_deadline_in_driver_step(void **state) {
    (void)state;
    static mb m;           /* too large for the stack */
    const uint32_t n = 80; /* 40 driver steps of 60 ms when slow: 2.4 s */
    chain_model(&m, n, 8, OP_SUB, OP_RELU);
    nnd_client *c = connect_to(&g_test);
    uint64_t h = prepare_on(c, NULL, 0, &m, 0);
    pool p;
    chain_pool(&p, 8, 1, 0);
    char err[512];
    for (int i = 0; i < 3; i++) /* the daemon learns what a run costs: little */
        assert_int_equal(execute(c, h, &p, NULL, err, sizeof err), 0);
    double aborted = sched_count(&g_test, "aborted_for_deadline");
    pool_in(&p, 0)[0] = 7777; /* every driver step sleeps 60 ms */
    /* Far enough for the execution to start on a busy machine, far from the whole run. */
    nnd_exec_opts o = {.deadline_ns = now_ns() + 600 * MS};
    int st = execute(c, h, &p, &o, err, sizeof err);
    print_message("# deadline 600 ms into 40 slow driver steps: %d (%s)\n", st, err);
    assert_int_equal(st, NND__ERROR_STATUS__MISSED_DEADLINE_TRANSIENT);
    assert_int_equal(sched_count(&g_test, "aborted_for_deadline"), aborted + 1);
    pool_close(&p);
    nnd_client_close(c);
    mb_free(&m);
}

/* ---- a device held by the test: queues and workers per device ------------------------------ */

/* The test driver's hold (DRV_TEST_HOLD): released while the file exists. */
static void hold_release(bool release) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/nnd-drv-test-release-%d", (int)g_test.pid);
    if (!release) {
        unlink(path);
        return;
    }
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
}

/* Waits until a device's status field reaches at least `want`. */
static void wait_device(const char *name, const char *field, double want) {
    for (int i = 0; i < 15000; i++) {
        if (device_count(&g_test, name, field) >= want) return;
        sleep_ms(2);
    }
    fail_msg("%s %s never reached %g", name, field, want);
}

static uint64_t start(nnd_client *c, uint64_t h, pool *p, const nnd_exec_opts *o) {
    char err[512];
    uint64_t ticket = 0;
    if (nnd_client_execute_start(c, h, &p->r.req, &p->fd, 1, o, &ticket, err, sizeof err))
        fail_msg("execute_start: %s", err);
    return ticket;
}

static int finish(nnd_client *c, uint64_t ticket, char *err, size_t errlen) {
    return nnd_client_execute_wait(c, ticket, 90000, NULL, err, errlen);
}

/* nnd-test held in an execution's middle step: an execution on nnd-cpu alone runs and
 * answers meanwhile; another one of the held model queues on nnd-test after its CPU step,
 * and `nndctl metrics` shows it there; released, both end right. */
static void test_devices_independent(void **state) {
    (void)state;
    static mb held, cpu_only;
    chain_model(&held, 3, 16, OP_SUB, OP_RELU); /* nnd-cpu, nnd-test, nnd-cpu */
    chain_model(&cpu_only, 5, 16, OP_SUB, OP_SUB);
    nnd_client *a = connect_to(&g_test), *b = connect_to(&g_test), *c = connect_to(&g_test);
    uint64_t ha = prepare_on(a, NULL, 0, &held, 0), hc = prepare_on(c, NULL, 0, &held, 0);
    const char *cpu[] = {"nnd-cpu"};
    uint64_t hb = prepare_on(b, cpu, 1, &cpu_only, 0);
    double test_in = device_count(&g_test, "nnd-test", "arrived");
    double cpu_in = device_count(&g_test, "nnd-cpu", "arrived");
    pool pa, pb, pc;
    chain_pool(&pa, 16, 8888.f, 0);
    chain_pool(&pb, 16, 1, 1);
    chain_pool(&pc, 16, 8888.f, 0);
    nnd_exec_opts timed = {.measure_timing = true};
    uint64_t ta = start(a, ha, &pa, &timed);
    wait_device("nnd-test", "running", 1);
    uint64_t seen_ns = now_ns();
    char err[512];
    assert_int_equal(execute(b, hb, &pb, NULL, err, sizeof err), 0);
    for (uint32_t i = 0; i < 16; i++)
        assert_true(pool_out(&pb)[i] == pool_in(&pb, 0)[i] - 5);
    assert_int_equal(device_count(&g_test, "nnd-test", "running"), 1); /* still held */
    uint64_t tc = start(c, hc, &pc, NULL);
    wait_device("nnd-test", "queue_depth", 1);
    static char out[1 << 16];
    const char *metrics[] = {"--state-dir", g_test.state_dir, "metrics", NULL};
    assert_int_equal(tst_run(NNDCTL_PATH, metrics, 0, false, out, sizeof out, 30000), 0);
    assert_non_null(strstr(out, "\nnnd_device_queue_depth{device=\"nnd-test\"} 1\n"));
    assert_non_null(strstr(out, "\nnnd_device_running{device=\"nnd-test\"} 1\n"));
    assert_non_null(strstr(out, "\nnnd_device_queue_depth{device=\"nnd-cpu\"} 0\n"));
    uint64_t held_ns = now_ns() - seen_ns;
    hold_release(true);
    Nnd__Reply *r = NULL;
    assert_int_equal(nnd_client_execute_wait(a, ta, 90000, &r, err, sizeof err), 0);
    assert_int_equal(finish(c, tc, err, sizeof err), 0);
    hold_release(false);
    /* Timing is the whole execution's: on device, its steps on both devices, the held one
     * included; in the driver, from its first step to its answer. */
    assert_true(r && r->result_case == NND__REPLY__RESULT_EXECUTED && r->executed->timing);
    const Nnd__Timing *t = r->executed->timing;
    assert_true(t->time_on_device_ns != UINT64_MAX && t->time_on_device_ns >= held_ns);
    assert_true(t->time_in_driver_ns >= t->time_on_device_ns);
    nnd__reply__free_unpacked(r, NULL);
    for (uint32_t i = 0; i < 16; i++) /* b = 0: SUB and RELU keep a */
        assert_true(pool_out(&pa)[i] == pool_in(&pa, 0)[i] &&
                    pool_out(&pc)[i] == pool_in(&pc, 0)[i]);
    /* Each went nnd-cpu -> nnd-test -> nnd-cpu. */
    assert_true(device_count(&g_test, "nnd-test", "arrived") >= test_in + 2);
    assert_true(device_count(&g_test, "nnd-cpu", "arrived") >= cpu_in + 2);
    assert_int_equal(device_count(&g_test, "nnd-test", "workers"), 1);
    pool_close(&pa);
    pool_close(&pb);
    pool_close(&pc);
    nnd_client_close(a);
    nnd_client_close(b);
    nnd_client_close(c);
    mb_free(&held);
    mb_free(&cpu_only);
}

/* A LOW execution nnd-cpu, nnd-test (held), nnd-test, nnd-cpu: the two RELUs are one
 * partition, one execute(); a HIGH one of the same app queues on nnd-test meanwhile and
 * gets the device when the LOW one's partition ends and it moves on to the CPU: nobody
 * has to yield; both right. */
static void test_preempted_in_middle_step(void **state) {
    (void)state;
    static mb x, y;
    ops_model(&x, 4, 20, (const int32_t[]){OP_SUB, OP_RELU, OP_RELU, OP_SUB}, 0, 0);
    ops_model(&y, 2, 20, (const int32_t[]){OP_RELU, OP_SUB}, 0, 0);
    nnd_client *a = connect_to(&g_test), *b = connect_to(&g_test);
    uint64_t hx = prepare_on(a, NULL, 0, &x, NND__PRIORITY__PRIORITY_LOW);
    uint64_t hy = prepare_on(b, NULL, 0, &y, NND__PRIORITY__PRIORITY_HIGH);
    pool px, py;
    chain_pool(&px, 20, 8889.f, 1); /* 8888 after the SUB: held */
    chain_pool(&py, 20, 3, 1);
    double preempted = sched_count(&g_test, "preempted");
    uint64_t tx = start(a, hx, &px, NULL);
    wait_device("nnd-test", "running", 1);
    uint64_t ty = start(b, hy, &py, NULL);
    wait_device("nnd-test", "queue_depth", 1);
    hold_release(true);
    char err[512];
    assert_int_equal(finish(b, ty, err, sizeof err), 0);
    assert_int_equal(finish(a, tx, err, sizeof err), 0);
    hold_release(false);
    (void)preempted; /* a yield may or may not come at the CPU's lane: not judged here */
    for (uint32_t i = 0; i < 20; i++) {
        float a0 = pool_in(&px, 0)[i] - 1, want = a0 > 0 ? a0 - 1 : -1;
        assert_true(pool_out(&px)[i] == want);
        assert_true(pool_out(&py)[i] == pool_in(&py, 0)[i] - 1);
    }
    pool_close(&px);
    pool_close(&py);
    nnd_client_close(a);
    nnd_client_close(b);
    mb_free(&x);
    mb_free(&y);
}

/* nnd-cpu, nnd-test (held past the deadline), nnd-cpu: stopped at the step boundary after
 * the held step, on nnd-test's worker, with the whole execution's estimate. */
static void test_deadline_in_middle_step(void **state) {
    (void)state;
    static mb m;
    chain_model(&m, 3, 12, OP_SUB, OP_RELU);
    nnd_client *c = connect_to(&g_test);
    uint64_t h = prepare_on(c, NULL, 0, &m, 0);
    pool p;
    chain_pool(&p, 12, 8888.f, 0);
    double aborted = sched_count(&g_test, "aborted_for_deadline");
    /* Far enough for the execution to reach nnd-test on a busy machine. */
    uint64_t deadline = now_ns() + 3000 * MS;
    nnd_exec_opts o = {.deadline_ns = deadline};
    uint64_t t = start(c, h, &p, &o);
    wait_device("nnd-test", "running", 1);
    while (now_ns() <= deadline + 20 * MS)
        sleep_ms(10);
    hold_release(true);
    char err[512];
    int st = finish(c, t, err, sizeof err);
    hold_release(false);
    print_message("# held past its deadline in the middle step: %d (%s)\n", st, err);
    assert_int_equal(st, NND__ERROR_STATUS__MISSED_DEADLINE_TRANSIENT);
    assert_non_null(strstr(err, "before operation 2 of 3"));
    assert_int_equal(sched_count(&g_test, "aborted_for_deadline"), aborted + 1);
    pool_close(&p);
    nnd_client_close(c);
    mb_free(&m);
}

/* Last: it disables nnd-test for the rest of the daemon's life. */
static void test_faulting_driver(void **state) {
    (void)state;
    static mb m;
    chain_model(&m, 3, 8, OP_SUB, OP_RELU);
    nnd_client *c = connect_to(&g_test);
    uint64_t h = prepare_on(c, NULL, 0, &m, 0);
    pool p;
    chain_pool(&p, 8, 5555.f, 0);
    char err[512];
    assert_int_equal(execute(c, h, &p, NULL, err, sizeof err), NND__ERROR_STATUS__GENERAL_FAILURE);
    assert_non_null(strstr(err, "faulted"));
    assert_true(file_has(g_test_log, "driver nnd-test ("));
    assert_true(file_has(g_test_log, "SIGSEGV in execute; the driver is disabled"));
    /* The model that used it fails; a new compilation leaves it out; the daemon serves. */
    pool_in(&p, 0)[0] = 1;
    assert_int_equal(execute(c, h, &p, NULL, err, sizeof err), NND__ERROR_STATUS__GENERAL_FAILURE);
    assert_non_null(strstr(err, "disabled"));
    uint64_t h2 = prepare_on(c, NULL, 0, &m, 0);
    assert_true(file_has(g_test_log, "(steps: nnd-cpu 3)"));
    assert_int_equal(execute(c, h2, &p, NULL, err, sizeof err), 0);
    assert_true(pool_out(&p)[0] == 1 && pool_out(&p)[5] == 5);
    pool_close(&p);
    nnd_client_close(c);
    mb_free(&m);
}

/* ---- daemons (in process: driver hosts are test_partitions' and test_driver_host's) ------ */
static int copy_as(const char *from, const char *name, mode_t mode, uid_t owner) {
    char to[600];
    snprintf(to, sizeof to, "%s/%s", g_test_dir, name);
    if (tst_copy_file(from, to) < 0 || chmod(to, mode) < 0) return -1;
    return owner ? chown(to, owner, owner) : 0;
}

static int setup(void **state) {
    (void)state;
    snprintf(g_ex_log, sizeof g_ex_log, "/tmp/test-drivers-ex-%d.log", (int)getpid());
    const char *ex_args[] = {"--drivers-dir", TST_BUILD_DRIVERS_DIR, "--drivers-in-process", "1",
                             NULL};
    tst_daemon_opts o = {.extra_args = ex_args, .log_path = g_ex_log};
    if (tst_daemon_start_opts(&g_ex, &o) < 0) return -1;
    setenv("NND_SOCKET", g_ex.socket_path, 1); /* the NDK's one connection */

    snprintf(g_test_dir, sizeof g_test_dir, "/tmp/test-drivers-%d", (int)getpid());
    if (mkdir(g_test_dir, 0755) < 0) return -1;
    /* nobody (65534) is no trusted owner; the test runs as root, which may give files away. */
    if (copy_as(TEST_DRIVER_SO, "good.so", 0755, 0) < 0 ||
        copy_as(TEST_DRIVER_SO, "writable.so", 0777, 0) < 0 ||
        copy_as(CRASH_DRIVER_SO, "crash.so", 0755, 0) < 0 ||
        copy_as(ABI1_DRIVER_SO, "abi1.so", 0755, 0) < 0 ||
        (geteuid() == 0 && copy_as(TEST_DRIVER_SO, "foreign.so", 0755, 65534) < 0))
        return -1;
    snprintf(g_test_log, sizeof g_test_log, "/tmp/test-drivers-test-%d.log", (int)getpid());
    const char *test_args[] = {"--drivers-dir", g_test_dir, "--drivers-in-process", "1", NULL};
    tst_daemon_opts ot = {.extra_args = test_args, .log_path = g_test_log};
    return tst_daemon_start_opts(&g_test, &ot);
}

static int teardown(void **state) {
    (void)state;
    int a = tst_daemon_stop(&g_ex), b = tst_daemon_stop(&g_test);
    const char *names[] = {"good.so", "writable.so", "crash.so", "foreign.so", "abi1.so"};
    for (int i = 0; i < 5; i++) {
        char p[600];
        snprintf(p, sizeof p, "%s/%s", g_test_dir, names[i]);
        unlink(p);
    }
    rmdir(g_test_dir);
    if (!getenv("NND_TEST_KEEP_LOGS")) unlink(g_ex_log);
    if (!getenv("NND_TEST_KEEP_LOGS")) unlink(g_test_log);
    return a == 0 && b == 0 ? 0 : -1;
}

int main(void) {
    if (geteuid() != 0) {
        printf("test_drivers: needs root (a driver file owned by another user)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_list),
        cmocka_unit_test(test_cnn_partitioned),
        cmocka_unit_test(test_example_cache_and_memory),
        cmocka_unit_test(test_named_device_must_cover),
        cmocka_unit_test(test_preempted_across_devices),
        cmocka_unit_test(test_refused_drivers),
        cmocka_unit_test(test_failing_execute),
        cmocka_unit_test(test_deadline_in_driver_step),
        cmocka_unit_test(test_devices_independent),
        cmocka_unit_test(test_preempted_in_middle_step),
        cmocka_unit_test(test_deadline_in_middle_step),
        cmocka_unit_test(test_faulting_driver),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
