/* SPDX-License-Identifier: Apache-2.0 */
/* test_burst_channel (integration): burst executions through the shared-memory channel of
 * a real daemon (proto/burst_chan.h, daemon/calls/burst_channel.h).
 * - Through libnnd: results right round after round, and they went through the channel
 *   (admin status bursts.channel_executions counts them, the socket path does not); a
 *   deadline already past is refused through the channel as over the socket (the
 *   scheduler's admission), and a HIGH compilation's burst runs at HIGH; a client that asks for no
 * channel still works (old clients). A channel counts one mapping and one descriptor of its app
 * while it lives; a burst past the per-connection limit of channels gets none and works over the
 * socket.
 * - Hostile, on a raw connection writing the channel itself: garbage bytes, a length over
 *   the area, absurd and repeated sequence numbers, another call than BurstExecute,
 *   another burst's handle, a pool naming an fd, a scribbled header: each answered in the
 *   channel with INVALID_ARGUMENT and a message naming what was wrong, and a correct
 *   request after them runs. A client killed with its request in the channel, and one
 *   killed with its channel idle: the daemon stays up, another client's results stay
 *   right throughout, and channels, bursts and the daemon's descriptors go back to what
 *   they were. */
#include <math.h>
#include <setjmp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/burst_chan.h"
#include "proto/frame.h"
#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/observe.h"
#include "tests/support/wire.h"

#define POOL_SIZE 4096

static tst_daemon *const dmn = &tst_group_daemon;

/* ---- the daemon's counters --------------------------------------------------------------- */

typedef struct counts {
    double live, channels, executions, refused;
} counts;

static counts get_counts(void) {
    cJSON *st = tst_admin(dmn->state_dir, "status");
    assert_non_null(st);
    counts c = {obs_num(st, "bursts.live"), obs_num(st, "bursts.channels"),
                obs_num(st, "bursts.channel_executions"), obs_num(st, "bursts.channel_refused")};
    cJSON_Delete(st);
    assert_false(isnan(c.live) || isnan(c.channels) || isnan(c.executions) || isnan(c.refused));
    return c;
}

/* Waits up to 10 s for no burst and no channel to be left, and for the daemon's fds to be
 * back at fds (when >= 0). */
static void wait_idle(int fds) {
    for (int i = 0; i < 1000; i++) {
        counts c = get_counts();
        if (c.live == 0 && c.channels == 0 && (fds < 0 || wire_count_fds(dmn->pid) == fds)) return;
        usleep(10000);
    }
    counts c = get_counts();
    fail_msg("not idle: %g bursts, %g channels, %d fds (wanted %d)", c.live, c.channels,
             wire_count_fds(dmn->pid), fds);
}

/* Waits up to 10 s for no client connection and no burst to be left, so that a count of the
 * daemon's fds taken next is its baseline (a connection an earlier test closed may still be
 * open on a busy machine until the daemon reads the hang-up). */
static void wait_no_clients(void) {
    for (int i = 0; i < 1000; i++) {
        counts c = get_counts();
        if (c.live == 0 && c.channels == 0 && obs_status_num(dmn->state_dir, "connections") == 0)
            return;
        usleep(10000);
    }
    fail_msg("clients of earlier tests are still connected");
}

/* ---- through libnnd ------------------------------------------------------------------------ */

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
    l->c = nnd_client_connect(dmn->socket_path, "test-burst-channel", err, sizeof err);
    assert_non_null(l->c);
    wire_add_model_init(&l->m, -1);
    assert_int_equal(
        nnd_client_prepare(l->c, &l->m.model, NULL, 0, 0, 0, 0, &l->model, err, sizeof err), 0);
    assert_int_equal(nnd_client_burst_configure(l->c, l->model, &l->b, err, sizeof err), 0);
    wire_exec_init(&l->e, l->model, 2, POOL_SIZE);
    l->fd = nnd_memfd_create("channel-io", POOL_SIZE, (void **)&l->io);
    assert_true(l->fd >= 0);
}

static void lib_close(lib *l) {
    assert_int_equal(nnd_client_burst_free(l->b), 0);
    munmap(l->io, POOL_SIZE);
    close(l->fd);
    nnd_client_close(l->c);
}

/* One burst execution of a + b with a = {x, 2x}, b = {10, 20}; checks the sum. */
static void lib_run(lib *l, float x) {
    char err[512];
    l->io[0] = x, l->io[1] = 2 * x, l->io[2] = 10, l->io[3] = 20, l->io[4] = l->io[5] = -1;
    uint64_t key = 1;
    int st = nnd_client_burst_execute_keyed(l->b, &l->e.req, &l->fd, &key, 1, NULL, NULL, err,
                                            sizeof err);
    if (st != 0) fail_msg("burst execute: %d %s", st, err);
    if (l->io[4] != x + 10 || l->io[5] != 2 * x + 20)
        fail_msg("out {%g, %g} for x = %g", l->io[4], l->io[5], x);
}

