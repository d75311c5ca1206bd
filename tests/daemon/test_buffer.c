/* SPDX-License-Identifier: Apache-2.0 */
/* test_buffer (unit): driver buffers under concurrency, in process. Writers copy uniform
 * patterns into buffer A, executions on other threads read A (both inputs of an ADD) and
 * write B, readers copy B out, and the owner drops A and B midway. Every read must see a
 * whole pattern (never a torn write); conflicts must fail at once with GENERAL_FAILURE;
 * nothing may crash, hang or leak. */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/binding/buffer.h"
#include "daemon/wire/convert.h"
#include "tests/support/wire.h"

#define ITERATIONS 20000
#define ELEMS      4096 /* floats per tensor: copies long enough to overlap */

static int owner; /* stands for the owning session: compared, never read */
#define OWNER ((const struct srv_session *)&owner)
#define MODEL 42

typedef struct shared {
    eng_prepared *p;
    srv_buffer *a, *b;
    uint64_t ta, tb;
    atomic_uint ok, busy, gone;
    atomic_uint finished; /* threads that have run all their iterations */
    pthread_barrier_t start;
} shared;

/* Every element the same. */
static bool uniform(const float *f) {
    for (int i = 1; i < ELEMS; i++)
        if (f[i] != f[0]) return false;
    return true;
}

static void *writer(void *arg) {
    shared *s = arg;
    static _Thread_local float v[ELEMS];
    pthread_barrier_wait(&s->start);
    for (int i = 0; i < ITERATIONS; i++) {
        for (int k = 0; k < ELEMS; k++)
            v[k] = (float)i;
        srv_pool src = {.view = {.base = (const uint8_t *)v, .size = sizeof v}, .writable = false};
        char err[SCHEMA_ERR_LEN];
        schema_status st = srv_buffer_copy_in(s->a, &src, NULL, 0, err, sizeof err);
        if (st == SCHEMA_OK)
            atomic_fetch_add(&s->ok, 1);
        else if (st == SCHEMA_GENERAL_FAILURE && strstr(err, "busy"))
            atomic_fetch_add(&s->busy, 1);
        else
            fail_msg("copy in: %d %s", st, err);
    }
    atomic_fetch_add(&s->finished, 1);
    return NULL;
}

static void *executor(void *arg) {
    shared *s = arg;
    eng_exec *e = eng_exec_create(s->p);
    assert_non_null(e);
    Nnd__MemoryPool pools[2], *pp[2] = {&pools[0], &pools[1]};
    Nnd__DataLocation locs[3];
    Nnd__RequestArgument args[3], *in[2] = {&args[0], &args[1]}, *out[1] = {&args[2]};
    for (int i = 0; i < 2; i++) {
        nnd__memory_pool__init(&pools[i]);
        pools[i].kind = NND__POOL_KIND__POOL_DRIVER_BUFFER;
    }
    pools[0].token = s->ta;
    pools[1].token = s->tb;
    for (int i = 0; i < 3; i++) {
        nnd__data_location__init(&locs[i]);
        locs[i].pool_index = i == 2;
        nnd__request_argument__init(&args[i]);
        args[i].location = &locs[i];
    }
    Nnd__ExecutionRequest r = NND__EXECUTION_REQUEST__INIT;
    r.n_inputs = 2, r.inputs = in, r.n_outputs = 1, r.outputs = out, r.n_pools = 2, r.pools = pp;
    pthread_barrier_wait(&s->start);
    for (int i = 0; i < ITERATIONS; i++) {
        eng_io ios[3];
        memset(ios, 0, sizeof ios);
        eng_output_shape shapes[1];
        char err[SCHEMA_ERR_LEN];
        srv_buffer_binding *bb = NULL;
        schema_status st =
            srv_buffers_bind(OWNER, MODEL, s->p, &r, ios, ios + 2, &bb, err, sizeof err);
        if (st == SCHEMA_OK) {
            assert_true(uniform(ios[0].data));
            st = eng_exec_run(e, ios, ios + 2, shapes, NULL, err, sizeof err);
            assert_int_equal(st, SCHEMA_OK);
            srv_buffers_finish(bb, true, &st, shapes, err, sizeof err);
            assert_int_equal(st, SCHEMA_OK);
            atomic_fetch_add(&s->ok, 1);
        } else if (st == SCHEMA_GENERAL_FAILURE &&
                   (strstr(err, "busy") || strstr(err, "never been written"))) {
            atomic_fetch_add(&s->busy, 1);
        } else if (st == SCHEMA_INVALID_ARGUMENT && strstr(err, "names no buffer")) {
            atomic_fetch_add(&s->gone, 1); /* dropped by its owner meanwhile */
        } else {
            fail_msg("bind: %d %s", st, err);
        }
    }
    eng_exec_free(e);
    atomic_fetch_add(&s->finished, 1);
    return NULL;
}

