/* SPDX-License-Identifier: Apache-2.0 */
/* test_memory_domains: memory domains through a real daemon and libnnd: a state tensor
 * kept in driver buffers across executions, tokens and roles refused where they do not
 * belong, flexible buffers, one buffer's pipelined users, and a client that dies holding
 * buffers (memory_common.h: the daemon and the requests). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/client/memory_common.h"

static void test_state_in_driver_buffers(void **state) {
    (void)state;
    nnd_client *c = connect_client("state");
    uint64_t h = prepare_plus_one(c, N);
    nnd_buffer_role role = {0, 0, 1.0f};
    uint64_t ta, tb, tc;
    uint64_t a = allocate_ok(c, &h, 1, &role, 1, &role, 1, &ta);
    uint64_t b = allocate_ok(c, &h, 1, &role, 1, &role, 1, &tb);
    uint64_t never = allocate_ok(c, &h, 1, &role, 1, &role, 1, &tc);
    assert_true(ta != tb && tb != tc && ta != tc);
    assert_int_equal(status_number("buffers"), 3);
    assert_true(status_number("buffer_bytes") >= 3 * N * 4);

    char err[512];
    uint32_t dims[NND_BUFFER_MAX_RANK];
    size_t rank = 0;
    int init = float_memfd(N, 0.0f, 1.0f);
    int st = nnd_client_buffer_copy_to(c, a, NND__POOL_KIND__POOL_MEMFD, init, 0, N * 4, NULL, 0,
                                       err, sizeof err);
    expect_status(st, err, 0, NULL, "copy to");
    /* Round trip: what went in comes out, with the buffer's shape. */
    int out = nnd_memfd_create("out", N * 4, NULL);
    st = nnd_client_buffer_copy_from(c, a, NND__POOL_KIND__POOL_MEMFD, out, 0, N * 4, dims,
                                     NND_BUFFER_MAX_RANK, &rank, err, sizeof err);
    expect_status(st, err, 0, NULL, "copy from");
    assert_int_equal(rank, 1);
    assert_int_equal(dims[0], N);
    expect_floats(out, 0, N, 0.0f, 1.0f);

    /* Ten runs, the state moving a -> b -> a ...: each adds one. */
    req q;
    req_init(&q);
    uint32_t pa = req_buffer(&q, ta), pb = req_buffer(&q, tb);
    req_arg(&q, false, pa, 0, 0, NULL, 0);
    req_arg(&q, true, pb, 0, 0, NULL, 0);
    for (int i = 0; i < 10; i++) {
        q.pools[pa].token = i % 2 ? tb : ta;
        q.pools[pb].token = i % 2 ? ta : tb;
        assert_int_equal(execute_expect(c, h, &q, NULL, 0, 0, NULL), N);
    }
    st = nnd_client_buffer_copy_from(c, a, NND__POOL_KIND__POOL_MEMFD, out, 0, N * 4, NULL, 0, NULL,
                                     err, sizeof err);
    expect_status(st, err, 0, NULL, "copy from a");
    expect_floats(out, 0, N, 10.0f, 1.0f);
    st = nnd_client_buffer_copy_from(c, b, NND__POOL_KIND__POOL_MEMFD, out, 0, N * 4, NULL, 0, NULL,
                                     err, sizeof err);
    expect_status(st, err, 0, NULL, "copy from b");
    expect_floats(out, 0, N, 9.0f, 1.0f);
    /* In place: a is input and output of one run. */
    q.pools[pa].token = q.pools[pb].token = ta;
    execute_expect(c, h, &q, NULL, 0, 0, NULL);
    st = nnd_client_buffer_copy_from(c, a, NND__POOL_KIND__POOL_MEMFD, out, 0, N * 4, NULL, 0, NULL,
                                     err, sizeof err);
    expect_status(st, err, 0, NULL, "copy from a");
    expect_floats(out, 0, N, 11.0f, 1.0f);
    /* A client memfd output from a buffer input. */
    req q2;
    req_init(&q2);
    uint32_t p0 = req_buffer(&q2, ta),
             p1 = req_pool(&q2, NND__POOL_KIND__POOL_MEMFD, 0, 0, N * 4, 0);
    req_arg(&q2, false, p0, 0, 0, NULL, 0);
    req_arg(&q2, true, p1, 0, N * 4, NULL, 0);
    execute_expect(c, h, &q2, &out, 1, 0, NULL);
    expect_floats(out, 0, N, 12.0f, 1.0f);

    /* A buffer never written is refused as an input, and to copy from. */
    q.pools[pa].token = tc;
    q.pools[pb].token = tb;
    execute_expect(c, h, &q, NULL, 0, NND__ERROR_STATUS__GENERAL_FAILURE, "never been written");
    st = nnd_client_buffer_copy_from(c, never, NND__POOL_KIND__POOL_MEMFD, out, 0, N * 4, NULL, 0,
                                     NULL, err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__GENERAL_FAILURE, "never been written", "copy never");
    /* Sizes must match exactly; a location in a buffer pool must be 0, 0. */
    st = nnd_client_buffer_copy_to(c, a, NND__POOL_KIND__POOL_MEMFD, init, 0, N * 4 - 4, NULL, 0,
                                   err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "bytes", "short copy to");
    st = nnd_client_buffer_copy_to(c, a, NND__POOL_KIND__POOL_MEMFD, init, 4, N * 4, NULL, 0, err,
                                   sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "past the end", "pool past end");
    st = nnd_client_buffer_copy_to(c, a, NND__POOL_KIND__POOL_DRIVER_BUFFER, init, 0, N * 4, NULL,
                                   0, err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "memfd, mmap_fd or dma-buf",
                  "copy from a token");
    uint32_t wrong[1] = {N + 1};
    st = nnd_client_buffer_copy_to(c, a, NND__POOL_KIND__POOL_MEMFD, init, 0, N * 4, wrong, 1, err,
                                   sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "do not agree", "wrong dims");
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", out);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    st = nnd_client_buffer_copy_from(c, a, NND__POOL_KIND__POOL_MEMFD, ro, 0, N * 4, NULL, 0, NULL,
                                     err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "read-only", "copy to ro");
    close(ro);
    q.pools[pa].token = ta;
    q.locs[0].length = 4;
    execute_expect(c, h, &q, NULL, 0, NND__ERROR_STATUS__INVALID_ARGUMENT, "past the end");
    q.locs[0].length = 0;

    /* Released: the token is dead at once. */
    assert_int_equal(nnd_client_release(c, b), 0);
    execute_expect(c, h, &q, NULL, 0, NND__ERROR_STATUS__INVALID_ARGUMENT, "no buffer");
    st = nnd_client_buffer_copy_from(c, b, NND__POOL_KIND__POOL_MEMFD, out, 0, N * 4, NULL, 0, NULL,
                                     err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "unknown buffer", "released");
    assert_int_equal(status_number("buffers"), 2);
    close(init);
    close(out);
    nnd_client_close(c); /* a and never go with the connection */
    wait_buffers(0);
}

