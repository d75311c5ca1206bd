/* SPDX-License-Identifier: Apache-2.0 */
/* test_memory_registry (integration): memories registered with a connection
 * (RegisterMemory, POOL_REGISTERED pools) against a real daemon through libnnd.
 * - Executions of every kind (Execute, ExecuteFenced, BurstExecute) naming a registered
 *   memory by token compute right, send no fd, and map nothing more in the daemon; a part
 *   of the memory can be named, a range past its end is refused naming the token.
 * - Tokens that are unknown, unregistered or another connection's are refused with
 *   INVALID_ARGUMENT naming the token, for executions and for UnregisterMemory; another
 *   uid (65534, through setpriv, when run as root) cannot use root's token either.
 * - Registrations count against quota.app.descriptors and quota.app.mappings: past either
 *   RESOURCE_EXHAUSTED_TRANSIENT naming the quota; unregistering gives room back.
 * - Closing the connection releases every registration: the daemon's registered memories
 *   and mappings come back to their baseline.
 *   test_memory_registry --steal SOCKET TOKEN   what the other uid runs */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/wire.h"

#define INVALID NND__ERROR_STATUS__INVALID_ARGUMENT
#define RX      NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT

static tst_daemon g_daemon;
static char g_self[512];

static nnd_client *connect_to(const tst_daemon *d) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, "test_memory_registry", err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    return c;
}

/* The tiny ADD model ([2] + [2]) prepared on c. */
static uint64_t prepare_add(nnd_client *c) {
    wire_add_model m;
    wire_add_model_init(&m, -1);
    uint64_t h = 0;
    char err[256];
    if (nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err) != 0)
        fail_msg("prepare: %s", err);
    return h;
}

/* A 4 KiB memfd mapped at *io. */
static int io_memfd(float **io) {
    void *map;
    int fd = nnd_memfd_create("registry", 4096, &map);
    assert_true(fd >= 0);
    *io = map;
    return fd;
}

static uint64_t register_fd(nnd_client *c, int fd) {
    uint64_t token = 0;
    char err[256];
    if (nnd_client_register_memory(c, NND__POOL_KIND__POOL_MEMFD, fd, 0, 4096, &token, err,
                                   sizeof err) != 0)
        fail_msg("register: %s", err);
    assert_true(token != 0);
    return token;
}

/* An ADD request over one registered pool: inputs at 0 and 8, output at 16. */
static void token_request(wire_exec *e, uint64_t handle, uint64_t token) {
    wire_exec_init(e, handle, 2, 4096);
    e->pool.kind = NND__POOL_KIND__POOL_REGISTERED;
    e->pool.token = token;
    e->pool.size = 0;
}

/* A figure of the daemon's status: status.group.key, or status.key for group NULL. */
static double status_figure(const char *group, const char *key) {
    cJSON *st = tst_admin_status(&g_daemon);
    assert_non_null(st);
    const cJSON *g = group ? cJSON_GetObjectItemCaseSensitive(st, group) : st;
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, key);
    assert_non_null(v);
    double x = v->valuedouble;
    cJSON_Delete(st);
    return x;
}

static double daemon_mappings(void) {
    cJSON *st = tst_admin_status(&g_daemon);
    assert_non_null(st);
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(st, "quotas");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(q, "totals");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, "daemon_mappings");
    assert_non_null(v);
    double x = v->valuedouble;
    cJSON_Delete(st);
    return x;
}

/* Expects status st with a message containing the token in hex. */
static void expect_refused(int got, int st, const char *err, uint64_t token) {
    char hex[32];
    snprintf(hex, sizeof hex, "0x%016" PRIx64, token);
    if (got != st) fail_msg("status %d, wanted %d: %s", got, st, err);
    if (!strstr(err, hex)) fail_msg("\"%s\" does not name token %s", err, hex);
}

static void expect_sum(const float *io, float k) {
    if (io[4] != k + 10 || io[5] != 2 * k + 20)
        fail_msg("out = %g %g, wanted %g %g", (double)io[4], (double)io[5], (double)(k + 10),
                 (double)(2 * k + 20));
}

