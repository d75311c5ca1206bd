/* SPDX-License-Identifier: Apache-2.0 */
/* test_driver_memory (integration): the optional parts of the driver ABI through a real
 * daemon that loads drv_mem_driver.c ("nnd-memtest": RELU, device memory, cache blobs),
 * which logs every call into it to a file the test counts.
 * Device memory: a driver-managed buffer whose every role is an input or output of an
 * nnd-memtest partition lives in its memory (one allocate, no daemon bytes' worth of
 * copies): the client's copies go through the driver's read and write; a RELU partition
 * gets the buffer's handle (no copy) and a CPU step (SUB) reading the same input in the
 * same execution reads it through one read; results are right. A buffer with a role only
 * a CPU step plays, or for a CPU-only compilation, stays in daemon memory.
 * Roles: allocate() gets each role as the partition plays it (which partition, input or
 * output, the index among the partition's inputs or outputs, not the model's, and the
 * frequency), in the daemon and through a driver host (a second daemon).
 * Cache blobs: a compilation with an nnd-memtest step is saved to client cache files and
 * loaded (content cache off) without prepare() on the driver (cache_load() instead), and
 * runs right; a flipped byte in the driver's blob is refused as a hash mismatch before the
 * driver sees it; a driver that faults in cache_load() is disabled and its partition goes
 * to the CPU (the load still serves), and the daemon serves on. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/daemon/drv_models.h"
#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"

#define OP_RELU 19
#define OP_SUB  36
#define LEN     8

static tst_daemon g_d;
static char g_dir[300], g_log[300], g_calls[300], g_cache_dir[300];
static const char *g_calls_path = g_calls; /* the call log calls() counts */

