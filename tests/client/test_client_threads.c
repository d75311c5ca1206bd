/* SPDX-License-Identifier: Apache-2.0 */
/* test_client_threads: many threads on one libnnd connection against a real daemon:
 * sixteen threads computing at once with every result checked, one burst shared by eight
 * threads (one slot per memory, mapped once), short executions that
 * complete while a long one is in flight on the same connection, a dead connection waking
 * every waiter, and a daemon that stops answering (SIGSTOP): calls and connects that
 * return within their bound, name the socket, leak no fd, and a client that works again
 * once the daemon goes on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/qos_models.h"
#include "tests/support/wire.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A chain model (qos_models.h) prepared on c, with one memfd per user: a, b, out. */
typedef struct chain {
    qos_chain m;
    uint64_t handle;
} chain;

static void chain_prepare(nnd_client *c, chain *ch, uint32_t n, uint32_t len) {
    char err[256];
    qos_chain_init(&ch->m, n, len);
    if (nnd_client_prepare(c, &ch->m.model, NULL, 0, 0, 0, 0, &ch->handle, err, sizeof err))
        fail_msg("prepare: %s", err);
}

/* One user's memory for a chain: a[i] = base + i % 50, b = 1, out. */
typedef struct io {
    int fd;
    float *map;
    size_t len;
    qos_req req;
} io;

static void io_init(io *x, uint32_t len, float base) {
    size_t bytes = (size_t)len * sizeof(float);
    void *map;
    x->fd = nnd_memfd_create("test-io", 3 * bytes, &map);
    assert_true(x->fd >= 0);
    x->map = map;
    x->len = len;
    for (uint32_t i = 0; i < len; i++) {
        x->map[i] = base + (float)(i % 50);
        x->map[len + i] = 1.0f;
    }
    qos_req_init(&x->req, len, 3 * bytes, 0, bytes, 2 * bytes);
}

static void io_free(io *x) {
    munmap(x->map, 3 * x->len * sizeof(float));
    close(x->fd);
}

/* out == a + n * b, with b = 1; false (and a message) otherwise. */
static bool io_check(const io *x, uint32_t n) {
    for (size_t i = 0; i < x->len; i++)
        if (x->map[2 * x->len + i] != x->map[i] + (float)n) {
            fprintf(stderr, "out[%zu] = %g, want %g\n", i, x->map[2 * x->len + i],
                    x->map[i] + (float)n);
            return false;
        }
    return true;
}

/* ---- sixteen threads ----------------------------------------------------------------- */

#define THREADS 16
#define ROUNDS  150

typedef struct worker {
    nnd_client *c;
    chain *ch;
    int id;
    int done, bad;
    char err[256];
} worker;

/* Even workers call synchronously; odd ones keep two tickets in flight. Each round writes
 * new inputs, so a reply landing with the wrong thread shows as a wrong sum. */
static void *work(void *p) {
    worker *w = p;
    io x[2];
    io_init(&x[0], w->ch->m.len, (float)(w->id * 1000));
    io_init(&x[1], w->ch->m.len, (float)(w->id * 1000 + 500));
    for (int r = 0; r < ROUNDS && !w->bad; r++) {
        for (int k = 0; k < 2; k++)
            x[k].map[0] = (float)(w->id * 1000 + r * 2 + k);
        int st = 0;
        if (w->id % 2 == 0) {
            st = nnd_client_execute_opts(w->c, w->ch->handle, &x[0].req.req, &x[0].fd, 1, NULL,
                                         NULL, w->err, sizeof w->err);
            w->bad |= st != 0 || !io_check(&x[0], w->ch->m.n);
        } else {
            uint64_t t[2];
            for (int k = 0; k < 2 && !st; k++)
                st = nnd_client_execute_start(w->c, w->ch->handle, &x[k].req.req, &x[k].fd, 1, NULL,
                                              &t[k], w->err, sizeof w->err);
            for (int k = 1; k >= 0 && !st; k--) /* collected out of order on purpose */
                st = nnd_client_execute_wait(w->c, t[k], -1, NULL, w->err, sizeof w->err);
            w->bad |= st != 0 || !io_check(&x[0], w->ch->m.n) || !io_check(&x[1], w->ch->m.n);
        }
        w->done++;
    }
    io_free(&x[0]);
    io_free(&x[1]);
    return NULL;
}