static void test_every_execution_kind(void **state) {
    (void)state;
    nnd_client *c = connect_to(&g_daemon);
    uint64_t h = prepare_add(c);
    float *io;
    int fd = io_memfd(&io);
    char err[256];
    nnd_burst *b = NULL;
    assert_int_equal(nnd_client_burst_configure(c, h, &b, err, sizeof err), 0);
    double maps0 = daemon_mappings(), uses0 = status_figure("registered_memory", "uses");
    uint64_t token = register_fd(c, fd);
    close(fd); /* the daemon keeps its own reference */
    assert_int_equal(daemon_mappings(), maps0 + 1);
    wire_exec e;
    token_request(&e, h, token);
    for (int k = 0; k < 12; k++) {
        io[0] = (float)k, io[1] = (float)(2 * k), io[2] = 10, io[3] = 20, io[4] = io[5] = -1;
        Nnd__Reply *r = NULL;
        int st;
        if (k % 3 == 0) {
            st = nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, &r, err, sizeof err);
        } else if (k % 3 == 1) {
            st = nnd_client_burst_execute(b, &e.req, NULL, 0, NULL, &r, err, sizeof err);
        } else {
            uint64_t x = 0;
            int sync = -1, fst = -1;
            st = nnd_client_execute_fenced(c, h, &e.req, NULL, 0, NULL, 0, NULL, 0, &x, &sync, err,
                                           sizeof err);
            if (st == 0) {
                assert_int_equal(nnd_fence_wait(sync, 10000), 0);
                assert_int_equal(nnd_client_fenced_info(c, x, &fst, NULL, NULL, err, sizeof err),
                                 0);
                st = fst;
                close(sync);
                nnd_client_release(c, x);
            }
        }
        if (r) nnd__reply__free_unpacked(r, NULL);
        if (st != 0) fail_msg("execution %d: %s", k, err);
        expect_sum(io, (float)k);
    }
    /* Every pool came from the registration: nothing more mapped, every use counted. */
    assert_int_equal(daemon_mappings(), maps0 + 1);
    assert_true(status_figure("registered_memory", "uses") >= uses0 + 12);

    /* A part of the memory: the arguments' offsets are then inside that part. */
    e.pool.offset = 0;
    e.pool.size = 24;
    io[0] = 7, io[1] = 14;
    assert_int_equal(nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, NULL, err, sizeof err), 0);
    expect_sum(io, 7);
    e.pool.offset = 4096 - 16;
    e.pool.size = 32;
    int st = nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, NULL, err, sizeof err);
    expect_refused(st, INVALID, err, token);
    assert_non_null(strstr(err, "runs past the end"));

    assert_int_equal(nnd_client_unregister_memory(c, token, err, sizeof err), 0);
    assert_int_equal(daemon_mappings(), maps0);
    nnd_client_burst_free(b);
    munmap(io, 4096);
    nnd_client_close(c);
}

static void test_bad_tokens(void **state) {
    (void)state;
    nnd_client *c = connect_to(&g_daemon), *other = connect_to(&g_daemon);
    uint64_t h = prepare_add(c);
    float *io;
    int fd = io_memfd(&io);
    uint64_t mine = register_fd(c, fd), theirs = register_fd(other, fd);
    wire_exec e;
    char err[256];
    /* Unknown. */
    token_request(&e, h, 0x1234);
    int st = nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, NULL, err, sizeof err);
    expect_refused(st, INVALID, err, 0x1234);
    /* Another connection's, although the same memory. */
    token_request(&e, h, theirs);
    st = nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, NULL, err, sizeof err);
    expect_refused(st, INVALID, err, theirs);
    assert_non_null(strstr(err, "not registered on this connection"));
    st = nnd_client_unregister_memory(c, theirs, err, sizeof err);
    expect_refused(st, INVALID, err, theirs);
    /* ... which stays usable on its own connection. */
    uint64_t h2 = prepare_add(other);
    token_request(&e, h2, theirs);
    io[0] = 1, io[1] = 2, io[2] = 10, io[3] = 20;
    assert_int_equal(
        nnd_client_execute(other, h2, &e.req, NULL, 0, false, 0, NULL, err, sizeof err), 0);
    expect_sum(io, 1);
    /* Unregistered: refused from then on, for every use. */
    token_request(&e, h, mine);
    assert_int_equal(nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, NULL, err, sizeof err), 0);
    assert_int_equal(nnd_client_unregister_memory(c, mine, err, sizeof err), 0);
    st = nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, NULL, err, sizeof err);
    expect_refused(st, INVALID, err, mine);
    nnd_burst *b = NULL;
    assert_int_equal(nnd_client_burst_configure(c, h, &b, err, sizeof err), 0);
    st = nnd_client_burst_execute(b, &e.req, NULL, 0, NULL, NULL, err, sizeof err);
    expect_refused(st, INVALID, err, mine);
    nnd_client_burst_free(b);
    st = nnd_client_unregister_memory(c, mine, err, sizeof err);
    expect_refused(st, INVALID, err, mine);
    /* Only memfd and mmap_fd memory registers. */
    uint64_t t = 0;
    st = nnd_client_register_memory(c, NND__POOL_KIND__POOL_DMABUF, fd, 0, 4096, &t, err,
                                    sizeof err);
    assert_int_equal(st, INVALID);
    assert_non_null(strstr(err, "only memfd and mmap_fd memory can be registered"));
    close(fd);
    munmap(io, 4096);
    nnd_client_close(other);
    nnd_client_close(c);
}