static nnd_client *connect_to(void) {
    char err[256];
    nnd_client *c = nnd_client_connect(g_d.socket_path, "test-driver-memory", err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    return c;
}

/* How many lines of the driver's call log are `what`. */
static int calls(const char *what) {
    size_t len = 0;
    uint8_t *text = tst_read_file(g_calls_path, &len);
    if (!text) return 0;
    int n = 0;
    size_t w = strlen(what);
    for (char *line = (char *)text; line && *line;) {
        char *end = strchr(line, '\n');
        if (end && (size_t)(end - line) == w && !memcmp(line, what, w)) n++;
        line = end ? end + 1 : NULL;
    }
    free(text);
    return n;
}

/* The models, all over [LEN], inputs a and b, output y:
 * M_SUB_RELU: y = RELU(a - b) (SUB on the CPU, then RELU on nnd-memtest);
 * M_RELU_SUB: y = RELU(a) - b (RELU, then SUB);
 * M_BOTH: y = RELU(a) - (a - b) (a read by the RELU and by a CPU step). */
enum { M_SUB_RELU, M_RELU_SUB, M_BOTH };

static void model(mb *m, int which) {
    mb_init(m);
    uint32_t len = LEN;
    uint32_t a = mb_temp(m, 1, &len), b = mb_temp(m, 1, &len), t = mb_temp(m, 1, &len);
    uint32_t y = mb_temp(m, 1, &len), act = mb_i32(m, 0);
    if (which == M_SUB_RELU) {
        mb_op(m, OP_SUB, 3, (const uint32_t[]){a, b, act}, t);
        mb_op(m, OP_RELU, 1, &t, y);
    } else if (which == M_RELU_SUB) {
        mb_op(m, OP_RELU, 1, &a, t);
        mb_op(m, OP_SUB, 3, (const uint32_t[]){t, b, act}, y);
    } else {
        uint32_t u = mb_temp(m, 1, &len);
        mb_op(m, OP_RELU, 1, &a, t);
        mb_op(m, OP_SUB, 3, (const uint32_t[]){a, b, act}, u);
        mb_op(m, OP_SUB, 3, (const uint32_t[]){t, u, act}, y);
    }
    mb_finish(m, 2, (const uint32_t[]){a, b}, y);
}

static uint64_t prepare_on(nnd_client *c, const char *dev, const mb *m) {
    char err[512];
    uint64_t h = 0;
    const char *devs[] = {dev};
    int st = nnd_client_prepare_on(c, dev ? devs : NULL, dev ? 1 : 0, &m->model, NULL, 0, 1, 0, 0,
                                   &h, err, sizeof err);
    if (st != 0) fail_msg("prepare: %d %s", st, err);
    return h;
}

/* A request: each argument a driver buffer (token) or a slice of one memfd (fd index 0). */
typedef struct req {
    Nnd__ExecutionRequest r;
    Nnd__RequestArgument args[3], *in[2], *out[1];
    Nnd__DataLocation locs[3];
    Nnd__MemoryPool pools[4], *poolp[4];
} req;

static void req_make(req *q, const uint64_t tokens[3]) {
    memset(q, 0, sizeof *q);
    nnd__execution_request__init(&q->r);
    nnd__memory_pool__init(&q->pools[0]);
    q->pools[0].kind = NND__POOL_KIND__POOL_MEMFD;
    q->pools[0].size = 3 * LEN * 4;
    q->poolp[0] = &q->pools[0];
    q->r.n_pools = 1;
    for (int i = 0; i < 3; i++) {
        nnd__request_argument__init(&q->args[i]);
        nnd__data_location__init(&q->locs[i]);
        q->args[i].location = &q->locs[i];
        if (tokens[i]) {
            size_t p = q->r.n_pools++;
            nnd__memory_pool__init(&q->pools[p]);
            q->pools[p].kind = NND__POOL_KIND__POOL_DRIVER_BUFFER;
            q->pools[p].token = tokens[i];
            q->poolp[p] = &q->pools[p];
            q->locs[i].pool_index = (uint32_t)p;
        } else {
            q->locs[i].offset = (uint64_t)i * LEN * 4;
            q->locs[i].length = LEN * 4;
        }
        if (i < 2)
            q->in[i] = &q->args[i];
        else
            q->out[0] = &q->args[i];
    }
    q->r.n_inputs = 2, q->r.inputs = q->in;
    q->r.n_outputs = 1, q->r.outputs = q->out;
    q->r.pools = q->poolp;
}

static void execute_ok(nnd_client *c, uint64_t h, const req *q, int fd) {
    char err[512];
    int st = nnd_client_execute_opts(c, h, &q->r, &fd, 1, NULL, NULL, err, sizeof err);
    if (st != 0) fail_msg("execute: %d %s", st, err);
}

static uint64_t allocate(nnd_client *c, const uint64_t *models, size_t n, const nnd_buffer_role *in,
                         size_t n_in, nnd_buffer_role out, uint64_t *token) {
    char err[512];
    uint64_t b = 0;
    uint32_t dims[1] = {LEN};
    int st =
        nnd_client_allocate(c, dims, 1, models, n, in, n_in, &out, 1, &b, token, err, sizeof err);
    if (st != 0) fail_msg("allocate: %d %s", st, err);
    return b;
}

static void copy_to(nnd_client *c, uint64_t b, const float *v) {
    void *map;
    int fd = nnd_memfd_create("in", LEN * 4, &map);
    memcpy(map, v, LEN * 4);
    char err[512];
    int st = nnd_client_buffer_copy_to(c, b, NND__POOL_KIND__POOL_MEMFD, fd, 0, LEN * 4, NULL, 0,
                                       err, sizeof err);
    if (st != 0) fail_msg("copy to: %d %s", st, err);
    munmap(map, LEN * 4);
    close(fd);
}

static void copy_from(nnd_client *c, uint64_t b, float *v) {
    void *map;
    int fd = nnd_memfd_create("out", LEN * 4, &map);
    char err[512];
    int st = nnd_client_buffer_copy_from(c, b, NND__POOL_KIND__POOL_MEMFD, fd, 0, LEN * 4, NULL, 0,
                                         NULL, err, sizeof err);
    if (st != 0) fail_msg("copy from: %d %s", st, err);
    memcpy(v, map, LEN * 4);
    munmap(map, LEN * 4);
    close(fd);
}

static float relu(float x) {
    return x > 0 ? x : 0;
}

static void test_buffers_in_driver_memory(void **state) {
    (void)state;
    static mb m1, m2, m3; /* too large for the stack */
    model(&m1, M_SUB_RELU);
    model(&m2, M_RELU_SUB);
    model(&m3, M_BOTH);
    nnd_client *c = connect_to();
    uint64_t h[3] = {prepare_on(c, NULL, &m1), prepare_on(c, NULL, &m2), prepare_on(c, NULL, &m3)};
    /* x: input a of m2 and m3 (their RELUs read it) and the output of m1 (its RELU writes
     * it): in nnd-memtest's memory. z: the output of m2, which a CPU step writes: in daemon
     * memory, whatever else the model runs on the driver. */
    int allocated = calls("allocate");
    uint64_t tx, tz;
    const nnd_buffer_role a_of_2_3[2] = {{1, 0, 1.0f}, {2, 0, 1.0f}};
    nnd_buffer_role y_of_1 = {0, 0, 1.0f}, y_of_2 = {1, 0, 1.0f};
    uint64_t x = allocate(c, h, 3, a_of_2_3, 2, y_of_1, &tx);
    uint64_t z = allocate(c, h, 3, NULL, 0, y_of_2, &tz);
    assert_int_equal(calls("allocate"), allocated + 1);

    float a[LEN], b[LEN], got[LEN];
    for (int i = 0; i < LEN; i++)
        a[i] = (float)i - 3, b[i] = 1;
    int writes = calls("write"), reads = calls("read");
    copy_to(c, x, a); /* through the driver's write */
    assert_int_equal(calls("write"), writes + 1);

    void *map;
    int fd = nnd_memfd_create("args", 3 * LEN * 4, &map);
    memcpy((float *)map + LEN, b, sizeof b);
    /* m2: RELU (nnd-memtest) reads x by its handle; SUB (CPU) writes z in daemon memory. */
    req q;
    req_make(&q, (const uint64_t[]){tx, 0, tz});
    int in_handles = calls("in-handle");
    execute_ok(c, h[1], &q, fd);
    assert_int_equal(calls("in-handle"), in_handles + 1);
    copy_from(c, z, got);
    assert_int_equal(calls("read") + calls("write"), reads + writes + 1);
    for (int i = 0; i < LEN; i++)
        if (got[i] != relu(a[i]) - b[i])
            fail_msg("z[%d] = %g, want %g", i, (double)got[i], (double)(relu(a[i]) - b[i]));

    /* m3 with x as its input a: RELU reads it by its handle, a SUB (CPU) through one read. */
    req_make(&q, (const uint64_t[]){tx, 0, 0});
    in_handles = calls("in-handle");
    reads = calls("read");
    writes = calls("write");
    execute_ok(c, h[2], &q, fd);
    assert_int_equal(calls("in-handle"), in_handles + 1);
    assert_int_equal(calls("read"), reads + 1);
    assert_int_equal(calls("write"), writes);
    for (int i = 0; i < LEN; i++)
        assert_true(((float *)map)[2 * LEN + i] == relu(a[i]) - (a[i] - b[i]));

    /* m1 from the pool into x: RELU writes x by its handle, no copy. */
    memcpy(map, a, sizeof a);
    int out_handles = calls("out-handle");
    reads = calls("read");
    writes = calls("write");
    req_make(&q, (const uint64_t[]){0, 0, tx});
    execute_ok(c, h[0], &q, fd);
    assert_int_equal(calls("out-handle"), out_handles + 1);
    assert_int_equal(calls("read") + calls("write"), reads + writes);
    copy_from(c, x, got);
    for (int i = 0; i < LEN; i++)
        assert_true(got[i] == relu(a[i] - b[i]));

    /* A compilation without nnd-memtest steps: its buffer stays in daemon memory. */
    uint64_t hc = prepare_on(c, "nnd-cpu", &m1), tc;
    allocated = calls("allocate");
    allocate(c, &hc, 1, NULL, 0, y_of_1, &tc);
    assert_int_equal(calls("allocate"), allocated);

    /* Released buffers give their device memory back. */
    int freed = calls("free");
    char err[256];
    uint32_t nm, nd;
    assert_int_equal(nnd_client_release(c, x), 0);
    assert_int_equal(nnd_client_release(c, z), 0);
    /* A round trip on the same connection: the releases before it are done. */
    assert_int_equal(nnd_client_cache_files_needed(c, &nm, &nd, err, sizeof err), 0);
    assert_int_equal(calls("free"), freed + 1);
    munmap(map, 3 * LEN * 4);
    close(fd);
    nnd_client_close(c);
    mb_free(&m1);
    mb_free(&m2);
    mb_free(&m3);
}

/* ---- roles -------------------------------------------------------------------------------- */

/* Lines of the call log at path that are `what`. */
static int calls_in(const char *path, const char *what) {
    const char *keep = g_calls_path;
    g_calls_path = path;
    int n = calls(what);
    g_calls_path = keep;
    return n;
}

/* Inputs (b, a), outputs (y, z): t = RELU(a), y = RELU(t) (one nnd-memtest partition:
 * input a, outputs t and y, in that order), z = t - b (the CPU). */
static void roles_model(mb *m) {
    mb_init(m);
    uint32_t len = LEN;
    uint32_t b = mb_temp(m, 1, &len), a = mb_temp(m, 1, &len), t = mb_temp(m, 1, &len);
    uint32_t y = mb_temp(m, 1, &len), z = mb_temp(m, 1, &len), act = mb_i32(m, 0);
    mb_op(m, OP_RELU, 1, &a, t);
    mb_op(m, OP_RELU, 1, &t, y);
    mb_op(m, OP_SUB, 3, (const uint32_t[]){t, b, act}, z);
    mb_finish(m, 2, (const uint32_t[]){b, a}, y);
    m->outs[1] = z;
    m->ops[z].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    m->main.n_output_indexes = 2;
}

/* The driver at socket gets each role as its partition plays it: the model's input 1 (a)
 * is the partition's input 0, the model's output 0 (y) its output 1; each with the
 * client's frequency. A buffer for output 1 (z, a CPU step's) never reaches it. */
static void roles_seen(const char *socket, const char *log) {
    static mb m;
    roles_model(&m);
    char err[512];
    nnd_client *c = nnd_client_connect(socket, "test-driver-roles", err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    uint64_t h = prepare_on(c, NULL, &m), b1, t1, b2, t2;
    int allocated = calls_in(log, "allocate");
    int in_role = calls_in(log, "role first=0 ops=2 in 0 0.25");
    int out_role = calls_in(log, "role first=0 ops=2 out 1 0.75");
    nnd_buffer_role a_role = {0, 1, 0.25f}, y_role = {0, 0, 0.75f}, z_role = {0, 1, 0.5f};
    uint32_t dims[1] = {LEN};
    int st =
        nnd_client_allocate(c, dims, 1, &h, 1, &a_role, 1, &y_role, 1, &b1, &t1, err, sizeof err);
    if (st) fail_msg("allocate: %d %s", st, err);
    assert_int_equal(calls_in(log, "allocate"), allocated + 1);
    assert_int_equal(calls_in(log, "role first=0 ops=2 in 0 0.25"), in_role + 1);
    assert_int_equal(calls_in(log, "role first=0 ops=2 out 1 0.75"), out_role + 1);
    st = nnd_client_allocate(c, dims, 1, &h, 1, NULL, 0, &z_role, 1, &b2, &t2, err, sizeof err);
    if (st) fail_msg("allocate: %d %s", st, err);
    assert_int_equal(calls_in(log, "allocate"), allocated + 1); /* z: daemon memory */
    nnd_client_close(c);
    mb_free(&m);
}

static void test_roles_reach_driver(void **state) {
    (void)state;
    roles_seen(g_d.socket_path, g_calls); /* the driver in the daemon */
    /* The same through a driver host: a daemon of its own, the driver in its host. */
    char dir[300], log[300], calls_path[300], so[600];
    int pid = (int)getpid();
    snprintf(dir, sizeof dir, "/tmp/test-drvmem-host-%d", pid);
    snprintf(log, sizeof log, "/tmp/test-drvmem-host-%d.log", pid);
    snprintf(calls_path, sizeof calls_path, "/tmp/test-drvmem-host-%d.calls", pid);
    snprintf(so, sizeof so, "%s/memtest.so", dir);
    assert_int_equal(mkdir(dir, 0755), 0);
    assert_int_equal(tst_copy_file(MEM_DRIVER_SO, so), 0);
    setenv("NND_TEST_DRV_LOG", calls_path, 1); /* that daemon and its host inherit it */
    const char *args[] = {"--drivers-dir", dir, NULL};
    tst_daemon_opts o = {.extra_args = args, .log_path = log};
    tst_daemon host;
    assert_int_equal(tst_daemon_start_opts(&host, &o), 0);
    setenv("NND_TEST_DRV_LOG", g_calls, 1);
    roles_seen(host.socket_path, calls_path);
    assert_int_equal(tst_daemon_stop(&host), 0);
    unlink(so);
    rmdir(dir);
    unlink(calls_path);
    unlink(log);
}

/* ---- cache blobs ----------------------------------------------------------------------- */

static const uint8_t g_token[NND_CACHE_TOKEN_BYTES] = {'d', 'r', 'v', 'm', 'e', 'm'};

static uint64_t prepare_cached(nnd_client *c, const mb *m, bool *from_cache) {
    char err[512];
    uint64_t h = 0;
    int st = nnd_client_prepare_cached_on(c, NULL, 0, &m->model, NULL, 0, 1, 0, 0, g_cache_dir,
                                          g_token, &h, from_cache, err, sizeof err);
    if (st != 0) fail_msg("prepare cached: %d %s", st, err);
    return h;
}

/* m1 (y = RELU(a - b)) from the pool: right. */
static void run_right(nnd_client *c, uint64_t h) {
    void *map;
    int fd = nnd_memfd_create("args", 3 * LEN * 4, &map);
    float *v = map;
    for (int i = 0; i < LEN; i++)
        v[i] = (float)i - 3, v[LEN + i] = 1;
    req q;
    req_make(&q, (const uint64_t[]){0, 0, 0});
    execute_ok(c, h, &q, fd);
    for (int i = 0; i < LEN; i++)
        assert_true(v[2 * LEN + i] == relu(v[i] - v[LEN + i]));
    munmap(map, 3 * LEN * 4);
    close(fd);
}

static double cache_count(const char *field) {
    cJSON *st = tst_admin_status(&g_d);
    const cJSON *v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "cache"), field);
    double n = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(st);
    return n;
}

