/* SPDX-License-Identifier: Apache-2.0 */
/* test_faulty_drivers (integration): drivers built to fail (drv_fault_driver.c), each in a
 * real daemon of its own in the default mode (every driver plugin in its nnd-driver-host),
 * attacked by a client of another uid (65534 when the test runs as root: faulty_attack.c,
 * this program run with --attack) while
 * - a bystander client runs RELU on nnd-cpu in a loop: every result right, and (on a quiet
 *   machine) no execution slower than BOUND_MS;
 * - a prober connects a new client every 20 ms: every Hello answered, within BOUND_MS on a
 *   quiet machine;
 * - at the end SIGTERM stops the daemon, which exits 0.
 * Per driver:
 * - hang (nnd-fault, driver_call_timeout_ms 3000): a small model (run on the event loop
 *   when its work is short) and a large one (1 Mi floats) each hang in execute(): the call
 *   ends at its bound with "did not answer within 3000 ms", the host restarts, the next
 *   run is right, and bystander and prober got answers while the hang lasted. SIGTERM
 *   while a third hang is in flight still stops the daemon with status 0.
 * - crash (nnd-crash3, driver_max_restarts 2): the third call fails, the host restarts,
 *   calls 4 and 5 are right; the third restart disables the driver (status), whose calls
 *   fail from then on; a compilation naming it alone fails, whether the content cache
 *   listed it before (same model) or not; named with nnd-cpu it runs right on nnd-cpu.
 * - leak (nnd-fault leaking 1 MiB a call, driver_memory_limit 40M): 64 calls restart the
 *   host at its limit (last_fault "over its limit of 40 MiB"), every call right but those
 *   the host held when killed (DEVICE_UNAVAILABLE naming the limit, at most one a restart),
 *   and the daemon's own resident memory grows by less than LEAK_SLACK_KIB.
 * - shrink (nnd-fault reading a pool its client truncates meanwhile): that call fails with
 *   INVALID_ARGUMENT "... shrank ...", the same client's next call on the grown-back file is
 *   right; no restart, the driver stays enabled, and another client's loop on nnd-fault
 *   (uid root) stays right throughout. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "tests/daemon/faulty_attack.h"
#include "tests/support/harness.h"
#include "tests/support/observe.h"
#include "tests/support/subprocess.h"
#include "tests/support/wire.h"

#define MS             1000000ull
#define ATTACKER_UID   65534
#define BOUND_MS       250 /* bystander execution, Hello: judged on a quiet machine */
#define HANG_BOUND_MS  3000
#define STOP_BOUND_MS  8000 /* SIGTERM to exit, a hang in flight included */
#define LEAK_SLACK_KIB (16 * 1024)
#define MAX_SAMPLES    (1u << 16)

/* ---- watchers: the bystanders and the Hello prober ------------------------------------- */

typedef struct watcher {
    const tst_daemon *d;
    const char *device; /* the bystander's device; NULL: the Hello prober */
    pthread_t thread;
    bool running;
    atomic_bool stop;
    uint64_t *done_ns, *lat_ns; /* per call: when it ended, how long it took */
    atomic_size_t n;
    atomic_long wrong;
    char why[1024];
} watcher;

static void note(watcher *w, uint64_t t0) {
    size_t i = atomic_load(&w->n);
    if (i >= MAX_SAMPLES) return;
    uint64_t t1 = fa_now_ns();
    w->done_ns[i] = t1;
    w->lat_ns[i] = t1 - t0;
    atomic_store(&w->n, i + 1);
}

static void wrong(watcher *w, const char *fmt, int st, const char *err) {
    if (atomic_fetch_add(&w->wrong, 1) == 0) snprintf(w->why, sizeof w->why, fmt, st, err);
}

static void *prober_main(watcher *w) {
    while (!atomic_load(&w->stop)) {
        uint64_t t0 = fa_now_ns();
        int rc = wire_hello_fresh(w->d);
        note(w, t0);
        if (rc != 0) wrong(w, "no Hello reply (%d)%s", rc, "");
        usleep(20 * 1000);
    }
    return NULL;
}

