/* SPDX-License-Identifier: Apache-2.0 */
/* test_quota (integration): quotas per app (uid) and per connection through a real daemon
 * started with --config and small limits. Each quota is exceeded on purpose and answers
 * RESOURCE_EXHAUSTED_TRANSIENT with the quota's name, limit and uid; releasing and closing
 * give the room back; a second app (uid 65534, when run as root) is not affected by the
 * first one's usage; admin status and nndctl status show limits and usage; bad config
 * files stop the daemon with a message naming the line; options win over the file. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/qos_models.h"
#include "tests/support/subprocess.h"

#define RX NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT

/* Small limits: every one of them is reached below. */
static const char small_limits[] = "# quotas for test_quota\n"
                                   "\n"
                                   "quota.app.connections = 3\n"
                                   "quota.app.prepared_models = 4\n"
                                   "quota.connection.prepared_models = 3   # fewer than the app\n"
                                   "quota.app.buffers = 3\n"
                                   "quota.connection.buffers = 2\n"
                                   "quota.app.buffer_bytes = 48K\n"
                                   "quota.connection.buffer_bytes = 32K\n"
                                   "quota.app.queued_executions = 3\n"
                                   "quota.connection.queued_executions = 2\n"
                                   "workers = 1\n";

static int uid(void) {
    return (int)getuid();
}

/* Writes text to a new temporary file and returns its path (static storage). */
static const char *write_config(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/nnd-quota-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

/* Starts a daemon with text as its config file and extra options after it. */
static void start(tst_daemon *d, const char *text, const char *opt, const char *val) {
    const char *path = write_config(text);
    const char *args[] = {"--config", path, opt, val, NULL};
    assert_int_equal(tst_daemon_start(d, args), 0);
    unlink(path); /* read at startup only */
}

static nnd_client *connect_as(const tst_daemon *d, const char *name) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, name, err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    return c;
}

/* ---- admin status ------------------------------------------------------------------------ */

/* quotas.<k1>.<k2>[.<k3>] as a number; -1 when missing. */
static double quota_num(const tst_daemon *d, const char *k1, const char *k2, const char *k3) {
    cJSON *root = tst_admin_status(d);
    cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "quotas"), k1);
    v = cJSON_GetObjectItem(v, k2);
    if (k3) v = cJSON_GetObjectItem(v, k3);
    double x = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(root);
    return x;
}

/* What the app of uid u holds of key (or, with refused, how often it was refused); -1
 * when the app is not in the table. */
static double app_num(const tst_daemon *d, int u, const char *key, bool refused) {
    cJSON *root = tst_admin_status(d);
    const cJSON *apps = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "quotas"), "apps");
    const cJSON *a;
    double x = -1;
    cJSON_ArrayForEach(a, apps) {
        if (cJSON_GetObjectItem(a, "uid")->valueint != u) continue;
        const cJSON *v = cJSON_GetObjectItem(refused ? cJSON_GetObjectItem(a, "refused") : a, key);
        if (cJSON_IsNumber(v)) x = v->valuedouble;
    }
    cJSON_Delete(root);
    return x;
}

/* Waits up to 5 s for the daemon to count n connections (closes are asynchronous). */
static void wait_connections(const tst_daemon *d, int n) {
    for (int i = 0; i < 500; i++) {
        cJSON *root = tst_admin_status(d);
        int have = cJSON_GetObjectItem(root, "connections")->valueint;
        cJSON_Delete(root);
        if (have == n) return;
        usleep(10000);
    }
    fail_msg("the daemon does not come to %d connections", n);
}