static void test_driver_compilation_cached(void **state) {
    (void)state;
    static mb m;
    model(&m, M_SUB_RELU);
    nnd_client *c = connect_to();
    int prepares = calls("prepare"), serialized = calls("serialize");
    bool from_cache = true;
    uint64_t h = prepare_cached(c, &m, &from_cache);
    assert_false(from_cache);
    assert_int_equal(calls("prepare"), prepares + 1);
    assert_int_equal(calls("serialize"), serialized + 1);
    run_right(c, h);
    /* Loaded from the files (no content cache): deserialize(), never prepare(). */
    int deserialized = calls("deserialize"), executed = calls("execute");
    uint64_t h2 = prepare_cached(c, &m, &from_cache);
    assert_true(from_cache);
    assert_int_equal(calls("prepare"), prepares + 1);
    assert_int_equal(calls("deserialize"), deserialized + 1);
    run_right(c, h2);
    assert_int_equal(calls("execute"), executed + 1); /* its RELU ran on nnd-memtest */
    nnd_client_close(c);
    mb_free(&m);
}

/* Opens the cache files of g_token (read-write). */
static void open_cache_files(int *model_fd, int *data_fd, size_t *model_len) {
    char mp[4096], dp[4096];
    assert_int_equal(nnd_cache_paths(g_cache_dir, g_token, mp, dp, sizeof mp), 0);
    *model_fd = open(mp, O_RDWR | O_CLOEXEC);
    *data_fd = open(dp, O_RDWR | O_CLOEXEC);
    assert_true(*model_fd >= 0 && *data_fd >= 0);
    struct stat st;
    assert_int_equal(fstat(*model_fd, &st), 0);
    *model_len = (size_t)st.st_size;
}