static void *watcher_main(void *arg) {
    watcher *w = arg;
    if (!w->device) return prober_main(w);
    char err[512];
    nnd_client *c = nnd_client_connect(w->d->socket_path, "bystander", err, sizeof err);
    static mb m[2]; /* one per bystander thread at most */
    mb *model = &m[strcmp(w->device, "nnd-cpu") != 0];
    fa_relu_model(model, 256);
    uint64_t h = 0;
    int st = c ? nnd_client_prepare_on(c, &w->device, 1, &model->model, NULL, 0, 0, 0, 0, &h, err,
                                       sizeof err)
               : -1;
    mb_free(model);
    fa_pool p;
    if (st != 0 || fa_pool_open(&p, 256) < 0) {
        wrong(w, "bystander could not start: %d %s", st, c ? err : "no connection");
        if (c) nnd_client_close(c);
        return NULL;
    }
    for (uint32_t i = 0; !atomic_load(&w->stop); i++) {
        int right;
        uint64_t t0 = fa_now_ns();
        st = fa_run(c, h, &p, (float)(i % 5), i, &right, err, sizeof err);
        note(w, t0);
        if (!right) wrong(w, "bystander: status %d, or a wrong result: %s", st, err);
        usleep(5 * 1000);
    }
    fa_pool_close(&p);
    nnd_client_close(c);
    return NULL;
}

static void watcher_start(watcher *w, const tst_daemon *d, const char *device) {
    memset(w, 0, sizeof *w);
    w->d = d;
    w->device = device;
    w->done_ns = calloc(MAX_SAMPLES, sizeof(uint64_t));
    w->lat_ns = calloc(MAX_SAMPLES, sizeof(uint64_t));
    assert_non_null(w->done_ns);
    assert_non_null(w->lat_ns);
    assert_int_equal(pthread_create(&w->thread, NULL, watcher_main, w), 0);
    w->running = true;
}

static void watcher_stop(watcher *w) {
    if (!w->running) return;
    atomic_store(&w->stop, true);
    pthread_join(w->thread, NULL);
    w->running = false;
}

/* Calls that ended within [from, to]. */
static size_t answered_within(const watcher *w, uint64_t from, uint64_t to) {
    size_t k = 0, n = atomic_load(&w->n);
    for (size_t i = 0; i < n; i++)
        k += w->done_ns[i] >= from && w->done_ns[i] <= to;
    return k;
}

static double max_ms(const watcher *w) {
    uint64_t m = 0;
    size_t n = atomic_load(&w->n);
    for (size_t i = 0; i < n; i++)
        if (w->lat_ns[i] > m) m = w->lat_ns[i];
    return (double)m / 1e6;
}

/* Every call right; slower than bound_ms (0: not judged) only on a busy machine. */
static void watcher_judge(watcher *w, const char *what, bool quiet, double bound_ms) {
    watcher_stop(w);
    size_t n = atomic_load(&w->n);
    print_message("# %s: %zu calls, slowest %.1f ms\n", what, n, max_ms(w));
    if (atomic_load(&w->wrong)) fail_msg("%s: %ld wrong: %s", what, atomic_load(&w->wrong), w->why);
    assert_true(n > 0);
    if (quiet && bound_ms > 0) assert_true(max_ms(w) < bound_ms);
    free(w->done_ns);
    free(w->lat_ns);
}

/* ---- one daemon with one faulty driver ---------------------------------------------------- */

typedef struct env {
    tst_daemon d;
    char dir[300];
    const char *device;
    watcher cpu, hello, other;
    bool busy;
    char out[32768]; /* the attacker's lines */
} env;

static env g_env;

static void env_start(env *e, const char *so, const char *device, const char *config) {
    memset(e, 0, sizeof *e);
    e->device = device;
    e->busy = tst_machine_busy();
    snprintf(e->dir, sizeof e->dir, "/tmp/test-faulty-%s-%d", device, (int)getpid());
    char to[400], conf[400];
    snprintf(to, sizeof to, "%s/drivers", e->dir);
    assert_int_equal(mkdir(e->dir, 0755), 0);
    assert_int_equal(mkdir(to, 0755), 0);
    snprintf(to, sizeof to, "%s/drivers/fault.so", e->dir);
    assert_int_equal(tst_copy_file(so, to), 0);
    snprintf(conf, sizeof conf, "%s/nnd.conf", e->dir);
    FILE *f = fopen(conf, "w");
    assert_non_null(f);
    fputs(config, f);
    fclose(f);
    snprintf(to, sizeof to, "%s/drivers", e->dir);
    const char *args[] = {"--drivers-dir", to, "--config", conf, NULL};
    assert_int_equal(tst_daemon_start(&e->d, args), 0);
    assert_int_equal(chmod(e->d.dir, 0755), 0); /* uid 65534 must reach the socket */
    watcher_start(&e->cpu, &e->d, "nnd-cpu");
    watcher_start(&e->hello, &e->d, NULL);
    usleep(300 * 1000);
}

