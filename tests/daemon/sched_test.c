/* SPDX-License-Identifier: Apache-2.0 */
/* sched_test: the scheduler without a daemon. Queue order, estimates, percentiles, every
 * admission outcome, cancellation, and preemption with resume and with restart, running
 * real engine models on the worker threads. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "sched/scheduler.h"

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- queue ----------------------------------------------------------------------------- */

static qos_qentry entry(uint32_t app, uint8_t prio, uint64_t deadline, uint64_t cost) {
    qos_qentry e;
    memset(&e, 0, sizeof e);
    e.app = app;
    e.prio = prio;
    e.deadline = deadline;
    e.cost_ns = cost;
    return e;
}

static void test_queue_order(void **state) {
    (void)state;
    qos_queue *q = qos_queue_new();
    assert_non_null(q);
    /* App 1: LOW, HIGH, MEDIUM, and two HIGH with deadlines; app 2: two LOW. */
    qos_qentry a[5] = {entry(1, 0, 0, 1), entry(1, 2, 0, 1), entry(1, 1, 0, 1), entry(1, 2, 500, 1),
                       entry(1, 2, 100, 1)};
    qos_qentry b[2] = {entry(2, 0, 0, 1), entry(2, 0, 0, 1)};
    for (int i = 0; i < 5; i++)
        assert_int_equal(qos_queue_push(q, &a[i]), 0);
    for (int i = 0; i < 2; i++)
        assert_int_equal(qos_queue_push(q, &b[i]), 0);
    assert_int_equal(qos_queue_len(q), 7);
    assert_int_equal(qos_queue_depth(q, 2), 3);
    assert_int_equal(qos_queue_app_len(q, 1), 5);
    /* Turns alternate; app 1 goes HIGH by deadline (none last), MEDIUM, LOW. */
    qos_qentry *want[7] = {&a[4], &b[0], &a[3], &b[1], &a[1], &a[2], &a[0]};
    for (int i = 0; i < 7; i++)
        assert_ptr_equal(qos_queue_pop(q, NULL), want[i]);
    assert_null(qos_queue_pop(q, NULL));

    /* A preferred app is served without using up another app's turn. */
    qos_qentry c[4] = {entry(1, 0, 0, 1), entry(2, 0, 0, 1), entry(1, 0, 0, 1), entry(3, 0, 0, 1)};
    for (int i = 0; i < 4; i++)
        assert_int_equal(qos_queue_push(q, &c[i]), 0);
    assert_ptr_equal(qos_queue_pop(q, NULL), &c[0]);
    uint32_t one = 1;
    assert_ptr_equal(qos_queue_pop(q, &one), &c[2]);
    assert_ptr_equal(qos_queue_pop(q, NULL), &c[1]);
    qos_queue_remove(q, &c[3]);
    assert_int_equal(qos_queue_len(q), 0);
    qos_queue_free(q);
}

static void test_queue_ahead(void **state) {
    (void)state;
    qos_queue *q = qos_queue_new();
    /* App 1 has 3 LOW of 10 each; app 2 has 5 LOW of 100 each. */
    qos_qentry a[3], b[5];
    for (int i = 0; i < 3; i++) {
        a[i] = entry(1, 0, 0, 10);
        qos_queue_push(q, &a[i]);
    }
    for (int i = 0; i < 5; i++) {
        b[i] = entry(2, 0, 0, 100);
        qos_queue_push(q, &b[i]);
    }
    /* A new LOW of app 1 is 4th in its app: 3 x 10 of its own, 4 turns of app 2. */
    qos_qentry e = entry(1, 0, 0, 10);
    assert_int_equal(qos_queue_ahead(q, &e), 30 + 400);
    /* A new HIGH of app 1 goes first in its app: one turn of app 2. */
    e.prio = 2;
    assert_int_equal(qos_queue_ahead(q, &e), 100);
    /* A new app waits for one turn of each. */
    e = entry(3, 0, 0, 1);
    assert_int_equal(qos_queue_ahead(q, &e), 10 + 100);
    qos_queue_free(q);
}

/* ---- estimates and percentiles --------------------------------------------------------- */

