/* SPDX-License-Identifier: Apache-2.0 */
/* test_large_model (integration): a 100,000-operation chain (x + 1, one ADD after another)
 * built through the NNAPI NDK API against a real daemon: finish and the compilation take
 * time linear in the model (under 0.5 s and 2 s on the 2-core machine this was built on),
 * the chain computes right, and while one client compiles it another client's small
 * executions keep their latency: none waits 100 ms (the daemon prepares large models off
 * its event loop). Their p99 is reported three ways: alone, during the compiles, and beside
 * another process that only keeps one CPU busy as long as a compile (the control: what one
 * busy CPU costs them on this machine whoever keeps it busy; on a 2-CPU VM it multiplies
 * their p99 alone several times, docs/limits.md). The p99s are not judged: their tails
 * vary too much from run to run for a bound that fails only when something is wrong.
 *
 * The time bounds are judged only when the rest of the machine is quiet (quiet.h) and not
 * under a sanitizer; otherwise the figures are printed and the test says it could not
 * judge them. NND_TEST_CHAIN_OPS sets the length. */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nnd/nnd_wire.h"
#include "tests/ndk/ndk_fixture.h"
#include "tests/support/quiet.h"
#include "tests/support/timing.h"
#include "tests/support/wire.h"

#define FINISH_LIMIT_S  0.5
#define COMPILE_LIMIT_S 2.0
/* The longest an execution due during a compile may wait: far above this machine's own
 * tail (5 to 20 ms beside a busy CPU, quiet), far below a compile held on the event loop
 * (hundreds of ms). */
#define WAIT_LIMIT_MS 100.0

static uint32_t chain_ops(void) {
    const char *v = getenv("NND_TEST_CHAIN_OPS");
    long n = v ? strtol(v, NULL, 10) : 100000;
    return n > 0 ? (uint32_t)n : 100000;
}

/* x_{k+1} = x_k + step over [4] floats, n times: operand 0 the input, 1 the constant step, 2
 * the activation, then x_1 .. x_n (x_n the output). */
static ANeuralNetworksModel *chain_model(uint32_t n, float step, double *build_s,
                                         double *finish_s) {
    uint64_t t0 = bench_now_ns();
    ANeuralNetworksModel *m;
    assert_int_equal(ANeuralNetworksModel_create(&m), OK);
    ANeuralNetworksOperandType t = tensor(dims_n);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
    assert_int_equal(ANeuralNetworksModel_addOperand(m, &k_int32), OK);
    const float steps[N] = {step, step, step, step};
    int32_t act = 0;
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 1, steps, sizeof steps), OK);
    assert_int_equal(ANeuralNetworksModel_setOperandValue(m, 2, &act, sizeof act), OK);
    for (uint32_t k = 0; k < n; k++) {
        assert_int_equal(ANeuralNetworksModel_addOperand(m, &t), OK);
        uint32_t in[3] = {k ? 2 + k : 0, 1, 2}, out[1] = {3 + k};
        assert_int_equal(ANeuralNetworksModel_addOperation(m, ANEURALNETWORKS_ADD, 3, in, 1, out),
                         OK);
    }
    const uint32_t ins[] = {0}, outs[] = {2 + n};
    assert_int_equal(ANeuralNetworksModel_identifyInputsAndOutputs(m, 1, ins, 1, outs), OK);
    uint64_t t1 = bench_now_ns();
    assert_int_equal(ANeuralNetworksModel_finish(m), OK);
    *build_s = (double)(t1 - t0) / 1e9;
    *finish_s = (double)(bench_now_ns() - t1) / 1e9;
    return m;
}

/* Another client (its own connection and session) running a small ADD over and over. */
typedef struct executor {
    nnd_client *c;
    uint64_t handle;
    int pool;
    wire_exec e;
    atomic_bool stop;
    atomic_bool on, idle; /* executor_run: executing on its schedule, or waiting (idle) */
    uint64_t *lat, *at;   /* each execution's latency and when it was due */
    size_t n, cap;
    uint64_t due; /* when the next execution is due (executor_run, execute_for) */
} executor;

