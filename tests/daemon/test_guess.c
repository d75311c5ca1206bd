/* SPDX-License-Identifier: Apache-2.0 */
/* test_guess (integration): handles and tokens are unguessable, and guessing finds nothing.
 * - Randomness: 4096 prepared-model handles and 256 driver-buffer tokens of one client are
 *   all distinct and non-zero, and every one of their 64 bits is set in about half of them
 *   (within 6 standard deviations), so none is a counter, a pointer or a small number;
 *   another connection's handles are none of them.
 * - Brute force: a second client sends 100,000 requests (pipelined) naming the first
 *   client's handles, tokens and request ids, values near them (+-1..8, each bit flipped)
 *   and random ones, through every call that takes one: Execute, ExecuteFenced, Release,
 *   BufferCopyTo, BufferCopyFrom, GetFencedExecutionInfo, Allocate, a driver-buffer pool
 *   in an Execute of its own model, Cancel, and the burst calls. Every answer is
 *   INVALID_ARGUMENT, and afterwards the first client's objects are all there and unchanged: its
 * model runs right, its buffer holds what it wrote, its fenced execution answers, its execution in
 *   flight completes. */
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
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/observe.h"
#include "tests/support/qos_models.h"
#include "tests/support/wire.h"

#define N_MODELS  4096
#define N_BUFFERS 256
#define GUESSES   100000
#define PIPELINE  256 /* requests in flight from the guesser */
#define LEN       4
#define SLOW_OPS  8000 /* over a second: in flight while the guesses go on */
#define SLOW_LEN  262144

static tst_daemon dmn;
static nnd_client *a; /* the first client, whose objects are guessed at */
static qos_chain chain, slow;
static uint64_t models[N_MODELS], buffers[N_BUFFERS], tokens[N_BUFFERS];
static uint64_t fenced_exec;

static int group_setup(void **state) {
    (void)state;
    /* One connection holds N_MODELS models: above the default per-connection quota. */
    static char config[] = "/tmp/nnd-guess-config-XXXXXX";
    int fd = mkstemp(config);
    static const char text[] = "quota.connection.prepared_models = 8192\n"
                               "quota.app.prepared_models = 8192\n";
    if (fd < 0 || write(fd, text, sizeof text - 1) != (ssize_t)sizeof text - 1) return -1;
    close(fd);
    const char *args[] = {"--config", config, NULL};
    int rc = tst_daemon_start(&dmn, args);
    unlink(config);
    if (rc < 0) return -1;
    char err[256];
    a = nnd_client_connect(dmn.socket_path, "guess-owner", err, sizeof err);
    qos_chain_init(&chain, 1, LEN);
    qos_chain_init(&slow, SLOW_OPS, SLOW_LEN);
    return a ? 0 : -1;
}

static int group_teardown(void **state) {
    (void)state;
    nnd_client_close(a);
    qos_chain_free(&chain);
    qos_chain_free(&slow);
    return tst_daemon_stop(&dmn) == 0 ? 0 : -1;
}

static int cmp_u64(const void *x, const void *y) {
    uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;
    return p < q ? -1 : p > q;
}

/* Distinct, non-zero, each bit set in about half of them. */
static void check_random(const char *what, const uint64_t *v, size_t n) {
    uint64_t *sorted = malloc(n * sizeof *sorted);
    memcpy(sorted, v, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_u64);
    for (size_t i = 0; i < n; i++) {
        if (sorted[i] == 0) fail_msg("%s: a zero", what);
        if (i && sorted[i] == sorted[i - 1])
            fail_msg("%s: 0x%016llx twice", what, (unsigned long long)sorted[i]);
    }
    free(sorted);
    double sd = sqrt((double)n) / 2, lo = (double)n / 2 - 6 * sd, hi = (double)n / 2 + 6 * sd;
    int worst_bit = 0;
    double worst = 0;
    for (int b = 0; b < 64; b++) {
        size_t set = 0;
        for (size_t i = 0; i < n; i++)
            set += (v[i] >> b) & 1;
        if ((double)set < lo || (double)set > hi)
            fail_msg("%s: bit %d set in %zu of %zu", what, b, set, n);
        double dev = fabs((double)set - (double)n / 2) / sd;
        if (dev > worst) worst = dev, worst_bit = b;
    }
    print_message("# %zu %s: distinct, non-zero; each bit set in half of them within %.1f "
                  "standard deviations (bit %d the farthest)\n",
                  n, what, worst, worst_bit);
}