static void test_estimator(void **state) {
    (void)state;
    qos_estimator e;
    qos_est_init(&e, 1000);
    assert_int_equal(qos_est_typical(&e), 1000);
    assert_int_equal(qos_est_tail(&e), 2000);
    for (int i = 0; i < 40; i++)
        qos_est_add(&e, 5000);
    assert_int_equal(qos_est_typical(&e), 5000);
    /* One slow run moves neither estimate much: it is trimmed, and under the 95th. */
    qos_est_add(&e, 500000);
    assert_int_equal(qos_est_typical(&e), 5000);
    assert_int_equal(qos_est_tail(&e), 5000);
    /* A lasting change takes over within a window. */
    for (int i = 0; i < QOS_EST_WINDOW; i++)
        qos_est_add(&e, 9000);
    assert_int_equal(qos_est_typical(&e), 9000);
}

static int cmp_sample(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The incrementally sorted window gives what sorting the window afresh gives. */
static void test_estimator_against_sorting(void **state) {
    (void)state;
    qos_estimator e;
    qos_est_init(&e, 1000);
    uint64_t last[QOS_EST_WINDOW], v[QOS_EST_WINDOW];
    uint32_t n = 0;
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 2000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint64_t ns = 1 + x % (i % 3 ? 50 : 5000); /* many ties, some outliers */
        qos_est_add(&e, ns);
        last[i % QOS_EST_WINDOW] = ns;
        if (n < QOS_EST_WINDOW) n++;
        memcpy(v, last, sizeof v[0] * n);
        qsort(v, n, sizeof v[0], cmp_sample);
        uint32_t keep = n - n / 10;
        uint64_t sum = 0;
        for (uint32_t k = 0; k < keep; k++)
            sum += v[k];
        uint32_t rank = n < 20 ? n : (n * 95 + 99) / 100;
        assert_int_equal(qos_est_typical(&e), sum / keep);
        assert_int_equal(qos_est_tail(&e), v[rank - 1] > sum / keep ? v[rank - 1] : sum / keep);
        assert_int_equal(qos_est_max(&e), v[n - 1]);
    }
}

static void test_hist(void **state) {
    (void)state;
    qos_hist h;
    memset(&h, 0, sizeof h);
    assert_int_equal(qos_hist_quantile(&h, 0.5), 0);
    for (uint64_t i = 1; i <= 1000; i++)
        qos_hist_add(&h, i * 10000); /* 10 us .. 10 ms */
    uint64_t p50 = qos_hist_quantile(&h, 0.5), p99 = qos_hist_quantile(&h, 0.99);
    assert_true(p50 >= 5000000 && p50 <= 5000000 * 107 / 100);
    assert_true(p99 >= 9900000 && p99 <= 9900000 * 107 / 100);
    /* The export: a sum, and exact counts below the bounds that are bucket edges. */
    assert_true(h.sum_ns == 10000ull * 1000 * 1001 / 2);
    for (unsigned i = 0; i < QOS_LATENCY_BOUNDS; i++) {
        uint64_t bound = QOS_LATENCY_BOUND_NS(i), want = 0;
        for (uint64_t k = 1; k <= 1000; k++)
            want += k * 10000 < bound;
        assert_true(qos_hist_count_below(&h, bound) == want);
    }
    assert_true(qos_hist_count_below(&h, 1) == 0);
}

/* ---- the scheduler with real models ---------------------------------------------------- */

/* CHAIN ADDs over [len] floats: out = a + n * b. Temporaries alternate between two
 * operands' worth of arena. */
typedef struct chain {
    eng_operand_desc *ops;
    eng_operation_desc *opn;
    uint32_t (*in)[3], (*out)[1];
    uint32_t inputs[2], outputs[1];
    int32_t act;
    eng_prepared *p;
} chain;