/* Runs the attacker (uid 65534 when we are root) to its end; its lines are in e->out. */
static void env_attack(env *e, const char *mode) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    const char *const args[] = {"--attack", mode, e->d.socket_path, NULL};
    int uid = geteuid() == 0 ? ATTACKER_UID : 0;
    if (!uid) print_message("# not root: the attacker runs as this uid\n");
    int rc = tst_run(self, args, uid, false, e->out, sizeof e->out, 60000);
    print_message("%s", e->out);
    assert_int_equal(rc, 0);
}

/* A device's entry of a fresh status (the caller deletes *root). */
static const cJSON *device_entry(env *e, cJSON **root) {
    *root = tst_admin_status(&e->d);
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(*root, "devices")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "name");
        if (cJSON_IsString(name) && !strcmp(name->valuestring, e->device)) return d;
    }
    fail_msg("no device %s in status", e->device);
    return NULL;
}

static double device_num(env *e, const char *path) {
    cJSON *root;
    double v = obs_num(device_entry(e, &root), path);
    cJSON_Delete(root);
    return v;
}

static bool device_disabled(env *e, char *last_fault, size_t len) {
    cJSON *root;
    const cJSON *d = device_entry(e, &root);
    bool off = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "disabled"));
    const cJSON *f =
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(d, "host"), "last_fault");
    snprintf(last_fault, len, "%s", cJSON_IsString(f) ? f->valuestring : "");
    cJSON_Delete(root);
    return off;
}

/* The watchers judged, then SIGTERM: exit status 0 within STOP_BOUND_MS. */
static void env_finish(env *e) {
    bool quiet = !e->busy && !tst_machine_busy();
    if (!quiet) print_message("# the machine is busy: latencies are not judged\n");
    watcher_judge(&e->cpu, "bystander on nnd-cpu", quiet, BOUND_MS);
    watcher_judge(&e->hello, "new clients' Hello", quiet, BOUND_MS);
    /* It waits its turn behind the attacker's 300 ms read: right, not timed. */
    if (e->other.running) watcher_judge(&e->other, "another client on the driver", quiet, 0);
    uint64_t t0 = fa_now_ns();
    int rc = tst_daemon_stop(&e->d);
    double ms = (double)(fa_now_ns() - t0) / 1e6;
    print_message("# SIGTERM: exit status %d in %.0f ms\n", rc, ms);
    assert_int_equal(rc, 0);
    assert_true(ms < STOP_BOUND_MS);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", e->dir);
    assert_int_equal(system(cmd), 0);
}

/* ---- the attacker's lines ------------------------------------------------------------------ */

typedef struct result {
    int st, right;
    uint64_t t0, t1;
    char msg[400];
} result;

/* The line "exec LABEL ..." (or "prepare LABEL ..."); fails the test when missing. */
static result line_of(const env *e, const char *kind, const char *label) {
    char head[128];
    snprintf(head, sizeof head, "%s %s ", kind, label);
    result r = {0};
    for (const char *l = e->out; l && *l;) {
        if (!strncmp(l, head, strlen(head))) {
            const char *p = l + strlen(head);
            int used = 0;
            unsigned long long t0 = 0, t1 = 0;
            if (!strcmp(kind, "exec"))
                sscanf(p, "%d %llu %llu %d %n", &r.st, &t0, &t1, &r.right, &used);
            else
                sscanf(p, "%d %n", &r.st, &used);
            r.t0 = t0, r.t1 = t1;
            const char *end = strchr(p + used, '\n');
            snprintf(r.msg, sizeof r.msg, "%.*s", end ? (int)(end - p - used) : 399, p + used);
            return r;
        }
        l = strchr(l, '\n');
        l = l ? l + 1 : NULL;
    }
    fail_msg("the attacker printed no \"%s\" line", head);
    return r;
}

static void expect_right(const env *e, const char *label) {
    result r = line_of(e, "exec", label);
    if (r.st != 0 || !r.right) fail_msg("%s: status %d, right %d: %s", label, r.st, r.right, r.msg);
}

/* ---- hang ----------------------------------------------------------------------------------- */