/* st must be RESOURCE_EXHAUSTED_TRANSIENT and err hold the quota's message. */
static void expect_quota(int st, const char *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void expect_quota(int st, const char *err, const char *fmt, ...) {
    char want[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(want, sizeof want, fmt, ap);
    va_end(ap);
    if (st != RX || !strstr(err, want))
        fail_msg("got %d \"%s\", wanted RESOURCE_EXHAUSTED_TRANSIENT \"%s\"", st, err, want);
}

/* ---- models --------------------------------------------------------------------------- */

/* One ADD over [len] floats (len 0: unknown length). */
static int prepare(nnd_client *c, uint32_t len, uint64_t *h, char *err, size_t errlen) {
    qos_chain m;
    qos_chain_init(&m, 1, len);
    int st = nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, h, err, errlen);
    qos_chain_free(&m);
    return st;
}

static uint64_t prepare_ok(nnd_client *c, uint32_t len) {
    char err[256];
    uint64_t h = 0;
    int st = prepare(c, len, &h, err, sizeof err);
    if (st != 0) fail_msg("prepare: %s", err);
    return h;
}

/* ---- prepared models ------------------------------------------------------------------ */

/* PrepareModelFromCache of the files nnd_client_prepare_cached() wrote for m and token. */
static int from_cache(nnd_client *c, const qos_chain *m, const char *dir, const uint8_t *token,
                      uint64_t *h, char *err, size_t errlen) {
    char mp[512], dp[512];
    uint8_t folded[NND_CACHE_TOKEN_BYTES];
    assert_int_equal(nnd_cache_paths(dir, token, mp, dp, sizeof mp), 0);
    assert_int_equal(nnd_cache_token(&m->model, NULL, 0, 0, 0, token, folded), 0);
    int fds[2] = {open(mp, O_RDONLY | O_CLOEXEC), open(dp, O_RDONLY | O_CLOEXEC)};
    assert_true(fds[0] >= 0 && fds[1] >= 0);
    uint32_t mi = 0, di = 1;
    Nnd__PrepareModelFromCache fc = NND__PREPARE_MODEL_FROM_CACHE__INIT;
    fc.n_model_cache_fds = 1, fc.model_cache_fds = &mi;
    fc.n_data_cache_fds = 1, fc.data_cache_fds = &di;
    fc.token.data = folded;
    fc.token.len = sizeof folded;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL_FROM_CACHE;
    req.prepare_model_from_cache = &fc;
    Nnd__Reply *r = NULL;
    int st = nnd_client_call(c, &req, fds, 2, &r, NULL, NULL, err, errlen);
    close(fds[0]);
    close(fds[1]);
    assert_int_equal(st, 0);
    st = r->status;
    snprintf(err, errlen, "%s", r->message ? r->message : "");
    if (st == 0) *h = r->prepared->handle;
    nnd__reply__free_unpacked(r, NULL);
    return st;
}

/* As uid 65534: prepares while the first app is full; exits 0 when its own quotas hold. */
static void second_app(const tst_daemon *d) {
    if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0) _exit(10);
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, "other-app", err, sizeof err);
    if (!c) {
        fprintf(stderr, "second app: connect: %s\n", err);
        _exit(11);
    }
    uint64_t h;
    for (int i = 0; i < 3; i++)
        if (prepare(c, 4, &h, err, sizeof err) != 0) {
            fprintf(stderr, "second app: prepare %d: %s\n", i, err);
            _exit(12);
        }
    /* Its own connection quota still applies, and names its own uid. */
    int st = prepare(c, 4, &h, err, sizeof err);
    if (st != RX || !strstr(err, "quota.connection.prepared_models (3) reached on this "
                                 "connection (uid 65534)")) {
        fprintf(stderr, "second app: fourth prepare: %d %s\n", st, err);
        _exit(13);
    }
    nnd_client_close(c);
    _exit(0);
}

