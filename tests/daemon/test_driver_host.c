/* SPDX-License-Identifier: Apache-2.0 */
/* test_driver_host (unit, with processes): drivers in a driver host, through the proxy
 * table (driverhost/drvhost.h), with drivers built to fail (drv_fault_driver.c): a hang
 * ends at its bound with a clear status and costs a restart; a crash on every third call
 * fails only that call, later calls work, and repeated crashes disable the driver; a leak
 * costs a restart at the memory limit; a pool its client shrinks while the host reads it
 * is the client's error (no restart). Plus the tensors' path (shared region or staging),
 * asynchronous start(), a driver with start() of its own overlapping four executions in
 * its host, device memory, cache blobs, plugins refused (the wrong ABI, a crash
 * at load), a plugin loaded from the fd its caller checked, and
 * the round trip of a tiny execute through the host against the same call in process. */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "driverhost/drvhost.h"
#include "tests/support/harness.h"

#define OP_RELU 19
#define N       1024
#define HANG    7001.0f
#define SLOW    7002.0f
#define LEAK    7003.0f

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct fixture {
    drvhost *h;
    const nnd_driver *d;
    nnd_driver_device_info dev;
    void *prepared;
} fixture;

static const nnd_driver_operand g_operands[2] = {
    {.type = NND_DRIVER_TENSOR_FLOAT32, .rank = 1, .dims = {N}, .lifetime = NND_DRIVER_INPUT},
    {.type = NND_DRIVER_TENSOR_FLOAT32, .rank = 1, .dims = {N}, .lifetime = NND_DRIVER_OUTPUT}};
static const uint32_t g_in[1] = {0}, g_out[1] = {1};
static const nnd_driver_operation g_op = {OP_RELU, 1, 1, g_in, g_out, 0};
static const nnd_driver_model g_model = {2, g_operands, 1, &g_op, 1, 1, g_in, g_out, false};

static void start_host(fixture *f, const char *so, const drvhost_limits *lim) {
    char err[256] = "";
    memset(f, 0, sizeof *f);
    f->d = drvhost_start(so, lim, &f->h, err, sizeof err);
    if (!f->d) fail_msg("drvhost_start: %s", err);
    assert_int_equal(f->d->open(&f->dev, 1, err, sizeof err), 1);
    bool sup = false;
    assert_int_equal(f->d->supported_operations(f->dev.device, &g_model, &sup, err, sizeof err),
                     NND_DRIVER_OK);
    assert_true(sup);
    nnd_driver_prepare_args args = {NND_DRIVER_PREFER_FAST_SINGLE_ANSWER,
                                    NND_DRIVER_PRIORITY_MEDIUM, NND_DRIVER_NO_DEADLINE};
    nnd_driver_prepared_info out = {0};
    int rc = f->d->prepare(f->dev.device, &g_model, &args, &out, err, sizeof err);
    if (rc != NND_DRIVER_OK) fail_msg("prepare: %d %s", rc, err);
    f->prepared = out.prepared;
}

static void stop_host(fixture *f) {
    if (f->prepared) f->d->release(f->prepared);
    f->d->close();
    drvhost_stop(f->h);
}

/* One execution of RELU over in[0..N) into out; the status, the message in err. */
static int run(fixture *f, float *in, float *out, uint64_t deadline_ns, char *err, size_t errlen) {
    nnd_driver_arg a = {.data = in, .length = N * sizeof(float), .rank = 1, .dims = {N}};
    nnd_driver_arg b = {.data = out, .length = N * sizeof(float), .rank = 1, .dims = {N}};
    err[0] = '\0';
    nnd_driver_execution x = {.prepared = f->prepared,
                              .n_inputs = 1,
                              .n_outputs = 1,
                              .inputs = &a,
                              .outputs = &b,
                              .priority = NND_DRIVER_PRIORITY_MEDIUM,
                              .deadline_ns = deadline_ns,
                              .err = err,
                              .errlen = errlen};
    return f->d->execute(&x);
}

static void fill(float *in, float first) {
    for (int i = 0; i < N; i++)
        in[i] = (float)(i % 7) - 3.0f;
    in[0] = first;
}

static void check_relu(const float *in, const float *out) {
    for (int i = 0; i < N; i++)
        assert_true(out[i] == (in[i] > 0 ? in[i] : 0));
}

