/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_load.c: one process's load on the daemon through the NNAPI layer. See ndk_load.h. */
#include "tests/ndk/ndk_load.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FAIL(...) (fprintf(stderr, "ndk_load: " __VA_ARGS__), fputc('\n', stderr), -1)

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- the FULLY_CONNECTED chain ------------------------------------------------------------- */

static int compile_at(ANeuralNetworksModel *m, int priority, ANeuralNetworksCompilation **out) {
    if (ANeuralNetworksCompilation_create(m, out) ||
        ANeuralNetworksCompilation_setPriority(*out, priority) ||
        ANeuralNetworksCompilation_finish(*out))
        return FAIL("cannot compile the FULLY_CONNECTED chain");
    return 0;
}

int ndk_fc_chain_build(ndk_fc_chain *c, uint32_t layers, uint32_t batch, uint32_t width) {
    memset(c, 0, sizeof *c);
    c->layers = layers, c->batch = batch, c->width = width;
    size_t n = (size_t)width * width;
    c->weights = malloc(n * sizeof(float));
    c->bias = malloc(width * sizeof(float));
    if (!c->weights || !c->bias) return FAIL("out of memory");
    for (size_t i = 0; i < n; i++) /* each layer averages its input, shifted a little */
        c->weights[i] = (float)(1.0 / width) * (float)(1 + i % 3) / 2.0f;
    for (uint32_t i = 0; i < width; i++)
        c->bias[i] = (float)(i % 7) * 0.01f;
    const uint32_t act_dims[] = {batch, width}, w_dims[] = {width, width}, b_dims[] = {width};
    ANeuralNetworksOperandType act = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, act_dims, 0, 0},
                               w = {ANEURALNETWORKS_TENSOR_FLOAT32, 2, w_dims, 0, 0},
                               b = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, b_dims, 0, 0},
                               i32 = {ANEURALNETWORKS_INT32, 0, NULL, 0, 0};
    ANeuralNetworksModel *m;
    if (ANeuralNetworksModel_create(&m)) return FAIL("cannot create a model");
    c->model = m;
    int32_t none = ANEURALNETWORKS_FUSED_NONE;
    /* 0 weights, 1 bias, 2 activation code, 3 the input, then one operand per layer. */
    int rc = ANeuralNetworksModel_addOperand(m, &w) || ANeuralNetworksModel_addOperand(m, &b) ||
             ANeuralNetworksModel_addOperand(m, &i32) || ANeuralNetworksModel_addOperand(m, &act) ||
             ANeuralNetworksModel_setOperandValue(m, 0, c->weights, n * sizeof(float)) ||
             ANeuralNetworksModel_setOperandValue(m, 1, c->bias, width * sizeof(float)) ||
             ANeuralNetworksModel_setOperandValue(m, 2, &none, sizeof none);
    for (uint32_t k = 0; k < layers && !rc; k++) {
        uint32_t in[] = {k == 0 ? 3 : 3 + k, 0, 1, 2}, out[] = {4 + k};
        rc = ANeuralNetworksModel_addOperand(m, &act) ||
             ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_FULLY_CONNECTED, 4, in, 1, out);
    }
    uint32_t ins[] = {3}, outs[] = {3 + layers};
    if (rc || ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs) ||
        ANeuralNetworksModel_finish(m))
        return FAIL("cannot build the FULLY_CONNECTED chain");
    if (compile_at(m, ANEURALNETWORKS_PRIORITY_HIGH, &c->high) ||
        compile_at(m, ANEURALNETWORKS_PRIORITY_LOW, &c->low))
        return -1;
    return 0;
}

void ndk_fc_chain_free(ndk_fc_chain *c) {
    ANeuralNetworksCompilation_free(c->high);
    ANeuralNetworksCompilation_free(c->low);
    ANeuralNetworksModel_free(c->model);
    free(c->weights);
    free(c->bias);
    memset(c, 0, sizeof *c);
}