static void test_prepared_models(void **state) {
    (void)state;
    tst_daemon d;
    start(&d, small_limits, NULL, NULL);
    wait_connections(&d, 0); /* the harness's probe has gone */
    char err[256], dir[] = "/tmp/nnd-quota-cache-XXXXXX";
    assert_non_null(mkdtemp(dir));
    nnd_client *a = connect_as(&d, "a"), *b = connect_as(&d, "b");

    /* b compiles with caching, which writes the cache files. */
    qos_chain cm;
    qos_chain_init(&cm, 1, 8);
    uint8_t token[NND_CACHE_TOKEN_BYTES] = {7};
    uint64_t hc, hb, ha[3], h;
    bool cached = true;
    assert_int_equal(nnd_client_prepare_cached(b, &cm.model, NULL, 0, 0, 0, 0, dir, token, &hc,
                                               &cached, err, sizeof err),
                     0);
    assert_false(cached);
    /* a: three, then its connection's quota. */
    for (int i = 0; i < 3; i++)
        ha[i] = prepare_ok(a, 4);
    expect_quota(prepare(a, 4, &h, err, sizeof err), err,
                 "quota.connection.prepared_models (3) reached on this connection (uid %d)", uid());
    /* The app holds 4: b, under its own connection quota, meets the app's. */
    expect_quota(prepare(b, 4, &h, err, sizeof err), err,
                 "quota.app.prepared_models (4) reached for uid %d", uid());
    expect_quota(from_cache(b, &cm, dir, token, &h, err, sizeof err), err,
                 "quota.app.prepared_models (4) reached for uid %d", uid());
    assert_int_equal(app_num(&d, uid(), "prepared_models", false), 4);
    assert_int_equal(app_num(&d, uid(), "prepared_models", true), 3);

    /* Another app is not held back by this one's usage. */
    if (geteuid() == 0) {
        assert_int_equal(chmod(d.dir, 0755), 0); /* uid 65534 must reach the socket */
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) second_app(&d);
        int ws;
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        assert_true(WIFEXITED(ws));
        assert_int_equal(WEXITSTATUS(ws), 0);
        /* It left: its entry is gone with its last connection. */
        wait_connections(&d, 2);
        assert_int_equal(app_num(&d, 65534, "prepared_models", false), -1);
    } else {
        print_message("# second app skipped: needs root to run as uid 65534\n");
    }

    /* Releasing gives the room back. */
    assert_int_equal(nnd_client_release(a, ha[2]), 0);
    hb = prepare_ok(b, 4);
    expect_quota(prepare(a, 4, &h, err, sizeof err), err, "quota.app.prepared_models (4)");

    /* Closing a frees what it held: b may load from its cache, then meets its own quota. */
    nnd_client_close(a);
    wait_connections(&d, 1);
    assert_int_equal(app_num(&d, uid(), "prepared_models", false), 2);
    assert_int_equal(from_cache(b, &cm, dir, token, &h, err, sizeof err), 0);
    expect_quota(prepare(b, 4, &h, err, sizeof err), err,
                 "quota.connection.prepared_models (3) reached on this connection (uid %d)", uid());
    assert_int_equal(app_num(&d, uid(), "prepared_models", true), 5);
    /* The second app's refusal counts in the totals too. */
    assert_int_equal(quota_num(&d, "totals", "refused", "prepared_models"), 5 + (geteuid() == 0));
    assert_int_equal(quota_num(&d, "limits", "app", "prepared_models"), 4);
    assert_int_equal(quota_num(&d, "limits", "connection", "prepared_models"), 3);
    (void)hb;
    nnd_client_close(b);
    qos_chain_free(&cm);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- prepared models' memory ------------------------------------------------------------- */

/* input + a constant of n floats held in the model (CONSTANT_COPY), which the engine copies:
 * the model costs the daemon a little over n * 4 bytes. */
static int prepare_constant(nnd_client *c, uint32_t n, uint64_t *h, char *err, size_t errlen) {
    qos_chain m;
    qos_chain_init(&m, 1, n);
    uint8_t *values = calloc(1, 4 + (size_t)n * 4); /* activation NONE, then the floats */
    Nnd__DataLocation loc = NND__DATA_LOCATION__INIT;
    loc.offset = 4;
    loc.length = (uint64_t)n * 4;
    m.ops[1].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_COPY;
    m.ops[1].location = &loc;
    m.main.n_input_indexes = 1;
    m.model.operand_values.data = values;
    m.model.operand_values.len = 4 + (size_t)n * 4;
    int st = nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, h, err, errlen);
    free(values);
    qos_chain_free(&m);
    return st;
}

/* Prepared models' memory counts against prepared_bytes, per connection and per app, and
 * goes back on release and close (content cache off: every model is prepared in place). */
