/* SPDX-License-Identifier: Apache-2.0 */
/* test_partitions (integration): driver ABI 2 through real daemons loading
 * drv_rec_driver.c's recording drivers (their call logs are what the test reads).
 * - A ten-RELU chain on "rec" is one partition: one prepare, one execute per execution
 *   with the chain's one input and one output (nothing between its operations leaves the
 *   driver); RELU, SUB (nnd-cpu), RELU gives three partitions, two on the driver, right.
 * - Status lists the partitions rec holds (client, compilation, operations, held bytes)
 *   after a compile, and none once the compilation is released.
 * - The driver sees the compilation's priority and each execution's deadline.
 * - A cached compilation with a driver partition loads from its blobs: cache_load(), no
 *   prepare(), right results; with a byte of its blob changed in the cache file, the
 *   compilation is prepared afresh and the driver never gets the blob.
 * - "rec-f16" (fast for FLOAT16, slow for FLOAT32, FLOAT32 power cheap): of a mixed model
 *   it takes the FLOAT16 RELU and not the FLOAT32 one; with LOW_POWER, both.
 * - "rec-async" (completes 100 ms after start, from its own thread): with one worker for
 *   the device, four executions are all started before the first completes and (on a
 *   quiet machine) finish in about 100 ms, not 400; nnd-cpu answers another client
 *   meanwhile; a deadline that passes on the device ends the execution with
 *   MISSED_DEADLINE_TRANSIENT; a connection closed with work on the device cancels it; an
 *   execution going on at rec-async after complete() is no new arrival there (`arrived`). */
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
#include "nnd/nnd_wire.h"

#define MS      1000000ull
#define OP_RELU 19
#define OP_SUB  36
#define OP_CAST 45
#define LEN     8
#define T_F32   3
#define T_F16   8

typedef struct daemon_env {
    tst_daemon d;
    char dir[300], log[300], calls[300];
} daemon_env;

static daemon_env g_rec, g_async, g_f16;
static char g_cache_dir[300];

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static nnd_client *connect_to(daemon_env *e) {
    char err[256];
    nnd_client *c = nnd_client_connect(e->d.socket_path, "test-partitions", err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    return c;
}

/* Lines of the driver's call log that start with `prefix`. */
static int calls(const daemon_env *e, const char *prefix) {
    size_t len = 0;
    uint8_t *text = tst_read_file(e->calls, &len);
    if (!text) return 0;
    int n = 0;
    size_t w = strlen(prefix);
    for (char *line = (char *)text; line && *line;) {
        char *end = strchr(line, '\n');
        if (!strncmp(line, prefix, w)) n++;
        line = end ? end + 1 : NULL;
    }
    free(text);
    return n;
}

/* The log's line number of the first line starting with prefix; INT32_MAX when none. */
static int first_line(const daemon_env *e, const char *prefix, int nth) {
    size_t len = 0;
    uint8_t *text = tst_read_file(e->calls, &len);
    if (!text) return INT32_MAX;
    int at = INT32_MAX, k = 0, seen = 0;
    for (char *line = (char *)text; line && *line; k++) {
        char *end = strchr(line, '\n');
        if (!strncmp(line, prefix, strlen(prefix)) && seen++ == nth) {
            at = k;
            break;
        }
        line = end ? end + 1 : NULL;
    }
    free(text);
    return at;
}

/* A figure of the driver host serving device `rec` (admin status, devices[].host); -1
 * when the status has none. */
static double host_figure(const daemon_env *e, const char *field) {
    cJSON *status = tst_admin_status(&e->d);
    double v = -1;
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(status, "devices")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
        const cJSON *f =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "host"), field);
        if (cJSON_IsString(name) && !strcmp(name->valuestring, "rec") && cJSON_IsNumber(f))
            v = f->valuedouble;
    }
    cJSON_Delete(status);
    return v;
}

/* A figure of device `name` (admin status, devices[]); -1 when the status has none. */
static double device_figure(const daemon_env *e, const char *name, const char *field) {
    cJSON *status = tst_admin_status(&e->d);
    double v = tst_status_device_figure(status, name, field);
    cJSON_Delete(status);
    return v;
}