static void test_channel_results(void **state) {
    (void)state;
    wait_idle(-1);
    counts c0 = get_counts();
    lib l;
    lib_open(&l);
    assert_true(get_counts().channels == c0.channels + 1);
    for (int i = 0; i < 300; i++)
        lib_run(&l, (float)i);
    /* The first execution sends the memfd over the socket; every other one is a slot. */
    counts c1 = get_counts();
    assert_true(c1.executions == c0.executions + 299);
    assert_true(c1.refused == c0.refused);
    lib_close(&l);
    wait_idle(-1);

    /* Asking for no channel (as an older client does): the socket carries everything. */
    setenv("NND_BURST_CHANNEL", "0", 1);
    lib_open(&l);
    unsetenv("NND_BURST_CHANNEL");
    assert_true(get_counts().channels == c0.channels);
    for (int i = 0; i < 20; i++)
        lib_run(&l, (float)i);
    assert_true(get_counts().executions == c1.executions);
    lib_close(&l);
}

/* QoS holds in the channel: a deadline already past is refused by the scheduler's
 * admission, as over the socket; the next execution runs. */
static void test_channel_deadline(void **state) {
    (void)state;
    char err[512];
    lib l;
    lib_open(&l);
    lib_run(&l, 1); /* the fd goes over the socket: the next ones take the channel */
    counts c0 = get_counts();
    nnd_exec_opts o = {.deadline_ns = 1};
    uint64_t key = 1;
    assert_int_equal(
        nnd_client_burst_execute_keyed(l.b, &l.e.req, &l.fd, &key, 1, &o, NULL, err, sizeof err),
        NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT);
    counts c1 = get_counts();
    assert_true(c1.executions == c0.executions + 1); /* it came through the channel */
    /* The socket answers the same. */
    assert_int_equal(
        nnd_client_execute_opts(l.c, l.model, &l.e.req, &l.fd, 1, &o, NULL, err, sizeof err),
        NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT);
    /* A deadline far ahead is met. */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    o.deadline_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 60000000000ull;
    o.measure_timing = true;
    Nnd__Reply *r = NULL;
    assert_int_equal(
        nnd_client_burst_execute_keyed(l.b, &l.e.req, &l.fd, &key, 1, &o, &r, err, sizeof err), 0);
    assert_non_null(r);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_EXECUTED);
    assert_true(r->executed->timing->time_on_device_ns != UINT64_MAX);
    nnd__reply__free_unpacked(r, NULL);
    /* After the refusal libnnd sent the memfd again (over the socket); now the channel. */
    assert_true(get_counts().executions == c1.executions);
    lib_run(&l, 5);
    assert_true(get_counts().executions == c1.executions + 1);
    lib_close(&l);
}

/* A burst of a HIGH compilation runs at HIGH through the channel: its "executed" event
 * (which says it was a burst's) carries the compilation's priority, as over the socket. */
static void test_channel_priority(void **state) {
    (void)state;
    char err[512];
    lib l;
    lib_open(&l);
    uint64_t high;
    assert_int_equal(nnd_client_prepare(l.c, &l.m.model, NULL, 0, 0, NND__PRIORITY__PRIORITY_HIGH,
                                        0, &high, err, sizeof err),
                     0);
    assert_int_equal(nnd_client_burst_free(l.b), 0);
    assert_int_equal(nnd_client_burst_configure(l.c, high, &l.b, err, sizeof err), 0);
    lib_run(&l, 1); /* the memfd goes over the socket */
    obs_events *ev = obs_events_start(dmn, "executed");
    assert_non_null(ev);
    double before = get_counts().executions;
    lib_run(&l, 2);
    assert_true(get_counts().executions == before + 1);
    cJSON *e = obs_events_next(ev, 10000);
    assert_non_null(e);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "burst")));
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "priority")->valuestring, "high");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(e, "status")->valuestring, "NONE");
    cJSON_Delete(e);
    obs_events_stop(ev);
    lib_close(&l);
}

/* What our app (the only uid here) holds of a quota resource (admin status quotas.apps). */
static double app_used(const char *what) {
    cJSON *st = tst_admin(dmn->state_dir, "status");
    assert_non_null(st);
    const cJSON *apps =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "quotas"), "apps");
    assert_int_equal(cJSON_GetArraySize(apps), 1);
    double v = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(apps, 0), what)->valuedouble;
    cJSON_Delete(st);
    return v;
}

