/* SPDX-License-Identifier: Apache-2.0 */
/* test_burst (integration): bursts through a real daemon. Burst executions give what plain
 * executions give, also with timing, deadlines and an output too small; a slot is mapped
 * once and then used with no fd at all (the client's fd closed); libnnd sends each memory's
 * fd once and forgets on request. Every refusal by its status and message: an unknown or
 * another connection's burst, a slot not cached, a slot number reused for another memory,
 * too many slots per burst and per connection, a burst of a released model, a slot kind
 * that cannot be cached, a slot in a plain Execute, a malformed request (which caches
 * nothing), a slot whose memory shrank; forgetting unknown slots is not a refusal.
 * Releasing a burst or closing the connection unmaps its slots (the admin status counts). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/harness.h"
#include "tests/support/observe.h"
#include "nnd/nnd_wire.h"
#include "tests/support/wire.h"

#define POOL_SIZE 4096

static tst_daemon *const dmn = &tst_group_daemon;

/* ---- the daemon's burst counters --------------------------------------------------------- */

typedef struct counts {
    double live, slots, maps, hits;
} counts;

static counts burst_counts(void) {
    cJSON *st = tst_admin(dmn->state_dir, "status");
    assert_non_null(st);
    counts c = {obs_num(st, "bursts.live"), obs_num(st, "bursts.slots"),
                obs_num(st, "bursts.slot_maps"), obs_num(st, "bursts.slot_hits")};
    cJSON_Delete(st);
    assert_false(isnan(c.live) || isnan(c.slots) || isnan(c.maps) || isnan(c.hits));
    return c;
}

/* Waits up to 10 s for the daemon to hold `live` bursts and `slots` slots. */
static void wait_counts(double live, double slots) {
    counts c = {0};
    for (int i = 0; i < 1000; i++) {
        c = burst_counts();
        if (c.live == live && c.slots == slots) return;
        usleep(10000);
    }
    fail_msg("the daemon holds %g bursts and %g slots, wanted %g and %g", c.live, c.slots, live,
             slots);
}

/* Waits for the bursts of earlier tests to be gone (their connections close
 * asynchronously), so that counts taken now move only with this test. */
static counts idle(void) {
    wait_counts(0, 0);
    return burst_counts();
}

/* ---- raw calls --------------------------------------------------------------------------- */

static Nnd__Reply *raw(int s, Nnd__Request *req, const int *fds, size_t nfds) {
    static uint64_t id = 100;
    req->id = ++id;
    Nnd__Reply *r = wire_call(s, req, fds, nfds);
    assert_non_null(r);
    assert_true(r->id == req->id);
    return r;
}

static Nnd__Reply *configure_reply(int s, uint64_t model) {
    Nnd__ConfigureBurst cb = NND__CONFIGURE_BURST__INIT;
    cb.prepared_model = model;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_CONFIGURE_BURST;
    req.configure_burst = &cb;
    return raw(s, &req, NULL, 0);
}

static uint64_t configure(int s, uint64_t model) {
    Nnd__Reply *r = configure_reply(s, model);
    assert_int_equal(r->status, NND__ERROR_STATUS__NONE);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_BURST);
    uint64_t h = r->burst->burst;
    assert_true(h != 0 && h != model);
    wire_free(r);
    return h;
}

/* BurstExecute of e's request (its pool as set up by the caller). */
static Nnd__Reply *burst_exec(int s, uint64_t burst, wire_exec *e, const int *fds, size_t nfds) {
    Nnd__BurstExecute x = NND__BURST_EXECUTE__INIT;
    x.burst = burst;
    x.request = &e->req;
    x.measure_timing = e->exec.measure_timing;
    x.deadline_ns = e->exec.deadline_ns;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_BURST_EXECUTE;
    req.burst_execute = &x;
    return raw(s, &req, fds, nfds);
}

static Nnd__Reply *forget(int s, uint64_t burst, uint64_t *slots, size_t n) {
    Nnd__BurstForget f = NND__BURST_FORGET__INIT;
    f.burst = burst;
    f.slots = slots;
    f.n_slots = n;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_BURST_FORGET;
    req.burst_forget = &f;
    return raw(s, &req, NULL, 0);
}