/* One execution of compilation comp on in into out: create, set, compute, free. */
static int compute_once(ANeuralNetworksCompilation *comp, const float *in, float *out,
                        size_t bytes) {
    ANeuralNetworksExecution *e;
    if (ANeuralNetworksExecution_create(comp, &e)) return -1;
    int rc = ANeuralNetworksExecution_setInput(e, 0, NULL, in, bytes) ||
             ANeuralNetworksExecution_setOutput(e, 0, NULL, out, bytes) ||
             ANeuralNetworksExecution_compute(e);
    ANeuralNetworksExecution_free(e);
    return rc ? -1 : 0;
}

/* ---- HIGH under a LOW flood of another thread ---------------------------------------------- */

/* The LOW flood: computes back to back while `on`, acknowledges a pause (idle) once its
 * execution in flight is done. */
typedef struct flood {
    const ndk_fc_chain *c;
    atomic_bool on, idle, stop;
    uint64_t done;
    int failed;
} flood;

static void *flood_main(void *p) {
    flood *f = p;
    size_t n = (size_t)f->c->batch * f->c->width;
    float *in = calloc(n, sizeof *in), *out = calloc(n, sizeof *out);
    if (!in || !out) f->failed = 1;
    for (size_t i = 0; in && i < n; i++)
        in[i] = (float)(i % 5);
    while (!f->failed && !atomic_load(&f->stop)) {
        if (!atomic_load(&f->on)) {
            atomic_store(&f->idle, true);
            struct timespec pause = {0, 200000};
            nanosleep(&pause, NULL);
            continue;
        }
        atomic_store(&f->idle, false);
        if (compute_once(f->c->low, in, out, n * sizeof *in))
            f->failed = 1;
        else
            f->done++;
    }
    atomic_store(&f->idle, true);
    free(in);
    free(out);
    return NULL;
}

/* Turns the flood on or off; off returns once no LOW execution is in flight. */
static void flood_set(flood *f, bool on) {
    atomic_store(&f->on, on);
    if (on) {
        while (atomic_load(&f->idle) && !f->failed) /* its first execution is on the way */
            sched_yield();
        struct timespec settle = {0, 5000000};
        nanosleep(&settle, NULL);
        return;
    }
    while (!atomic_load(&f->idle))
        sched_yield();
}

typedef struct samples {
    uint64_t *t;
    int n;
} samples;

/* `count` HIGH executions into s, a pause of 1 to 4 ms before each; each result must equal
 * want. */
static int high_block(const ndk_fc_chain *c, int count, const float *in, const float *want,
                      float *out, size_t bytes, samples *s) {
    for (int i = 0; i < count; i++) {
        struct timespec pause = {0, 1000000 + (long)((s->n + i) * 7919 % 3000) * 1000};
        nanosleep(&pause, NULL);
        uint64_t t0 = now_ns();
        if (compute_once(c->high, in, out, bytes)) return FAIL("a HIGH execution failed");
        s->t[s->n++] = now_ns() - t0;
        if (memcmp(out, want, bytes)) return FAIL("a HIGH execution computed another result");
    }
    return 0;
}

static void p90_median(samples *s, double *p90, double *median) {
    qsort(s->t, (size_t)s->n, sizeof *s->t, cmp_u64);
    *p90 = (double)s->t[s->n * 9 / 10];
    *median = (double)s->t[s->n / 2];
}

/* Idle and flooded samples are taken in alternating blocks, so that whatever else the
 * machine does weighs on both alike. */
#define BLOCKS 5