static double bursts_num(const char *what) {
    cJSON *st = tst_admin(dmn->state_dir, "status");
    assert_non_null(st);
    double v =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(st, "bursts"), what)
            ->valuedouble;
    cJSON_Delete(st);
    return v;
}

/* Waits up to 10 s for `channels` channels alive and our app at `maps` mappings. */
static void wait_channels_and_maps(double channels, double maps) {
    for (int i = 0; i < 1000; i++) {
        if (get_counts().channels == channels && app_used("mappings") == maps) return;
        usleep(10000);
    }
    fail_msg("%g channels and %g mappings, wanted %g and %g", get_counts().channels,
             app_used("mappings"), channels, maps);
}

/* A channel counts as one mapping and one descriptor of its app while it lives; past
 * SRV_SESSION_MAX_BURST_CHANNELS (16) a burst gets none and works over the socket. */
static void test_channel_accounting_and_fallback(void **state) {
    (void)state;
    char err[512];
    wait_idle(-1);
    lib l;
    lib_open(&l);
    double maps = app_used("mappings"), fds = app_used("descriptors");
    double not_set_up = bursts_num("channels_not_set_up");
    assert_int_equal(nnd_client_burst_free(l.b), 0);
    /* The descriptor goes back at once, the mapping once the channel's thread has ended. */
    assert_true(app_used("descriptors") == fds - 1);
    wait_channels_and_maps(0, maps - 1);
    nnd_burst *extra[17];
    for (int i = 0; i < 17; i++)
        assert_int_equal(nnd_client_burst_configure(l.c, l.model, &extra[i], err, sizeof err), 0);
    counts c1 = get_counts();
    assert_true(c1.channels == 16);
    assert_true(app_used("mappings") == maps - 1 + 16 && app_used("descriptors") == fds - 1 + 16);
    assert_true(bursts_num("channels_not_set_up") == not_set_up + 1);
    /* The one without a channel runs over the socket, with the same results. */
    l.b = extra[16];
    for (int i = 0; i < 5; i++)
        lib_run(&l, (float)i);
    assert_true(get_counts().executions == c1.executions);
    for (int i = 0; i < 16; i++)
        assert_int_equal(nnd_client_burst_free(extra[i]), 0);
    lib_close(&l);
    wait_idle(-1);
}

/* ---- a raw client writing the channel itself ------------------------------------------------ */

typedef struct rawc {
    int sock;
    uint64_t model, burst;
    wire_add_model m;
    wire_exec e;
    float *io;
    int io_fd;
    proto_chan_hdr *h;
    uint8_t *req, *res;
    int bell;
    uint32_t seq;
} rawc;

/* Publishes seq as the client does: rings the doorbell while the daemon is not polling. */
static void raw_publish(rawc *g, uint32_t seq) {
    if (proto_chan_publish(&g->h->req_seq, seq, &g->h->daemon_sleeping)) {
        uint64_t one = 1;
        assert_int_equal(write(g->bell, &one, sizeof one), sizeof one);
    }
}

static void raw_open(rawc *g) {
    g->sock = tst_connect_raw(dmn);
    assert_true(g->sock >= 0);
    wire_add_model_init(&g->m, -1);
    g->model = wire_prepare(g->sock, &g->m.model, NULL, 0);
    assert_true(g->model != 0);
    Nnd__ConfigureBurst cb = NND__CONFIGURE_BURST__INIT;
    cb.prepared_model = g->model;
    cb.channel = true;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 7;
    req.call_case = NND__REQUEST__CALL_CONFIGURE_BURST;
    req.configure_burst = &cb;
    assert_int_equal(wire_send(g->sock, &req, NULL, 0), 0);
    static uint8_t buf[PROTO_FRAME_RECV_BUF];
    proto_frame_in in;
    char err[256];
    struct pollfd pfd = {.fd = g->sock, .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, WIRE_TIMEOUT_MS), 1);
    assert_true(proto_frame_recv(g->sock, &nnd__reply__descriptor, buf, &in, err, sizeof err) > 0);
    Nnd__Reply *r = (Nnd__Reply *)in.msg;
    assert_int_equal(r->status, NND__ERROR_STATUS__NONE);
    assert_true(r->burst->channel);
    assert_int_equal(in.nfds, 2);
    g->burst = r->burst->burst;
    int fd = proto_frame_take_fd(&in, 0);
    g->bell = proto_frame_take_fd(&in, 1);
    proto_frame_in_clear(&in);
    void *p = mmap(NULL, PROTO_CHAN_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    assert_true(p != MAP_FAILED);
    assert_true(proto_chan_valid(p, PROTO_CHAN_SIZE));
    g->h = p;
    g->req = (uint8_t *)p + PROTO_CHAN_HEADER;
    g->res = g->req + PROTO_CHAN_AREA;
    g->seq = 0;
    wire_exec_init(&g->e, g->model, 2, POOL_SIZE);
    g->io_fd = nnd_memfd_create("raw-io", POOL_SIZE, (void **)&g->io);
    assert_true(g->io_fd >= 0);
    /* Slot 1 cached over the socket, as libnnd does with a memory's first execution. */
    g->e.pool.kind = NND__POOL_KIND__POOL_MEMFD;
    g->e.pool.slot = 1;
    Nnd__BurstExecute x = NND__BURST_EXECUTE__INIT;
    x.burst = g->burst;
    x.request = &g->e.req;
    Nnd__Request br = NND__REQUEST__INIT;
    br.id = 8;
    br.call_case = NND__REQUEST__CALL_BURST_EXECUTE;
    br.burst_execute = &x;
    r = wire_call(g->sock, &br, &g->io_fd, 1);
    assert_non_null(r);
    assert_int_equal(r->status, NND__ERROR_STATUS__NONE);
    wire_free(r);
    g->e.pool.kind = NND__POOL_KIND__POOL_BURST_SLOT;
}