static void chain_make(chain *c, uint32_t n, uint32_t len) {
    memset(c, 0, sizeof *c);
    uint32_t n_ops = n + 3;
    c->ops = calloc(n_ops, sizeof *c->ops);
    c->opn = calloc(n, sizeof *c->opn);
    c->in = calloc(n, sizeof *c->in);
    c->out = calloc(n, sizeof *c->out);
    for (uint32_t i = 0; i < n_ops; i++) {
        c->ops[i].type = SCHEMA_TENSOR_FLOAT32;
        c->ops[i].rank = 1;
        c->ops[i].dims[0] = len;
        c->ops[i].lifetime = SCHEMA_TEMPORARY;
    }
    c->ops[0].lifetime = c->ops[1].lifetime = SCHEMA_MODEL_INPUT;
    c->ops[2].type = SCHEMA_INT32;
    c->ops[2].rank = 0;
    c->ops[2].lifetime = SCHEMA_CONSTANT_COPY;
    c->ops[2].length = 4;
    c->ops[n_ops - 1].lifetime = SCHEMA_MODEL_OUTPUT;
    for (uint32_t k = 0; k < n; k++) {
        c->in[k][0] = k == 0 ? 0 : 3 + k - 1;
        c->in[k][1] = 1;
        c->in[k][2] = 2;
        c->out[k][0] = 3 + k;
        c->opn[k] = (eng_operation_desc){SCHEMA_OP_ADD, 3, c->in[k], 1, c->out[k]};
    }
    c->inputs[0] = 0, c->inputs[1] = 1, c->outputs[0] = n_ops - 1;
    eng_model_desc m = {.n_operands = n_ops,
                        .operands = c->ops,
                        .n_operations = n,
                        .operations = c->opn,
                        .n_inputs = 2,
                        .inputs = c->inputs,
                        .n_outputs = 1,
                        .outputs = c->outputs,
                        .operand_values = (const uint8_t *)&c->act,
                        .operand_values_len = 4};
    char err[SCHEMA_ERR_LEN];
    if (eng_prepare(&m, &c->p, err, sizeof err) != SCHEMA_OK) fail_msg("prepare: %s", err);
}

static void chain_release(void *ctx) {
    chain *c = ctx;
    eng_prepared_free(c->p);
    free(c->ops);
    free(c->opn);
    free(c->in);
    free(c->out);
    c->p = NULL;
}

/* The owner's side: wake() posts, wait_done() drains until a job is done. */
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake_cond = PTHREAD_COND_INITIALIZER;
static int wakes;

static void on_wake(void *ctx) {
    (void)ctx;
    pthread_mutex_lock(&wake_lock);
    wakes++;
    pthread_cond_broadcast(&wake_cond);
    pthread_mutex_unlock(&wake_lock);
}

typedef struct tjob {
    qos_job j;
    eng_io in[2], out[1];
    eng_output_shape shape[1];
    float *a, *b, *o;
    uint32_t len;
    int done;
    int order; /* completion order */
} tjob;

static int completions;

static void on_done(qos_job *j) {
    tjob *t = j->ctx;
    t->done = 1;
    t->order = ++completions;
}

static void tjob_init(tjob *t, qos_sched_model *m, uint32_t app, qos_prio prio, uint64_t deadline,
                      uint32_t len) {
    memset(t, 0, sizeof *t);
    t->len = len;
    t->a = calloc(len, sizeof(float));
    t->b = calloc(len, sizeof(float));
    t->o = calloc(len, sizeof(float));
    for (uint32_t i = 0; i < len; i++)
        t->a[i] = (float)i, t->b[i] = 1.0f;
    t->in[0] = (eng_io){.data = t->a, .length = len * sizeof(float)};
    t->in[1] = (eng_io){.data = t->b, .length = len * sizeof(float)};
    t->out[0] = (eng_io){.data = t->o, .length = len * sizeof(float)};
    t->j.model = m;
    t->j.app = app;
    t->j.prio = prio;
    t->j.deadline_ns = deadline;
    t->j.inputs = t->in;
    t->j.outputs = t->out;
    t->j.shapes = t->shape;
    t->j.done = on_done;
    t->j.ctx = t;
}

static void tjob_free(tjob *t) {
    free(t->a);
    free(t->b);
    free(t->o);
}