static void test_foreign_token_refused(void **state) {
    (void)state;
    nnd_client *owner = connect_client("owner"), *thief = connect_client("thief");
    uint64_t h = prepare_plus_one(owner, N);
    nnd_buffer_role role = {0, 0, 0.0f};
    uint64_t token;
    uint64_t b = allocate_ok(owner, &h, 1, &role, 1, &role, 1, &token);
    char err[512];
    int init = float_memfd(N, 5.0f, 0.0f);
    int st = nnd_client_buffer_copy_to(owner, b, NND__POOL_KIND__POOL_MEMFD, init, 0, N * 4, NULL,
                                       0, err, sizeof err);
    expect_status(st, err, 0, NULL, "copy to");

    /* The thief learned the token's value; on its own model it names nothing. */
    uint64_t th = prepare_plus_one(thief, N);
    int out = nnd_memfd_create("out", N * 4, NULL);
    req q;
    req_init(&q);
    uint32_t pb = req_buffer(&q, token);
    uint32_t po = req_pool(&q, NND__POOL_KIND__POOL_MEMFD, 0, 0, N * 4, 0);
    req_arg(&q, false, pb, 0, 0, NULL, 0);
    req_arg(&q, true, po, 0, N * 4, NULL, 0);
    execute_expect(thief, th, &q, &out, 1, NND__ERROR_STATUS__INVALID_ARGUMENT,
                   "names no buffer of this client");
    /* Nor as an output, nor through the handle, nor by allocating on the owner's model. */
    req q2;
    req_init(&q2);
    uint32_t p2 = req_pool(&q2, NND__POOL_KIND__POOL_MEMFD, 0, 0, N * 4, 0);
    req_arg(&q2, false, p2, 0, N * 4, NULL, 0);
    req_arg(&q2, true, req_buffer(&q2, token), 0, 0, NULL, 0);
    execute_expect(thief, th, &q2, &init, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "no buffer");
    st = nnd_client_buffer_copy_from(thief, b, NND__POOL_KIND__POOL_MEMFD, out, 0, N * 4, NULL, 0,
                                     NULL, err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "unknown buffer", "thief copy");
    st = nnd_client_buffer_copy_to(thief, b, NND__POOL_KIND__POOL_MEMFD, init, 0, N * 4, NULL, 0,
                                   err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "unknown buffer", "thief copy");
    uint64_t tb, tt;
    st = nnd_client_allocate(thief, NULL, 0, &h, 1, &role, 1, NULL, 0, &tb, &tt, err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "unknown handle", "thief alloc");
    assert_int_equal(nnd_client_release(thief, b), NND__ERROR_STATUS__INVALID_ARGUMENT);
    /* A guessed token fares no better. */
    q.pools[pb].token = token ^ 1;
    execute_expect(owner, h, &q, &out, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "no buffer");

    /* The owner still has it, intact. */
    q.pools[pb].token = token;
    execute_expect(owner, h, &q, &out, 1, 0, NULL);
    expect_floats(out, 0, N, 6.0f, 0.0f);
    close(init);
    close(out);
    nnd_client_close(thief);
    nnd_client_close(owner);
    wait_buffers(0);
}