static void raw_close(rawc *g) {
    munmap(g->h, PROTO_CHAN_SIZE);
    close(g->bell);
    munmap(g->io, POOL_SIZE);
    close(g->io_fd);
    close(g->sock);
}

/* Publishes len bytes as request seq (a len over the area is written as the length alone)
 * and waits up to 10 s for its answer. */
static Nnd__Reply *raw_put(rawc *g, uint32_t seq, const void *bytes, uint32_t len) {
    uint32_t before = __atomic_load_n(&g->h->res_seq, __ATOMIC_ACQUIRE);
    if (len <= PROTO_CHAN_AREA) memcpy(g->req, bytes, len);
    __atomic_store_n(&g->h->req_len, len, __ATOMIC_RELAXED);
    raw_publish(g, seq);
    g->seq = seq;
    proto_chan_poll poll;
    proto_chan_poll_init(&poll);
    uint32_t v = proto_chan_wait(&poll, &g->h->res_seq, before, &g->h->client_sleeping,
                                 &g->h->daemon_cpu, &g->h->client_cpu, NULL, 10000000000ull);
    if (v != seq) fail_msg("no answer to request %u (result seq %u)", seq, v);
    uint32_t n = g->h->res_len;
    assert_true(n <= PROTO_CHAN_AREA);
    Nnd__Reply *r = nnd__reply__unpack(NULL, n, g->res);
    assert_non_null(r);
    return r;
}

static Nnd__Reply *raw_request(rawc *g, uint32_t seq, const Nnd__Request *req) {
    static uint8_t buf[PROTO_CHAN_AREA];
    size_t n = protobuf_c_message_get_packed_size(&req->base);
    assert_true(n <= sizeof buf);
    protobuf_c_message_pack(&req->base, buf);
    return raw_put(g, seq, buf, (uint32_t)n);
}

/* A BurstExecute of g's request (slot 1) on burst `burst`, as request seq. */
static Nnd__Reply *raw_exec(rawc *g, uint32_t seq, uint64_t burst) {
    Nnd__BurstExecute x = NND__BURST_EXECUTE__INIT;
    x.burst = burst;
    x.request = &g->e.req;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 1000 + seq;
    req.call_case = NND__REQUEST__CALL_BURST_EXECUTE;
    req.burst_execute = &x;
    return raw_request(g, seq, &req);
}

/* A correct execution as request seq, its sum checked. */
static void raw_ok(rawc *g, uint32_t seq, float x) {
    g->io[0] = x, g->io[1] = 2 * x, g->io[2] = 10, g->io[3] = 20, g->io[4] = g->io[5] = -1;
    tst_expect_reply(raw_exec(g, seq, g->burst), NND__ERROR_STATUS__NONE, NULL);
    if (g->io[4] != x + 10 || g->io[5] != 2 * x + 20)
        fail_msg("out {%g, %g} for x = %g", g->io[4], g->io[5], x);
}