static Nnd__Reply *release(int s, uint64_t handle) {
    Nnd__Release rel = NND__RELEASE__INIT;
    rel.handle = handle;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_RELEASE;
    req.release = &rel;
    return raw(s, &req, NULL, 0);
}

/* e's pool: the fd at index 0 to cache as `slot` (0: this execution only). */
static void fd_pool(wire_exec *e, uint64_t slot) {
    e->pool.kind = NND__POOL_KIND__POOL_MEMFD;
    e->pool.fd_index = 0;
    e->pool.slot = slot;
}

/* e's pool: cached slot `slot`, no fd. */
static void slot_pool(wire_exec *e, uint64_t slot) {
    e->pool.kind = NND__POOL_KIND__POOL_BURST_SLOT;
    e->pool.fd_index = 0;
    e->pool.slot = slot;
}

/* ---- the model: out = a + b on [2] floats; a at 0, b at 8, out at 16 of the pool -------- */

/* A pool memfd, mapped at *io, with a = {x, 2x} and b = {10, 20}. */
static int io_memfd(float **io, float x) {
    int fd = nnd_memfd_create("burst-io", POOL_SIZE, (void **)io);
    assert_true(fd >= 0);
    (*io)[0] = x, (*io)[1] = 2 * x, (*io)[2] = 10, (*io)[3] = 20;
    return fd;
}

/* A raw connection with the model prepared, one burst of it, a request and its memfd. */
typedef struct rig {
    int sock;
    uint64_t model, burst;
    wire_add_model m;
    wire_exec e;
    float *io;
    int fd;
} rig;

static void rig_open(rig *g) {
    g->sock = tst_connect_raw(dmn);
    assert_true(g->sock >= 0);
    wire_add_model_init(&g->m, -1);
    g->model = wire_prepare(g->sock, &g->m.model, NULL, 0);
    assert_true(g->model != 0);
    g->burst = configure(g->sock, g->model);
    wire_exec_init(&g->e, g->model, 2, POOL_SIZE);
    g->fd = io_memfd(&g->io, 1);
}

/* Closes the connection (the daemon frees what it owned) and the memfd. */
static void rig_close(rig *g) {
    close(g->sock);
    munmap(g->io, POOL_SIZE);
    if (g->fd >= 0) close(g->fd);
}

static void expect_sum(const float *io) {
    if (io[4] != io[0] + io[2] || io[5] != io[1] + io[3])
        fail_msg("out {%g, %g}, wanted {%g, %g}", io[4], io[5], io[0] + io[2], io[1] + io[3]);
}

/* ---- results ------------------------------------------------------------------------------ */

/* Through libnnd: a client, the model prepared, a burst of it, a request and its memfd. */
typedef struct lib {
    nnd_client *c;
    uint64_t model;
    nnd_burst *b;
    wire_add_model m;
    wire_exec e;
    float *io;
    int fd;
} lib;

static void lib_open(lib *l) {
    char err[512];
    l->c = nnd_client_connect(dmn->socket_path, "test-burst", err, sizeof err);
    assert_non_null(l->c);
    wire_add_model_init(&l->m, -1);
    assert_int_equal(
        nnd_client_prepare(l->c, &l->m.model, NULL, 0, 0, 0, 0, &l->model, err, sizeof err), 0);
    assert_int_equal(nnd_client_burst_configure(l->c, l->model, &l->b, err, sizeof err), 0);
    assert_true(nnd_client_burst_handle(l->b) != 0);
    wire_exec_init(&l->e, l->model, 2, POOL_SIZE);
    l->fd = io_memfd(&l->io, 1);
}

static void lib_close(lib *l) {
    assert_int_equal(nnd_client_burst_free(l->b), 0);
    munmap(l->io, POOL_SIZE);
    close(l->fd);
    nnd_client_close(l->c);
}

/* Through libnnd: a burst gives what Execute gives, round after round over the same
 * memory, which is mapped once; timing, deadlines and OUTPUT_INSUFFICIENT_SIZE as in
 * Execute; forgetting an fd unmaps its slot and the next execution maps it again. */