/* Drains until t is done (or 20 s pass). */
static void wait_done(qos_sched *s, tjob *t) {
    uint64_t end = now_ns() + 20000000000ull;
    while (!t->done) {
        qos_sched_drain(s);
        if (t->done) break;
        pthread_mutex_lock(&wake_lock);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10000000;
        if (ts.tv_nsec >= 1000000000) ts.tv_sec++, ts.tv_nsec -= 1000000000;
        pthread_cond_timedwait(&wake_cond, &wake_lock, &ts);
        pthread_mutex_unlock(&wake_lock);
        if (now_ns() > end) fail_msg("job not done in 20 s");
    }
}

static qos_throughput tp;

/* Waits until a job runs (true), or t is done (false). */
static bool wait_running(qos_sched *s, tjob *t) {
    for (int i = 0; i < 1000000; i++) {
        qos_sched_stats st;
        qos_sched_stats_get(s, &st);
        if (st.running) return true;
        qos_sched_drain(s);
        if (t->done) return false;
        struct timespec ts = {0, 10000};
        nanosleep(&ts, NULL);
    }
    fail_msg("no job started");
    return false;
}

static qos_sched *new_sched(qos_sched_config *cfg) {
    qos_sched *s = qos_sched_new(cfg, &tp, on_wake, NULL);
    assert_non_null(s);
    return s;
}

static void check_chain_result(const tjob *t, uint32_t n) {
    for (uint32_t i = 0; i < t->len; i++)
        if (t->o[i] != (float)i + (float)n)
            fail_msg("out[%u] = %g, want %g", i, t->o[i], (float)i + n);
}

/* A long job of app 9 that keeps the only worker busy until blocker_stop(). */
typedef struct blocker {
    chain c;
    qos_sched_model *m;
    tjob t;
} blocker;

static void blocker_start(qos_sched *s, blocker *b, uint32_t len) {
    chain_make(&b->c, 20000, len);
    char err[SCHEMA_ERR_LEN];
    assert_int_equal(
        qos_sched_model_new(s, b->c.p, QOS_PRIO_LOW, chain_release, &b->c, &b->m, err, sizeof err),
        SCHEMA_OK);
    tjob_init(&b->t, b->m, 9, QOS_PRIO_LOW, 0, len);
    assert_int_equal(qos_sched_submit(s, &b->t.j), SCHEMA_OK);
    if (!wait_running(s, &b->t)) fail_msg("a 20000-operation run ended unseen");
}

static void blocker_stop(qos_sched *s, blocker *b) {
    qos_sched_cancel(s, &b->t.j);
    wait_done(s, &b->t);
    tjob_free(&b->t);
    qos_sched_model_unref(b->m);
}