static void check_hang(env *e, const char *size, double restarts_after) {
    char label[64];
    for (int i = 0; i < 3; i++) {
        snprintf(label, sizeof label, "%s-before-%d", size, i);
        expect_right(e, label);
    }
    snprintf(label, sizeof label, "%s-hang", size);
    result h = line_of(e, "exec", label);
    double ms = (double)(h.t1 - h.t0) / 1e6;
    print_message("# %s model, hang in execute(): status %d after %.0f ms: %s\n", size, h.st, ms,
                  h.msg);
    assert_int_not_equal(h.st, 0);
    assert_non_null(strstr(h.msg, "did not answer within 3000 ms"));
    assert_true(ms >= HANG_BOUND_MS - 50 && ms < HANG_BOUND_MS + 4000);
    /* While it hung, the daemon served: new clients and the bystander got answers. */
    uint64_t from = h.t0 + 200 * MS, to = h.t0 + (HANG_BOUND_MS - 200) * MS;
    size_t hellos = answered_within(&e->hello, from, to);
    size_t runs = answered_within(&e->cpu, from, to);
    print_message("# during the hang: %zu Hello replies, %zu bystander runs\n", hellos, runs);
    assert_true(hellos >= 3);
    assert_true(runs >= 3);
    snprintf(label, sizeof label, "%s-after", size);
    expect_right(e, label);
    assert_true(device_num(e, "host.restarts") >= restarts_after);
}

static void test_hang(void **state) {
    (void)state;
    env *e = &g_env;
    env_start(e, FAULT_DRIVER_SO, "nnd-fault",
              "driver_call_timeout_ms = 3000\ndriver_max_restarts = 10\n");
    env_attack(e, "hang");
    check_hang(e, "small", 1);
    check_hang(e, "large", 2);
    assert_true(device_num(e, "host.restarts") == 2);
    char fault[200];
    assert_false(device_disabled(e, fault, sizeof fault));
    print_message("# restarts: 2; last fault: %s\n", fault);
    /* A third hang in flight when SIGTERM comes. */
    static mb m;
    fa_relu_model(&m, FA_LARGE);
    char err[512];
    nnd_client *c = nnd_client_connect(e->d.socket_path, "hang-at-stop", err, sizeof err);
    assert_non_null(c);
    uint64_t h = 0, ticket;
    assert_int_equal(
        nnd_client_prepare_on(c, &e->device, 1, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err),
        0);
    mb_free(&m);
    fa_pool p;
    assert_int_equal(fa_pool_open(&p, FA_LARGE), 0);
    p.in[0] = FA_HANG;
    assert_int_equal(
        nnd_client_execute_start(c, h, &p.r.req, &p.fd, 1, NULL, &ticket, err, sizeof err), 0);
    usleep(300 * 1000);
    env_finish(e);
    nnd_client_close(c);
    fa_pool_close(&p);
}

/* ---- crash ---------------------------------------------------------------------------------- */

static void test_crash(void **state) {
    (void)state;
    env *e = &g_env;
    env_start(e, CRASH3_DRIVER_SO, "nnd-crash3", "driver_max_restarts = 2\n");
    env_attack(e, "crash");
    assert_int_equal(line_of(e, "prepare", "seen-only").st, 0);
    expect_right(e, "call-1");
    expect_right(e, "call-2");
    result r = line_of(e, "exec", "call-3");
    print_message("# third call: status %d: %s\n", r.st, r.msg);
    assert_int_not_equal(r.st, 0);
    expect_right(e, "call-4");
    expect_right(e, "call-5");
    /* Calls 6 and 9 crashed too: the third restart within the window disabled it. */
    char fault[200];
    assert_true(device_disabled(e, fault, sizeof fault));
    print_message("# restarts: %g, disabled; last fault: %s\n", device_num(e, "host.restarts"),
                  fault);
    assert_true(device_num(e, "host.restarts") == 3);
    r = line_of(e, "exec", "call-12");
    print_message("# a call once disabled: status %d: %s\n", r.st, r.msg);
    assert_int_not_equal(r.st, 0);
    /* Out of every device set: named alone, no compilation, cached before or not. */
    const char *only[] = {"seen-only-after", "fresh-only"};
    for (int i = 0; i < 2; i++) {
        r = line_of(e, "prepare", only[i]);
        print_message("# %s: status %d: %s\n", only[i], r.st, r.msg);
        assert_int_not_equal(r.st, 0);
    }
    /* Named with nnd-cpu, it runs there. */
    assert_int_equal(line_of(e, "prepare", "seen-with-cpu-after").st, 0);
    expect_right(e, "seen-with-cpu-after");
    assert_int_equal(line_of(e, "prepare", "fresh-with-cpu").st, 0);
    expect_right(e, "fresh-with-cpu");
    env_finish(e);
}