static void test_burst_equals_execute(void **state) {
    (void)state;
    counts c0 = idle();
    char err[512];
    lib l;
    lib_open(&l);
    for (int round = 0; round < 5; round++) {
        l.io[0] = (float)round, l.io[1] = -3.5f * (float)round, l.io[2] = 0.25f,
        l.io[3] = (float)round;
        l.io[4] = l.io[5] = -1;
        assert_int_equal(
            nnd_client_execute(l.c, l.model, &l.e.req, &l.fd, 1, false, 0, NULL, err, 512), 0);
        float plain[2] = {l.io[4], l.io[5]};
        l.io[4] = l.io[5] = -1;
        assert_int_equal(nnd_client_burst_execute(l.b, &l.e.req, &l.fd, 1, NULL, NULL, err, 512),
                         0);
        assert_true(l.io[4] == plain[0] && l.io[5] == plain[1]);
        expect_sum(l.io);
    }
    counts c1 = burst_counts();
    assert_true(c1.maps - c0.maps == 1); /* the first round mapped it */
    assert_true(c1.hits - c0.hits == 4); /* the others named its slot */
    assert_true(c1.slots - c0.slots == 1);

    /* Timing, measured as in Execute. */
    nnd_exec_opts o = {.measure_timing = true};
    Nnd__Reply *r;
    assert_int_equal(nnd_client_burst_execute(l.b, &l.e.req, &l.fd, 1, &o, &r, err, 512), 0);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_EXECUTED);
    assert_true(r->executed->timing->time_on_device_ns != UINT64_MAX);
    assert_true(r->executed->timing->time_in_driver_ns >= r->executed->timing->time_on_device_ns);
    nnd__reply__free_unpacked(r, NULL);

    /* An output too small: OUTPUT_INSUFFICIENT_SIZE with the shape it needs. */
    l.e.locs[2].length = 4;
    assert_int_equal(nnd_client_burst_execute(l.b, &l.e.req, &l.fd, 1, NULL, &r, err, 512),
                     NND__ERROR_STATUS__OUTPUT_INSUFFICIENT_SIZE);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_EXECUTED);
    assert_false(r->executed->output_shapes[0]->is_sufficient);
    assert_int_equal(r->executed->output_shapes[0]->dimensions[0], 2);
    nnd__reply__free_unpacked(r, NULL);
    l.e.locs[2].length = 8;

    /* A deadline already past: refused at admission, as Execute is. */
    o = (nnd_exec_opts){.deadline_ns = 1};
    assert_int_equal(nnd_client_burst_execute(l.b, &l.e.req, &l.fd, 1, &o, NULL, err, 512),
                     NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT);
    l.io[0] = 7;
    assert_int_equal(nnd_client_burst_execute(l.b, &l.e.req, &l.fd, 1, NULL, NULL, err, 512), 0);
    expect_sum(l.io);
    assert_true(burst_counts().maps == c1.maps); /* still the one mapping */

    /* Forgotten: unmapped; used again, mapped again. */
    size_t n = 0;
    assert_int_equal(nnd_client_burst_forget_fd(l.b, l.fd, &n, err, 512), 0);
    assert_int_equal(n, 1);
    assert_true(burst_counts().slots == c1.slots - 1);
    l.io[0] = 8;
    assert_int_equal(nnd_client_burst_execute(l.b, &l.e.req, &l.fd, 1, NULL, NULL, err, 512), 0);
    expect_sum(l.io);
    assert_true(burst_counts().maps == c1.maps + 1);

    lib_close(&l);
    wait_counts(c0.live, c0.slots);
}

/* Through libnnd with the caller's keys: mapped once per key, whatever l.fd carries it;
 * key 0 goes as in Execute (nothing cached); forgetting a key unmaps its slot. */