static void test_roles_checked(void **state) {
    (void)state;
    nnd_client *c = connect_client("roles");
    uint64_t h = prepare_plus_one(c, N);
    uint64_t other = prepare_plus_one(c, N); /* same shape, another prepared model */
    uint64_t small = prepare_plus_one(c, 4);
    nnd_buffer_role in0 = {0, 0, 1.0f};
    uint64_t token;
    uint64_t b = allocate_ok(c, &h, 1, &in0, 1, NULL, 0, &token); /* an input role only */
    char err[512];
    int init = float_memfd(N, 1.0f, 0.0f);
    int st = nnd_client_buffer_copy_to(c, b, NND__POOL_KIND__POOL_MEMFD, init, 0, N * 4, NULL, 0,
                                       err, sizeof err);
    expect_status(st, err, 0, NULL, "copy to");
    int io = nnd_memfd_create("io", N * 4, NULL);
    /* As an output: not an allocated role. */
    req q;
    req_init(&q);
    uint32_t pm = req_pool(&q, NND__POOL_KIND__POOL_MEMFD, 0, 0, N * 4, 0);
    req_arg(&q, false, pm, 0, N * 4, NULL, 0);
    req_arg(&q, true, req_buffer(&q, token), 0, 0, NULL, 0);
    execute_expect(c, h, &q, &io, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "not allocated");
    /* As the input of another prepared model: not allocated either. */
    req q2;
    req_init(&q2);
    uint32_t pb = req_buffer(&q2, token);
    uint32_t po = req_pool(&q2, NND__POOL_KIND__POOL_MEMFD, 0, 0, N * 4, 0);
    req_arg(&q2, false, pb, 0, 0, NULL, 0);
    req_arg(&q2, true, po, 0, N * 4, NULL, 0);
    execute_expect(c, other, &q2, &io, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "not allocated");
    /* Its own role works. */
    execute_expect(c, h, &q2, &io, 1, 0, NULL);
    expect_floats(io, 0, N, 2.0f, 0.0f);

    /* Allocate's own checks. */
    uint64_t two[2] = {h, small}, bb, tt;
    nnd_buffer_role bad_io = {0, 1, 1.0f}, bad_model = {2, 0, 1.0f}, bad_p = {0, 0, 1.5f};
    nnd_buffer_role mix[2] = {{0, 0, 1.0f}, {1, 0, 1.0f}};
    uint32_t five[1] = {5};
    struct {
        const uint32_t *dims;
        size_t rank, n_models;
        const nnd_buffer_role *in;
        size_t n_in;
        const nnd_buffer_role *out;
        size_t n_out;
        const char *needle;
    } bad[] = {
        {NULL, 0, 1, &bad_io, 1, NULL, 0, "input 1"},  /* the model has one input */
        {NULL, 0, 1, NULL, 0, &bad_io, 1, "output 1"}, /* and one output */
        {NULL, 0, 1, &bad_model, 1, NULL, 0, "prepared model 2"},
        {NULL, 0, 1, &bad_p, 1, NULL, 0, "probability"},
        {NULL, 0, 1, mix, 1, mix, 1, NULL},                /* fine: input and output 0 */
        {NULL, 0, 1, mix, 2, NULL, 0, "prepared model 1"}, /* only one model given */
        {NULL, 0, 2, mix, 2, NULL, 0, "do not agree"},     /* [256] against [4] */
        {NULL, 0, 1, (nnd_buffer_role[]){{0, 0, 1}, {0, 0, 1}}, 2, NULL, 0, "repeats"},
        {five, 1, 1, &in0, 1, NULL, 0, "descriptor"}, /* [5] against [256] */
        {NULL, 0, 1, NULL, 0, NULL, 0, "no role"},
        {NULL, 0, 0, &in0, 1, NULL, 0, "no prepared model"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        st = nnd_client_allocate(c, bad[i].dims, bad[i].rank, two, bad[i].n_models, bad[i].in,
                                 bad[i].n_in, bad[i].out, bad[i].n_out, &bb, &tt, err, sizeof err);
        if (!bad[i].needle) {
            expect_status(st, err, 0, NULL, "allocate");
            assert_int_equal(nnd_client_release(c, bb), 0);
            continue;
        }
        if (st != NND__ERROR_STATUS__INVALID_ARGUMENT || !strstr(err, bad[i].needle))
            fail_msg("allocate case %zu: status %d \"%s\", wanted INVALID_ARGUMENT \"%s\"", i, st,
                     err, bad[i].needle);
    }
    close(init);
    close(io);
    nnd_client_close(c);
    wait_buffers(0);
}

static void test_flexible_buffer(void **state) {
    (void)state;
    nnd_client *c = connect_client("flexible");
    wire_add_model m;
    wire_add_model_init_n(&m, 0, -1); /* [?] + [?] */
    uint64_t h = prepare(c, &m, NULL, 0);
    nnd_buffer_role r0 = {0, 0, 1.0f};
    uint64_t token;
    uint64_t b = allocate_ok(c, &h, 1, &r0, 1, &r0, 1, &token);
    assert_int_equal(status_number("buffer_bytes"), 0); /* nothing known, nothing held */

    int in = float_memfd(2 * N, 1.0f, 1.0f);
    uint32_t d3[1] = {3}, d5[1] = {5};
    req q;
    req_init(&q);
    uint32_t pm = req_pool(&q, NND__POOL_KIND__POOL_MEMFD, 0, 0, 2 * N * 4, 0);
    uint32_t pb = req_buffer(&q, token);
    req_arg(&q, false, pm, 0, 12, d3, 1);
    req_arg(&q, false, pm, N * 4, 12, d3, 1);
    req_arg(&q, true, pb, 0, 0, NULL, 0);
    /* The buffer learns its shape from the run. */
    assert_int_equal(execute_expect(c, h, &q, &in, 1, 0, NULL), 3);
    char err[512];
    uint32_t dims[NND_BUFFER_MAX_RANK];
    size_t rank;
    int out = nnd_memfd_create("out", 20, NULL);
    int st = nnd_client_buffer_copy_from(c, b, NND__POOL_KIND__POOL_MEMFD, out, 0, 12, dims,
                                         NND_BUFFER_MAX_RANK, &rank, err, sizeof err);
    expect_status(st, err, 0, NULL, "copy from [3]");
    assert_true(rank == 1 && dims[0] == 3);
    expect_floats(out, 0, 3, 1.0f + (float)N + 1.0f, 2.0f); /* (1 + i) + (N + 1 + i) */
    /* A larger result grows it. */
    q.args[0].dimensions = q.args[1].dimensions = d5;
    q.locs[0].length = q.locs[1].length = 20;
    assert_int_equal(execute_expect(c, h, &q, &in, 1, 0, NULL), 5);
    st = nnd_client_buffer_copy_from(c, b, NND__POOL_KIND__POOL_MEMFD, out, 0, 12, NULL, 0, NULL,
                                     err, sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "20", "copy from short");
    st = nnd_client_buffer_copy_from(c, b, NND__POOL_KIND__POOL_MEMFD, out, 0, 20, dims,
                                     NND_BUFFER_MAX_RANK, &rank, err, sizeof err);
    expect_status(st, err, 0, NULL, "copy from [5]");
    assert_true(rank == 1 && dims[0] == 5);
    /* As an input, it brings its shape along. */
    req q2;
    req_init(&q2);
    uint32_t pb2 = req_buffer(&q2, token);
    uint32_t pm2 = req_pool(&q2, NND__POOL_KIND__POOL_MEMFD, 0, 0, 2 * N * 4, 0);
    req_arg(&q2, false, pb2, 0, 0, NULL, 0);
    req_arg(&q2, false, pm2, 0, 20, d5, 1);
    req_arg(&q2, true, pm2, N * 4, 20, NULL, 0);
    assert_int_equal(execute_expect(c, h, &q2, &in, 1, 0, NULL), 5);
    expect_floats(in, N * 4, 5, (float)N + 3.0f, 3.0f); /* (N + 2 + 2i) + (1 + i) */
    /* Copying in needs a shape; then it is the buffer's. */
    st = nnd_client_buffer_copy_to(c, b, NND__POOL_KIND__POOL_MEMFD, in, 0, 8, NULL, 0, err,
                                   sizeof err);
    expect_status(st, err, NND__ERROR_STATUS__INVALID_ARGUMENT, "not all known", "no dims");
    uint32_t d2[1] = {2};
    st = nnd_client_buffer_copy_to(c, b, NND__POOL_KIND__POOL_MEMFD, in, 0, 8, d2, 1, err,
                                   sizeof err);
    expect_status(st, err, 0, NULL, "copy to [2]");
    st = nnd_client_buffer_copy_from(c, b, NND__POOL_KIND__POOL_MEMFD, out, 0, 8, dims,
                                     NND_BUFFER_MAX_RANK, &rank, err, sizeof err);
    expect_status(st, err, 0, NULL, "copy from [2]");
    assert_true(rank == 1 && dims[0] == 2);
    expect_floats(out, 0, 2, 1.0f, 1.0f);
    close(in);
    close(out);
    nnd_client_close(c);
    wait_buffers(0);
}

/* Many requests in flight on one raw connection, all writing or reading one buffer: each
 * is answered, with NONE or a prompt GENERAL_FAILURE ("busy", or "never been written" when
 * a reader overtakes the first writer), and the buffer ends with a whole result. */
static void test_pipelined_users_of_one_buffer(void **state) {
    (void)state;
    int s = tst_connect_raw(dmn);
    assert_int_equal(wire_hello(s, 1), 0);
    const uint32_t n = 1u << 20; /* runs long enough to overlap with the next requests */
    wire_add_model m;
    wire_add_model_init_n(&m, n, -1);
    uint64_t h = wire_prepare(s, &m.model, NULL, 0);
    assert_true(h != 0);
    Nnd__BufferRole role = NND__BUFFER_ROLE__INIT, *rp = &role;
    Nnd__Allocate a = NND__ALLOCATE__INIT;
    a.n_prepared_models = 1, a.prepared_models = &h;
    a.n_input_roles = 1, a.input_roles = &rp;
    a.n_output_roles = 1, a.output_roles = &rp;
    Nnd__Request rq = NND__REQUEST__INIT;
    rq.id = 1;
    rq.call_case = NND__REQUEST__CALL_ALLOCATE;
    rq.allocate = &a;
    Nnd__Reply *r = wire_call(s, &rq, NULL, 0);
    assert_non_null(r);
    assert_int_equal(r->status, NND__ERROR_STATUS__NONE);
    uint64_t token = r->allocated->token;
    wire_free(r);

    int io = float_memfd(3 * n, 1.0f, 0.0f); /* a = b = 1; room for an output */
    req w, rd;                               /* write: a + b -> buffer; read: buffer + b -> memfd */
    req_init(&w);
    uint32_t wm = req_pool(&w, NND__POOL_KIND__POOL_MEMFD, 0, 0, 3 * n * 4, 0);
    req_arg(&w, false, wm, 0, n * 4, NULL, 0);
    req_arg(&w, false, wm, n * 4, n * 4, NULL, 0);
    req_arg(&w, true, req_buffer(&w, token), 0, 0, NULL, 0);
    req_init(&rd);
    uint32_t rm = req_pool(&rd, NND__POOL_KIND__POOL_MEMFD, 0, 0, 3 * n * 4, 0);
    req_arg(&rd, false, req_buffer(&rd, token), 0, 0, NULL, 0);
    req_arg(&rd, false, rm, n * 4, n * 4, NULL, 0);
    req_arg(&rd, true, rm, 2 * n * 4, n * 4, NULL, 0);
    Nnd__Execute x = NND__EXECUTE__INIT;
    x.prepared_model = h;
    rq.call_case = NND__REQUEST__CALL_EXECUTE;
    rq.execute = &x;
    enum { REQUESTS = 64 };
    for (int i = 0; i < REQUESTS; i++) {
        rq.id = 100 + (uint64_t)i;
        x.request = i % 3 == 2 ? &rd.r : &w.r;
        assert_int_equal(wire_send(s, &rq, &io, 1), 0);
    }
    int ok = 0, refused = 0;
    for (int i = 0; i < REQUESTS; i++) {
        r = wire_recv(s, WIRE_TIMEOUT_MS);
        if (!r) fail_msg("reply %d of %d never came", i, REQUESTS);
        if (r->status == NND__ERROR_STATUS__NONE)
            ok++;
        else if (r->status == NND__ERROR_STATUS__GENERAL_FAILURE &&
                 (strstr(r->message, "busy") || strstr(r->message, "never been written")))
            refused++;
        else
            fail_msg("reply %llu: %d %s", (unsigned long long)r->id, r->status, r->message);
        wire_free(r);
    }
    print_message("# %d of %d ran, %d refused at once\n", ok, REQUESTS, refused);
    assert_true(ok > 0);
    /* Quiet now: one more read sees a whole result, 2 + 1. */
    rq.id = 999;
    x.request = &rd.r;
    r = wire_call(s, &rq, &io, 1);
    assert_non_null(r);
    assert_int_equal(r->status, NND__ERROR_STATUS__NONE);
    wire_free(r);
    expect_floats(io, 2 * n * 4, N, 3.0f, 0.0f);
    expect_floats(io, 3 * n * 4 - N * 4, N, 3.0f, 0.0f);
    close(io);
    close(s);
    wait_buffers(0);
}

/* The child: allocates three buffers (writes one), reports, then waits to be killed. */
static void hold_buffers_and_wait(int report) {
    char err[256];
    nnd_client *c = nnd_client_connect(dmn->socket_path, "doomed", err, sizeof err);
    if (!c) _exit(2);
    wire_add_model m;
    wire_add_model_init_n(&m, N, -1);
    uint64_t h = 0, b, t;
    if (nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err)) _exit(3);
    nnd_buffer_role r = {0, 0, 1.0f};
    for (int i = 0; i < 3; i++)
        if (nnd_client_allocate(c, NULL, 0, &h, 1, &r, 1, NULL, 0, &b, &t, err, sizeof err))
            _exit(4);
    int fd = float_memfd(N, 0, 1);
    if (nnd_client_buffer_copy_to(c, b, NND__POOL_KIND__POOL_MEMFD, fd, 0, N * 4, NULL, 0, err,
                                  sizeof err))
        _exit(5);
    char ok = 1;
    if (write(report, &ok, 1) != 1) _exit(6);
    for (;;)
        pause();
}