static void test_runs_and_places_tensors(void **state) {
    (void)state;
    fixture f;
    start_host(&f, FAULT_DRIVER_SO, NULL);
    char err[256];
    float *in = malloc(N * sizeof(float)), *out = calloc(N, sizeof(float));
    fill(in, 1.0f);
    assert_int_equal(run(&f, in, out, 0, err, sizeof err), NND_DRIVER_OK);
    check_relu(in, out);
    drvhost_stats st;
    drvhost_get_stats(f.h, &st);
    assert_int_equal(st.staged_calls, 1); /* malloc'd memory: staged */

    /* The same in a registered memfd: no staging. */
    int fd = memfd_create("pool", MFD_CLOEXEC);
    assert_int_equal(ftruncate(fd, 2 * N * sizeof(float)), 0);
    float *pool = mmap(NULL, 2 * N * sizeof(float), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int id = drvhost_register_region(fd, 0, pool, 2 * N * sizeof(float), true);
    assert_true(id > 0);
    fill(pool, 2.0f);
    memset(pool + N, 0, N * sizeof(float));
    assert_int_equal(run(&f, pool, pool + N, 0, err, sizeof err), NND_DRIVER_OK);
    check_relu(pool, pool + N);
    drvhost_get_stats(f.h, &st);
    assert_int_equal(st.staged_calls, 1);
    drvhost_unregister_region(id);
    munmap(pool, 2 * N * sizeof(float));
    close(fd);
    free(in), free(out);
    stop_host(&f);
}

static void test_hang_ends_at_bound(void **state) {
    (void)state;
    fixture f;
    drvhost_limits lim = {.call_timeout_ms = 500};
    start_host(&f, FAULT_DRIVER_SO, &lim);
    char err[256];
    float in[N], out[N];
    fill(in, HANG);
    drvhost_stats st;
    drvhost_get_stats(f.h, &st);
    pid_t first = st.pid;
    uint64_t t0 = now_ns();
    assert_int_equal(run(&f, in, out, 0, err, sizeof err), NND_DRIVER_GENERAL_FAILURE);
    uint64_t took = now_ns() - t0;
    assert_non_null(strstr(err, "did not answer within 500 ms"));
    assert_true(took >= 500000000ull);
    assert_true(took < 5000000000ull); /* the bound, not forever */
    /* A deadline: MISSED_DEADLINE_TRANSIENT. */
    t0 = now_ns();
    int rc = run(&f, in, out, now_ns() + 200000000ull, err, sizeof err);
    if (rc != NND_DRIVER_MISSED_DEADLINE_TRANSIENT) fail_msg("status %d: %s", rc, err);
    assert_true(now_ns() - t0 < 5000000000ull);
    /* Restarted twice, prepared again on use, and it works. */
    fill(in, 1.0f);
    assert_int_equal(run(&f, in, out, 0, err, sizeof err), NND_DRIVER_OK);
    check_relu(in, out);
    drvhost_get_stats(f.h, &st);
    assert_int_equal(st.restarts, 2);
    assert_true(st.pid != first && st.pid > 0);
    assert_false(st.disabled);
    printf("hang: bound 500 ms, answered in %.0f ms\n", (double)took / 1e6);
    stop_host(&f);
}

static void test_crash_restarts_then_disables(void **state) {
    (void)state;
    fixture f;
    drvhost_limits lim = {.max_restarts = 2, .restart_window_ms = 60000};
    start_host(&f, CRASH3_DRIVER_SO, &lim);
    char err[256];
    float in[N], out[N];
    fill(in, 1.0f);
    /* Calls 1 and 2 of each host work, its third crashes it. */
    for (int round = 0; round < 3; round++) {
        assert_int_equal(run(&f, in, out, 0, err, sizeof err), NND_DRIVER_OK);
        assert_int_equal(run(&f, in, out, 0, err, sizeof err), NND_DRIVER_OK);
        assert_int_equal(run(&f, in, out, 0, err, sizeof err), NND_DRIVER_DEVICE_UNAVAILABLE);
        assert_non_null(strstr(err, "signal 11"));
        assert_false(drvhost_disabled(f.h) && round < 2);
    }
    /* Three restarts within the window, more than 2: disabled, and every call says so. */
    assert_true(drvhost_disabled(f.h));
    assert_true(drvhost_device_disabled(f.dev.device));
    assert_false(drvhost_device_disabled(&f)); /* not a proxy device */
    assert_int_equal(run(&f, in, out, 0, err, sizeof err), NND_DRIVER_DEVICE_UNAVAILABLE);
    assert_non_null(strstr(err, "disabled"));
    stop_host(&f);
}

static void test_leak_costs_restart(void **state) {
    (void)state;
    fixture f;
    drvhost_limits lim = {.memory_limit_bytes = 48u << 20};
    start_host(&f, FAULT_DRIVER_SO, &lim);
    char err[256];
    float in[N], out[N];
    fill(in, LEAK);
    drvhost_stats st = {0};
    int failed = 0;
    for (int i = 0; i < 300 && st.restarts == 0; i++) {
        if (run(&f, in, out, 0, err, sizeof err) != NND_DRIVER_OK) failed++;
        drvhost_get_stats(f.h, &st);
    }
    assert_true(st.restarts >= 1);
    assert_non_null(strstr(st.last_fault, "over its limit of 48 MiB"));
    assert_true(failed <= 1);
    fill(in, 1.0f);
    assert_int_equal(run(&f, in, out, 0, err, sizeof err), NND_DRIVER_OK);
    check_relu(in, out);
    stop_host(&f);
}

typedef struct shrinker {
    int fd;
    unsigned delay_ms;
} shrinker;

static void *shrink_later(void *arg) {
    shrinker *s = arg;
    usleep(s->delay_ms * 1000u);
    if (ftruncate(s->fd, 0) < 0) abort();
    return NULL;
}

static void test_shrunk_pool_is_client_error(void **state) {
    (void)state;
    fixture f;
    start_host(&f, FAULT_DRIVER_SO, NULL);
    char err[256];
    size_t bytes = 2 * N * sizeof(float);
    int fd = memfd_create("pool", MFD_CLOEXEC);
    assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
    float *pool = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int id = drvhost_register_region(fd, 0, pool, bytes, true);
    float *out = calloc(N, sizeof(float));
    drvhost_stats st;
    drvhost_get_stats(f.h, &st);
    pid_t pid = st.pid;

    /* Shrunk while the host reads it (the output is elsewhere: the test reads nothing of
     * the shrunk file itself). */
    fill(pool, SLOW);
    shrinker s = {fd, 100};
    pthread_t t;
    pthread_create(&t, NULL, shrink_later, &s);
    assert_int_equal(run(&f, pool, out, 0, err, sizeof err), NND_DRIVER_INVALID_ARGUMENT);
    pthread_join(t, NULL);
    assert_non_null(strstr(err, "memory pool shrank"));
    /* Shrunk before the call: refused before the driver runs. */
    assert_int_equal(run(&f, pool, out, 0, err, sizeof err), NND_DRIVER_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "memory pool shrank"));
    drvhost_get_stats(f.h, &st);
    assert_int_equal(st.pid, pid); /* no restart: not the driver's fault */
    assert_int_equal(st.restarts, 0);
    assert_int_equal(st.pool_shrinks, 2);
    assert_false(drvhost_disabled(f.h));
    /* The client grows it back: the host maps it again and the call works. */
    assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
    fill(pool, 1.0f);
    assert_int_equal(run(&f, pool, out, 0, err, sizeof err), NND_DRIVER_OK);
    check_relu(pool, out);
    drvhost_unregister_region(id);
    munmap(pool, bytes);
    close(fd);
    free(out);
    stop_host(&f);
}