static void *reader(void *arg) {
    shared *s = arg;
    static _Thread_local float v[ELEMS];
    pthread_barrier_wait(&s->start);
    for (int i = 0; i < ITERATIONS; i++) {
        v[0] = -1, v[ELEMS - 1] = -2;
        srv_pool dst = {.view = {.base = (const uint8_t *)v, .size = sizeof v}, .writable = true};
        eng_output_shape shape;
        char err[SCHEMA_ERR_LEN];
        schema_status st = srv_buffer_copy_out(s->b, &dst, NULL, 0, &shape, err, sizeof err);
        if (st == SCHEMA_OK) {
            assert_true(uniform(v)); /* 2 * a whole pattern */
            atomic_fetch_add(&s->ok, 1);
        } else if (st == SCHEMA_GENERAL_FAILURE &&
                   (strstr(err, "busy") || strstr(err, "never been written"))) {
            atomic_fetch_add(&s->busy, 1);
        } else {
            fail_msg("copy out: %d %s", st, err);
        }
    }
    atomic_fetch_add(&s->finished, 1);
    return NULL;
}

static srv_buffer *allocate(eng_prepared *p, Nnd__BufferRole **in, size_t n_in,
                            Nnd__BufferRole **out, size_t n_out) {
    uint64_t model = MODEL;
    Nnd__Allocate a = NND__ALLOCATE__INIT;
    a.n_prepared_models = 1, a.prepared_models = &model;
    a.n_input_roles = n_in, a.input_roles = in;
    a.n_output_roles = n_out, a.output_roles = out;
    srv_buffer_model m = {.handle = MODEL, .prepared = p};
    srv_buffer *b = NULL;
    char err[SCHEMA_ERR_LEN];
    schema_status st = srv_buffer_allocate(OWNER, &a, &m, NULL, &b, err, sizeof err);
    if (st != SCHEMA_OK) fail_msg("allocate: %s", err);
    return b;
}

static void test_concurrent_readers_and_writers(void **state) {
    (void)state;
    wire_add_model wm;
    wire_add_model_init(&wm, -1); /* out = a + b, TENSOR_FLOAT32 [ELEMS] */
    wm.dims[0] = ELEMS;
    eng_model_desc desc;
    char err[SCHEMA_ERR_LEN];
    shared s = {0};
    assert_int_equal(srv_model_from_proto(&wm.model, NULL, 0, &desc, err, sizeof err), SCHEMA_OK);
    assert_int_equal(eng_prepare(&desc, &s.p, err, sizeof err), SCHEMA_OK);
    srv_model_desc_clear(&desc);

    Nnd__BufferRole r[2], *rp[2] = {&r[0], &r[1]};
    for (int i = 0; i < 2; i++) {
        nnd__buffer_role__init(&r[i]);
        r[i].io_index = (uint32_t)i;
    }
    s.a = allocate(s.p, rp, 2, NULL, 0); /* inputs 0 and 1 */
    s.b = allocate(s.p, NULL, 0, rp, 1); /* output 0 */
    s.ta = srv_buffer_token(s.a);
    s.tb = srv_buffer_token(s.b);
    uint64_t count, bytes;
    srv_buffer_stats(&count, &bytes);
    assert_int_equal(count, 2);
    assert_int_equal(bytes, 2 * ELEMS * sizeof(float));

    /* The threads hold their own references, as executions in flight do. */
    srv_buffer_ref(s.a);
    srv_buffer_ref(s.b);
    pthread_t t[6];
    pthread_barrier_init(&s.start, NULL, 6);
    void *(*fn[6])(void *) = {writer, writer, executor, executor, reader, reader};
    for (int i = 0; i < 6; i++)
        assert_int_equal(pthread_create(&t[i], NULL, fn[i], &s), 0);
    /* The owner releases both while the threads run: the tokens die, the bytes live on.
     * On a busy machine most calls may be refused as busy, so stop waiting for successes
     * once every thread is done, and yield rather than spin against the workers. */
    while (atomic_load(&s.ok) < ITERATIONS / 10 && atomic_load(&s.finished) < 6)
        sched_yield();
    srv_buffer_drop(s.a);
    srv_buffer_drop(s.b);
    for (int i = 0; i < 6; i++)
        pthread_join(t[i], NULL);
    srv_buffer_stats(&count, &bytes);
    assert_int_equal(count, 2);
    srv_buffer_unref(s.a);
    srv_buffer_unref(s.b);
    srv_buffer_stats(&count, &bytes);
    assert_int_equal(count, 0);
    assert_int_equal(bytes, 0);
    printf("# %u succeeded, %u refused as busy or unwritten, %u after the drop\n",
           atomic_load(&s.ok), atomic_load(&s.busy), atomic_load(&s.gone));
    assert_true(atomic_load(&s.ok) > 0);
    eng_prepared_free(s.p);
    pthread_barrier_destroy(&s.start);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_concurrent_readers_and_writers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