static void test_keyed_burst(void **state) {
    (void)state;
    counts c0 = idle();
    char err[512];
    lib l;
    lib_open(&l);
    uint64_t key = 42, none = 0;
    for (int round = 0; round < 4; round++) {
        int dup_fd = dup(l.fd); /* another l.fd each time: the key names the memory */
        l.io[0] = (float)round;
        assert_int_equal(
            nnd_client_burst_execute_keyed(l.b, &l.e.req, &dup_fd, &key, 1, NULL, NULL, err, 512),
            0);
        expect_sum(l.io);
        close(dup_fd);
    }
    counts c1 = burst_counts();
    assert_true(c1.maps - c0.maps == 1 && c1.hits - c0.hits == 3 && c1.slots - c0.slots == 1);
    assert_int_equal(
        nnd_client_burst_execute_keyed(l.b, &l.e.req, &l.fd, &none, 1, NULL, NULL, err, 512), 0);
    assert_true(burst_counts().maps == c1.maps && burst_counts().slots == c1.slots);
    size_t n = 0;
    assert_int_equal(nnd_client_burst_forget_key(l.b, 7, &n, err, 512), 0);
    assert_int_equal(n, 0);
    assert_int_equal(nnd_client_burst_forget_key(l.b, key, &n, err, 512), 0);
    assert_int_equal(n, 1);
    assert_true(burst_counts().slots == c0.slots);
    lib_close(&l);
}

/* Raw: once cached, a slot needs no fd. The client's only fd is closed, yet executions by
 * slot number read and write its memory, and the daemon holds no more fds than before. */
static void test_slot_mapped_once(void **state) {
    (void)state;
    counts c0 = idle();
    rig g;
    rig_open(&g);
    fd_pool(&g.e, 7);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    expect_sum(g.io);
    close(g.fd); /* the memfd lives on in our mapping and the daemon's */
    g.fd = -1;
    int daemon_fds = wire_count_fds(dmn->pid);
    slot_pool(&g.e, 7);
    for (int round = 2; round < 6; round++) {
        g.io[0] = (float)round, g.io[3] = (float)-round;
        tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0), NND__ERROR_STATUS__NONE, NULL);
        expect_sum(g.io);
    }
    assert_int_equal(wire_count_fds(dmn->pid), daemon_fds);
    counts c1 = burst_counts();
    assert_true(c1.maps - c0.maps == 1);
    assert_true(c1.hits - c0.hits == 4);
    rig_close(&g);
}

/* ---- refusals ----------------------------------------------------------------------------- */

static void test_unknown_and_foreign_burst(void **state) {
    (void)state;
    rig g;
    rig_open(&g);
    fd_pool(&g.e, 1);
    tst_expect_reply(burst_exec(g.sock, 0x1234567890abcdefull, &g.e, &g.fd, 1),
                     NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "unknown burst handle 0x1234567890abcdef");
    /* A prepared model's handle is no burst. */
    tst_expect_reply(burst_exec(g.sock, g.model, &g.e, &g.fd, 1),
                     NND__ERROR_STATUS__INVALID_ARGUMENT, "unknown burst handle");
    uint64_t slot = 1;
    tst_expect_reply(forget(g.sock, 0x42, &slot, 1), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "unknown burst handle");
    /* Another connection's burst is unknown there, for every call. */
    int other = tst_connect_raw(dmn);
    assert_true(other >= 0);
    tst_expect_reply(burst_exec(other, g.burst, &g.e, &g.fd, 1),
                     NND__ERROR_STATUS__INVALID_ARGUMENT, "unknown burst handle");
    tst_expect_reply(forget(other, g.burst, &slot, 1), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "unknown burst handle");
    tst_expect_reply(release(other, g.burst), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "unknown handle");
    tst_expect_reply(configure_reply(other, g.model), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "unknown prepared model handle");
    close(other);
    /* Nothing of that touched it. */
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    expect_sum(g.io);
    rig_close(&g);
}

static void test_slot_not_cached(void **state) {
    (void)state;
    rig g;
    rig_open(&g);
    slot_pool(&g.e, 5);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0),
                     NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "names burst slot 5, which this burst has not cached");
    slot_pool(&g.e, 0);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0),
                     NND__ERROR_STATUS__INVALID_ARGUMENT, "slots are numbered from 1");
    Nnd__BurstExecute x = NND__BURST_EXECUTE__INIT; /* and no request at all */
    x.burst = g.burst;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_BURST_EXECUTE;
    req.burst_execute = &x;
    tst_expect_reply(raw(g.sock, &req, NULL, 0), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "BurstExecute names no request");
    /* A slot of another burst of the same connection is not this one's. */
    uint64_t other = configure(g.sock, g.model);
    fd_pool(&g.e, 5);
    tst_expect_reply(burst_exec(g.sock, other, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    slot_pool(&g.e, 5);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0),
                     NND__ERROR_STATUS__INVALID_ARGUMENT, "has not cached");
    tst_expect_reply(burst_exec(g.sock, other, &g.e, NULL, 0), NND__ERROR_STATUS__NONE, NULL);
    rig_close(&g);
}

