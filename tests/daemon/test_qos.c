/* SPDX-License-Identifier: Apache-2.0 */
/* test_qos (integration): the scheduler through a real daemon and libnnd. Every admission
 * outcome on purpose, with its HAL code; a long LOW execution overtaken by a HIGH one of
 * the same app and still right; two apps (uids) flooding get fair shares; fenced
 * executions chained three deep run in order; Cancel; the figures in admin status. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>

#include "tests/support/harness.h"
#include "tests/support/subprocess.h"
#include "nnd/nnd_wire.h"
#include "proto/paths.h"
#include "tests/support/qos_models.h"

#define LOW    NND__PRIORITY__PRIORITY_LOW
#define MEDIUM NND__PRIORITY__PRIORITY_MEDIUM
#define HIGH   NND__PRIORITY__PRIORITY_HIGH

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The daemon's "scheduler" status object (the caller deletes the returned root). */
static cJSON *sched_status(const tst_daemon *d, cJSON **root) {
    *root = tst_admin_status(d);
    cJSON *s = cJSON_GetObjectItem(*root, "scheduler");
    assert_non_null(s);
    return s;
}

/* A number at a path of keys under the scheduler object. */
static double sched_num(const tst_daemon *d, const char *k1, const char *k2) {
    cJSON *root, *s = sched_status(d, &root);
    cJSON *v = cJSON_GetObjectItem(s, k1);
    if (k2) v = cJSON_GetObjectItem(v, k2);
    if (!cJSON_IsNumber(v))
        fail_msg("scheduler.%s%s%s is not a number", k1, k2 ? "." : "", k2 ? k2 : "");
    double x = v->valuedouble;
    cJSON_Delete(root);
    return x;
}

/* Waits until the daemon runs something. */
static void wait_running(const tst_daemon *d) {
    for (int i = 0; i < 2000; i++) {
        if (sched_num(d, "running", NULL) >= 1) return;
        sleep_ms(2);
    }
    fail_msg("nothing started running");
}

/* A chain prepared on c, with a memfd holding a, b and out; a[i] = i % 100, b = 1. */
typedef struct model {
    qos_chain chain;
    uint64_t handle;
    int fd;
    float *map;
    size_t size;
    qos_req req;
} model;

static int model_prepare(nnd_client *c, model *m, uint32_t n, uint32_t len, int prio,
                         uint64_t deadline, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    m->fd = -1;
    qos_chain_init(&m->chain, n, len);
    return nnd_client_prepare(c, &m->chain.model, NULL, 0, 0, prio, deadline, &m->handle, err,
                              errlen);
}

static void model_open(nnd_client *c, model *m, uint32_t n, uint32_t len, int prio) {
    char err[256];
    int st = model_prepare(c, m, n, len, prio, 0, err, sizeof err);
    if (st != 0) fail_msg("prepare: %s", err);
    size_t bytes = (size_t)len * sizeof(float);
    m->size = 3 * bytes;
    void *map;
    m->fd = nnd_memfd_create("test-qos", m->size, &map);
    assert_true(m->fd >= 0);
    m->map = map;
    for (uint32_t i = 0; i < len; i++)
        m->map[i] = (float)(i % 100), m->map[len + i] = 1.0f;
    qos_req_init(&m->req, len, m->size, 0, bytes, 2 * bytes);
}

static void model_close(nnd_client *c, model *m) {
    if (m->handle) nnd_client_release(c, m->handle);
    if (m->map) munmap(m->map, m->size);
    if (m->fd >= 0) close(m->fd);
    qos_chain_free(&m->chain);
}

static void check_result(const model *m) {
    uint32_t len = m->chain.len;
    const float *out = m->map + 2 * (size_t)len;
    for (uint32_t i = 0; i < len; i += len / 7 + 1)
        if (out[i] != (float)(i % 100) + (float)m->chain.n)
            fail_msg("out[%u] = %g, want %g", i, out[i], (float)(i % 100) + (float)m->chain.n);
}