static void test_admission(void **state) {
    (void)state;
    qos_sched_config cfg;
    qos_sched_config_default(&cfg);
    cfg.app_queue = 2;
    cfg.inline_ns = 0;
    qos_sched *s = new_sched(&cfg);
    enum { N = 2000, LEN = 16384 };
    chain c;
    chain_make(&c, N, LEN);
    qos_sched_model *m;
    char err[SCHEMA_ERR_LEN];
    assert_int_equal(
        qos_sched_model_new(s, c.p, QOS_PRIO_MEDIUM, chain_release, &c, &m, err, sizeof err),
        SCHEMA_OK);
    /* Teach the estimator what a run costs. */
    tjob t;
    for (int i = 0; i < 3; i++) {
        tjob_init(&t, m, 1, QOS_PRIO_MEDIUM, 0, LEN);
        assert_int_equal(qos_sched_submit(s, &t.j), SCHEMA_OK);
        wait_done(s, &t);
        assert_int_equal(t.j.status, SCHEMA_OK);
        check_chain_result(&t, N);
        tjob_free(&t);
    }
    uint64_t typical, tail;
    qos_sched_model_estimate(m, &typical, &tail);
    assert_true(typical > 0 && tail >= typical);

    /* A deadline in the past, and one shorter than a run. */
    tjob_init(&t, m, 1, QOS_PRIO_MEDIUM, 1, LEN);
    assert_int_equal(qos_sched_submit(s, &t.j), SCHEMA_MISSED_DEADLINE_PERSISTENT);
    assert_int_equal(t.j.refused, QOS_REFUSE_DEADLINE_PASSED);
    t.j.deadline_ns = now_ns() + typical / 4;
    assert_int_equal(qos_sched_submit(s, &t.j), SCHEMA_MISSED_DEADLINE_PERSISTENT);
    assert_int_equal(t.j.refused, QOS_REFUSE_TOO_SLOW);
    /* An invalid priority. */
    t.j.deadline_ns = 0;
    t.j.prio = (qos_prio)7;
    assert_int_equal(qos_sched_submit(s, &t.j), SCHEMA_INVALID_ARGUMENT);
    tjob_free(&t);

    /* Behind a long job of another app, two jobs fill app 1's queue and a third is
     * refused; a job that would fit alone but not behind them is MISSED_DEADLINE_TRANSIENT. */
    blocker b;
    blocker_start(s, &b, LEN);
    tjob q[2];
    for (int i = 0; i < 2; i++) {
        tjob_init(&q[i], m, 1, QOS_PRIO_MEDIUM, 0, LEN);
        assert_int_equal(qos_sched_submit(s, &q[i].j), SCHEMA_OK);
    }
    tjob_init(&t, m, 1, QOS_PRIO_MEDIUM, 0, LEN);
    assert_int_equal(qos_sched_submit(s, &t.j), SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT);
    assert_int_equal(t.j.refused, QOS_REFUSE_QUEUE_FULL);
    tjob_free(&t);
    tjob_init(&t, m, 2, QOS_PRIO_MEDIUM, now_ns() + 3 * tail / 2 + 100000, LEN);
    assert_int_equal(qos_sched_submit(s, &t.j), SCHEMA_MISSED_DEADLINE_TRANSIENT);
    assert_int_equal(t.j.refused, QOS_REFUSE_BUSY);
    tjob_free(&t);
    blocker_stop(s, &b);
    for (int i = 0; i < 2; i++) {
        wait_done(s, &q[i]);
        assert_int_equal(q[i].j.status, SCHEMA_OK);
        check_chain_result(&q[i], N);
        tjob_free(&q[i]);
    }

    qos_sched_stats st_;
    qos_sched_stats_get(s, &st_);
    assert_int_equal(st_.refused[QOS_REFUSE_DEADLINE_PASSED], 1);
    assert_int_equal(st_.refused[QOS_REFUSE_TOO_SLOW], 1);
    assert_int_equal(st_.refused[QOS_REFUSE_QUEUE_FULL], 1);
    assert_int_equal(st_.refused[QOS_REFUSE_BUSY], 1);
    assert_int_equal(st_.refused[QOS_REFUSE_INVALID], 1);
    assert_int_equal(st_.completed, 5);
    assert_int_equal(st_.cancelled, 1);
    assert_true(st_.latency_count[QOS_PRIO_MEDIUM] == 5 && st_.latency_ns[QOS_PRIO_MEDIUM][2] > 0);
    qos_sched_model_unref(m);
    qos_sched_free(s);
    assert_null(c.p); /* released with the last reference */
}

static void test_memory_limits(void **state) {
    (void)state;
    qos_sched_config cfg;
    qos_sched_config_default(&cfg);
    cfg.inline_ns = 0;
    enum { N = 100, LEN = 16384 };
    chain c;
    chain_make(&c, N, LEN);
    size_t bytes = eng_prepared_arena_bytes(c.p);
    assert_true(bytes >= 2 * LEN * sizeof(float));
    /* Beyond the device: refused at once. */
    cfg.device_memory = bytes - 1;
    qos_sched *s = new_sched(&cfg);
    qos_sched_model *m;
    char err[SCHEMA_ERR_LEN];
    assert_int_equal(qos_sched_model_new(s, c.p, QOS_PRIO_MEDIUM, NULL, NULL, &m, err, sizeof err),
                     SCHEMA_RESOURCE_EXHAUSTED_PERSISTENT);
    qos_sched_free(s);
    /* A quota of two executions' memory: a third waiting one is refused, while another
     * app has its own quota. */
    cfg.device_memory = bytes;
    cfg.app_memory = 2 * bytes;
    s = new_sched(&cfg);
    assert_int_equal(
        qos_sched_model_new(s, c.p, QOS_PRIO_MEDIUM, chain_release, &c, &m, err, sizeof err),
        SCHEMA_OK);
    blocker b;
    blocker_start(s, &b, LEN); /* same temporaries as m: within app 9's quota */
    tjob q[3], other;
    for (int i = 0; i < 2; i++) {
        tjob_init(&q[i], m, 1, QOS_PRIO_MEDIUM, 0, LEN);
        assert_int_equal(qos_sched_submit(s, &q[i].j), SCHEMA_OK);
    }
    tjob_init(&q[2], m, 1, QOS_PRIO_MEDIUM, 0, LEN);
    assert_int_equal(qos_sched_submit(s, &q[2].j), SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT);
    assert_int_equal(q[2].j.refused, QOS_REFUSE_MEMORY);
    tjob_init(&other, m, 2, QOS_PRIO_MEDIUM, 0, LEN);
    assert_int_equal(qos_sched_submit(s, &other.j), SCHEMA_OK);
    blocker_stop(s, &b);
    for (int i = 0; i < 2; i++)
        wait_done(s, &q[i]);
    wait_done(s, &other);
    for (int i = 0; i < 3; i++)
        tjob_free(&q[i]);
    tjob_free(&other);
    qos_sched_model_unref(m);
    qos_sched_free(s);
}