/* A slot number sent again with the same memory keeps its mapping; with another memory
 * (another file, or another range of the same) it is refused until forgotten. */
static void test_slot_reused_for_other_memory(void **state) {
    (void)state;
    counts c0 = idle();
    rig g;
    rig_open(&g);
    float *a, *b;
    int fa = io_memfd(&a, 1), fb = io_memfd(&b, 100);
    assert_int_equal(ftruncate(fa, 2 * POOL_SIZE), 0);
    fd_pool(&g.e, 3);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &fa, 1), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &fb, 1), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "burst slot 3 already caches another memory");
    assert_true(b[4] == 0); /* never ran on b */
    g.e.pool.size = 2 * POOL_SIZE;
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &fa, 1), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "already caches another memory");
    g.e.pool.size = POOL_SIZE;
    int dup_a = dup(fa); /* the same file through another fd: the same memory */
    a[0] = 5;
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &dup_a, 1), NND__ERROR_STATUS__NONE, NULL);
    expect_sum(a);
    assert_true(burst_counts().maps == c0.maps + 1);
    uint64_t three = 3;
    tst_expect_reply(forget(g.sock, g.burst, &three, 1), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &fb, 1), NND__ERROR_STATUS__NONE, NULL);
    expect_sum(b);
    munmap(a, POOL_SIZE);
    munmap(b, POOL_SIZE);
    close(fa), close(fb), close(dup_a);
    rig_close(&g);
}

/* Caches slots first .. first + n - 1 of `burst`, each a fresh one-page memfd, in one
 * request whose arguments use pool 0, io_fd, for this execution only. */
static Nnd__Reply *cache_slots(rig *g, uint64_t burst, int io_fd, uint64_t first, size_t n) {
    enum { MAX = 29 };
    assert_true(n <= MAX);
    Nnd__MemoryPool pools[MAX + 1], *pp[MAX + 1];
    int fds[MAX + 1];
    fd_pool(&g->e, 0);
    pools[0] = g->e.pool;
    fds[0] = io_fd;
    for (size_t i = 0; i <= n; i++) {
        pp[i] = &pools[i];
        if (!i) continue;
        fds[i] = nnd_memfd_create("burst-slot", POOL_SIZE, NULL);
        assert_true(fds[i] >= 0);
        nnd__memory_pool__init(&pools[i]);
        pools[i].kind = NND__POOL_KIND__POOL_MEMFD;
        pools[i].fd_index = (uint32_t)i;
        pools[i].size = POOL_SIZE;
        pools[i].slot = first + i - 1;
    }
    g->e.req.pools = pp;
    g->e.req.n_pools = n + 1;
    Nnd__Reply *r = burst_exec(g->sock, burst, &g->e, fds, n + 1);
    g->e.req.pools = &g->e.pool_ptr;
    g->e.req.n_pools = 1;
    for (size_t i = 1; i <= n; i++)
        close(fds[i]);
    return r;
}

/* At most 64 slots per burst and 1024 per connection; a refused request caches none of
 * its slots; pools with slot 0 still go, mapped for one execution. */