typedef struct done_flag {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int status, done;
} done_flag;
static done_flag g_done = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void on_complete(nnd_driver_execution *x, int status) {
    (void)x;
    pthread_mutex_lock(&g_done.mu);
    g_done.status = status, g_done.done = 1;
    pthread_cond_signal(&g_done.cv);
    pthread_mutex_unlock(&g_done.mu);
}

static int start_and_wait(fixture *f, float *in, float *out, char *err, size_t errlen) {
    nnd_driver_arg a = {.data = in, .length = N * sizeof(float), .rank = 1, .dims = {N}};
    nnd_driver_arg b = {.data = out, .length = N * sizeof(float), .rank = 1, .dims = {N}};
    nnd_driver_execution x = {.prepared = f->prepared,
                              .n_inputs = 1,
                              .n_outputs = 1,
                              .inputs = &a,
                              .outputs = &b,
                              .err = err,
                              .errlen = errlen,
                              .complete = on_complete};
    g_done.done = 0;
    int rc = f->d->start(&x);
    if (rc != NND_DRIVER_STARTED) return rc;
    pthread_mutex_lock(&g_done.mu);
    while (!g_done.done)
        pthread_cond_wait(&g_done.cv, &g_done.mu);
    pthread_mutex_unlock(&g_done.mu);
    return g_done.status;
}