static void test_sixteen_threads(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-threads", err, sizeof err);
    assert_non_null(c);
    chain ch;
    chain_prepare(c, &ch, 3, 512);
    worker w[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){.c = c, .ch = &ch, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        if (w[i].bad) fail_msg("thread %d, round %d: %s", i, w[i].done, w[i].err);
        assert_int_equal(w[i].done, ROUNDS);
    }
    nnd_client_release(c, ch.handle);
    qos_chain_free(&ch.m);
    nnd_client_close(c);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- one burst, many threads ------------------------------------------------------------ */

typedef struct burst_user {
    nnd_burst *b;
    chain *ch;
    int id;
    int bad;
    char err[256];
} burst_user;

static void *burst_work(void *p) {
    burst_user *u = p;
    io x;
    io_init(&x, u->ch->m.len, (float)(u->id * 100));
    uint64_t key = (uint64_t)u->id + 1; /* this thread's memory, as the NNAPI layer names it */
    for (int r = 0; r < ROUNDS && !u->bad; r++) {
        x.map[0] = (float)r;
        int st = nnd_client_burst_execute_keyed(u->b, &x.req.req, &x.fd, &key, 1, NULL, NULL,
                                                u->err, sizeof u->err);
        u->bad = st != 0 || !io_check(&x, u->ch->m.n);
    }
    io_free(&x);
    return NULL;
}

/* scheduler-independent burst figures of the daemon: slots held and slot mappings made. */
static void burst_counts(const tst_daemon *d, double *slots, double *maps) {
    cJSON *st = tst_admin(d->state_dir, "status");
    assert_non_null(st);
    const cJSON *b = cJSON_GetObjectItemCaseSensitive(st, "bursts");
    assert_non_null(b);
    *slots = cJSON_GetObjectItemCaseSensitive(b, "slots")->valuedouble;
    *maps = cJSON_GetObjectItemCaseSensitive(b, "slot_maps")->valuedouble;
    cJSON_Delete(st);
}

static void test_shared_burst(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-burst", err, sizeof err);
    assert_non_null(c);
    chain ch;
    chain_prepare(c, &ch, 3, 256);
    nnd_burst *b;
    assert_int_equal(nnd_client_burst_configure(c, ch.handle, &b, err, sizeof err), 0);
    enum { USERS = 8 };
    burst_user u[USERS];
    pthread_t th[USERS];
    for (int i = 0; i < USERS; i++) {
        u[i] = (burst_user){.b = b, .ch = &ch, .id = i};
        assert_int_equal(pthread_create(&th[i], NULL, burst_work, &u[i]), 0);
    }
    for (int i = 0; i < USERS; i++) {
        pthread_join(th[i], NULL);
        if (u[i].bad) fail_msg("burst user %d: %s", i, u[i].err);
    }
    /* One slot per memory, mapped once: the caching held with executions in flight at once. */
    double slots, maps;
    burst_counts(&d, &slots, &maps);
    assert_int_equal((int)slots, USERS);
    assert_int_equal((int)maps, USERS);
    assert_int_equal(nnd_client_burst_free(b), 0);
    qos_chain_free(&ch.m);
    nnd_client_close(c);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- a long execution does not hold up short ones -------------------------------------- */

typedef struct long_run {
    nnd_client *c;
    chain *ch;
    io x;
    atomic_bool done;
    int st;
    char err[256];
} long_run;

static void *run_long(void *p) {
    long_run *l = p;
    l->st = nnd_client_execute_opts(l->c, l->ch->handle, &l->x.req.req, &l->x.fd, 1, NULL, NULL,
                                    l->err, sizeof l->err);
    atomic_store(&l->done, true);
    return NULL;
}

static void test_long_and_short(void **state) {
    (void)state;
    tst_daemon d;
    const char *args[] = {"--workers", "2", NULL}; /* one can run the long work, one the rest */
    assert_int_equal(tst_daemon_start(&d, args), 0);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-long", err, sizeof err);
    assert_non_null(c);
    chain big, small;
    chain_prepare(c, &big, 12000, 65536);
    chain_prepare(c, &small, 2, 64);
    long_run l = {.c = c, .ch = &big};
    io_init(&l.x, big.m.len, 1);
    io s;
    io_init(&s, small.m.len, 7);
    /* The long execution alone, for its duration. */
    uint64_t t0 = now_ns();
    assert_int_equal(nnd_client_execute_opts(c, big.handle, &l.x.req.req, &l.x.fd, 1, NULL, NULL,
                                             err, sizeof err),
                     0);
    double long_ms = (double)(now_ns() - t0) / 1e6;
    assert_true(io_check(&l.x, big.m.n));
    memset(l.x.map + 2 * l.x.len, 0, l.x.len * sizeof(float));

    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, run_long, &l), 0);
    struct timespec pause = {0, 20 * 1000000};
    nanosleep(&pause, NULL); /* its request is in the daemon now */
    int shorts = 0;
    while (!atomic_load(&l.done) && shorts < 100) {
        s.map[0] = (float)shorts;
        assert_int_equal(nnd_client_execute_opts(c, small.handle, &s.req.req, &s.fd, 1, NULL, NULL,
                                                 err, sizeof err),
                         0);
        assert_true(io_check(&s, small.m.n));
        shorts++;
    }
    bool long_still_running = !atomic_load(&l.done);
    pthread_join(th, NULL);
    print_message("# long execution %.0f ms alone; %d short ones completed while it ran\n", long_ms,
                  shorts);
    assert_int_equal(l.st, 0);
    assert_true(io_check(&l.x, big.m.n));
    /* Every short execution completed on the same connection while the long one ran. */
    assert_true(long_still_running);
    assert_int_equal(shorts, 100);
    io_free(&l.x);
    io_free(&s);
    qos_chain_free(&big.m);
    qos_chain_free(&small.m);
    nnd_client_close(c);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- a dead connection wakes every waiter ----------------------------------------------- */

typedef struct waiter {
    long_run *l;
    int st;
    uint64_t returned_ns;
    char err[256];
} waiter;

static void *wait_long(void *p) {
    waiter *w = p;
    w->st = nnd_client_execute_opts(w->l->c, w->l->ch->handle, &w->l->x.req.req, &w->l->x.fd, 1,
                                    NULL, NULL, w->err, sizeof w->err);
    w->returned_ns = now_ns();
    return NULL;
}

static void test_dead_connection_wakes_all(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-dead", err, sizeof err);
    assert_non_null(c);
    chain big;
    chain_prepare(c, &big, 20000, 65536); /* seconds of work queued on one worker */
    long_run l = {.c = c, .ch = &big};
    io_init(&l.x, big.m.len, 1);
    enum { WAITERS = 8 };
    waiter w[WAITERS];
    pthread_t th[WAITERS];
    for (int i = 0; i < WAITERS; i++) {
        w[i] = (waiter){.l = &l};
        assert_int_equal(pthread_create(&th[i], NULL, wait_long, &w[i]), 0);
    }
    struct timespec pause = {0, 100 * 1000000};
    nanosleep(&pause, NULL);
    uint64_t killed = now_ns();
    kill(d.pid, SIGKILL);
    for (int i = 0; i < WAITERS; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].st, -ENOTCONN);
        assert_non_null(strstr(w[i].err, d.socket_path));
        assert_true(w[i].returned_ns - killed < 2000000000ull);
    }
    /* Later calls fail at once. */
    assert_int_equal(nnd_client_execute_opts(c, big.handle, &l.x.req.req, &l.x.fd, 1, NULL, NULL,
                                             err, sizeof err),
                     -ENOTCONN);
    io_free(&l.x);
    qos_chain_free(&big.m);
    nnd_client_close(c);
    tst_daemon_stop(&d); /* killed: its status is not a clean one */
}