/* A long LOW job of app 1 is running; a HIGH job of app 1 arrives and finishes first; the
 * LOW job is suspended, then resumed (or restarted) and still right. */
static void preempt(bool restart) {
    qos_sched_config cfg;
    qos_sched_config_default(&cfg);
    cfg.restart = restart;
    cfg.inline_ns = 0;
    qos_sched *s = new_sched(&cfg);
    enum { LONG_N = 10000, SHORT_N = 4, LEN = 16384 };
    chain lc, sc;
    chain_make(&lc, LONG_N, LEN);
    chain_make(&sc, SHORT_N, LEN);
    qos_sched_model *lm, *sm;
    char err[SCHEMA_ERR_LEN];
    assert_int_equal(
        qos_sched_model_new(s, lc.p, QOS_PRIO_LOW, chain_release, &lc, &lm, err, sizeof err),
        SCHEMA_OK);
    assert_int_equal(
        qos_sched_model_new(s, sc.p, QOS_PRIO_HIGH, chain_release, &sc, &sm, err, sizeof err),
        SCHEMA_OK);
    completions = 0;
    tjob low, high;
    tjob_init(&low, lm, 1, QOS_PRIO_LOW, 0, LEN);
    tjob_init(&high, sm, 1, QOS_PRIO_HIGH, 0, LEN);
    assert_int_equal(qos_sched_submit(s, &low.j), SCHEMA_OK);
    if (!wait_running(s, &low)) fail_msg("a 10000-operation run ended unseen");
    assert_int_equal(qos_sched_submit(s, &high.j), SCHEMA_OK);
    wait_done(s, &high);
    wait_done(s, &low);
    assert_int_equal(high.j.status, SCHEMA_OK);
    assert_int_equal(low.j.status, SCHEMA_OK);
    check_chain_result(&high, SHORT_N);
    check_chain_result(&low, LONG_N);
    assert_int_equal(high.order, 1);
    assert_int_equal(low.order, 2);
    assert_int_equal(low.j.preemptions, 1);
    qos_sched_stats st;
    qos_sched_stats_get(s, &st);
    assert_int_equal(st.preempted, 1);
    tjob_free(&low);
    tjob_free(&high);
    qos_sched_model_unref(lm);
    qos_sched_model_unref(sm);
    qos_sched_free(s);
}

static void test_preempt_resume(void **state) {
    (void)state;
    preempt(false);
}

static void test_preempt_restart(void **state) {
    (void)state;
    preempt(true);
}