static void test_async_memory_cache(void **state) {
    (void)state;
    fixture f;
    drvhost_limits lim = {.call_timeout_ms = 500};
    start_host(&f, FAULT_DRIVER_SO, &lim);
    char err[256];
    float in[N], out[N];
    fill(in, 1.0f);
    assert_int_equal(start_and_wait(&f, in, out, err, sizeof err), NND_DRIVER_OK);
    check_relu(in, out);
    fill(in, HANG);
    assert_int_equal(start_and_wait(&f, in, out, err, sizeof err), NND_DRIVER_GENERAL_FAILURE);
    assert_non_null(strstr(err, "did not answer"));
    /* After the restart: start() hands the wait (new host, partition prepared again) to a
     * thread of its own and the execution completes. */
    fill(in, 2.0f);
    assert_int_equal(start_and_wait(&f, in, out, err, sizeof err), NND_DRIVER_OK);
    check_relu(in, out);

    /* Device memory: written, executed from, read back. */
    nnd_driver_buffer_role role = {f.prepared, false, 0, 1.0f};
    nnd_driver_buffer_desc desc = {g_operands[0], N * sizeof(float), 1, &role};
    uint64_t handle = 0;
    assert_int_equal(f.d->allocate(f.dev.device, &desc, &handle, err, sizeof err), NND_DRIVER_OK);
    fill(in, 5.0f);
    assert_int_equal(f.d->memory_write(f.dev.device, handle, 0, in, sizeof in), NND_DRIVER_OK);
    float back[N];
    assert_int_equal(f.d->memory_read(f.dev.device, handle, 0, back, sizeof back), NND_DRIVER_OK);
    assert_memory_equal(in, back, sizeof in);
    f.d->memory_free(f.dev.device, handle);

    /* Cache: the blob saved, and loaded instead of prepare. */
    char blob[64];
    size_t size = f.d->cache_save(f.prepared, 0, NULL, 0);
    assert_true(size > 0 && size <= sizeof blob);
    assert_int_equal(f.d->cache_save(f.prepared, 0, blob, sizeof blob), size);
    nnd_driver_blob b = {blob, size};
    nnd_driver_prepare_args args = {NND_DRIVER_PREFER_FAST_SINGLE_ANSWER,
                                    NND_DRIVER_PRIORITY_MEDIUM, NND_DRIVER_NO_DEADLINE};
    nnd_driver_prepared_info p2 = {0};
    assert_int_equal(f.d->cache_load(f.dev.device, &g_model, &args, &b, 1, &p2, err, sizeof err),
                     NND_DRIVER_OK);
    f.d->release(p2.prepared);
    blob[0] ^= 1;
    assert_int_equal(f.d->cache_load(f.dev.device, &g_model, &args, &b, 1, &p2, err, sizeof err),
                     NND_DRIVER_GENERAL_FAILURE);
    assert_non_null(strstr(err, "not a blob"));
    stop_host(&f);
}

/* A driver with start(): executions overlap in its host. */
typedef struct many {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, ok;
} many;
static many g_many = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};

static void many_complete(nnd_driver_execution *x, int status) {
    (void)x;
    pthread_mutex_lock(&g_many.mu);
    g_many.done++;
    g_many.ok += status == NND_DRIVER_OK;
    pthread_cond_signal(&g_many.cv);
    pthread_mutex_unlock(&g_many.mu);
}