static void test_client_dies_holding_buffers(void **state) {
    (void)state;
    wait_buffers(0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        hold_buffers_and_wait(p[1]);
    }
    close(p[1]);
    char ok = 0;
    assert_int_equal(read(p[0], &ok, 1), 1);
    close(p[0]);
    assert_int_equal(status_number("buffers"), 3);
    assert_true(status_number("buffer_bytes") >= 3 * N * 4);
    kill(pid, SIGKILL);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    wait_buffers(0);
    assert_int_equal(status_number("buffer_bytes"), 0);
}

/* ---- rank 10: MIRROR_PAD of a [2,1,...,1,3] tensor to [2,1,...,1,5] (REFLECT, the last
 * dimension padded by one on each side), as AOSP's rank-10 mirror_pad_two models ------- */
enum { R10 = 10, R10_IN = 6, R10_OUT = 10 };

typedef struct pad_model {
    Nnd__Model model;
    Nnd__Subgraph main;
    Nnd__Operand operands[4], *operand_ptrs[4];
    Nnd__DataLocation locs[4];
    Nnd__Operation op, *op_ptr;
    uint32_t in_dims[R10], out_dims[R10], pad_dims[2], op_in[3], op_out[1], ins[1], outs[1];
    int32_t values[2 * R10 + 1]; /* the paddings, then the mode */
} pad_model;