/* Waits (bounded, not timed: the daemon handles a close on its loop) until the daemon's
 * registered memories and mappings are back at what they were. */
static void expect_back_at(double live0, double maps0) {
    double live = -1, maps = -1;
    for (int i = 0; i < 1000; i++) {
        live = status_figure("registered_memory", "live");
        maps = daemon_mappings();
        if (live == live0 && maps == maps0) return;
        struct timespec pause = {0, 10 * 1000000};
        nanosleep(&pause, NULL);
    }
    fail_msg("the daemon holds %g registered memories and %g mappings, wanted %g and %g", live,
             maps, live0, maps0);
}

static void test_close_releases_everything(void **state) {
    (void)state;
    double live0 = status_figure("registered_memory", "live"), maps0 = daemon_mappings();
    nnd_client *c = connect_to(&g_daemon);
    uint64_t h = prepare_add(c);
    float *io[8];
    for (int i = 0; i < 8; i++) {
        int fd = io_memfd(&io[i]);
        uint64_t token = register_fd(c, fd);
        close(fd);
        wire_exec e;
        token_request(&e, h, token);
        io[i][0] = (float)i, io[i][1] = (float)(2 * i), io[i][2] = 10, io[i][3] = 20;
        char err[256];
        assert_int_equal(nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, NULL, err, sizeof err),
                         0);
        expect_sum(io[i], (float)i);
    }
    assert_int_equal(status_figure("registered_memory", "live"), live0 + 8);
    assert_int_equal(daemon_mappings(), maps0 + 8);
    nnd_client_close(c);
    expect_back_at(live0, maps0);
    for (int i = 0; i < 8; i++)
        munmap(io[i], 4096);
}

/* Small quotas: 4 descriptors (the connection holds one), 2 mappings for a second daemon. */
static void start_with(tst_daemon *d, const char *config) {
    char path[] = "/tmp/nnd-registry-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, config, strlen(config)), (ssize_t)strlen(config));
    close(fd);
    const char *args[] = {"--config", path, NULL};
    assert_int_equal(tst_daemon_start(d, args), 0);
    unlink(path);
}

static void fill_quota(const tst_daemon *d, int fits, const char *quota) {
    char err[256];
    nnd_client *c = connect_to(d);
    int fd = nnd_memfd_create("quota", 4096, NULL);
    assert_true(fd >= 0);
    uint64_t tokens[8];
    for (int i = 0; i < fits; i++)
        tokens[i] = register_fd(c, fd);
    uint64_t t = 0;
    int st =
        nnd_client_register_memory(c, NND__POOL_KIND__POOL_MEMFD, fd, 0, 4096, &t, err, sizeof err);
    assert_int_equal(st, RX);
    if (!strstr(err, quota)) fail_msg("\"%s\" does not name %s", err, quota);
    /* One given back makes room for one more. */
    assert_int_equal(nnd_client_unregister_memory(c, tokens[0], err, sizeof err), 0);
    tokens[0] = register_fd(c, fd);
    close(fd);
    nnd_client_close(c);
}