static void test_async_driver_overlaps(void **state) {
    (void)state;
    fixture f;
    start_host(&f, ASYNC_DRIVER_SO, NULL);
    enum { K = 4 };
    static float in[K][N], out[K][N];
    static char errs[K][256];
    nnd_driver_arg a[K], b[K];
    nnd_driver_execution x[K];
    g_many.done = g_many.ok = 0;
    uint64_t t0 = now_ns();
    for (int k = 0; k < K; k++) {
        fill(in[k], 7004.0f); /* each waits 100 ms in the driver */
        in[k][1] = (float)k;
        a[k] = (nnd_driver_arg){.data = in[k], .length = sizeof in[k], .rank = 1, .dims = {N}};
        b[k] = (nnd_driver_arg){.data = out[k], .length = sizeof out[k], .rank = 1, .dims = {N}};
        x[k] = (nnd_driver_execution){.prepared = f.prepared,
                                      .n_inputs = 1,
                                      .n_outputs = 1,
                                      .inputs = &a[k],
                                      .outputs = &b[k],
                                      .err = errs[k],
                                      .errlen = sizeof errs[k],
                                      .complete = many_complete};
        assert_int_equal(f.d->start(&x[k]), NND_DRIVER_STARTED);
    }
    pthread_mutex_lock(&g_many.mu);
    while (g_many.done < K)
        pthread_cond_wait(&g_many.cv, &g_many.mu);
    pthread_mutex_unlock(&g_many.mu);
    double ms = (double)(now_ns() - t0) / 1e6;
    assert_int_equal(g_many.ok, K);
    for (int k = 0; k < K; k++)
        check_relu(in[k], out[k]);
    /* 4 x 100 ms, overlapped: judged only on a quiet machine. */
    if (!tst_machine_busy()) assert_true(ms < 350.0);
    printf("async: %d executions of 100 ms each through the host in %.0f ms%s\n", K, ms,
           tst_machine_busy() ? " (machine busy: not judged)" : "");
    stop_host(&f);
}