static void test_prepared_bytes(void **state) {
    (void)state;
    tst_daemon d;
    start(&d,
          "cache_max_bytes = 0\n"
          "quota.app.prepared_bytes = 2560K\n"
          "quota.connection.prepared_bytes = 2M\n",
          NULL, NULL);
    wait_connections(&d, 0);
    nnd_client *a = connect_as(&d, "a"), *b = connect_as(&d, "b");
    char err[256];
    uint64_t h1, h2, h;
    enum { MIB_FLOATS = 1u << 18 };
    assert_int_equal(prepare_constant(a, MIB_FLOATS, &h1, err, sizeof err), 0);
    double one = app_num(&d, uid(), "prepared_bytes", false);
    print_message("# a model of 1 MiB of constants counts %.0f bytes\n", one);
    assert_true(one > 1048576 && one < 1048576 + 65536);
    /* A second one would pass the connection's 2 MiB: refused before it is copied. */
    expect_quota(prepare_constant(a, MIB_FLOATS, &h, err, sizeof err), err,
                 "quota.connection.prepared_bytes (2097152) reached on this connection (uid %d)",
                 uid());
    /* b holds one, then meets the app's 2.5 MiB with half as much (its own 2 MiB fit). */
    assert_int_equal(prepare_constant(b, MIB_FLOATS, &h2, err, sizeof err), 0);
    expect_quota(prepare_constant(b, MIB_FLOATS / 2, &h, err, sizeof err), err,
                 "quota.app.prepared_bytes (2621440) reached for uid %d", uid());
    assert_int_equal(app_num(&d, uid(), "prepared_bytes", true), 2);
    /* A small model still fits. */
    assert_int_equal(prepare_constant(b, 16, &h, err, sizeof err), 0);
    /* Release and close give the bytes back. */
    assert_int_equal(nnd_client_release(a, h1), 0);
    assert_int_equal(prepare_constant(b, MIB_FLOATS / 2, &h, err, sizeof err), 0);
    nnd_client_close(b);
    wait_connections(&d, 1);
    assert_int_equal(app_num(&d, uid(), "prepared_bytes", false), 0);
    assert_int_equal(quota_num(&d, "limits", "app", "prepared_bytes"), 2621440);
    nnd_client_close(a);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- buffers --------------------------------------------------------------------------- */

/* A buffer for input 0 and output 0 of model h: [len] floats, or flexible with len 0. */
static int allocate_token(nnd_client *c, uint64_t h, uint32_t len, uint64_t *buf, uint64_t *token,
                          char *err, size_t errlen) {
    nnd_buffer_role role = {0, 0, 1.0f};
    return nnd_client_allocate(c, len ? &len : NULL, len ? 1 : 0, &h, 1, &role, 1, &role, 1, buf,
                               token, err, errlen);
}

static int allocate(nnd_client *c, uint64_t h, uint32_t len, uint64_t *buf, char *err,
                    size_t errlen) {
    uint64_t token;
    return allocate_token(c, h, len, buf, &token, err, errlen);
}

static uint64_t allocate_ok(nnd_client *c, uint64_t h, uint32_t len) {
    char err[256];
    uint64_t b = 0;
    int st = allocate(c, h, len, &b, err, sizeof err);
    if (st != 0) fail_msg("allocate: %s", err);
    return b;
}

static void test_buffers(void **state) {
    (void)state;
    tst_daemon d;
    start(&d, small_limits, NULL, NULL);
    char err[256];
    nnd_client *a = connect_as(&d, "a"), *b = connect_as(&d, "b");
    /* Models of unknown length: buffers of 16 KiB, 32 KiB, or flexible ones. */
    uint64_t ma = prepare_ok(a, 0), mb = prepare_ok(b, 0), x;
    uint64_t a1 = allocate_ok(a, ma, 4096), a2 = allocate_ok(a, ma, 4096);
    /* a holds 2 buffers, 32 KiB: the count is its connection's limit. */
    expect_quota(allocate(a, ma, 4096, &x, err, sizeof err), err,
                 "quota.connection.buffers (2) reached on this connection (uid %d)", uid());
    /* b: 32 KiB more would pass the app's 48 KiB. */
    expect_quota(allocate(b, mb, 8192, &x, err, sizeof err), err,
                 "quota.app.buffer_bytes (49152) reached for uid %d: 32768 bytes held, 32768 more "
                 "asked",
                 uid());
    allocate_ok(b, mb, 4096);
    expect_quota(allocate(b, mb, 4096, &x, err, sizeof err), err,
                 "quota.app.buffers (3) reached for uid %d", uid());
    assert_int_equal(app_num(&d, uid(), "buffers", false), 3);
    assert_int_equal(app_num(&d, uid(), "buffer_bytes", false), 49152);

    /* Released, a2 makes room for one buffer, but not for 32 KiB on a's connection. */
    assert_int_equal(nnd_client_release(a, a2), 0);
    expect_quota(allocate(a, ma, 8192, &x, err, sizeof err), err,
                 "quota.connection.buffer_bytes (32768) reached on this connection (uid %d): "
                 "16384 bytes held, 32768 more asked",
                 uid());
    /* A flexible buffer costs nothing until written; its growth is charged. */
    uint64_t flex, flex_token;
    assert_int_equal(allocate_token(a, ma, 0, &flex, &flex_token, err, sizeof err), 0);
    assert_int_equal(app_num(&d, uid(), "buffer_bytes", false), 32768);
    int fd = nnd_memfd_create("data", 32768, NULL);
    assert_true(fd >= 0);
    uint32_t big[1] = {8192}, small[1] = {2048};
    int st = nnd_client_buffer_copy_to(a, flex, NND__POOL_KIND__POOL_MEMFD, fd, 0, 8192, small, 1,
                                       err, sizeof err);
    assert_int_equal(st, 0);
    assert_int_equal(app_num(&d, uid(), "buffer_bytes", false), 32768 + 8192);
    st = nnd_client_buffer_copy_to(a, flex, NND__POOL_KIND__POOL_MEMFD, fd, 0, 32768, big, 1, err,
                                   sizeof err);
    expect_quota(st, err, "quota.connection.buffer_bytes (32768) reached on this connection");
    /* The refused write left the contents as they were. */
    uint32_t dims[NND_BUFFER_MAX_RANK];
    size_t rank = 0;
    st = nnd_client_buffer_copy_from(a, flex, NND__POOL_KIND__POOL_MEMFD, fd, 0, 8192, dims,
                                     NND_BUFFER_MAX_RANK, &rank, err, sizeof err);
    if (st != 0) fail_msg("copy from: %s", err);
    assert_true(rank == 1 && dims[0] == 2048);
    /* As an execution's output it would grow to 32 KiB after the run: refused as well. */
    qos_req r;
    qos_req_init(&r, 8192, 32768, 0, 0, 0); /* a = b = the data's first 32 KiB */
    uint32_t len[1] = {8192};
    r.args[0].n_dimensions = r.args[1].n_dimensions = 1;
    r.args[0].dimensions = r.args[1].dimensions = len;
    Nnd__MemoryPool drv = NND__MEMORY_POOL__INIT, *pools[2] = {&r.pool, &drv};
    drv.kind = NND__POOL_KIND__POOL_DRIVER_BUFFER;
    drv.token = flex_token;
    r.req.n_pools = 2, r.req.pools = pools;
    r.locs[2].pool_index = 1, r.locs[2].length = 0;
    st = nnd_client_execute_opts(a, ma, &r.req, &fd, 1, NULL, NULL, err, sizeof err);
    expect_quota(st, err, "output 0: quota.connection.buffer_bytes (32768) reached");
    assert_int_equal(app_num(&d, uid(), "buffer_bytes", false), 16384 + 8192 + 16384);

    /* Closing a gives back its buffers and their bytes. */
    nnd_client_close(a);
    wait_connections(&d, 1);
    assert_int_equal(app_num(&d, uid(), "buffers", false), 1);
    assert_int_equal(app_num(&d, uid(), "buffer_bytes", false), 16384);
    allocate_ok(b, mb, 4096);
    /* The per-client view agrees. */
    cJSON *root = tst_admin_status(&d);
    const cJSON *cl = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "clients"), 0);
    assert_int_equal(cJSON_GetObjectItem(cl, "buffers")->valueint, 2);
    assert_int_equal(cJSON_GetObjectItem(cl, "buffer_bytes")->valueint, 32768);
    cJSON_Delete(root);
    (void)a1;
    close(fd);
    nnd_client_close(b);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- executions ------------------------------------------------------------------------ */