static void test_too_many_slots(void **state) {
    (void)state;
    counts c0 = idle();
    rig g;
    rig_open(&g);
    tst_expect_reply(cache_slots(&g, g.burst, g.fd, 1, 29), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(cache_slots(&g, g.burst, g.fd, 30, 29), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(cache_slots(&g, g.burst, g.fd, 59, 6), NND__ERROR_STATUS__NONE, NULL);
    assert_true(burst_counts().slots == c0.slots + 64);
    tst_expect_reply(cache_slots(&g, g.burst, g.fd, 65, 2),
                     NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT,
                     "this burst already caches 64 slots");
    assert_true(burst_counts().slots == c0.slots + 64);
    fd_pool(&g.e, 0);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    uint64_t one = 1;
    tst_expect_reply(forget(g.sock, g.burst, &one, 1), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(cache_slots(&g, g.burst, g.fd, 100, 1), NND__ERROR_STATUS__NONE, NULL);

    /* Fifteen more full bursts make 1024 slots on this connection: no more. */
    for (int k = 0; k < 15; k++) {
        uint64_t b = configure(g.sock, g.model);
        tst_expect_reply(cache_slots(&g, b, g.fd, 1, 29), NND__ERROR_STATUS__NONE, NULL);
        tst_expect_reply(cache_slots(&g, b, g.fd, 30, 29), NND__ERROR_STATUS__NONE, NULL);
        tst_expect_reply(cache_slots(&g, b, g.fd, 59, 6), NND__ERROR_STATUS__NONE, NULL);
    }
    assert_true(burst_counts().slots == c0.slots + 1024);
    uint64_t last = configure(g.sock, g.model);
    tst_expect_reply(cache_slots(&g, last, g.fd, 1, 1),
                     NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT,
                     "this connection's bursts already cache 1024 slots");
    fd_pool(&g.e, 0);
    tst_expect_reply(burst_exec(g.sock, last, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    expect_sum(g.io);
    rig_close(&g); /* frees the 17 bursts and their 1024 slots */
    wait_counts(c0.live, c0.slots);
}

/* A burst does not keep its model: released, the burst's executions are refused. */
static void test_released_model(void **state) {
    (void)state;
    rig g;
    rig_open(&g);
    fd_pool(&g.e, 1);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(release(g.sock, g.model), NND__ERROR_STATUS__NONE, NULL);
    char want[128];
    snprintf(want, sizeof want, "its prepared model 0x%016llx has been released",
             (unsigned long long)g.model);
    slot_pool(&g.e, 1);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0),
                     NND__ERROR_STATUS__INVALID_ARGUMENT, want);
    tst_expect_reply(configure_reply(g.sock, g.model), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "unknown prepared model handle");
    tst_expect_reply(release(g.sock, g.burst), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(release(g.sock, g.burst), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "unknown handle");
    rig_close(&g);
}

/* Forgetting slots that are not cached is ignored (answered done), beside ones that are. */
static void test_forget_unknown_slots(void **state) {
    (void)state;
    counts c0 = idle();
    rig g;
    rig_open(&g);
    fd_pool(&g.e, 2);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    uint64_t none[] = {999, 12345};
    tst_expect_reply(forget(g.sock, g.burst, none, 2), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(forget(g.sock, g.burst, NULL, 0), NND__ERROR_STATUS__NONE, NULL);
    assert_true(burst_counts().slots == c0.slots + 1);
    uint64_t mixed[] = {999, 2, 2};
    tst_expect_reply(forget(g.sock, g.burst, mixed, 3), NND__ERROR_STATUS__NONE, NULL);
    assert_true(burst_counts().slots == c0.slots);
    slot_pool(&g.e, 2);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0),
                     NND__ERROR_STATUS__INVALID_ARGUMENT, "has not cached");
    rig_close(&g);
}

/* A client shrinks a cached slot's memory: the execution that touches the lost page fails
 * (the daemon's SIGBUS guard), the slot is refused from then on, and sending the memory
 * again under the same number maps it afresh. */
static void test_shrunk_slot(void **state) {
    (void)state;
    rig g;
    rig_open(&g);
    fd_pool(&g.e, 9);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    counts c0 = burst_counts();
    assert_int_equal(ftruncate(g.fd, 0), 0); /* g.io must not be touched until it grows back */
    slot_pool(&g.e, 9);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0), NND__ERROR_STATUS__GENERAL_FAILURE,
                     "shrank");
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0), NND__ERROR_STATUS__GENERAL_FAILURE,
                     "the memory of burst slot 9 shrank under an earlier execution");
    assert_int_equal(ftruncate(g.fd, POOL_SIZE), 0);
    g.io[0] = 3, g.io[1] = 4, g.io[2] = 5, g.io[3] = 6;
    fd_pool(&g.e, 9);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    expect_sum(g.io);
    g.io[0] = 30;
    slot_pool(&g.e, 9);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0), NND__ERROR_STATUS__NONE, NULL);
    expect_sum(g.io);
    counts c1 = burst_counts();
    assert_true(c1.maps == c0.maps + 1 && c1.slots == c0.slots);
    rig_close(&g);
}