static void executor_open(executor *x) {
    memset(x, 0, sizeof *x);
    char err[256];
    x->c = nnd_client_connect(g_daemon.socket_path, "test_large_model", err, sizeof err);
    assert_non_null(x->c);
    wire_add_model m;
    wire_add_model_init(&m, -1);
    assert_int_equal(
        nnd_client_prepare(x->c, &m.model, NULL, 0, 0, 0, 0, &x->handle, err, sizeof err), 0);
    float io[6] = {1, 2, 3, 4, 0, 0};
    x->pool = wire_memfd(io, sizeof io, 4096);
    wire_exec_init(&x->e, x->handle, 2, 4096);
    x->cap = 1 << 20;
    x->lat = malloc(sizeof *x->lat * x->cap);
    x->at = malloc(sizeof *x->at * x->cap);
    assert_true(x->lat && x->at);
}

static void executor_close(executor *x) {
    free(x->lat);
    free(x->at);
    close(x->pool);
    nnd_client_close(x->c);
}

/* One execution; its latency counts from `from`. */
static void execute_from(executor *x, uint64_t from) {
    Nnd__Reply *r = NULL;
    char err[256];
    int st =
        nnd_client_execute(x->c, x->handle, &x->e.req, &x->pool, 1, false, 0, &r, err, sizeof err);
    uint64_t took = bench_now_ns() - from;
    if (r) nnd__reply__free_unpacked(r, NULL);
    assert_int_equal(st, 0);
    if (x->n < x->cap) {
        x->at[x->n] = from;
        x->lat[x->n++] = took;
    }
}

static void execute_once(executor *x) {
    execute_from(x, bench_now_ns());
}

/* The executor as a client with a schedule: an execution due every PERIOD_NS, each one's
 * latency counted from when it was due, so that a stall counts for every execution due
 * meanwhile (one that runs late starts at once), not once as a client that waits for each
 * answer would see it. */
#define PERIOD_NS 250000u
static void execute_due(executor *x) {
    if (!x->due) x->due = bench_now_ns();
    x->due += PERIOD_NS;
    struct timespec ts = {.tv_sec = (time_t)(x->due / 1000000000u),
                          .tv_nsec = (long)(x->due % 1000000000u)};
    while (bench_now_ns() < x->due &&
           clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
    execute_from(x, x->due);
}

static void *executor_run(void *arg) {
    executor *x = arg;
    while (!atomic_load(&x->stop)) {
        if (atomic_load(&x->on)) {
            atomic_store(&x->idle, false);
            execute_due(x);
        } else {
            x->due = 0; /* a fresh schedule once on again */
            atomic_store(&x->idle, true);
            usleep(1000);
        }
    }
    return NULL;
}

/* Stops executor_run's schedule and waits until its last execution has its answer: the work
 * this client does between windows (checking a chain's result, building the next one) then
 * never delays an execution that was due in a window. */
static void executor_pause(executor *x) {
    atomic_store(&x->on, false);
    while (!atomic_load(&x->idle))
        usleep(200);
}
static double p99(uint64_t *v, size_t n) {
    qsort(v, n, sizeof *v, bench_cmp_u64);
    return (double)v[n * 99 / 100];
}

static double compile_s(ANeuralNetworksModel *m, ANeuralNetworksCompilation **out) {
    uint64_t t0 = bench_now_ns();
    *out = compile(m, false);
    return (double)(bench_now_ns() - t0) / 1e9;
}

static void check_computes(ANeuralNetworksCompilation *c, uint32_t n, float step) {
    float in[N] = {1, 2, 3, 4}, out[N] = {0};
    ANeuralNetworksExecution *e;
    assert_int_equal(ANeuralNetworksExecution_create(c, &e), OK);
    assert_int_equal(ANeuralNetworksExecution_setInput(e, 0, NULL, in, sizeof in), OK);
    assert_int_equal(ANeuralNetworksExecution_setOutput(e, 0, NULL, out, sizeof out), OK);
    assert_int_equal(ANeuralNetworksExecution_compute(e), OK);
    ANeuralNetworksExecution_free(e);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == in[i] + (float)n * step);
}

/* What this uid's app holds of key (admin status); -1 when it has no record. */
static double app_num(const char *key) {
    cJSON *root = tst_admin_status(&g_daemon);
    const cJSON *apps = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "quotas"), "apps"), *a;
    double x = -1;
    cJSON_ArrayForEach(a, apps) {
        const cJSON *v = cJSON_GetObjectItem(a, key);
        if (cJSON_GetObjectItem(a, "uid")->valueint == (int)getuid() && cJSON_IsNumber(v))
            x = v->valuedouble;
    }
    cJSON_Delete(root);
    return x;
}