int ndk_priority_run(const ndk_fc_chain *c, int n_samples, ndk_priority_result *out) {
    memset(out, 0, sizeof *out);
    size_t n = (size_t)c->batch * c->width, bytes = n * sizeof(float);
    int per_block = n_samples / BLOCKS > 0 ? n_samples / BLOCKS : 1;
    float *in = malloc(bytes), *want = malloc(bytes), *got = malloc(bytes);
    samples idle = {calloc((size_t)per_block * BLOCKS, sizeof(uint64_t)), 0};
    samples busy = {calloc((size_t)per_block * BLOCKS, sizeof(uint64_t)), 0};
    int rc = in && want && got && idle.t && busy.t ? 0 : FAIL("out of memory");
    for (size_t i = 0; !rc && i < n; i++)
        in[i] = (float)(i % 11) * 0.5f;
    if (!rc && compute_once(c->high, in, want, bytes)) rc = FAIL("the first HIGH execution failed");
    flood f = {.c = c};
    atomic_init(&f.idle, true);
    pthread_t th;
    bool started = !rc && pthread_create(&th, NULL, flood_main, &f) == 0;
    if (!rc && !started) rc = FAIL("cannot start the flood");
    for (int b = 0; !rc && b < BLOCKS; b++) {
        flood_set(&f, false);
        rc = high_block(c, per_block, in, want, got, bytes, &idle);
        if (rc) break;
        flood_set(&f, true);
        rc = f.failed ? FAIL("the LOW flood failed") : 0;
        if (!rc) rc = high_block(c, per_block, in, want, got, bytes, &busy);
    }
    if (started) {
        atomic_store(&f.stop, true);
        pthread_join(th, NULL);
        out->low_done = f.done;
        if (!rc && (f.failed || !f.done)) rc = FAIL("the LOW flood failed");
    }
    if (!rc) {
        p90_median(&idle, &out->idle_p90_ns, &out->idle_median_ns);
        p90_median(&busy, &out->flood_p90_ns, &out->flood_median_ns);
    }
    free(idle.t);
    free(busy.t);
    free(in);
    free(want);
    free(got);
    return rc;
}

/* ---- threads against processes ----------------------------------------------------------- */

#define RATE_N 16

typedef struct rater {
    ANeuralNetworksCompilation *c;
    uint64_t start, end; /* counting window, absolute */
    uint64_t done;
    int failed;
} rater;

/* Computes back to back until r->end, counting what completes inside [start, end). */
static void rate_loop(rater *r) {
    float a[2 * RATE_N], out[RATE_N];
    for (int i = 0; i < 2 * RATE_N; i++)
        a[i] = (float)i;
    for (uint64_t k = 0;; k++) {
        a[0] = (float)k;
        ANeuralNetworksExecution *e = NULL;
        int rc =
            ANeuralNetworksExecution_create(r->c, &e) ||
            ANeuralNetworksExecution_setInput(e, 0, NULL, a, RATE_N * sizeof(float)) ||
            ANeuralNetworksExecution_setInput(e, 1, NULL, a + RATE_N, RATE_N * sizeof(float)) ||
            ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out) ||
            ANeuralNetworksExecution_compute(e);
        ANeuralNetworksExecution_free(e);
        if (rc || out[0] != a[0] + a[RATE_N]) {
            r->failed = 1;
            return;
        }
        uint64_t t = now_ns();
        if (t >= r->end) return;
        if (t >= r->start) r->done++;
    }
}

static void *rate_thread(void *p) {
    rate_loop(p);
    return NULL;
}

/* The small model, compiled: out = a + b on [RATE_N] floats. */
static ANeuralNetworksCompilation *small_model(ANeuralNetworksModel **m) {
    const uint32_t dims[] = {RATE_N};
    ANeuralNetworksOperandType t = {ANEURALNETWORKS_TENSOR_FLOAT32, 1, dims, 0, 0},
                               i32 = {ANEURALNETWORKS_INT32, 0, NULL, 0, 0};
    int32_t none = 0;
    const uint32_t in[] = {0, 1, 2}, out[] = {3}, ins[] = {0, 1};
    ANeuralNetworksCompilation *c = NULL;
    if (ANeuralNetworksModel_create(m) || ANeuralNetworksModel_addOperand(*m, &t) ||
        ANeuralNetworksModel_addOperand(*m, &t) || ANeuralNetworksModel_addOperand(*m, &i32) ||
        ANeuralNetworksModel_addOperand(*m, &t) ||
        ANeuralNetworksModel_setOperandValue(*m, 2, &none, sizeof none) ||
        ANeuralNetworksModel_addOperation(*m, ANEURALNETWORKS_ADD, 3, in, 1, out) ||
        ANeuralNetworksModel_identifyInputsAndOutputs(*m, 2, ins, 1, out) ||
        ANeuralNetworksModel_finish(*m) || ANeuralNetworksCompilation_create(*m, &c) ||
        ANeuralNetworksCompilation_finish(c))
        return NULL;
    return c;
}