static void test_quotas(void **state) {
    (void)state;
    tst_daemon d;
    start_with(&d, "quota.app.descriptors = 4\n");
    fill_quota(&d, 3, "quota.app.descriptors (4)");
    tst_daemon_stop(&d);
    start_with(&d, "quota.app.mappings = 2\n");
    fill_quota(&d, 2, "quota.app.mappings (2)");
    tst_daemon_stop(&d);
}

/* What uid 65534 runs: root's token, named in its own connection, must be refused. */
static int steal(const char *socket_path, const char *token_hex) {
    uint64_t token = strtoull(token_hex, NULL, 16);
    char err[256];
    nnd_client *c = nnd_client_connect(socket_path, "thief", err, sizeof err);
    if (!c) {
        printf("connect: %s\n", err);
        return 1;
    }
    wire_add_model m;
    wire_add_model_init(&m, -1);
    uint64_t h = 0;
    if (nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err) != 0) {
        printf("prepare: %s\n", err);
        return 1;
    }
    wire_exec e;
    token_request(&e, h, token);
    int st = nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, NULL, err, sizeof err);
    printf("execute %d %s\n", st, err);
    int st2 = nnd_client_unregister_memory(c, token, err, sizeof err);
    printf("unregister %d %s\n", st2, err);
    nnd_client_close(c);
    return st == INVALID && st2 == INVALID ? 0 : 1;
}

static void test_other_uid(void **state) {
    (void)state;
    if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) skip();
    nnd_client *c = connect_to(&g_daemon);
    uint64_t h = prepare_add(c);
    float *io;
    int fd = io_memfd(&io);
    uint64_t token = register_fd(c, fd);
    assert_int_equal(chmod(g_daemon.dir, 0755), 0); /* let the other uid reach the socket */
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "setpriv --reuid=65534 --regid=65534 --clear-groups %s --steal %s %016" PRIx64, g_self,
             g_daemon.socket_path, token);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char out[1024] = "", line[512];
    while (fgets(line, sizeof line, f))
        strncat(out, line, sizeof out - strlen(out) - 1);
    int rc = pclose(f);
    char hex[32];
    snprintf(hex, sizeof hex, "0x%016" PRIx64, token);
    if (rc != 0 || !strstr(out, hex)) fail_msg("the other uid saw: %s", out);
    /* And the token still works for its owner. */
    wire_exec e;
    token_request(&e, h, token);
    io[0] = 3, io[1] = 6, io[2] = 10, io[3] = 20;
    char err[256];
    assert_int_equal(nnd_client_execute(c, h, &e.req, NULL, 0, false, 0, NULL, err, sizeof err), 0);
    expect_sum(io, 3);
    close(fd);
    munmap(io, 4096);
    nnd_client_close(c);
}

/* After each test on the shared daemon: once it has let the test's connections go (on its
 * loop, a moment after they close), it holds no connection, registered memory or mapping,
 * as at its start. So no test leaves anything behind, and none takes its baseline while
 * the one before is still being released (a fresh-clone run saw 1 mapping where 0 was the
 * rule). Bounded (10 s), not timed. */
static int back_to_idle(void **state) {
    (void)state;
    double conns = -1, live = -1, maps = -1;
    for (int i = 0; i < 1000; i++) {
        conns = status_figure(NULL, "connections");
        live = status_figure("registered_memory", "live");
        maps = daemon_mappings();
        if (conns == 0 && live == 0 && maps == 0) return 0;
        struct timespec pause = {0, 10 * 1000000};
        nanosleep(&pause, NULL);
    }
    fprintf(stderr,
            "the daemon still holds %g connections, %g registered memories and %g "
            "mappings after the test\n",
            conns, live, maps);
    return -1;
}

static int setup(void **state) {
    (void)state;
    return tst_daemon_start(&g_daemon, NULL);
}

static int teardown(void **state) {
    (void)state;
    return tst_daemon_stop(&g_daemon);
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--steal")) return steal(argv[2], argv[3]);
    if (!realpath(argv[0], g_self)) snprintf(g_self, sizeof g_self, "%s", argv[0]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_every_execution_kind, back_to_idle),
        cmocka_unit_test_teardown(test_bad_tokens, back_to_idle),
        cmocka_unit_test_teardown(test_close_releases_everything, back_to_idle),
        cmocka_unit_test(test_quotas), /* daemons of its own */
        cmocka_unit_test_teardown(test_other_uid, back_to_idle),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