static void test_tampered_blob_refused(void **state) {
    (void)state;
    static mb m;
    model(&m, M_SUB_RELU);
    nnd_client *c = connect_to();
    bool from_cache;
    prepare_cached(c, &m, &from_cache); /* the files are there and right */
    assert_true(from_cache);
    int model_fd, data_fd;
    size_t len;
    open_cache_files(&model_fd, &data_fd, &len);
    /* The model file ends with the blob (12 bytes), its section's length and magic. */
    uint8_t byte;
    off_t at = (off_t)len - 16 - 12;
    assert_int_equal(pread(model_fd, &byte, 1, at), 1);
    byte ^= 1;
    assert_int_equal(pwrite(model_fd, &byte, 1, at), 1);
    uint8_t folded[NND_CACHE_TOKEN_BYTES];
    assert_int_equal(nnd_cache_token(&m.model, NULL, 0, 1, 0, g_token, folded), 0);
    int deserialized = calls("deserialize");
    double rejected = cache_count("rejected");
    char err[512];
    uint64_t h;
    int st = nnd_client_prepare_from_cache(c, folded, model_fd, data_fd, 0, 0, &h, err, sizeof err);
    assert_int_equal(st, NND__ERROR_STATUS__GENERAL_FAILURE);
    if (!strstr(err, "cache files do not match what was saved")) fail_msg("message: %s", err);
    assert_int_equal(calls("deserialize"), deserialized); /* the driver never saw it */
    assert_true(cache_count("rejected") == rejected + 1);
    /* The client's fallback compiles again and rewrites the files. */
    byte ^= 1;
    assert_int_equal(pwrite(model_fd, &byte, 1, at), 1);
    close(model_fd);
    close(data_fd);
    nnd_client_close(c);
    mb_free(&m);
}