static void pad_model_init(pad_model *m) {
    memset(m, 0, sizeof *m);
    nnd__model__init(&m->model);
    nnd__subgraph__init(&m->main);
    nnd__operation__init(&m->op);
    for (int d = 0; d < R10; d++)
        m->in_dims[d] = m->out_dims[d] = 1;
    m->in_dims[0] = m->out_dims[0] = 2;
    m->in_dims[R10 - 1] = 3;
    m->out_dims[R10 - 1] = 5;
    m->values[2 * (R10 - 1)] = m->values[2 * (R10 - 1) + 1] = 1;
    m->pad_dims[0] = R10, m->pad_dims[1] = 2;
    const struct {
        int type, life;
        uint32_t rank, *dims;
    } o[4] = {{3, NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT, R10, m->in_dims},
              {4, NND__OPERAND_LIFE_TIME__CONSTANT_COPY, 2, m->pad_dims},
              {1, NND__OPERAND_LIFE_TIME__CONSTANT_COPY, 0, NULL},
              {3, NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT, R10, m->out_dims}};
    for (int i = 0; i < 4; i++) {
        nnd__operand__init(&m->operands[i]);
        nnd__data_location__init(&m->locs[i]);
        m->operand_ptrs[i] = &m->operands[i];
        m->operands[i].type = o[i].type;
        m->operands[i].lifetime = o[i].life;
        m->operands[i].n_dimensions = o[i].rank;
        m->operands[i].dimensions = o[i].dims;
    }
    m->operands[1].location = &m->locs[1];
    m->locs[1].length = 2 * R10 * 4;
    m->operands[2].location = &m->locs[2];
    m->locs[2].offset = 2 * R10 * 4;
    m->locs[2].length = 4; /* mode 0: REFLECT */
    m->op.type = 104;      /* MIRROR_PAD */
    m->op_in[0] = 0, m->op_in[1] = 1, m->op_in[2] = 2;
    m->op_out[0] = 3;
    m->op.n_inputs = 3, m->op.inputs = m->op_in;
    m->op.n_outputs = 1, m->op.outputs = m->op_out;
    m->op_ptr = &m->op;
    m->ins[0] = 0, m->outs[0] = 3;
    m->main.n_operands = 4, m->main.operands = m->operand_ptrs;
    m->main.n_operations = 1, m->main.operations = &m->op_ptr;
    m->main.n_input_indexes = 1, m->main.input_indexes = m->ins;
    m->main.n_output_indexes = 1, m->main.output_indexes = m->outs;
    m->model.main = &m->main;
    m->model.operand_values.data = (uint8_t *)m->values;
    m->model.operand_values.len = sizeof m->values;
}