/* Waits up to 60 s for app_num(key) to meet want (above it when above, else equal). */
static bool app_num_reaches(const char *key, double want, bool above) {
    for (int i = 0; i < 6000; i++) {
        double v = app_num(key);
        if (above ? v > want : v == want) return true;
        usleep(10000);
    }
    return false;
}

/* A child compiling a 20,000-operation chain: killed with SIGKILL as soon as its
 * PrepareModel is admitted (its request counts for the app: above `bytes`), or left to
 * finish. */
static void compile_in_child(double bytes, bool kill_it) {
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(ready[0]);
        double build, finish;
        ANeuralNetworksModel *m = chain_model(20000, 1, &build, &finish);
        ANeuralNetworksCompilation *c;
        if (ANeuralNetworksCompilation_create(m, &c) != OK) _exit(2);
        if (write(ready[1], "x", 1) != 1) _exit(2);
        _exit(ANeuralNetworksCompilation_finish(c) == OK ? 0 : 3);
    }
    close(ready[1]);
    char x;
    assert_int_equal(read(ready[0], &x, 1), 1);
    close(ready[0]);
    int ws = 0;
    if (kill_it) {
        assert_true(app_num_reaches("prepared_bytes", bytes, true));
        kill(pid, SIGKILL);
    }
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    if (!kill_it) assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}

/* Clients killed while the daemon prepares their large model off the loop: the daemon
 * drops the preparation when it ends (no answer to send, nothing kept), the request's
 * bytes and descriptors it counted for the app while it held them come back, and it goes
 * on serving. The first is prepared in place (a first sighting); once one compile has
 * finished, the last goes through the content cache. Runs first, before this process
 * opens its own NNAPI connection; another connection of this uid (the executor) keeps the
 * app's record meanwhile. */
static void test_killed_during_compile(void **state) {
    (void)state;
    executor e;
    executor_open(&e);
    double bytes = app_num("prepared_bytes"), fds = app_num("descriptors");
    const bool kills[] = {true, false, true};
    for (int i = 0; i < 3; i++) {
        compile_in_child(bytes, kills[i]);
        assert_true(app_num_reaches("prepared_bytes", bytes, false));
        assert_true(app_num_reaches("descriptors", fds, false));
    }
    /* The daemon still serves: another client computes. */
    for (int i = 0; i < 20; i++)
        execute_once(&e);
    executor_close(&e);
}

/* Rounds of the executor alone, then beside a compile: every round compiles a chain the
 * daemon has not seen (its step differs), and the executions due in each kind of window are
 * pooled, so that this machine's own stalls (a VM's, milliseconds now and then) fall on
 * both sides alike instead of deciding one half-second's p99. */
#define ROUNDS  5
#define ALONE_S 0.5

typedef struct window {
    uint64_t from, to;
} window;

static window timed_sleep(double seconds) {
    window w = {.from = bench_now_ns()};
    struct timespec ts = {.tv_sec = (time_t)seconds,
                          .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) == EINTR) {
    }
    w.to = bench_now_ns();
    return w;
}

static bool in_windows(uint64_t t, const window *w, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (t >= w[i].from && t < w[i].to) return true;
    return false;
}

/* Another process keeping one CPU busy for `seconds`, as the daemon's compile does: the
 * control that tells what one busy CPU alone costs the executor on this machine. */
static window busy_cpu(double seconds) {
    window w = {.from = bench_now_ns()};
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uint64_t end = bench_now_ns() + (uint64_t)(seconds * 1e9);
        volatile uint64_t spin = 0;
        while (bench_now_ns() < end)
            spin++;
        _exit(0);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    w.to = bench_now_ns();
    return w;
}

/* The latencies of the executions due in one of the windows, and their count. */
static size_t latencies_in(const executor *x, const window *w, size_t n, uint64_t *out) {
    size_t k = 0;
    for (size_t i = 0; i < x->n; i++)
        if (in_windows(x->at[i], w, n)) out[k++] = x->lat[i];
    return k;
}

/* The chain compiled by itself (the compile bound's time), then ROUNDS more compiled while
 * another client executes on its schedule, each after ALONE_S of that client alone (and
 * once more at the end) and followed by a process spinning as long. `finish` is judged on
 * the best of the ROUNDS + 1 models' (the same work each time: a VM's slow moments only
 * add time). The bounds are judged when the rest of the machine kept less than a fifth of
 * a CPU busy meanwhile (quiet.h): the load average counts this test's own threads. */