static void test_wrong_abi_refused(void **state) {
    (void)state;
    char err[256] = "";
    drvhost *h = NULL;
    assert_null(drvhost_start(ABI1_DRIVER_SO, NULL, &h, err, sizeof err));
    assert_null(h);
    assert_non_null(strstr(err, "driver ABI version 1"));
    assert_null(drvhost_start("/nonexistent/driver.so", NULL, &h, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/driver.so"));
    /* A constructor that crashes at load: refused, with the signal named. */
    assert_null(drvhost_start(CRASH_LOAD_SO, NULL, &h, err, sizeof err));
    assert_non_null(strstr(err, "signal 11"));
    /* The file the caller checked is the one loaded, whatever its path names. */
    int fd = open(FAULT_DRIVER_SO, O_RDONLY | O_CLOEXEC);
    assert_true(fd > 0);
    drvhost_limits lim = {.plugin_fd = fd};
    const nnd_driver *d = drvhost_start("/nonexistent/by-fd.so", &lim, &h, err, sizeof err);
    close(fd);
    if (!d) fail_msg("by fd: %s", err);
    nnd_driver_device_info dev;
    assert_int_equal(d->open(&dev, 1, err, sizeof err), 1);
    assert_string_equal(dev.name, "nnd-fault");
    /* A restart loads it again from the proxy's own descriptor: ours is closed. */
    drvhost_stats st;
    drvhost_get_stats(h, &st);
    assert_int_equal(kill(st.pid, SIGKILL), 0);
    for (int i = 0; i < 500 && st.restarts == 0; i++) {
        usleep(10000);
        drvhost_get_stats(h, &st);
    }
    bool sup = false;
    assert_int_equal(d->supported_operations(dev.device, &g_model, &sup, err, sizeof err),
                     NND_DRIVER_OK);
    assert_true(sup);
    drvhost_get_stats(h, &st);
    assert_int_equal(st.restarts, 1);
    assert_false(st.disabled);
    d->close();
    drvhost_stop(h);
}

/* A host dies with its daemon, even a killed one while the host hangs in its driver
 * (PR_SET_PDEATHSIG; a host that answers ends anyway, at EOF on its socket). */
static bool gone_or_zombie(pid_t pid) {
    char path[64], stat[256] = "";
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return true;
    size_t n = fread(stat, 1, sizeof stat - 1, f);
    fclose(f);
    stat[n] = '\0';
    const char *close_paren = strrchr(stat, ')');
    return close_paren && close_paren[1] == ' ' && close_paren[2] == 'Z';
}

static void test_host_dies_with_daemon(void **state) {
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        /* The host hangs in a driver call, so no EOF on its socket would end it. */
        fixture f;
        drvhost_limits lim = {.call_timeout_ms = 60000};
        start_host(&f, FAULT_DRIVER_SO, &lim);
        drvhost_stats st;
        drvhost_get_stats(f.h, &st);
        if (write(p[1], &st.pid, sizeof st.pid) != sizeof st.pid) _exit(1);
        char err[256];
        float in[N], out[N];
        fill(in, HANG);
        run(&f, in, out, 0, err, sizeof err);
        _exit(1);
    }
    pid_t host = 0;
    assert_int_equal(read(p[0], &host, sizeof host), sizeof host);
    close(p[0]), close(p[1]);
    assert_true(host > 0 && !gone_or_zombie(host));
    usleep(200000); /* the hang under way */
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    bool gone = false;
    for (int i = 0; i < 500 && !gone; i++) {
        gone = gone_or_zombie(host);
        if (!gone) usleep(10000);
    }
    assert_true(gone);
}

/* The per-call cost: a tiny execute through the host and the same call in process. */
static void test_round_trip(void **state) {
    (void)state;
    fixture f;
    start_host(&f, FAULT_DRIVER_SO, NULL);
    size_t bytes = 2 * N * sizeof(float);
    int fd = memfd_create("pool", MFD_CLOEXEC);
    assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
    float *pool = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int id = drvhost_register_region(fd, 0, pool, bytes, true);
    fill(pool, 1.0f);
    char err[256];
    enum { WARM = 200, CALLS = 2000 };
    for (int i = 0; i < WARM; i++)
        run(&f, pool, pool + N, 0, err, sizeof err);
    uint64_t t0 = now_ns();
    for (int i = 0; i < CALLS; i++)
        assert_int_equal(run(&f, pool, pool + N, 0, err, sizeof err), NND_DRIVER_OK);
    double host_us = (double)(now_ns() - t0) / CALLS / 1e3;

    void *so = dlopen(FAULT_DRIVER_SO, RTLD_NOW | RTLD_LOCAL);
    const nnd_driver *d = so ? dlsym(so, "nnd_driver_info") : NULL;
    assert_non_null(d);
    nnd_driver_device_info dev;
    assert_int_equal(d->open(&dev, 1, err, sizeof err), 1);
    nnd_driver_prepare_args args = {NND_DRIVER_PREFER_FAST_SINGLE_ANSWER,
                                    NND_DRIVER_PRIORITY_MEDIUM, NND_DRIVER_NO_DEADLINE};
    nnd_driver_prepared_info p = {0};
    assert_int_equal(d->prepare(dev.device, &g_model, &args, &p, err, sizeof err), NND_DRIVER_OK);
    fixture local = {.d = d, .prepared = p.prepared};
    for (int i = 0; i < WARM; i++)
        run(&local, pool, pool + N, 0, err, sizeof err);
    t0 = now_ns();
    for (int i = 0; i < CALLS; i++)
        run(&local, pool, pool + N, 0, err, sizeof err);
    double local_us = (double)(now_ns() - t0) / CALLS / 1e3;
    d->release(p.prepared);
    d->close();
    dlclose(so);
    printf("driver_rtt: RELU of %d floats: %.1f us through the driver host, %.2f us in "
           "process (%.1f us per call for the process boundary)\n",
           N, host_us, local_us, host_us - local_us);
    drvhost_unregister_region(id);
    munmap(pool, bytes);
    close(fd);
    stop_host(&f);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_and_places_tensors),
        cmocka_unit_test(test_hang_ends_at_bound),
        cmocka_unit_test(test_crash_restarts_then_disables),
        cmocka_unit_test(test_leak_costs_restart),
        cmocka_unit_test(test_shrunk_pool_is_client_error),
        cmocka_unit_test(test_async_memory_cache),
        cmocka_unit_test(test_async_driver_overlaps),
        cmocka_unit_test(test_wrong_abi_refused),
        cmocka_unit_test(test_host_dies_with_daemon),
        cmocka_unit_test(test_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