/* A chain that keeps the one worker busy for a while, and its memory. */
typedef struct longrun {
    qos_chain chain;
    uint64_t h;
    int fd;
    qos_req req;
} longrun;

static void longrun_open(nnd_client *c, longrun *l, uint32_t n) {
    uint32_t len = 262144;
    qos_chain_init(&l->chain, n, len);
    char err[256];
    if (nnd_client_prepare(c, &l->chain.model, NULL, 0, 0, 0, 0, &l->h, err, sizeof err))
        fail_msg("prepare: %s", err);
    size_t bytes = (size_t)len * sizeof(float);
    l->fd = nnd_memfd_create("longrun", 3 * bytes, NULL);
    assert_true(l->fd >= 0);
    qos_req_init(&l->req, len, 3 * bytes, 0, bytes, 2 * bytes);
}

static void longrun_close(longrun *l) {
    close(l->fd);
    qos_chain_free(&l->chain);
}

static uint64_t run_start(nnd_client *c, longrun *l) {
    char err[256];
    uint64_t t;
    if (nnd_client_execute_start(c, l->h, &l->req.req, &l->fd, 1, NULL, &t, err, sizeof err))
        fail_msg("start: %s", err);
    return t;
}

static int run_sync(nnd_client *c, longrun *l, char *err, size_t errlen) {
    return nnd_client_execute_opts(c, l->h, &l->req.req, &l->fd, 1, NULL, NULL, err, errlen);
}