/* Row r of the input is 3r, 3r+1, 3r+2: REFLECT makes it x1 x0 x1 x2 x1. */
static void expect_reflected(int fd) {
    float got[R10_OUT];
    assert_int_equal(pread(fd, got, sizeof got, 0), (ssize_t)sizeof got);
    static const int from[5] = {1, 0, 1, 2, 1};
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 5; k++)
            assert_true(got[5 * r + k] == (float)(3 * r + from[k]));
}

/* Driver buffers of rank 10 are copied in, taken and written by an execution, copied out
 * with their shape; a caller that cannot take the shape fails that copy only. */
static void test_rank_10_buffers(void **state) {
    (void)state;
    nnd_client *c = connect_client("rank10");
    pad_model m;
    pad_model_init(&m);
    char err[512];
    uint64_t h = 0;
    int st = nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err);
    expect_status(st, err, 0, NULL, "prepare MIRROR_PAD rank 10");
    nnd_buffer_role role = {0, 0, 1.0f};
    uint64_t ti, to, bi = 0, bo = 0;
    st =
        nnd_client_allocate(c, m.in_dims, R10, &h, 1, &role, 1, NULL, 0, &bi, &ti, err, sizeof err);
    expect_status(st, err, 0, NULL, "allocate the rank-10 input");
    st = nnd_client_allocate(c, m.out_dims, R10, &h, 1, NULL, 0, &role, 1, &bo, &to, err,
                             sizeof err);
    expect_status(st, err, 0, NULL, "allocate the rank-10 output");
    int in = float_memfd(R10_IN, 0.0f, 1.0f);
    st = nnd_client_buffer_copy_to(c, bi, NND__POOL_KIND__POOL_MEMFD, in, 0, R10_IN * 4, m.in_dims,
                                   R10, err, sizeof err);
    expect_status(st, err, 0, NULL, "copy into the rank-10 input");
    req q;
    req_init(&q);
    req_arg(&q, false, req_buffer(&q, ti), 0, 0, NULL, 0);
    req_arg(&q, true, req_buffer(&q, to), 0, 0, NULL, 0);
    assert_int_equal(execute_expect(c, h, &q, NULL, 0, 0, NULL), 2);

    uint32_t dims[NND_BUFFER_MAX_RANK];
    size_t rank = 0;
    int out = nnd_memfd_create("out", R10_OUT * 4, NULL);
    st = nnd_client_buffer_copy_from(c, bo, NND__POOL_KIND__POOL_MEMFD, out, 0, R10_OUT * 4, dims,
                                     NND_BUFFER_MAX_RANK, &rank, err, sizeof err);
    expect_status(st, err, 0, NULL, "copy out of the rank-10 output");
    assert_int_equal(rank, R10);
    assert_memory_equal(dims, m.out_dims, sizeof m.out_dims);
    expect_reflected(out);
    /* Room for 4 dimensions only: that call fails, saying why; the connection goes on. */
    st = nnd_client_buffer_copy_from(c, bo, NND__POOL_KIND__POOL_MEMFD, out, 0, R10_OUT * 4, dims,
                                     4, &rank, err, sizeof err);
    expect_status(st, err, -EBADMSG, "rank 10, more than the 4 dimensions", "copy out, 4 dims");
    assert_true(nnd_client_alive(c));
    assert_int_equal(execute_expect(c, h, &q, NULL, 0, 0, NULL), 2);
    st = nnd_client_buffer_copy_from(c, bo, NND__POOL_KIND__POOL_MEMFD, out, 0, R10_OUT * 4, NULL,
                                     0, NULL, err, sizeof err);
    expect_status(st, err, 0, NULL, "copy out after the refused one");
    expect_reflected(out);
    close(in);
    close(out);
    nnd_client_close(c);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_state_in_driver_buffers),
        cmocka_unit_test(test_foreign_token_refused),
        cmocka_unit_test(test_roles_checked),
        cmocka_unit_test(test_flexible_buffer),
        cmocka_unit_test(test_pipelined_users_of_one_buffer),
        cmocka_unit_test(test_client_dies_holding_buffers),
        cmocka_unit_test(test_rank_10_buffers),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, memory_group_setup, tst_group_teardown);
}