static uint64_t prepare(nnd_client *c, const mb *m, int preference, int priority) {
    char err[512];
    uint64_t h = 0;
    int st = nnd_client_prepare_on(c, NULL, 0, &m->model, NULL, 0, preference, priority, 0, &h, err,
                                   sizeof err);
    if (st) fail_msg("prepare: %d %s", st, err);
    return h;
}

/* ---- models and requests ------------------------------------------------------------------ */

/* a [LEN] through ops (RELU, or SUB of the constant 1) to y. */
static void chain(mb *m, uint32_t n, const int32_t *ops) {
    mb_init(m);
    uint32_t len = LEN, x = mb_temp(m, 1, &len);
    uint32_t a = x;
    float ones[LEN];
    for (int i = 0; i < LEN; i++)
        ones[i] = 1;
    uint32_t one = mb_constant(m, T_F32, 1, &len, ones, sizeof ones), act = mb_i32(m, 0);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t y = mb_temp(m, 1, &len);
        if (ops[k] == OP_RELU)
            mb_op(m, OP_RELU, 1, &x, y);
        else
            mb_op(m, OP_SUB, 3, (const uint32_t[]){x, one, act}, y);
        x = y;
    }
    mb_finish(m, 1, &a, x);
}

typedef struct pool {
    mb_req r;
    int fd;
    uint8_t *map;
} pool;

static void pool_open(pool *p, size_t in_bytes, size_t out_bytes) {
    mb_req_init(&p->r, 1, &in_bytes, out_bytes);
    void *map;
    p->fd = nnd_memfd_create("test-partitions", p->r.size, &map);
    assert_true(p->fd >= 0);
    p->map = map;
}

static void pool_close(pool *p) {
    munmap(p->map, p->r.size);
    close(p->fd);
}

static float *in_of(pool *p) {
    return (float *)(p->map + p->r.locs[0].offset);
}
static float *out_of(pool *p) {
    return (float *)(p->map + p->r.out_offset);
}

static int execute(nnd_client *c, uint64_t h, pool *p, const nnd_exec_opts *o, char *err,
                   size_t errlen) {
    return nnd_client_execute_opts(c, h, &p->r.req, &p->fd, 1, o, NULL, err, errlen);
}

/* Runs chain (n ops) on input i - 3.5 and checks against the same ops in C. */
static void run_chain_right(nnd_client *c, uint64_t h, uint32_t n, const int32_t *ops) {
    pool p;
    pool_open(&p, sizeof(float) * LEN, sizeof(float) * LEN);
    for (int i = 0; i < LEN; i++)
        in_of(&p)[i] = (float)i - 3.5f;
    char err[512];
    int st = execute(c, h, &p, NULL, err, sizeof err);
    if (st) fail_msg("execute: %d %s", st, err);
    for (int i = 0; i < LEN; i++) {
        float v = (float)i - 3.5f;
        for (uint32_t k = 0; k < n; k++)
            v = ops[k] == OP_RELU ? (v > 0 ? v : 0) : v - 1;
        if (out_of(&p)[i] != v) fail_msg("out[%d] = %g, want %g", i, out_of(&p)[i], v);
    }
    pool_close(&p);
}

/* ---- whole partitions ------------------------------------------------------------------------ */

static void test_chain_one_partition(void **state) {
    (void)state;
    static mb m;
    int32_t ops[10];
    for (int k = 0; k < 10; k++)
        ops[k] = OP_RELU;
    chain(&m, 10, ops);
    nnd_client *c = connect_to(&g_rec);
    int prepares = calls(&g_rec, "prepare rec"), executes = calls(&g_rec, "execute rec");
    uint64_t h = prepare(c, &m, 0, 0);
    assert_int_equal(calls(&g_rec, "prepare rec ops=10 "), 1);
    assert_int_equal(calls(&g_rec, "prepare rec"), prepares + 1);
    for (int i = 0; i < 3; i++)
        run_chain_right(c, h, 10, ops);
    /* One execute per execution, with the chain's input and output only. */
    assert_int_equal(calls(&g_rec, "execute rec"), executes + 3);
    assert_int_equal(calls(&g_rec, "execute rec prio=100 deadline=0 in=1 out=1"), 3);
    nnd_client_close(c);
    mb_free(&m);
}