static void pin(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

/* A child: compiles, says it is ready, waits for the window, counts, reports. */
static void child_main(int ready_fd, int go_fd, int report_fd, double seconds, int cpu) {
    pin(cpu);
    ANeuralNetworksModel *m = NULL;
    rater r = {.c = small_model(&m)};
    uint64_t start = 0;
    char x = r.c ? 'r' : 'f';
    if (write(ready_fd, &x, 1) != 1 || read(go_fd, &start, sizeof start) != sizeof start) _exit(2);
    r.start = start;
    r.end = start + (uint64_t)(seconds * 1e9);
    if (r.c) rate_loop(&r);
    uint64_t rep[2] = {r.done, (uint64_t)(r.failed || !r.c)};
    _exit(write(report_fd, rep, sizeof rep) == sizeof rep ? 0 : 2);
}

static double rate_processes(int n, double seconds, int cpu) {
    int ready[2], go[2], report[2];
    if (pipe(ready) || pipe(go) || pipe(report)) return FAIL("pipe");
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) child_main(ready[1], go[0], report[1], seconds, cpu);
        if (pid < 0) return FAIL("fork");
    }
    int ok = 0;
    for (int i = 0; i < n; i++) {
        char x;
        if (read(ready[0], &x, 1) == 1 && x == 'r') ok++;
    }
    uint64_t start = now_ns() + 300000000ull; /* a warm-up before the window */
    for (int i = 0; i < n; i++)
        if (write(go[1], &start, sizeof start) != sizeof start) ok = -1;
    uint64_t total = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        uint64_t rep[2];
        if (read(report[0], rep, sizeof rep) == sizeof rep) {
            total += rep[0];
            failed += rep[1];
        } else {
            failed++;
        }
    }
    for (int i = 0; i < n; i++)
        wait(NULL);
    for (int k = 0; k < 2; k++)
        close(ready[k]), close(go[k]), close(report[k]);
    if (ok != n || failed) return FAIL("%d of %d processes failed", n - ok + (int)failed, n);
    return (double)total / seconds;
}

static double rate_threads(int n, double seconds, int cpu) {
    cpu_set_t saved;
    sched_getaffinity(0, sizeof saved, &saved);
    pin(cpu); /* the threads made now inherit it */
    ANeuralNetworksModel *m = NULL;
    ANeuralNetworksCompilation *c = small_model(&m);
    rater *r = calloc((size_t)n, sizeof *r);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    double rate = !c || !r || !th ? FAIL("cannot set up the threads") : 0;
    uint64_t start = now_ns() + 300000000ull;
    int started = 0;
    for (int i = 0; rate == 0 && i < n; i++) {
        r[i] = (rater){.c = c, .start = start, .end = start + (uint64_t)(seconds * 1e9)};
        if (pthread_create(&th[i], NULL, rate_thread, &r[i])) break;
        started++;
    }
    uint64_t total = 0;
    int failed = started < n && rate == 0;
    for (int i = 0; i < started; i++) {
        pthread_join(th[i], NULL);
        total += r[i].done;
        failed |= r[i].failed;
    }
    if (rate == 0) rate = failed ? FAIL("a thread failed") : (double)total / seconds;
    sched_setaffinity(0, sizeof saved, &saved);
    free(r);
    free(th);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);
    return rate;
}

double ndk_rate(int n, bool processes, double seconds, int cpu) {
    return processes ? rate_processes(n, seconds, cpu) : rate_threads(n, seconds, cpu);
}