static void test_handles_random(void **state) {
    (void)state;
    char err[256];
    for (int i = 0; i < N_MODELS; i++)
        if (nnd_client_prepare(a, &chain.model, NULL, 0, 0, 0, 0, &models[i], err, sizeof err))
            fail_msg("prepare %d: %s", i, err);
    nnd_buffer_role role = {0, 0, 0};
    uint32_t dims[1] = {LEN};
    for (int i = 0; i < N_BUFFERS; i++)
        if (nnd_client_allocate(a, dims, 1, &models[i], 1, &role, 1, NULL, 0, &buffers[i],
                                &tokens[i], err, sizeof err))
            fail_msg("allocate %d: %s", i, err);
    check_random("prepared-model handles", models, N_MODELS);
    check_random("buffer tokens", tokens, N_BUFFERS);
    /* Another connection's handles are its own. */
    nnd_client *b = nnd_client_connect(dmn.socket_path, "guess-other", err, sizeof err);
    assert_non_null(b);
    for (int i = 0; i < 64; i++) {
        uint64_t h;
        assert_int_equal(nnd_client_prepare(b, &chain.model, NULL, 0, 0, 0, 0, &h, err, sizeof err),
                         0);
        for (int j = 0; j < N_MODELS; j++)
            assert_true(h != models[j]);
    }
    nnd_client_close(b);
}

/* ---- the guesser --------------------------------------------------------------------- */

typedef struct guesser {
    int sock;
    uint64_t own_model; /* the guesser's own prepared model */
    uint64_t next_id;
    /* messages reused for every request */
    Nnd__Execute exec;
    Nnd__ExecuteFenced fenced;
    Nnd__Release release;
    Nnd__BufferCopyTo copy_to;
    Nnd__BufferCopyFrom copy_from;
    Nnd__GetFencedExecutionInfo info;
    Nnd__Allocate alloc;
    Nnd__BufferRole role, *role_p;
    Nnd__Cancel cancel;
    Nnd__ConfigureBurst cburst;
    Nnd__BurstExecute bexec;
    Nnd__BurstForget bforget;
    Nnd__Execute token_exec;
    qos_req token_req;
    uint64_t first_id;
    long invalid;
    char said[16][160]; /* the first refusal of each kind */
} guesser;

enum {
    K_EXECUTE,
    K_FENCED,
    K_RELEASE,
    K_COPY_TO,
    K_COPY_FROM,
    K_INFO,
    K_ALLOCATE,
    K_TOKEN,
    K_CANCEL,
    K_BURST,
    K_KINDS
};