static void test_cancel_and_deadline_abort(void **state) {
    (void)state;
    qos_sched_config cfg;
    qos_sched_config_default(&cfg);
    cfg.inline_ns = 0;
    qos_sched *s = new_sched(&cfg);
    enum { N = 10000, LEN = 65536 };
    chain c;
    chain_make(&c, N, LEN);
    qos_sched_model *m;
    char err[SCHEMA_ERR_LEN];
    assert_int_equal(
        qos_sched_model_new(s, c.p, QOS_PRIO_MEDIUM, chain_release, &c, &m, err, sizeof err),
        SCHEMA_OK);
    tjob run, queued;
    tjob_init(&run, m, 1, QOS_PRIO_MEDIUM, 0, LEN);
    tjob_init(&queued, m, 1, QOS_PRIO_MEDIUM, 0, LEN);
    assert_int_equal(qos_sched_submit(s, &run.j), SCHEMA_OK);
    if (!wait_running(s, &run)) fail_msg("a 2000-operation run ended unseen");
    assert_int_equal(qos_sched_submit(s, &queued.j), SCHEMA_OK);
    qos_sched_cancel(s, &queued.j);
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    qos_sched_cancel(s, &run.j);
    wait_done(s, &queued);
    wait_done(s, &run);
    assert_true(queued.j.cancelled && run.j.cancelled);
    assert_int_equal(queued.j.status, SCHEMA_GENERAL_FAILURE);
    assert_int_equal(run.j.status, SCHEMA_GENERAL_FAILURE);
    tjob_free(&run);
    tjob_free(&queued);

    /* The estimate says a run is much shorter than it is (a fresh model, seeded low): a
     * deadline it cannot meet stops it at a checkpoint. */
    m->est.typical_ns = m->est.tail_ns = m->est.max_ns = 1000;
    tjob late;
    tjob_init(&late, m, 1, QOS_PRIO_MEDIUM, 0, LEN);
    late.j.deadline_ns = now_ns() + 20000000;
    assert_int_equal(qos_sched_submit(s, &late.j), SCHEMA_OK);
    wait_done(s, &late);
    /* Stopped at a checkpoint (TRANSIENT) — or, on a machine so loaded that the job reached
     * dispatch after its deadline, refused there (PERSISTENT). Either way it never ran to
     * completion past its deadline. */
    bool stopped = late.j.status == SCHEMA_MISSED_DEADLINE_TRANSIENT;
    assert_true(stopped || late.j.status == SCHEMA_MISSED_DEADLINE_PERSISTENT);
    assert_false(late.j.deadline_met);
    tjob_free(&late);
    qos_sched_stats st;
    qos_sched_stats_get(s, &st);
    assert_int_equal(st.cancelled, 2);
    if (stopped) assert_int_equal(st.deadline_missed, 1);
    qos_sched_model_unref(m);
    qos_sched_free(s);
}

/* A gate in the fault counter the workers call around each run: once armed, the next run
 * to start waits there until the gate opens; every other run passes. */
static pthread_mutex_t gate_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cond = PTHREAD_COND_INITIALIZER;
static bool gate_armed, gate_held, gate_open;

static uint64_t gated_faults(void) {
    pthread_mutex_lock(&gate_lock);
    if (gate_armed) {
        gate_armed = false;
        gate_held = true;
        pthread_cond_broadcast(&gate_cond);
        while (!gate_open)
            pthread_cond_wait(&gate_cond, &gate_lock);
    }
    pthread_mutex_unlock(&gate_lock);
    return 0;
}

/* Two lanes: while a job holds lane 0's only worker (at the gate), a job whose operations
 * are all on lane 1 runs; one split between the lanes waits on lane 0 when it gets there,
 * then ends right, having crossed lanes three times. */