static void test_hostile_requests(void **state) {
    (void)state;
    wait_no_clients();
    int fds0 = wire_count_fds(dmn->pid);
    counts c0 = get_counts();
    lib other;
    lib_open(&other);
    lib_run(&other, 3);
    rawc g;
    raw_open(&g);
    raw_ok(&g, 1, 1);

    uint8_t junk[512];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    tst_expect_reply(raw_put(&g, 2, junk, sizeof junk), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "malformed");
    tst_expect_reply(raw_put(&g, 3, NULL, 0xffffffffu), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "over the burst channel");
    tst_expect_reply(raw_put(&g, 4, NULL, PROTO_CHAN_AREA + 1), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "over the burst channel");
    lib_run(&other, 4);
    /* Out of order: refused, and the number taken as the new start. */
    tst_expect_reply(raw_exec(&g, 0x7fffffffu, g.burst), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "out of order (expected 5)");
    raw_ok(&g, 0x80000000u, 2);
    tst_expect_reply(raw_exec(&g, 0x80000000u + 7, g.burst), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "out of order");
    /* Wrapping past the top skips 0. */
    tst_expect_reply(raw_exec(&g, 0xffffffffu, g.burst), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "out of order");
    raw_ok(&g, 1, 3);
    /* Another call, another burst, an fd that cannot travel. */
    Nnd__Hello hello = NND__HELLO__INIT;
    Nnd__Request hr = NND__REQUEST__INIT;
    hr.call_case = NND__REQUEST__CALL_HELLO;
    hr.hello = &hello;
    tst_expect_reply(raw_request(&g, 2, &hr), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "BurstExecute only");
    tst_expect_reply(raw_exec(&g, 3, g.burst ^ 1), NND__ERROR_STATUS__INVALID_ARGUMENT,
                     "names burst");
    g.e.pool.kind = NND__POOL_KIND__POOL_MEMFD;
    g.e.pool.fd_index = 0;
    tst_expect_reply(raw_exec(&g, 4, g.burst), NND__ERROR_STATUS__INVALID_ARGUMENT, "fd");
    g.e.pool.kind = NND__POOL_KIND__POOL_BURST_SLOT;
    /* A scribbled header: the daemon reads nothing from it but the request words. */
    g.h->magic = 0, g.h->req_off = 12345, g.h->res_off = 1, g.h->area = 0xffffffffu;
    g.h->daemon_cpu = -77, g.h->client_sleeping = 9;
    raw_ok(&g, 5, 6);
    lib_run(&other, 5);
    counts c1 = get_counts();
    assert_true(c1.refused - c0.refused == 9); /* every refusal above */
    raw_close(&g);
    lib_close(&other);
    wait_idle(fds0);
}

/* A child with a channel that kills itself: with its request posted (mid_request) or idle. */
static void killed_child(bool mid_request) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        rawc g;
        raw_open(&g);
        raw_ok(&g, 1, 1);
        if (mid_request) {
            Nnd__BurstExecute x = NND__BURST_EXECUTE__INIT;
            x.burst = g.burst;
            x.request = &g.e.req;
            Nnd__Request req = NND__REQUEST__INIT;
            req.call_case = NND__REQUEST__CALL_BURST_EXECUTE;
            req.burst_execute = &x;
            size_t n = protobuf_c_message_pack(&req.base, g.req);
            __atomic_store_n(&g.h->req_len, (uint32_t)n, __ATOMIC_RELAXED);
            raw_publish(&g, 2);
        } else {
            g.h->req_len = 0xffffffffu; /* and garbage left behind */
        }
        kill(getpid(), SIGKILL);
        _exit(1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

static void test_killed_clients(void **state) {
    (void)state;
    wait_no_clients();
    int fds0 = wire_count_fds(dmn->pid);
    lib other;
    lib_open(&other);
    lib_run(&other, 1);
    int fds1 = wire_count_fds(dmn->pid);
    for (int i = 0; i < 10; i++) {
        killed_child(i % 2 == 0);
        lib_run(&other, (float)i);
    }
    /* Every killed child's burst, channel and descriptors go; ours stay. (Judged on one
     * reading: the admin bus may hold a descriptor of its own for a moment.) */
    double channels = -1;
    int fds = -1;
    for (int i = 0; i < 1000 && (channels != 1 || fds != fds1); i++) {
        if (i) usleep(10000);
        channels = get_counts().channels;
        fds = wire_count_fds(dmn->pid);
    }
    assert_true(channels == 1);
    assert_int_equal(fds, fds1);
    lib_run(&other, 42);
    lib_close(&other);
    wait_idle(fds0);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_channel_results),
        cmocka_unit_test(test_channel_deadline),
        cmocka_unit_test(test_channel_priority),
        cmocka_unit_test(test_channel_accounting_and_fallback),
        cmocka_unit_test(test_hostile_requests),
        cmocka_unit_test(test_killed_clients),
    };
    return cmocka_run_group_tests(tests, tst_group_setup, tst_group_teardown);
}