/* Sends one guess of kind k naming g. */
static void send_guess(guesser *q, int k, uint64_t g) {
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = q->next_id++;
    switch (k) {
    case K_EXECUTE:
        q->exec.prepared_model = g;
        req.call_case = NND__REQUEST__CALL_EXECUTE, req.execute = &q->exec;
        break;
    case K_FENCED:
        q->fenced.prepared_model = g;
        req.call_case = NND__REQUEST__CALL_EXECUTE_FENCED, req.execute_fenced = &q->fenced;
        break;
    case K_RELEASE:
        q->release.handle = g;
        req.call_case = NND__REQUEST__CALL_RELEASE, req.release = &q->release;
        break;
    case K_COPY_TO:
        q->copy_to.buffer = g;
        req.call_case = NND__REQUEST__CALL_BUFFER_COPY_TO, req.buffer_copy_to = &q->copy_to;
        break;
    case K_COPY_FROM:
        q->copy_from.buffer = g;
        req.call_case = NND__REQUEST__CALL_BUFFER_COPY_FROM, req.buffer_copy_from = &q->copy_from;
        break;
    case K_INFO:
        q->info.execution = g;
        req.call_case = NND__REQUEST__CALL_GET_FENCED_EXECUTION_INFO;
        req.get_fenced_execution_info = &q->info;
        break;
    case K_ALLOCATE:
        q->alloc.prepared_models[0] = g;
        req.call_case = NND__REQUEST__CALL_ALLOCATE, req.allocate = &q->alloc;
        break;
    case K_TOKEN: /* its own model, with a driver buffer named by a guessed token */
        q->token_req.pool.token = g;
        req.call_case = NND__REQUEST__CALL_EXECUTE, req.execute = &q->token_exec;
        break;
    case K_CANCEL:
        q->cancel.request_id = g;
        req.call_case = NND__REQUEST__CALL_CANCEL, req.cancel = &q->cancel;
        break;
    default:
        switch (g % 3) {
        case 0:
            q->cburst.prepared_model = g;
            req.call_case = NND__REQUEST__CALL_CONFIGURE_BURST, req.configure_burst = &q->cburst;
            break;
        case 1:
            q->bexec.burst = g;
            req.call_case = NND__REQUEST__CALL_BURST_EXECUTE, req.burst_execute = &q->bexec;
            break;
        default:
            q->bforget.burst = g;
            req.call_case = NND__REQUEST__CALL_BURST_FORGET, req.burst_forget = &q->bforget;
        }
    }
    if (wire_send(q->sock, &req, NULL, 0) < 0)
        fail_msg("guess %llu not sent", (unsigned long long)req.id);
}

static void take_answer(guesser *q, uint64_t id) {
    Nnd__Reply *r = wire_recv(q->sock, WIRE_TIMEOUT_MS);
    if (!r) fail_msg("no answer to guess %llu", (unsigned long long)id);
    if (r->id != id)
        fail_msg("answer %llu, expected %llu", (unsigned long long)r->id, (unsigned long long)id);
    char *said = q->said[(id - q->first_id) % K_KINDS];
    if (!said[0]) snprintf(said, sizeof q->said[0], "%s", r->message ? r->message : "");
    if (r->status == NND__ERROR_STATUS__INVALID_ARGUMENT)
        q->invalid++;
    else
        fail_msg("guess %llu found something: status %d (%s)", (unsigned long long)id,
                 (int)r->status, r->message ? r->message : "");
    wire_free(r);
}

static void guesser_init(guesser *q) {
    memset(q, 0, sizeof *q);
    q->sock = tst_connect_raw(&dmn);
    assert_true(q->sock >= 0);
    assert_int_equal(wire_hello(q->sock, 1), 0);
    q->own_model = wire_prepare(q->sock, &chain.model, NULL, 0);
    assert_true(q->own_model != 0);
    q->next_id = q->first_id = 1ull << 40; /* far from the first client's ids, guessed */
    nnd__execute__init(&q->exec);
    nnd__execute_fenced__init(&q->fenced);
    nnd__release__init(&q->release);
    nnd__buffer_copy_to__init(&q->copy_to);
    nnd__buffer_copy_from__init(&q->copy_from);
    nnd__get_fenced_execution_info__init(&q->info);
    nnd__allocate__init(&q->alloc);
    static uint64_t alloc_model[1];
    q->alloc.n_prepared_models = 1, q->alloc.prepared_models = alloc_model;
    nnd__buffer_role__init(&q->role);
    q->role_p = &q->role;
    q->alloc.n_input_roles = 1, q->alloc.input_roles = &q->role_p;
    nnd__cancel__init(&q->cancel);
    nnd__configure_burst__init(&q->cburst);
    nnd__burst_execute__init(&q->bexec);
    nnd__burst_forget__init(&q->bforget);
    /* Every argument in the one driver-buffer pool: no fd needed. */
    qos_req_init(&q->token_req, LEN, 0, 0, 0, 0);
    q->token_req.pool.kind = NND__POOL_KIND__POOL_DRIVER_BUFFER;
    for (int i = 0; i < 3; i++)
        q->token_req.locs[i].length = 0;
    nnd__execute__init(&q->token_exec);
    q->token_exec.prepared_model = q->own_model;
    q->token_exec.request = &q->token_req.req;
}