static void test_alternating_three_partitions(void **state) {
    (void)state;
    static mb m;
    const int32_t ops[3] = {OP_RELU, OP_SUB, OP_RELU};
    chain(&m, 3, ops);
    nnd_client *c = connect_to(&g_rec);
    int prepares = calls(&g_rec, "prepare rec ops=1 "), executes = calls(&g_rec, "execute rec");
    uint64_t h = prepare(c, &m, 0, 0);
    assert_int_equal(calls(&g_rec, "prepare rec ops=1 "), prepares + 2);
    double staged = host_figure(&g_rec, "staged_calls"), sent = host_figure(&g_rec, "calls");
    run_chain_right(c, h, 3, ops);
    assert_int_equal(calls(&g_rec, "execute rec"), executes + 2);
    /* Through the driver host, and no tensor copied: the client's pool and the crossings'
     * arena are memory the host maps. */
    assert_true(host_figure(&g_rec, "calls") >= sent + 2);
    assert_true(staged >= 0);
    assert_true(host_figure(&g_rec, "staged_calls") == staged);
    nnd_client_close(c);
    mb_free(&m);
}

/* The entries of device rec's held_partitions in the admin status that name compilation
 * `handle` (an array: cJSON_Delete() it); NULL when the status has no such list. */
static cJSON *held_partitions(const char *handle) {
    cJSON *status = tst_admin_status(&g_rec.d), *list = NULL;
    const cJSON *d, *e;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(status, "devices")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "name");
        const cJSON *held = cJSON_GetObjectItemCaseSensitive(d, "held_partitions");
        if (!cJSON_IsString(n) || strcmp(n->valuestring, "rec") || !cJSON_IsArray(held)) continue;
        list = cJSON_CreateArray();
        cJSON_ArrayForEach(e, held) {
            const cJSON *comp = cJSON_GetObjectItemCaseSensitive(e, "compilation");
            if (cJSON_IsString(comp) && !strcmp(comp->valuestring, handle))
                cJSON_AddItemToArray(list, cJSON_Duplicate(e, true));
        }
    }
    cJSON_Delete(status);
    return list;
}