/* Cancels ticket t and collects its reply. */
static void run_cancel(nnd_client *c, uint64_t t) {
    char err[256];
    nnd_client_cancel(c, t, err, sizeof err); /* it may have finished */
    int st = nnd_client_execute_wait(c, t, 60000, NULL, err, sizeof err);
    assert_true(st == 0 || st == NND__ERROR_STATUS__GENERAL_FAILURE);
}

static void test_queued_executions(void **state) {
    (void)state;
    tst_daemon d;
    start(&d, small_limits, NULL, NULL);
    char err[256];
    nnd_client *a = connect_as(&d, "a"), *b = connect_as(&d, "b");
    longrun la, lb;
    longrun_open(a, &la, 20000); /* seconds: longer than the test needs */
    longrun_open(b, &lb, 20000);

    /* a: one waiting on a fence that is never signalled, one running or queued. */
    int fence = eventfd(0, EFD_CLOEXEC), sync_fd = -1;
    assert_true(fence >= 0);
    uint64_t exec;
    assert_int_equal(nnd_client_execute_fenced(a, la.h, &la.req.req, &la.fd, 1, &fence, 1, NULL, 0,
                                               &exec, &sync_fd, err, sizeof err),
                     0);
    uint64_t ta = run_start(a, &la);
    /* Its third, asynchronous or not, meets the connection's quota. */
    uint64_t t3 = run_start(a, &la);
    expect_quota(nnd_client_execute_wait(a, t3, 10000, NULL, err, sizeof err), err,
                 "quota.connection.queued_executions (2) reached on this connection (uid %d)",
                 uid());
    expect_quota(run_sync(a, &la, err, sizeof err), err,
                 "quota.connection.queued_executions (2) reached on this connection");
    /* b: one queued behind a's; its second meets the app's quota, fenced or not. */
    uint64_t tb = run_start(b, &lb);
    expect_quota(run_sync(b, &lb, err, sizeof err), err,
                 "quota.app.queued_executions (3) reached for uid %d", uid());
    uint64_t exec2;
    int sync2 = -1;
    expect_quota(nnd_client_execute_fenced(b, lb.h, &lb.req.req, &lb.fd, 1, NULL, 0, NULL, 0,
                                           &exec2, &sync2, err, sizeof err),
                 err, "quota.app.queued_executions (3) reached for uid %d", uid());
    assert_int_equal(app_num(&d, uid(), "queued_executions", false), 3);

    /* An execution that ends gives its place back. */
    run_cancel(b, tb);
    tb = run_start(b, &lb);
    expect_quota(run_sync(b, &lb, err, sizeof err), err, "quota.app.queued_executions (3)");

    /* Closing a (one waiting on its fence, one in the scheduler) frees the app's room at
     * once, and b's next one is taken. */
    nnd_client_close(a);
    wait_connections(&d, 1);
    assert_int_equal(app_num(&d, uid(), "queued_executions", false), 1);
    uint64_t tb2 = run_start(b, &lb);
    char version[64];
    assert_int_equal(nnd_client_version_string(b, version, sizeof version, err, sizeof err), 0);
    assert_int_equal(app_num(&d, uid(), "queued_executions", false), 2);
    run_cancel(b, tb);
    run_cancel(b, tb2);
    assert_int_equal(app_num(&d, uid(), "queued_executions", false), 0);
    assert_int_equal(app_num(&d, uid(), "queued_executions", true), 5);
    close(fence);
    close(sync_fd);
    (void)ta;
    longrun_close(&la);
    longrun_close(&lb);
    nnd_client_close(b);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- connections ------------------------------------------------------------------------ */

static void test_connections(void **state) {
    (void)state;
    tst_daemon d;
    start(&d, small_limits, NULL, NULL);
    wait_connections(&d, 0);
    nnd_client *c[3];
    for (int i = 0; i < 3; i++)
        c[i] = connect_as(&d, "conn");
    /* The fourth is answered with the refusal, then closed. */
    char err[256];
    nnd_client *over = nnd_client_connect(d.socket_path, "over", err, sizeof err);
    assert_null(over);
    if (!strstr(err, "RESOURCE_EXHAUSTED_TRANSIENT") ||
        !strstr(err, "quota.app.connections (3) reached for uid"))
        fail_msg("refusal: %s", err);
    /* One that says nothing is closed within about a second. */
    int raw = tst_connect_raw(&d);
    assert_true(raw >= 0);
    struct pollfd p = {.fd = raw, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 5000), 1);
    char byte;
    assert_int_equal(recv(raw, &byte, 1, MSG_DONTWAIT), 0); /* EOF, nothing sent */
    close(raw);
    assert_int_equal(app_num(&d, uid(), "connections", false), 3);
    assert_int_equal(app_num(&d, uid(), "connections", true), 2);
    assert_int_equal(quota_num(&d, "totals", "connections", NULL), 3);
    /* A connection closed makes room for another. */
    nnd_client_close(c[2]);
    wait_connections(&d, 2);
    c[2] = connect_as(&d, "again");
    for (int i = 0; i < 3; i++)
        nnd_client_close(c[i]);
    wait_connections(&d, 0);
    assert_int_equal(app_num(&d, uid(), "connections", false), -1); /* forgotten */
    assert_int_equal(quota_num(&d, "totals", "refused", "connections"), 2);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- nndctl status ---------------------------------------------------------------------- */

static void test_nndctl_status(void **state) {
    (void)state;
    tst_daemon d;
    start(&d, small_limits, NULL, NULL);
    nnd_client *a = connect_as(&d, "a");
    for (int i = 0; i < 3; i++)
        prepare_ok(a, 4);
    char err[256];
    uint64_t h;
    expect_quota(prepare(a, 4, &h, err, sizeof err), err, "quota.connection.prepared_models (3)");
    /* --json: limits (app, connection), apps (uid, usage, refused), totals. */
    static char out[1 << 20];
    const char *json[] = {"--state-dir", d.state_dir, "status", "--json", NULL};
    assert_int_equal(tst_run(NNDCTL_PATH, json, 0, false, out, sizeof out, 30000), 0);
    cJSON *root = cJSON_Parse(out);
    const cJSON *quotas = cJSON_GetObjectItem(root, "quotas");
    const cJSON *limits = cJSON_GetObjectItem(quotas, "limits");
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(limits, "app"), "prepared_models")->valueint, 4);
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(limits, "connection"), "prepared_models")->valueint,
        3);
    const cJSON *app = cJSON_GetArrayItem(cJSON_GetObjectItem(quotas, "apps"), 0);
    assert_int_equal(cJSON_GetObjectItem(app, "uid")->valueint, uid());
    assert_int_equal(cJSON_GetObjectItem(app, "prepared_models")->valueint, 3);
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(app, "refused"), "prepared_models")->valueint, 1);
    cJSON_Delete(root);
    /* The summary: the app's usage and the refusal. */
    const char *summary[] = {"--state-dir", d.state_dir, "status", NULL};
    assert_int_equal(tst_run(NNDCTL_PATH, summary, 0, false, out, sizeof out, 30000), 0);
    char app_line[64];
    snprintf(app_line, sizeof app_line, "\n  uid %-8d 1 connection, 3 prepared models,", uid());
    assert_non_null(strstr(out, app_line));
    assert_non_null(strstr(out, "quotas: prepared_models 1\n"));
    nnd_client_close(a);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- the config file --------------------------------------------------------------------- */