static void test_chain_compiles_beside_executions(void **state) {
    (void)state;
    uint32_t n = chain_ops();
    tst_quiet quiet;
    tst_quiet_start(&quiet, g_daemon.pid);
    double build, finish;
    ANeuralNetworksModel *m = chain_model(n, 1, &build, &finish);
    double finish_worst = finish;
    ANeuralNetworksCompilation *c;
    double compile = compile_s(m, &c);
    check_computes(c, n, 1);
    ANeuralNetworksCompilation_free(c);
    ANeuralNetworksModel_free(m);

    executor x;
    executor_open(&x);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, executor_run, &x), 0);
    window alone[ROUNDS + 1], during[ROUNDS], spun[ROUNDS];
    double compile_beside = 0;
    for (int r = 0; r < ROUNDS; r++) {
        double build_r, finish_r;
        float step = (float)(2 + r);
        m = chain_model(n, step, &build_r, &finish_r);
        if (finish_r < finish) finish = finish_r; /* the best: a slow host only adds time */
        if (finish_r > finish_worst) finish_worst = finish_r;
        atomic_store(&x.on, true);
        alone[r] = timed_sleep(ALONE_S);
        during[r].from = bench_now_ns();
        double s = compile_s(m, &c);
        during[r].to = bench_now_ns();
        spun[r] = busy_cpu(s);
        executor_pause(&x);
        if (s > compile_beside) compile_beside = s;
        check_computes(c, n, step);
        ANeuralNetworksCompilation_free(c);
        ANeuralNetworksModel_free(m);
    }
    atomic_store(&x.on, true);
    alone[ROUNDS] = timed_sleep(ALONE_S);
    executor_pause(&x);
    atomic_store(&x.stop, true);
    pthread_join(t, NULL);

    uint64_t *v = malloc(sizeof *v * (x.n + 1));
    assert_non_null(v);
    size_t n_during = latencies_in(&x, during, ROUNDS, v);
    double max_during = 0;
    for (size_t i = 0; i < n_during; i++)
        if ((double)v[i] > max_during) max_during = (double)v[i];
    double p99_during = n_during ? p99(v, n_during) : 0;
    size_t n_alone = latencies_in(&x, alone, ROUNDS + 1, v);
    double p99_alone = n_alone ? p99(v, n_alone) : 0;
    size_t n_spun = latencies_in(&x, spun, ROUNDS, v);
    double p99_spun = n_spun ? p99(v, n_spun) : 0;
    free(v);
    executor_close(&x);

    double others = tst_quiet_others(&quiet);
    bool busy = others > 0.2, sanitized = !TST_TIMING_MEANINGFUL;
    double ratio = p99_alone > 0 ? p99_during / p99_alone : 0;
    print_message("# %u operations: built in %.3f s, finish %.3f s (the best of %d; the worst "
                  "%.3f s), compile %.3f s (at most "
                  "%.3f s beside the executor); executor p99 (one execution due every %.0f us) "
                  "alone %.3f ms over %zu executions, during %d compiles %.3f ms (longest %.3f) "
                  "over %zu, beside a process spinning as long %.3f ms over %zu: during / alone "
                  "%.2f, during / spinning %.2f; the rest of the machine kept %.2f CPUs busy%s\n",
                  n, build, finish, ROUNDS + 1, finish_worst, compile, compile_beside,
                  PERIOD_NS / 1e3, p99_alone / 1e6, n_alone, ROUNDS, p99_during / 1e6,
                  max_during / 1e6, n_during, p99_spun / 1e6, n_spun, ratio,
                  p99_spun > 0 ? p99_during / p99_spun : 0, others,
                  sanitized ? " (a sanitizer build: bounds not judged)"
                  : busy    ? " (machine too busy: bounds not judged)"
                            : "");
    if (busy || sanitized || n != 100000) return;
    assert_true(finish < FINISH_LIMIT_S);
    assert_true(compile < COMPILE_LIMIT_S);
    assert_true(n_during >= 100 * ROUNDS);
    assert_true(max_during / 1e6 <= WAIT_LIMIT_MS);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_killed_during_compile),
        cmocka_unit_test(test_chain_compiles_beside_executions),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}