/* ---- leak ----------------------------------------------------------------------------------- */

static void test_leak(void **state) {
    (void)state;
    env *e = &g_env;
    env_start(e, FAULT_DRIVER_SO, "nnd-fault",
              "driver_memory_limit = 40M\ndriver_max_restarts = 10\n");
    long rss0 = obs_rss_kib(e->d.pid);
    env_attack(e, "leak");
    long rss1 = obs_rss_kib(e->d.pid);
    char label[32];
    int lost = 0; /* calls the host held when it was killed at its limit: they fail with it */
    for (int i = 0; i < 64; i++) {
        snprintf(label, sizeof label, "leak-%d", i);
        result r = line_of(e, "exec", label);
        if (r.st == 0 && r.right) continue;
        if (r.st != NND__ERROR_STATUS__DEVICE_UNAVAILABLE || !strstr(r.msg, "over its limit"))
            fail_msg("%s: status %d, right %d: %s", label, r.st, r.right, r.msg);
        lost++;
    }
    expect_right(e, "leak-after");
    char fault[200];
    assert_false(device_disabled(e, fault, sizeof fault));
    double restarts = device_num(e, "host.restarts");
    print_message("# 64 MiB leaked in 64 calls (%d failed with a restart): %g restarts (%s); "
                  "daemon RSS %ld -> %ld KiB\n",
                  lost, restarts, fault, rss0, rss1);
    if (OBS_RSS_MEANINGFUL) assert_true(rss1 - rss0 < LEAK_SLACK_KIB);
    assert_true(restarts >= 1);
    assert_true(lost <= restarts);
    assert_non_null(strstr(fault, "over its limit of 40 MiB"));
    env_finish(e);
}

/* ---- shrink --------------------------------------------------------------------------------- */

static void test_shrink(void **state) {
    (void)state;
    env *e = &g_env;
    env_start(e, FAULT_DRIVER_SO, "nnd-fault", "");
    watcher_start(&e->other, &e->d, "nnd-fault");
    usleep(200 * 1000);
    env_attack(e, "shrink");
    expect_right(e, "shrink-before");
    result r = line_of(e, "exec", "shrunk");
    print_message("# pool shrunk under the driver: status %d: %s\n", r.st, r.msg);
    assert_int_equal(r.st, NND__ERROR_STATUS__INVALID_ARGUMENT);
    /* Cut while the driver read it (the host's SIGBUS guard, or its check before the call);
     * on a machine too loaded to reach the driver within 150 ms, the daemon's own check of
     * the pool refuses the request, the client's error as well. */
    bool in_host = strstr(r.msg, "shrank") != NULL;
    if (!in_host) print_message("# the pool was cut before the request reached the host\n");
    assert_true(in_host || strstr(r.msg, "runs past the end of fd"));
    expect_right(e, "shrink-grown-back");
    char fault[200];
    assert_false(device_disabled(e, fault, sizeof fault));
    assert_true(device_num(e, "host.restarts") == 0);
    assert_true(device_num(e, "host.pool_shrinks") >= in_host);
    size_t before = atomic_load(&e->other.n);
    usleep(200 * 1000);
    assert_true(atomic_load(&e->other.n) > before); /* the other client still runs on it */
    env_finish(e);
}

static int teardown(void **state) {
    (void)state;
    /* A test that failed midway: its threads stopped before the harness's exit hook. */
    watcher_stop(&g_env.cpu);
    watcher_stop(&g_env.hello);
    watcher_stop(&g_env.other);
    if (g_env.dir[0]) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf %s", g_env.dir);
        if (system(cmd) != 0) return -1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--attack")) return fa_attack(argv[2], argv[3]);
    if (getenv("NND_FAULTY_ONLY"))
        cmocka_set_test_filter(getenv("NND_FAULTY_ONLY")); /* test_leak */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_hang, teardown),
        cmocka_unit_test_teardown(test_crash, teardown),
        cmocka_unit_test_teardown(test_leak, teardown),
        cmocka_unit_test_teardown(test_shrink, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