static void test_lanes(void **state) {
    (void)state;
    qos_sched_config cfg;
    qos_sched_config_default(&cfg);
    cfg.inline_ns = 0;
    cfg.lanes = 2;
    cfg.fault_count = gated_faults;
    qos_sched *s = new_sched(&cfg);
    enum { N = 40, LEN = 1024 };
    chain c0, c1, c2;
    chain_make(&c0, N, LEN);
    chain_make(&c1, N, LEN);
    chain_make(&c2, N, LEN);
    qos_sched_model *on0, *on1, *split;
    char err[SCHEMA_ERR_LEN];
    assert_int_equal(
        qos_sched_model_new(s, c0.p, QOS_PRIO_MEDIUM, chain_release, &c0, &on0, err, sizeof err),
        SCHEMA_OK);
    assert_int_equal(
        qos_sched_model_new(s, c1.p, QOS_PRIO_MEDIUM, chain_release, &c1, &on1, err, sizeof err),
        SCHEMA_OK);
    assert_int_equal(
        qos_sched_model_new(s, c2.p, QOS_PRIO_MEDIUM, chain_release, &c2, &split, err, sizeof err),
        SCHEMA_OK);
    uint8_t lanes[N];
    memset(lanes, 1, sizeof lanes);
    assert_int_equal(qos_sched_model_set_lanes(on1, lanes), SCHEMA_OK);
    for (uint32_t k = 0; k < N; k++)
        lanes[k] = (k / 10) % 2 ? 0 : 1; /* 1, 0, 1, 0: ten operations each */
    assert_int_equal(qos_sched_model_set_lanes(split, lanes), SCHEMA_OK);

    pthread_mutex_lock(&gate_lock);
    gate_armed = true;
    pthread_mutex_unlock(&gate_lock);
    tjob g;
    tjob_init(&g, on0, 9, QOS_PRIO_MEDIUM, 0, LEN);
    assert_int_equal(qos_sched_submit(s, &g.j), SCHEMA_OK);
    pthread_mutex_lock(&gate_lock);
    while (!gate_held)
        pthread_cond_wait(&gate_cond, &gate_lock);
    pthread_mutex_unlock(&gate_lock);
    tjob t;
    tjob_init(&t, on1, 1, QOS_PRIO_MEDIUM, 0, LEN);
    assert_int_equal(qos_sched_submit(s, &t.j), SCHEMA_OK);
    wait_done(s, &t);
    assert_int_equal(t.j.status, SCHEMA_OK);
    check_chain_result(&t, N);
    assert_false(g.done); /* lane 0's job is still held */
    tjob_free(&t);

    tjob p;
    tjob_init(&p, split, 1, QOS_PRIO_MEDIUM, 0, LEN);
    assert_int_equal(qos_sched_submit(s, &p.j), SCHEMA_OK);
    qos_sched_stats st;
    for (int i = 0;; i++) { /* it reaches operation 10 and queues on lane 0 */
        qos_sched_stats_get(s, &st);
        if (st.lane[0].queued == 1) break;
        if (i == 200000) fail_msg("the split job never queued on lane 0");
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    assert_false(p.done);
    assert_int_equal(st.lane[0].arrived, 1);
    pthread_mutex_lock(&gate_lock);
    gate_open = true;
    pthread_cond_broadcast(&gate_cond);
    pthread_mutex_unlock(&gate_lock);
    wait_done(s, &g);
    assert_int_equal(g.j.status, SCHEMA_OK);
    check_chain_result(&g, N);
    tjob_free(&g);
    wait_done(s, &p);
    assert_int_equal(p.j.status, SCHEMA_OK);
    check_chain_result(&p, N);
    /* Time on device: its segments on both lanes, inside the whole run. */
    assert_true(p.j.run_ns > 0 && p.j.run_ns <= p.j.end_ns - p.j.start_ns);
    qos_sched_stats_get(s, &st);
    assert_int_equal(st.lane[0].arrived, 2);
    assert_int_equal(st.lane[1].arrived, 1);
    assert_int_equal(st.lane[1].workers, 1);
    assert_int_equal(st.lane[0].queued + st.lane[1].queued, 0);
    tjob_free(&p);
    qos_sched_model_unref(on0);
    qos_sched_model_unref(on1);
    qos_sched_model_unref(split);
    qos_sched_free(s);
}

int main(void) {
    qos_throughput_measure(&tp);
    fprintf(stderr, "flops/ns %.3f bytes/ns %.3f op_ns %.1f took %.2f ms\n", tp.flops_per_ns,
            tp.bytes_per_ns, tp.op_ns, tp.took_ns / 1e6);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_order),
        cmocka_unit_test(test_queue_ahead),
        cmocka_unit_test(test_estimator),
        cmocka_unit_test(test_estimator_against_sorting),
        cmocka_unit_test(test_hist),
        cmocka_unit_test(test_admission),
        cmocka_unit_test(test_memory_limits),
        cmocka_unit_test(test_preempt_resume),
        cmocka_unit_test(test_preempt_restart),
        cmocka_unit_test(test_cancel_and_deadline_abort),
        cmocka_unit_test(test_lanes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