/* Runs the daemon on a config file; returns its exit status and its stderr in out. */
static int run_daemon(const char *text, char *out, size_t outlen) {
    const char *path = write_config(text);
    char dir[] = "/tmp/nnd-quota-run-XXXXXX", cmd[700];
    assert_non_null(mkdtemp(dir));
    snprintf(cmd, sizeof cmd, "%s --config %s --socket %s/s --state-dir %s/st 2>&1",
             TST_DAEMON_PATH, path, dir, dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    unlink(path);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void expect_bad_config(const char *text, const char *want) {
    char out[1024];
    int st = run_daemon(text, out, sizeof out);
    if (st == 0 || !strstr(out, want))
        fail_msg("config \"%s\": exit %d, \"%s\"; wanted a failure saying \"%s\"", text, st, out,
                 want);
}

static void test_bad_config(void **state) {
    (void)state;
    expect_bad_config("# fine\nquota.app.buffers = 2\nquota.app.bufers = 2\n",
                      ":3: unknown key \"quota.app.bufers\"");
    expect_bad_config("\n\nquota.connection.buffers = -1\n",
                      ":3: quota.connection.buffers: \"-1\" is not a whole number");
    expect_bad_config("quota.app.prepared_models = 12x\n",
                      ":1: quota.app.prepared_models: \"12x\" is not a whole number");
    expect_bad_config("quota.app.buffer_bytes = 3T\n",
                      ":1: quota.app.buffer_bytes: \"3T\" is not a byte size");
    expect_bad_config("quota.app.queued_executions =\n",
                      ":1: quota.app.queued_executions: \"\" is not a whole number");
    expect_bad_config("quota.app.connections 4\n", ":1: expected \"key = value\"");
    expect_bad_config("workers = 2\nworkers = 3\n", ":2: workers is set again (first on line 1)");
    expect_bad_config("quota.connection.connections = 1\n",
                      ":1: unknown key \"quota.connection.connections\"");
    expect_bad_config("quota.connection.buffers = 20000\n",
                      ":1: quota.connection.buffers: \"20000\" is not a whole number from 0 to "
                      "16384");
}

/* The file's settings apply; an option given on the command line wins over them. */
static void test_command_line_wins(void **state) {
    (void)state;
    const char text[] = "app_queue = 3\nquota.app.buffers = 0 # unlimited\n"
                        "quota.connection.queued_executions = 7\n";
    tst_daemon d;
    start(&d, text, NULL, NULL);
    cJSON *root = tst_admin_status(&d);
    cJSON *lim = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "scheduler"), "limits");
    assert_int_equal(cJSON_GetObjectItem(lim, "app_queue")->valueint, 3);
    cJSON_Delete(root);
    assert_int_equal(quota_num(&d, "limits", "app", "buffers"), 0);
    assert_int_equal(quota_num(&d, "limits", "connection", "queued_executions"), 7);
    assert_int_equal(quota_num(&d, "limits", "app", "prepared_models"), 4096); /* default */
    assert_int_equal(tst_daemon_stop(&d), 0);

    start(&d, text, "--app-queue", "5");
    root = tst_admin_status(&d);
    lim = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "scheduler"), "limits");
    assert_int_equal(cJSON_GetObjectItem(lim, "app_queue")->valueint, 5);
    cJSON_Delete(root);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_config),        cmocka_unit_test(test_command_line_wins),
        cmocka_unit_test(test_prepared_models),   cmocka_unit_test(test_buffers),
        cmocka_unit_test(test_queued_executions), cmocka_unit_test(test_connections),
        cmocka_unit_test(test_nndctl_status),     cmocka_unit_test(test_prepared_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