static double field(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Status lists the partitions rec holds: RELU, SUB, RELU, RELU gives two (operations #0,
 * and #2..#3) of that compilation and client, 4096 bytes each as the driver said; gone once
 * the compilation is released. */
static void test_status_lists_partitions(void **state) {
    (void)state;
    static mb m;
    const int32_t ops[4] = {OP_RELU, OP_SUB, OP_RELU, OP_RELU};
    chain(&m, 4, ops);
    nnd_client *c = connect_to(&g_rec);
    uint64_t h = prepare(c, &m, 0, 0);
    char handle[24];
    snprintf(handle, sizeof handle, "0x%016llx", (unsigned long long)h);
    cJSON *list = held_partitions(handle);
    assert_non_null(list);
    assert_int_equal(cJSON_GetArraySize(list), 2);
    const cJSON *e;
    int k = 0;
    cJSON_ArrayForEach(e, list) {
        const cJSON *comp = cJSON_GetObjectItemCaseSensitive(e, "compilation");
        const cJSON *app = cJSON_GetObjectItemCaseSensitive(e, "app");
        assert_true(cJSON_IsString(comp) && !strcmp(comp->valuestring, handle));
        assert_true(cJSON_IsString(app) && !strcmp(app->valuestring, "test-partitions"));
        assert_true(field(e, "pid") == (double)getpid());
        assert_true(field(e, "first_operation") == (k ? 2 : 0));
        assert_true(field(e, "operations") == (k ? 2 : 1));
        assert_true(field(e, "held_bytes") == 4096);
        k++;
    }
    cJSON_Delete(list);
    /* nndctl info and status print them under the device. */
    char want[160];
    snprintf(want, sizeof want, "partition: operations #2..#3 (2) of compilation %s, ", handle);
    for (int i = 0; i < 2; i++) {
        static char out[1 << 16];
        const char *args[] = {"--socket",        g_rec.d.socket_path,   "--state-dir",
                              g_rec.d.state_dir, i ? "status" : "info", NULL};
        assert_int_equal(tst_run(NNDCTL_PATH, args, 0, false, out, sizeof out, 30000), 0);
        char *line = strstr(out, want);
        if (!line) fail_msg("nndctl %s says:\n%s", args[4], out);
        print_message("# nndctl %s: %.*s\n", args[4], (int)strcspn(line, "\n"), line);
    }
    assert_int_equal(nnd_client_release(c, h), 0);
    char err[256];
    uint32_t nm, nd; /* a round trip: the release before it is done */
    assert_int_equal(nnd_client_cache_files_needed(c, &nm, &nd, err, sizeof err), 0);
    list = held_partitions(handle);
    assert_non_null(list);
    assert_int_equal(cJSON_GetArraySize(list), 0);
    cJSON_Delete(list);
    nnd_client_close(c);
    mb_free(&m);
}

static void test_priority_and_deadline_seen(void **state) {
    (void)state;
    static mb m;
    const int32_t ops[2] = {OP_RELU, OP_RELU};
    chain(&m, 2, ops);
    nnd_client *c = connect_to(&g_rec);
    uint64_t h = prepare(c, &m, 0, NND__PRIORITY__PRIORITY_HIGH);
    assert_int_equal(calls(&g_rec, "prepare rec ops=2 prio=110 "), 1);
    pool p;
    pool_open(&p, sizeof(float) * LEN, sizeof(float) * LEN);
    nnd_exec_opts o = {.deadline_ns = now_ns() + 10000 * MS};
    char err[512];
    int st = execute(c, h, &p, &o, err, sizeof err);
    if (st) fail_msg("execute: %d %s", st, err);
    assert_int_equal(calls(&g_rec, "execute rec prio=110 deadline=1 "), 1);
    pool_close(&p);
    nnd_client_close(c);
    mb_free(&m);
}

/* Adds one to the operation count after the recording driver's blob magic in the files of
 * dir; whether a blob was found. */
static bool tamper_blob(const char *dir) {
    char cmd[400];
    snprintf(cmd, sizeof cmd, "grep -rl rec-blob %s", dir);
    FILE *list = popen(cmd, "r");
    assert_non_null(list);
    char path[512];
    bool found = false;
    while (fgets(path, sizeof path, list)) {
        path[strcspn(path, "\n")] = 0;
        FILE *f = fopen(path, "r+b");
        if (!f) continue;
        static uint8_t bytes[1 << 20];
        size_t n = fread(bytes, 1, sizeof bytes, f);
        for (size_t k = 0; k + 12 <= n; k++)
            if (!memcmp(bytes + k, "rec-blob", 8)) {
                fseek(f, (long)(k + 8), SEEK_SET);
                fputc(bytes[k + 8] + 1, f);
                found = true;
                break;
            }
        fclose(f);
    }
    pclose(list);
    return found;
}

static void test_cached_partitions(void **state) {
    (void)state;
    static mb m;
    const int32_t ops[3] = {OP_RELU, OP_RELU, OP_SUB};
    chain(&m, 3, ops);
    nnd_client *c = connect_to(&g_rec);
    const uint8_t token[NND_CACHE_TOKEN_BYTES] = {'p', 'a', 'r', 't'};
    char err[512];
    for (int i = 0; i < 2; i++) {
        int prepares = calls(&g_rec, "prepare rec"), loads = calls(&g_rec, "cache_load");
        bool from_cache = false;
        uint64_t h;
        int st = nnd_client_prepare_cached_on(c, NULL, 0, &m.model, NULL, 0, 0, 0, 0, g_cache_dir,
                                              token, &h, &from_cache, err, sizeof err);
        if (st) fail_msg("prepare cached: %d %s", st, err);
        assert_true(from_cache == (i == 1));
        /* Saved once; loaded from its blob without prepare(). */
        assert_int_equal(calls(&g_rec, "prepare rec"), prepares + (i == 0));
        assert_int_equal(calls(&g_rec, "cache_load"), loads + (i == 1));
        if (i == 0) assert_int_equal(calls(&g_rec, "cache_save"), 1);
        run_chain_right(c, h, 3, ops);
    }
    /* The blob's operation count, changed in the cache file: refused by the cache's hash
     * before cache_load(); prepared afresh. */
    assert_true(tamper_blob(g_cache_dir));
    int prepares = calls(&g_rec, "prepare rec"), loads = calls(&g_rec, "cache_load");
    bool from_cache = true;
    uint64_t h;
    int st = nnd_client_prepare_cached_on(c, NULL, 0, &m.model, NULL, 0, 0, 0, 0, g_cache_dir,
                                          token, &h, &from_cache, err, sizeof err);
    if (st) fail_msg("prepare cached, tampered: %d %s", st, err);
    assert_false(from_cache);
    assert_int_equal(calls(&g_rec, "cache_load"), loads);
    assert_int_equal(calls(&g_rec, "prepare rec"), prepares + 1);
    run_chain_right(c, h, 3, ops);
    nnd_client_close(c);
    mb_free(&m);
}

/* ---- figures per operand type, and preference --------------------------------------------- */

/* a16 [LEN] -> RELU -> CAST to FLOAT32 -> RELU -> y32. */
static void mixed(mb *m) {
    mb_init(m);
    uint32_t len = LEN;
    uint32_t a = mb_operand(m, T_F16, 1, &len, NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t t = mb_operand(m, T_F16, 1, &len, NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t u = mb_temp(m, 1, &len), y = mb_temp(m, 1, &len);
    mb_op(m, OP_RELU, 1, &a, t);
    mb_op(m, OP_CAST, 1, &t, u);
    mb_op(m, OP_RELU, 1, &u, y);
    mb_finish(m, 1, &a, y);
}

static void run_mixed(nnd_client *c, uint64_t h) {
    pool p;
    pool_open(&p, 2 * LEN, sizeof(float) * LEN);
    uint16_t *x = (uint16_t *)in_of(&p);
    for (int i = 0; i < LEN; i++)
        x[i] = i % 2 ? 0x3c00 : 0xbc00; /* 1.0 and -1.0 */
    char err[512];
    int st = execute(c, h, &p, NULL, err, sizeof err);
    if (st) fail_msg("execute: %d %s", st, err);
    for (int i = 0; i < LEN; i++)
        assert_true(out_of(&p)[i] == (i % 2 ? 1.0f : 0.0f));
    pool_close(&p);
}

static void test_types_and_preference(void **state) {
    (void)state;
    static mb m;
    mixed(&m);
    nnd_client *c = connect_to(&g_f16);
    /* Fast (the default): the FLOAT16 RELU only. */
    uint64_t h = prepare(c, &m, 0, 0);
    assert_int_equal(calls(&g_f16, "prepare rec-f16 ops=1 prio=100 type=8"), 1);
    assert_int_equal(calls(&g_f16, "prepare rec-f16 ops=1 prio=100 type=3"), 0);
    run_mixed(c, h);
    /* LOW_POWER (wire 1): the FLOAT32 RELU's power figure beats nnd-cpu's. */
    uint64_t hp = prepare(c, &m, 1, 0);
    assert_int_equal(calls(&g_f16, "prepare rec-f16 ops=1 prio=100 type=8"), 2);
    assert_int_equal(calls(&g_f16, "prepare rec-f16 ops=1 prio=100 type=3"), 1);
    run_mixed(c, hp);
    nnd_client_close(c);
    mb_free(&m);
}

/* ---- asynchronous partitions ------------------------------------------------------------------
 */

static void test_async_four_at_once(void **state) {
    (void)state;
    static mb m, cpu;
    const int32_t relu[1] = {OP_RELU}, sub[1] = {OP_SUB};
    chain(&m, 1, relu);
    chain(&cpu, 1, sub);
    nnd_client *c[5];
    uint64_t h[5];
    pool p[5];
    for (int i = 0; i < 5; i++) {
        c[i] = connect_to(&g_async);
        h[i] = prepare(c[i], i < 4 ? &m : &cpu, 0, 0);
        pool_open(&p[i], sizeof(float) * LEN, sizeof(float) * LEN);
        for (int k = 0; k < LEN; k++)
            in_of(&p[i])[k] = (float)k - 3.5f;
    }
    int starts = calls(&g_async, "start"), completes = calls(&g_async, "complete");
    bool busy = tst_machine_busy();
    char err[512];
    uint64_t ticket[4], t0 = now_ns();
    for (int i = 0; i < 4; i++)
        assert_int_equal(nnd_client_execute_start(c[i], h[i], &p[i].r.req, &p[i].fd, 1, NULL,
                                                  &ticket[i], err, sizeof err),
                         0);
    /* nnd-cpu serves another client while the device works. */
    uint64_t c0 = now_ns();
    int st = execute(c[4], h[4], &p[4], NULL, err, sizeof err);
    uint64_t cpu_ns = now_ns() - c0;
    if (st) fail_msg("nnd-cpu: %d %s", st, err);
    for (int i = 0; i < 4; i++) {
        st = nnd_client_execute_wait(c[i], ticket[i], 10000, NULL, err, sizeof err);
        if (st) fail_msg("async %d: %d %s", i, st, err);
        for (int k = 0; k < LEN; k++)
            assert_true(out_of(&p[i])[k] == (k > 3 ? (float)k - 3.5f : 0));
    }
    uint64_t all_ns = now_ns() - t0;
    assert_int_equal(calls(&g_async, "start"), starts + 4);
    assert_int_equal(calls(&g_async, "complete 0"), completes + 4);
    /* Structural: the four were on the device together (one worker serves that lane). */
    assert_true(first_line(&g_async, "start", starts + 3) <
                first_line(&g_async, "complete", completes));
    print_message("# four 100 ms device executions in %.1f ms; nnd-cpu meanwhile %.2f ms\n",
                  (double)all_ns / 1e6, (double)cpu_ns / 1e6);
    if (busy || tst_machine_busy())
        print_message("# the machine is busy: the times are not judged\n");
    else {
        assert_true(all_ns < 300 * MS);
        assert_true(cpu_ns < 90 * MS);
    }
    for (int i = 0; i < 5; i++) {
        pool_close(&p[i]);
        nnd_client_close(c[i]);
    }
    mb_free(&m);
    mb_free(&cpu);
}

/* SUB, RELU (rec-async), SUB: the execution arrives at rec-async once (from nnd-cpu) and
 * at nnd-cpu once (back from rec-async); going on at rec-async after complete() is no
 * arrival. */
static void test_async_resume_not_arrival(void **state) {
    (void)state;
    static mb m;
    const int32_t ops[3] = {OP_SUB, OP_RELU, OP_SUB};
    chain(&m, 3, ops);
    nnd_client *c = connect_to(&g_async);
    uint64_t h = prepare(c, &m, 0, 0);
    double dev = device_figure(&g_async, "rec-async", "arrived");
    double cpu = device_figure(&g_async, "nnd-cpu", "arrived");
    int completes = calls(&g_async, "complete 0");
    assert_true(dev >= 0 && cpu >= 0);
    run_chain_right(c, h, 3, ops);
    assert_int_equal(calls(&g_async, "complete 0"), completes + 1); /* it went to the device */
    assert_true(device_figure(&g_async, "rec-async", "arrived") == dev + 1);
    assert_true(device_figure(&g_async, "nnd-cpu", "arrived") == cpu + 1);
    nnd_client_close(c);
    mb_free(&m);
}

static void test_async_deadline_on_device(void **state) {
    (void)state;
    static mb m;
    const int32_t ops[2] = {OP_RELU, OP_RELU};
    chain(&m, 2, ops); /* a fresh model: no history that would refuse the deadline at once */
    nnd_client *c = connect_to(&g_async);
    uint64_t h = prepare(c, &m, 0, 0);
    pool p;
    pool_open(&p, sizeof(float) * LEN, sizeof(float) * LEN);
    nnd_exec_opts o = {.deadline_ns = now_ns() + 40 * MS};
    char err[512];
    int st = execute(c, h, &p, &o, err, sizeof err);
    print_message("# deadline on the device: %d (%s)\n", st, err);
    assert_int_equal(st, NND__ERROR_STATUS__MISSED_DEADLINE_TRANSIENT);
    assert_non_null(strstr(err, "on rec-async")); /* the driver's own verdict */
    pool_close(&p);
    nnd_client_close(c);
    mb_free(&m);
}

static void test_async_cancel_on_close(void **state) {
    (void)state;
    static mb m;
    const int32_t ops[1] = {OP_RELU};
    chain(&m, 1, ops);
    nnd_client *c = connect_to(&g_async);
    uint64_t h = prepare(c, &m, 0, 0);
    pool p;
    pool_open(&p, sizeof(float) * LEN, sizeof(float) * LEN);
    int cancels = calls(&g_async, "cancel"), starts = calls(&g_async, "start");
    char err[512];
    uint64_t ticket;
    assert_int_equal(
        nnd_client_execute_start(c, h, &p.r.req, &p.fd, 1, NULL, &ticket, err, sizeof err), 0);
    for (int i = 0; i < 2000 && calls(&g_async, "start") == starts; i++)
        usleep(1000);
    nnd_client_close(c);
    for (int i = 0; i < 2000 && calls(&g_async, "cancel") == cancels; i++)
        usleep(1000);
    assert_int_equal(calls(&g_async, "cancel"), cancels + 1);
    /* The device's completion comes, and the daemon serves on. */
    for (int i = 0; i < 2000 && calls(&g_async, "complete 2") == 0; i++)
        usleep(1000);
    assert_true(calls(&g_async, "complete 2") >= 1);
    nnd_client *d = connect_to(&g_async);
    nnd_client_close(d);
    pool_close(&p);
    mb_free(&m);
}

/* ---- daemons ------------------------------------------------------------------------------ */

static int start(daemon_env *e, const char *name, const char *so, const char *device) {
    int pid = (int)getpid();
    snprintf(e->dir, sizeof e->dir, "/tmp/test-partitions-%s-%d", name, pid);
    snprintf(e->log, sizeof e->log, "/tmp/test-partitions-%s-%d.log", name, pid);
    snprintf(e->calls, sizeof e->calls, "/tmp/test-partitions-%s-%d.calls", name, pid);
    char to[600];
    snprintf(to, sizeof to, "%s/rec.so", e->dir);
    if (mkdir(e->dir, 0755) < 0 || tst_copy_file(so, to) < 0) return -1;
    setenv("NND_TEST_DRV_LOG", e->calls, 1); /* the daemon inherits these */
    setenv("NND_TEST_REC_DEVICE", device, 1);
    const char *args[] = {"--drivers-dir", e->dir, "--cache-max-bytes", "0", NULL};
    tst_daemon_opts o = {.extra_args = args, .log_path = e->log};
    return tst_daemon_start_opts(&e->d, &o);
}

static int stop(daemon_env *e) {
    int rc = tst_daemon_stop(&e->d);
    char p[700];
    snprintf(p, sizeof p, "%s/rec.so", e->dir);
    unlink(p);
    rmdir(e->dir);
    unlink(e->calls);
    unlink(e->log);
    return rc;
}

static int setup(void **state) {
    (void)state;
    snprintf(g_cache_dir, sizeof g_cache_dir, "/tmp/test-partitions-cache-%d", (int)getpid());
    if (mkdir(g_cache_dir, 0700) < 0) return -1;
    if (start(&g_rec, "rec", REC_DRIVER_SO, "rec") < 0) return -1;
    if (start(&g_f16, "f16", REC_DRIVER_SO, "f16") < 0) return -1;
    return start(&g_async, "async", REC_ASYNC_DRIVER_SO, "rec");
}

static int teardown(void **state) {
    (void)state;
    int rc = stop(&g_rec) | stop(&g_f16) | stop(&g_async);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_cache_dir);
    if (system(cmd) != 0) rc = -1;
    return rc;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_one_partition),
        cmocka_unit_test(test_alternating_three_partitions),
        cmocka_unit_test(test_status_lists_partitions),
        cmocka_unit_test(test_priority_and_deadline_seen),
        cmocka_unit_test(test_cached_partitions),
        cmocka_unit_test(test_types_and_preference),
        cmocka_unit_test(test_async_four_at_once),
        cmocka_unit_test(test_async_resume_not_arrival),
        cmocka_unit_test(test_async_deadline_on_device),
        cmocka_unit_test(test_async_cancel_on_close),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