/* Only memfd and mmap_fd pools become slots; a slot means nothing outside BurstExecute. */
static void test_slot_kinds(void **state) {
    (void)state;
    rig g;
    rig_open(&g);
    g.e.pool.kind = NND__POOL_KIND__POOL_DRIVER_BUFFER;
    g.e.pool.token = 1;
    g.e.pool.slot = 4;
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0),
                     NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "only memfd and mmap_fd pools can be cached as burst slots");
    g.e.pool.kind = NND__POOL_KIND__POOL_DMABUF;
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1),
                     NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "only memfd and mmap_fd pools can be cached as burst slots");
    g.e.pool.token = 0;
    fd_pool(&g.e, 4);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    slot_pool(&g.e, 4);
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_EXECUTE;
    req.execute = &g.e.exec;
    tst_expect_reply(raw(g.sock, &req, NULL, 0), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "pool 0: a burst slot can only be named in BurstExecute");
    rig_close(&g);
}

/* A request refused before it ran caches none of the memory it carried. */
static void test_refused_request_caches_nothing(void **state) {
    (void)state;
    counts c0 = idle();
    rig g;
    rig_open(&g);
    fd_pool(&g.e, 11);
    g.e.locs[2].offset = POOL_SIZE; /* the output past the pool's end */
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1),
                     NND__ERROR_STATUS__INVALID_ARGUMENT, NULL);
    g.e.locs[2].offset = 16;
    counts c1 = burst_counts();
    assert_true(c1.slots == c0.slots);
    slot_pool(&g.e, 11);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0),
                     NND__ERROR_STATUS__INVALID_ARGUMENT, "has not cached");
    rig_close(&g);
}

/* Release drops a burst's slots; closing the connection drops every burst it had. */
static void test_release_and_close_free_slots(void **state) {
    (void)state;
    counts c0 = idle();
    rig g;
    rig_open(&g);
    uint64_t second = configure(g.sock, g.model);
    fd_pool(&g.e, 1);
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(burst_exec(g.sock, second, &g.e, &g.fd, 1), NND__ERROR_STATUS__NONE, NULL);
    tst_expect_reply(cache_slots(&g, second, g.fd, 2, 3), NND__ERROR_STATUS__NONE, NULL);
    counts c1 = burst_counts();
    assert_true(c1.live == c0.live + 2 && c1.slots == c0.slots + 5);
    tst_expect_reply(release(g.sock, second), NND__ERROR_STATUS__NONE, NULL);
    c1 = burst_counts();
    assert_true(c1.live == c0.live + 1 && c1.slots == c0.slots + 1);
    slot_pool(&g.e, 1);
    tst_expect_reply(burst_exec(g.sock, second, &g.e, NULL, 0), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "unknown burst handle");
    tst_expect_reply(burst_exec(g.sock, g.burst, &g.e, NULL, 0), NND__ERROR_STATUS__NONE, NULL);
    rig_close(&g);
    wait_counts(c0.live, c0.slots);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_equals_execute),
        cmocka_unit_test(test_keyed_burst),
        cmocka_unit_test(test_slot_mapped_once),
        cmocka_unit_test(test_unknown_and_foreign_burst),
        cmocka_unit_test(test_slot_not_cached),
        cmocka_unit_test(test_slot_reused_for_other_memory),
        cmocka_unit_test(test_too_many_slots),
        cmocka_unit_test(test_released_model),
        cmocka_unit_test(test_forget_unknown_slots),
        cmocka_unit_test(test_shrunk_slot),
        cmocka_unit_test(test_slot_kinds),
        cmocka_unit_test(test_refused_request_caches_nothing),
        cmocka_unit_test(test_release_and_close_free_slots),
    };
    return cmocka_run_group_tests(tests, tst_group_setup, tst_group_teardown);
}