/* ---- a daemon that stops answering ------------------------------------------------------ */

static void test_stopped_daemon(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    int fds0 = wire_count_fds(0);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-stopped", err, sizeof err);
    assert_non_null(c);
    chain ch;
    chain_prepare(c, &ch, 3, 64);
    io x;
    io_init(&x, ch.m.len, 3);
    assert_int_equal(kill(d.pid, SIGSTOP), 0);

    /* An execution with a deadline: back within its timeout plus a second. */
    const uint64_t timeout = 300 * 1000000ull;
    uint64_t t0 = now_ns();
    nnd_exec_opts o = {.deadline_ns = t0 + timeout};
    int st = nnd_client_execute_opts(c, ch.handle, &x.req.req, &x.fd, 1, &o, NULL, err, sizeof err);
    uint64_t took = now_ns() - t0;
    print_message("# execution with a 300 ms timeout, daemon stopped: %d after %.0f ms: %s\n", st,
                  (double)took / 1e6, err);
    assert_int_equal(st, -ETIMEDOUT);
    assert_true(took >= timeout && took < timeout + 1000000000ull);
    assert_non_null(strstr(err, d.socket_path));

    /* A call without a deadline: back after the call timeout. */
    nnd_client_set_call_timeout(c, 400);
    t0 = now_ns();
    st = nnd_client_execute_opts(c, ch.handle, &x.req.req, &x.fd, 1, NULL, NULL, err, sizeof err);
    took = now_ns() - t0;
    assert_int_equal(st, -ETIMEDOUT);
    assert_true(took >= 400000000ull && took < 1400000000ull);
    nnd_client_set_call_timeout(c, NND_CALL_TIMEOUT_MS);

    /* A ticket's wait with no limit of its own ends at the ticket's bound. */
    uint64_t ticket;
    o.deadline_ns = now_ns() + timeout;
    assert_int_equal(
        nnd_client_execute_start(c, ch.handle, &x.req.req, &x.fd, 1, &o, &ticket, err, sizeof err),
        0);
    assert_int_equal(nnd_client_execute_wait(c, ticket, -1, NULL, err, sizeof err), -ETIMEDOUT);
    assert_int_equal(nnd_client_execute_wait(c, ticket, -1, NULL, err, sizeof err), -EINVAL);

    /* Connecting: the listener still accepts, Hello goes unanswered. */
    t0 = now_ns();
    nnd_client *c2 = nnd_client_connect(d.socket_path, "test-stopped-2", err, sizeof err);
    took = now_ns() - t0;
    assert_null(c2);
    assert_non_null(strstr(err, d.socket_path));
    assert_true(took < (NND_CONNECT_TIMEOUT_MS + 1000) * 1000000ull);

    /* Going on, the daemon answers what it was sent; the client drops the late replies and
     * works as before. */
    assert_int_equal(kill(d.pid, SIGCONT), 0);
    memset(x.map + 2 * x.len, 0, x.len * sizeof(float));
    assert_int_equal(
        nnd_client_execute_opts(c, ch.handle, &x.req.req, &x.fd, 1, NULL, NULL, err, sizeof err),
        0);
    assert_true(io_check(&x, ch.m.n));
    io_free(&x);
    qos_chain_free(&ch.m);
    nnd_client_close(c);
    assert_int_equal(wire_count_fds(0), fds0);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* No daemon at all: the message names the path tried. */
static void test_no_daemon(void **state) {
    (void)state;
    char err[256];
    const char *path = "/nonexistent-nnd-dir/nnd.sock";
    assert_null(nnd_client_connect(path, "test", err, sizeof err));
    assert_non_null(strstr(err, path));
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sixteen_threads), cmocka_unit_test(test_shared_burst),
        cmocka_unit_test(test_long_and_short),  cmocka_unit_test(test_dead_connection_wakes_all),
        cmocka_unit_test(test_stopped_daemon),  cmocka_unit_test(test_no_daemon),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