/* Last: it disables nnd-memtest for the rest of the daemon's life. */
static void test_fault_in_deserialize(void **state) {
    (void)state;
    static mb m;
    model(&m, M_SUB_RELU);
    nnd_client *c = connect_to();
    int model_fd, data_fd;
    size_t len;
    open_cache_files(&model_fd, &data_fd, &len);
    char flag[400];
    snprintf(flag, sizeof flag, "%s.fault", g_calls);
    int fd = open(flag, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    assert_true(fd >= 0);
    close(fd);
    uint8_t folded[NND_CACHE_TOKEN_BYTES];
    assert_int_equal(nnd_cache_token(&m.model, NULL, 0, 1, 0, g_token, folded), 0);
    char err[512];
    uint64_t h;
    /* The partition the driver cannot rebuild goes to the CPU: the load still serves. */
    int st = nnd_client_prepare_from_cache(c, folded, model_fd, data_fd, 0, 0, &h, err, sizeof err);
    if (st) fail_msg("load: %d %s", st, err);
    run_right(c, h);
    size_t n = 0;
    uint8_t *log = tst_read_file(g_log, &n);
    assert_non_null(log);
    assert_non_null(strstr((char *)log, "SIGSEGV in cache_load; the driver is disabled"));
    free(log);
    close(model_fd);
    close(data_fd);
    /* The daemon serves on: the same model compiles again, its RELU now on the CPU. */
    bool from_cache = true;
    uint64_t h2 = prepare_cached(c, &m, &from_cache);
    assert_false(from_cache);
    run_right(c, h2);
    nnd_client_close(c);
    mb_free(&m);
}

/* ---- the daemon --------------------------------------------------------------------------- */

static int setup(void **state) {
    (void)state;
    int pid = (int)getpid();
    snprintf(g_dir, sizeof g_dir, "/tmp/test-drvmem-%d", pid);
    snprintf(g_log, sizeof g_log, "/tmp/test-drvmem-%d.log", pid);
    snprintf(g_calls, sizeof g_calls, "/tmp/test-drvmem-%d.calls", pid);
    snprintf(g_cache_dir, sizeof g_cache_dir, "/tmp/test-drvmem-%d-cache", pid);
    char so[600];
    snprintf(so, sizeof so, "%s/memtest.so", g_dir);
    if (mkdir(g_dir, 0755) < 0 || mkdir(g_cache_dir, 0700) < 0 ||
        tst_copy_file(MEM_DRIVER_SO, so) < 0)
        return -1;
    setenv("NND_TEST_DRV_LOG", g_calls, 1); /* the daemon inherits it */
    /* No content cache: a cached compilation is loaded from its files. */
    const char *args[] = {
        "--drivers-dir", g_dir, "--drivers-in-process", "1", "--cache-max-bytes", "0", NULL};
    tst_daemon_opts o = {.extra_args = args, .log_path = g_log};
    return tst_daemon_start_opts(&g_d, &o);
}

static int teardown(void **state) {
    (void)state;
    int rc = tst_daemon_stop(&g_d);
    char p[700];
    snprintf(p, sizeof p, "%s/memtest.so", g_dir);
    unlink(p);
    rmdir(g_dir);
    snprintf(p, sizeof p, "%s.fault", g_calls);
    unlink(p);
    unlink(g_calls);
    unlink(g_log);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_cache_dir);
    if (system(cmd) != 0) rc = -1;
    return rc;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffers_in_driver_memory),
        cmocka_unit_test(test_roles_reach_driver),
        cmocka_unit_test(test_driver_compilation_cached),
        cmocka_unit_test(test_tampered_blob_refused),
        cmocka_unit_test(test_fault_in_deserialize),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