static int run(nnd_client *c, model *m, const nnd_exec_opts *o, char *err, size_t errlen) {
    return nnd_client_execute_opts(c, m->handle, &m->req.req, &m->fd, 1, o, NULL, err, errlen);
}

static uint64_t start(nnd_client *c, model *m, const nnd_exec_opts *o) {
    char err[256];
    uint64_t t;
    if (nnd_client_execute_start(c, m->handle, &m->req.req, &m->fd, 1, o, &t, err, sizeof err))
        fail_msg("start: %s", err);
    return t;
}

static int finish(nnd_client *c, uint64_t ticket, char *err, size_t errlen) {
    return nnd_client_execute_wait(c, ticket, 60000, NULL, err, errlen);
}

/* ---- admission ------------------------------------------------------------------------- */

static void test_admission_outcomes(void **state) {
    (void)state;
    tst_daemon d;
    const char *args[] = {"--app-queue", "4", "--app-memory", "6M", "--device-memory", "64M", NULL};
    assert_int_equal(tst_daemon_start(&d, args), 0);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-qos", err, sizeof err);
    assert_non_null(c);

    /* At prepare: an invalid priority, a deadline in the past, a model beyond the device
     * (80 MB of temporaries, the device allows 64 MB). */
    model bad;
    assert_int_equal(model_prepare(c, &bad, 1, 2, 42, 0, err, sizeof err),
                     NND__ERROR_STATUS__INVALID_ARGUMENT);
    qos_chain_free(&bad.chain);
    assert_int_equal(model_prepare(c, &bad, 1, 2, 0, 1, err, sizeof err),
                     NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT);
    qos_chain_free(&bad.chain);
    assert_int_equal(model_prepare(c, &bad, 3, 10u << 20, 0, 0, err, sizeof err),
                     NND__ERROR_STATUS__RESOURCE_EXHAUSTED_PERSISTENT);
    assert_non_null(strstr(err, "device allows"));
    qos_chain_free(&bad.chain);

    model tiny, med, lng, fat;
    model_open(c, &tiny, 1, 2, 0);
    model_open(c, &med, 2000, 65536, 0); /* tens of ms */
    /* About a second, 2 MB of temporaries: it must outlast the admissions below even from
     * a client slowed down by ThreadSanitizer on a busy machine. */
    model_open(c, &lng, 8000, 262144, 0);
    model_open(c, &fat, 3, 400000, 0); /* two temporaries: 3.2 MB */

    /* At execute: an invalid priority, a deadline in the past. */
    nnd_exec_opts o = {.priority = 42};
    assert_int_equal(run(c, &tiny, &o, err, sizeof err), NND__ERROR_STATUS__INVALID_ARGUMENT);
    o = (nnd_exec_opts){.deadline_ns = 1};
    assert_int_equal(run(c, &tiny, &o, err, sizeof err),
                     NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT);
    /* Too short even for an idle device, once the daemon knows what a run costs. */
    uint64_t med_ns = UINT64_MAX;
    for (int i = 0; i < 3; i++) {
        Nnd__Reply *r = NULL;
        nnd_exec_opts timed = {.measure_timing = true};
        assert_int_equal(nnd_client_execute_opts(c, med.handle, &med.req.req, &med.fd, 1, &timed,
                                                 &r, err, sizeof err),
                         0);
        if (r->executed->timing->time_on_device_ns < med_ns)
            med_ns = r->executed->timing->time_on_device_ns;
        nnd__reply__free_unpacked(r, NULL);
        check_result(&med);
    }
    o = (nnd_exec_opts){.deadline_ns = now_ns() + med_ns / 2};
    assert_int_equal(run(c, &med, &o, err, sizeof err),
                     NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT);
    assert_non_null(strstr(err, "left before the deadline"));

    /* With the long one running (its cost learned): a deadline that only the work ahead
     * makes it miss. */
    assert_int_equal(run(c, &lng, NULL, err, sizeof err), 0);
    uint64_t t_long = start(c, &lng, NULL);
    wait_running(&d);
    o = (nnd_exec_opts){.deadline_ns = now_ns() + 60000000};
    int st = run(c, &tiny, &o, err, sizeof err);
    if (st != NND__ERROR_STATUS__MISSED_DEADLINE_TRANSIENT) fail_msg("%d: %s", st, err);
    assert_non_null(strstr(err, "ahead of this execution"));
    /* The memory quota (6 MB): long 2 MB + fat 3.2 MB fit, a second fat does not. */
    uint64_t t_fat = start(c, &fat, NULL);
    assert_int_equal(run(c, &fat, NULL, err, sizeof err),
                     NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT);
    assert_non_null(strstr(err, "quota"));
    /* The queue (4 per app): fat and three more wait, a fifth is refused. */
    uint64_t t_tiny[3];
    for (int i = 0; i < 3; i++)
        t_tiny[i] = start(c, &tiny, NULL);
    assert_int_equal(run(c, &tiny, NULL, err, sizeof err),
                     NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT);
    assert_non_null(strstr(err, "queued already"));
    assert_int_equal(sched_num(&d, "queued", "medium"), 4);

    /* Cancel the long one; everything behind it still completes, right. */
    assert_int_equal(nnd_client_cancel(c, t_long, err, sizeof err), 0);
    assert_int_equal(finish(c, t_long, err, sizeof err), NND__ERROR_STATUS__GENERAL_FAILURE);
    assert_non_null(strstr(err, "cancelled"));
    assert_int_equal(finish(c, t_fat, err, sizeof err), 0);
    check_result(&fat);
    for (int i = 0; i < 3; i++)
        assert_int_equal(finish(c, t_tiny[i], err, sizeof err), 0);
    check_result(&tiny);
    /* Nothing of that ticket is in flight any more. */
    assert_int_equal(nnd_client_cancel(c, t_long, err, sizeof err),
                     NND__ERROR_STATUS__INVALID_ARGUMENT);

    cJSON *root, *s = sched_status(&d, &root);
    cJSON *ref = cJSON_GetObjectItem(s, "refused");
    assert_int_equal(cJSON_GetObjectItem(ref, "invalid_argument")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(ref, "deadline_passed")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(ref, "too_slow")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(ref, "busy")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(ref, "queue_full")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(ref, "memory_quota")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(ref, "device_limit")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(s, "cancelled")->valueint, 1);
    assert_true(cJSON_GetObjectItem(s, "completed")->valueint >= 7);
    cJSON *lat = cJSON_GetObjectItem(cJSON_GetObjectItem(s, "latency_us"), "medium");
    assert_true(cJSON_GetObjectItem(lat, "p99")->valuedouble > 0);
    cJSON_Delete(root);
    /* And nndctl status shows them. */
    char cmd[700], line[256];
    snprintf(cmd, sizeof cmd, "%s --state-dir %s status", NNDCTL_PATH, d.state_dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    bool queues = false, refused = false, latency = false;
    while (fgets(line, sizeof line, p)) {
        queues |= strncmp(line, "queues ", 7) == 0;
        refused |= strncmp(line, "refused ", 8) == 0 && strstr(line, "queue_full 1") &&
                   strstr(line, "device_limit 1");
        latency |= strncmp(line, "latency      medium ", 20) == 0;
    }
    assert_int_equal(pclose(p), 0);
    assert_true(queues && refused && latency);

    model_close(c, &tiny);
    model_close(c, &med);
    model_close(c, &lng);
    model_close(c, &fat);
    nnd_client_close(c);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- preemption ------------------------------------------------------------------------ */

static void test_high_overtakes_low(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[256];
    /* One app (this uid), two connections: its priorities apply across them. */
    nnd_client *a = nnd_client_connect(d.socket_path, "test-qos-low", err, sizeof err);
    nnd_client *b = nnd_client_connect(d.socket_path, "test-qos-high", err, sizeof err);
    assert_true(a && b);
    model lng, hi;
    model_open(a, &lng, 2000, 262144, LOW);
    model_open(b, &hi, 4, 1024, HIGH);
    nnd_exec_opts timed = {.measure_timing = true};
    uint64_t t_low = start(a, &lng, &timed);
    wait_running(&d);
    sleep_ms(20); /* well into its operations */
    uint64_t t0 = now_ns();
    Nnd__Reply *hr = NULL;
    assert_int_equal(
        nnd_client_execute_opts(b, hi.handle, &hi.req.req, &hi.fd, 1, &timed, &hr, err, sizeof err),
        0);
    uint64_t high_ns = now_ns() - t0;
    print_message("# HIGH in driver %.3f ms, on device %.3f ms\n",
                  (double)hr->executed->timing->time_in_driver_ns / 1e6,
                  (double)hr->executed->timing->time_on_device_ns / 1e6);
    nnd__reply__free_unpacked(hr, NULL);
    check_result(&hi);
    /* The LOW execution is still in flight: suspended, or running again. */
    cJSON *root, *s = sched_status(&d, &root);
    assert_int_equal(cJSON_GetObjectItem(s, "preempted")->valueint, 1);
    assert_int_equal(cJSON_GetObjectItem(s, "completed")->valueint, 1); /* only HIGH */
    cJSON_Delete(root);
    Nnd__Reply *r = NULL;
    assert_int_equal(nnd_client_execute_wait(a, t_low, 60000, &r, err, sizeof err), 0);
    check_result(&lng);
    uint64_t low_device = r->executed->timing->time_on_device_ns;
    nnd__reply__free_unpacked(r, NULL);
    /* The HIGH one waited for one operation of the LOW one, not for all of it. */
    print_message("# HIGH answered in %.2f ms while a LOW run of %.1f ms was preempted\n",
                  (double)high_ns / 1e6, (double)low_device / 1e6);
    assert_true(high_ns < low_device / 2);
    model_close(a, &lng);
    model_close(b, &hi);
    nnd_client_close(a);
    nnd_client_close(b);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- fairness ---------------------------------------------------------------------------- */

/* Runs qos_flood (as uid when uid >= 0) and returns its pid; its stdout goes to *out_fd. */
static pid_t flood(const tst_daemon *d, int uid, uint64_t t0, uint64_t t1, int *out_fd) {
    char s0[32], s1[32];
    snprintf(s0, sizeof s0, "%llu", (unsigned long long)t0);
    snprintf(s1, sizeof s1, "%llu", (unsigned long long)t1);
    /* 4 in flight; a run of about a millisecond. */
    const char *const args[] = {d->socket_path, s0, s1, "4", "400", "16384", NULL};
    tst_child ch = tst_spawn(QOS_FLOOD_PATH, args, uid, false);
    assert_true(ch.pid >= 0);
    *out_fd = ch.out;
    return ch.pid;
}

static long flood_result(pid_t pid, int fd) {
    char buf[128] = "";
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    int st;
    waitpid(pid, &st, 0);
    long completed = -1, wrong = -1;
    if (n > 0) sscanf(buf, "completed %ld wrong %ld", &completed, &wrong);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || wrong != 0)
        fail_msg("qos_flood failed (status %d): %s", st, buf);
    return completed;
}

static void test_two_apps_fair(void **state) {
    (void)state;
    if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
        print_message("# skipped: needs root and setpriv to run a second app\n");
        skip();
    }
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    /* uid 65534 must reach the socket in the test directory. */
    assert_int_equal(chmod(d.dir, 0755), 0);
    uint64_t t0 = now_ns() + 500000000ull, t1 = t0 + 2000000000ull;
    int fa, fb;
    pid_t a = flood(&d, -1, t0, t1, &fa);
    pid_t b = flood(&d, 65534, t0, t1, &fb);
    long na = flood_result(a, fa), nb = flood_result(b, fb);
    double mean = (double)(na + nb) / 2;
    print_message("# two apps flooding for 2 s: uid %d %ld, uid 65534 %ld executions (%.1f%% "
                  "apart)\n",
                  (int)getuid(), na, nb, 100.0 * (double)labs(na - nb) / mean);
    assert_true(na + nb > 100);
    assert_true((double)labs(na - nb) <= 0.10 * mean);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- fenced ------------------------------------------------------------------------------ */

static void test_fenced_chain(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-qos-fenced", err, sizeof err);
    assert_non_null(c);
    /* Four regions x0..x3 and b: step i computes x[i+1] = x[i] + n * b. The first step is
     * the longest: were the others not waiting, they would read unfinished data. */
    enum { LEN = 524288 };
    uint32_t ns[3] = {300, 20, 20};
    qos_chain chains[3];
    uint64_t h[3];
    size_t bytes = LEN * sizeof(float), size = 5 * bytes;
    void *map;
    int fd = nnd_memfd_create("fenced", size, &map);
    float *f = map;
    for (uint32_t i = 0; i < LEN; i++)
        f[i] = (float)(i % 50), f[4 * LEN + i] = 1.0f;
    qos_req req[3];
    for (int i = 0; i < 3; i++) {
        qos_chain_init(&chains[i], ns[i], LEN);
        assert_int_equal(
            nnd_client_prepare(c, &chains[i].model, NULL, 0, 0, 0, 0, &h[i], err, sizeof err), 0);
        qos_req_init(&req[i], LEN, size, (uint64_t)i * bytes, 4 * bytes, (uint64_t)(i + 1) * bytes);
    }
    uint64_t ex[3];
    int sync[3];
    nnd_exec_opts timed = {.measure_timing = true};
    for (int i = 0; i < 3; i++)
        assert_int_equal(nnd_client_execute_fenced(c, h[i], &req[i].req, &fd, 1,
                                                   i ? &sync[i - 1] : NULL, i ? 1 : 0, &timed, 0,
                                                   &ex[i], &sync[i], err, sizeof err),
                         0);
    assert_int_equal(nnd_fence_wait(sync[2], 30000), 0);
    for (int i = 0; i < 3; i++) {
        int st;
        Nnd__Timing launched, fenced;
        assert_int_equal(nnd_client_fenced_info(c, ex[i], &st, &launched, &fenced, err, sizeof err),
                         0);
        assert_int_equal(st, 0);
        assert_true(launched.time_on_device_ns != UINT64_MAX);
        assert_true(fenced.time_in_driver_ns <= launched.time_in_driver_ns);
    }
    float want = 0;
    for (int i = 0; i < 3; i++)
        want += (float)ns[i];
    for (uint32_t i = 0; i < LEN; i += 997)
        if (f[3 * (size_t)LEN + i] != (float)(i % 50) + want)
            fail_msg("x3[%u] = %g, want %g", i, f[3 * (size_t)LEN + i], (float)(i % 50) + want);

    /* A fence of our own: nothing runs before it is signalled. */
    int gate = eventfd(0, EFD_CLOEXEC);
    uint64_t ex4;
    int sync4;
    assert_int_equal(nnd_client_execute_fenced(c, h[1], &req[1].req, &fd, 1, &gate, 1, NULL, 0,
                                               &ex4, &sync4, err, sizeof err),
                     0);
    assert_int_equal(nnd_fence_wait(sync4, 100), -ETIMEDOUT);
    uint64_t one = 1;
    assert_int_equal(write(gate, &one, sizeof one), (ssize_t)sizeof one);
    assert_int_equal(nnd_fence_wait(sync4, 30000), 0);
    int st;
    assert_int_equal(nnd_client_fenced_info(c, ex4, &st, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(st, 0);
    /* The model released while its execution waits on a fence: the execution keeps it. */
    qos_chain gone;
    qos_chain_init(&gone, 5, LEN);
    uint64_t hg, exg;
    int syncg, gate2 = eventfd(0, EFD_CLOEXEC);
    assert_int_equal(nnd_client_prepare(c, &gone.model, NULL, 0, 0, 0, 0, &hg, err, sizeof err), 0);
    assert_int_equal(nnd_client_execute_fenced(c, hg, &req[1].req, &fd, 1, &gate2, 1, NULL, 0, &exg,
                                               &syncg, err, sizeof err),
                     0);
    assert_int_equal(nnd_client_release(c, hg), 0);
    assert_int_equal(write(gate2, &one, sizeof one), (ssize_t)sizeof one);
    assert_int_equal(nnd_fence_wait(syncg, 30000), 0);
    assert_int_equal(nnd_client_fenced_info(c, exg, &st, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(st, 0);
    close(syncg);
    close(gate2);
    qos_chain_free(&gone);
    /* timeout_after_fence: 1 ms for a run of many: stopped at a checkpoint. */
    uint64_t ex5;
    int sync5;
    assert_int_equal(nnd_client_execute_fenced(c, h[0], &req[0].req, &fd, 1, &gate, 1, NULL,
                                               1000000, &ex5, &sync5, err, sizeof err),
                     0);
    assert_int_equal(nnd_fence_wait(sync5, 30000), 0);
    assert_int_equal(nnd_client_fenced_info(c, ex5, &st, NULL, NULL, err, sizeof err), 0);
    assert_true(st == NND__ERROR_STATUS__MISSED_DEADLINE_TRANSIENT ||
                st == NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT);
    /* A fence that cannot be waited on (a regular file), and a deadline already past. */
    uint64_t ex6;
    int sync6;
    int regular = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    assert_int_equal(nnd_client_execute_fenced(c, h[1], &req[1].req, &fd, 1, &regular, 1, NULL, 0,
                                               &ex6, &sync6, err, sizeof err),
                     NND__ERROR_STATUS__INVALID_ARGUMENT);
    close(regular);
    nnd_exec_opts past = {.deadline_ns = 1};
    assert_int_equal(nnd_client_execute_fenced(c, h[1], &req[1].req, &fd, 1, NULL, 0, &past, 0,
                                               &ex6, &sync6, err, sizeof err),
                     NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT);

    for (int i = 0; i < 3; i++) {
        close(sync[i]);
        assert_int_equal(nnd_client_release(c, ex[i]), 0);
        nnd_client_release(c, h[i]);
        qos_chain_free(&chains[i]);
    }
    close(sync4);
    close(sync5);
    close(gate);
    close(fd);
    munmap(map, size);
    nnd_client_close(c);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- closing with work in flight ---------------------------------------------------------- */

static void test_close_cancels(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-qos-leaver", err, sizeof err);
    model lng;
    model_open(c, &lng, 2000, 262144, 0);
    for (int i = 0; i < 3; i++)
        start(c, &lng, NULL);
    wait_running(&d);
    uint64_t t0 = now_ns();
    /* The model goes first, then the connection: running work holds what it uses. */
    nnd_client_release(c, lng.handle);
    lng.handle = 0;
    nnd_client_close(c);
    for (int i = 0; i < 5000 && sched_num(&d, "cancelled", NULL) < 3; i++)
        sleep_ms(2);
    assert_int_equal(sched_num(&d, "cancelled", NULL), 3);
    assert_int_equal(sched_num(&d, "running", NULL), 0);
    print_message("# a closed connection's work stopped within %.1f ms\n",
                  (double)(now_ns() - t0) / 1e6);
    model_close(NULL, &lng);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_admission_outcomes), cmocka_unit_test(test_high_overtakes_low),
        cmocka_unit_test(test_two_apps_fair),      cmocka_unit_test(test_fenced_chain),
        cmocka_unit_test(test_close_cancels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