/* The guess number i: the first client's values, values near them, random ones. */
static uint64_t guess(uint64_t i, const uint64_t *targets, size_t n_targets) {
    uint64_t t = targets[(i / 80) % n_targets];
    unsigned v = (unsigned)(i % 80);
    if (v == 0) return t;
    if (v <= 8) return t + v;
    if (v <= 16) return t - (v - 8);
    if (v < 16 + 64) return t ^ (1ull << (v - 16));
    uint64_t r;
    assert_int_equal(getrandom(&r, sizeof r, 0), (ssize_t)sizeof r);
    return r;
}

static void test_guessing_finds_nothing(void **state) {
    (void)state;
    char err[256];
    /* What the first client has besides models and buffers: a fenced execution, data in a
     * buffer, and an execution in flight (its request id is a guess target too). */
    size_t bytes = LEN * sizeof(float), slow_bytes = SLOW_LEN * sizeof(float);
    float *io, *sio;
    int fd = nnd_memfd_create("guess-io", 3 * bytes, (void **)&io);
    int sfd = nnd_memfd_create("guess-slow", 3 * slow_bytes, (void **)&sio);
    for (int i = 0; i < LEN; i++)
        io[i] = (float)i, io[LEN + i] = 10;
    for (int i = 0; i < SLOW_LEN; i++)
        sio[i] = 1, sio[SLOW_LEN + i] = 1;
    qos_req req, sreq;
    qos_req_init(&req, LEN, 3 * bytes, 0, bytes, 2 * bytes);
    qos_req_init(&sreq, SLOW_LEN, 3 * slow_bytes, 0, slow_bytes, 2 * slow_bytes);
    int sync_fd;
    assert_int_equal(nnd_client_execute_fenced(a, models[0], &req.req, &fd, 1, NULL, 0, NULL, 0,
                                               &fenced_exec, &sync_fd, err, sizeof err),
                     0);
    assert_int_equal(nnd_fence_wait(sync_fd, 10000), 0);
    close(sync_fd);
    assert_int_equal(nnd_client_buffer_copy_to(a, buffers[0], NND__POOL_KIND__POOL_MEMFD, fd, 0,
                                               bytes, NULL, 0, err, sizeof err),
                     0);
    uint64_t slow_model, ticket;
    assert_int_equal(
        nnd_client_prepare(a, &slow.model, NULL, 0, 0, 0, 0, &slow_model, err, sizeof err), 0);
    assert_int_equal(
        nnd_client_execute_start(a, slow_model, &sreq.req, &sfd, 1, NULL, &ticket, err, sizeof err),
        0);
    double prepared0 = obs_status_num(dmn.state_dir, "prepared_models");

    size_t n_targets = N_MODELS + 2 * N_BUFFERS + 3;
    uint64_t *targets = malloc(n_targets * sizeof *targets);
    memcpy(targets, models, sizeof models);
    memcpy(targets + N_MODELS, buffers, sizeof buffers);
    memcpy(targets + N_MODELS + N_BUFFERS, tokens, sizeof tokens);
    targets[n_targets - 3] = fenced_exec;
    targets[n_targets - 2] = slow_model;
    targets[n_targets - 1] = ticket;
    /* Spread the targets over the guesses: every 80 guesses name the next one. */
    for (size_t i = n_targets - 1; i > 0; i--) {
        uint64_t r;
        assert_int_equal(getrandom(&r, sizeof r, 0), (ssize_t)sizeof r);
        size_t j = r % (i + 1);
        uint64_t t = targets[i];
        targets[i] = targets[j], targets[j] = t;
    }

    guesser q;
    guesser_init(&q);
    struct timespec ts0, ts1;
    clock_gettime(CLOCK_MONOTONIC, &ts0);
    for (uint64_t i = 0; i < GUESSES; i += PIPELINE) {
        uint64_t first = q.next_id, n = GUESSES - i < PIPELINE ? GUESSES - i : PIPELINE;
        for (uint64_t k = 0; k < n; k++) {
            int kind = (int)((i + k) % K_KINDS);
            /* Cancel names request ids: the first client's ticket and the ids around it. */
            uint64_t g =
                kind == K_CANCEL ? ticket + (i + k) % 64 - 32 : guess(i + k, targets, n_targets);
            if (g == q.own_model) g++; /* its own model would be found, rightly */
            send_guess(&q, kind, g);
        }
        for (uint64_t k = 0; k < n; k++)
            take_answer(&q, first + k);
    }
    clock_gettime(CLOCK_MONOTONIC, &ts1);
    double secs = (double)(ts1.tv_sec - ts0.tv_sec) + (double)(ts1.tv_nsec - ts0.tv_nsec) / 1e9;
    print_message("# %d guesses in %.2f s: %ld INVALID_ARGUMENT, nothing found\n", GUESSES, secs,
                  q.invalid);
    for (int k = 0; k < K_KINDS; k++) { /* each refused by its lookup, naming the value */
        print_message("#   %s\n", q.said[k]);
        assert_true(k == K_BURST || strstr(q.said[k], "unknown") || strstr(q.said[k], "no "));
    }
    assert_int_equal(q.invalid, GUESSES);

    /* The first client's objects are all there and unchanged. */
    assert_int_equal(obs_status_num(dmn.state_dir, "prepared_models"), prepared0 + 1);
    assert_int_equal(nnd_client_execute_wait(a, ticket, 60000, NULL, err, sizeof err), 0);
    assert_true(sio[3 * SLOW_LEN - 1] == 1 + SLOW_OPS); /* not cancelled: run to the end */
    for (int i = 0; i < N_MODELS; i += 511) {
        memset(io + 2 * LEN, 0, bytes);
        assert_int_equal(
            nnd_client_execute(a, models[i], &req.req, &fd, 1, false, 0, NULL, err, sizeof err), 0);
        for (int j = 0; j < LEN; j++)
            assert_true(io[2 * LEN + j] == (float)j + 10);
    }
    memset(io, 0, bytes);
    assert_int_equal(nnd_client_buffer_copy_from(a, buffers[0], NND__POOL_KIND__POOL_MEMFD, fd, 0,
                                                 bytes, NULL, 0, NULL, err, sizeof err),
                     0);
    for (int j = 0; j < LEN; j++)
        assert_true(io[j] == (float)j);
    int st;
    assert_int_equal(nnd_client_fenced_info(a, fenced_exec, &st, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(st, 0);
    for (int i = 0; i < N_BUFFERS; i++)
        assert_int_equal(nnd_client_release(a, buffers[i]), 0);
    assert_int_equal(nnd_client_release(a, fenced_exec), 0);
    /* And the guesser, refused 100,000 times, is still served. */
    assert_int_equal(wire_hello(q.sock, 2), 0);
    close(q.sock);
    free(targets);
    munmap(io, 3 * bytes);
    munmap(sio, 3 * slow_bytes);
    close(fd);
    close(sfd);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handles_random),
        cmocka_unit_test(test_guessing_finds_nothing),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
