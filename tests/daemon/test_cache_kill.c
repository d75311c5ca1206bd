/* SPDX-License-Identifier: Apache-2.0 */
/* test_cache_kill (integration): a client SIGKILLed while it holds compilations from the
 * content cache. Its uid's counted cache bytes (admin status, quotas.apps[].cache_bytes)
 * go back to exactly what the uid's other connection still uses (a model both use stays
 * counted once), and the daemon's log says what happened: the client's disconnect with
 * the objects it released, and no line calling cache bytes still counted or in use, in
 * the kill or when the uid's last connection closes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/cache_model.h"
#include "tests/support/harness.h"

#define N 64 /* floats of each model's constant: small models are cached at once */

/* What the app of this uid holds of key; -1 when the app is not in the table. */
static double app_num(const tst_daemon *d, const char *key) {
    cJSON *root = tst_admin_status(d);
    const cJSON *apps = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "quotas"), "apps");
    const cJSON *a;
    double x = -1;
    cJSON_ArrayForEach(a, apps) {
        if (cJSON_GetObjectItem(a, "uid")->valueint != (int)getuid()) continue;
        const cJSON *v = cJSON_GetObjectItem(a, key);
        if (cJSON_IsNumber(v)) x = v->valuedouble;
    }
    cJSON_Delete(root);
    return x;
}

/* Waits up to 10 s for the daemon to count n connections (closes are asynchronous). */
static void wait_connections(const tst_daemon *d, int n) {
    for (int i = 0; i < 1000; i++) {
        cJSON *root = tst_admin_status(d);
        int have = cJSON_GetObjectItem(root, "connections")->valueint;
        cJSON_Delete(root);
        if (have == n) return;
        usleep(10000);
    }
    fail_msg("the daemon does not count %d connections", n);
}

static uint64_t prepare(nnd_client *c, cache_model *m) {
    char err[256];
    uint64_t h = 0;
    if (nnd_client_prepare(c, &m->add.model, &m->pool_fd, 1, 0, 0, 0, &h, err, sizeof err))
        fail_msg("prepare: %s", err);
    return h;
}

/* The child: its own connection, the shared model and two of its own, all cached; then it
 * says so and waits to be killed. */
static void child(const tst_daemon *d, int report) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, "cache-kill-child", err, sizeof err);
    if (!c) _exit(2);
    for (int seed = 1; seed <= 3; seed++) {
        cache_model m;
        uint64_t h = 0;
        if (cache_model_init(&m, N, (float)seed) ||
            nnd_client_prepare(c, &m.add.model, &m.pool_fd, 1, 0, 0, 0, &h, err, sizeof err))
            _exit(3);
        cache_model_clear(&m);
    }
    char ok = 1;
    if (write(report, &ok, 1) != 1) _exit(4);
    for (;;)
        pause();
}

/* Forks the child, waits for its models, reads the uid's cache_bytes into *held, then
 * kills it with SIGKILL and reaps it. Returns its pid. */
static pid_t spawn_and_kill(const tst_daemon *d, double *held) {
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        child(d, p[1]);
    }
    close(p[1]);
    char ok = 0;
    assert_int_equal(read(p[0], &ok, 1), 1);
    close(p[0]);
    *held = app_num(d, "cache_bytes");
    assert_int_equal(kill(pid, SIGKILL), 0);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL);
    return pid;
}

/* Each child's disconnect is logged with the 3 models it released, and no line calls
 * cache bytes still counted or in use: they were given back. */
static void check_log(const char *path, pid_t a, pid_t b) {
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[2048], want_a[64], want_b[64];
    snprintf(want_a, sizeof want_a, "(pid %d, 3 objects released)", (int)a);
    snprintf(want_b, sizeof want_b, "(pid %d, 3 objects released)", (int)b);
    int disconnected = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, " disconnected ") && (strstr(line, want_a) || strstr(line, want_b)))
            disconnected++;
        if (strstr(line, "cache_bytes still") || strstr(line, "still counted"))
            fail_msg("the log says cache bytes are held: %s", line);
    }
    fclose(f);
    assert_int_equal(disconnected, 2);
}

static void test_killed_client_gives_cache_bytes_back(void **state) {
    (void)state;
    char log[] = "/tmp/nnd-cache-kill-XXXXXX";
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    tst_daemon d;
    tst_daemon_opts o = {.log_path = log};
    assert_int_equal(tst_daemon_start_opts(&d, &o), 0);
    wait_connections(&d, 0);

    /* This process: one model, shared with the child. */
    char err[256];
    nnd_client *mine = nnd_client_connect(d.socket_path, "cache-kill", err, sizeof err);
    assert_non_null(mine);
    cache_model shared;
    assert_int_equal(cache_model_init(&shared, N, 1.0f), 0);
    uint64_t h = prepare(mine, &shared);
    double base = app_num(&d, "cache_bytes");
    assert_true(base > 0);

    double held;
    pid_t pid = spawn_and_kill(&d, &held);
    print_message("# cache_bytes: %.0f for this process's model, %.0f with the child's\n", base,
                  held);
    assert_true(held > base); /* its two own models; the shared one counts once */
    wait_connections(&d, 1);
    assert_true(app_num(&d, "cache_bytes") == base);

    /* The shared model still runs here; then the uid's last connection goes, and the app's
     * record with it. */
    float out[N];
    assert_int_equal(cache_model_run_raw(mine, &shared, h, out), 0);
    for (uint32_t i = 0; i < N; i++)
        assert_true(out[i] == (1.0f + (float)i) + (1.0f + (float)i / 4));
    nnd_client_close(mine);
    cache_model_clear(&shared);
    wait_connections(&d, 0);
    assert_true(app_num(&d, "cache_bytes") == -1);

    /* A child that is the uid's only connection: killed, it takes the app's record with
     * it, nothing left counted. */
    pid_t pid2 = spawn_and_kill(&d, &held);
    assert_true(held > 0);
    wait_connections(&d, 0);
    assert_true(app_num(&d, "cache_bytes") == -1);
    assert_int_equal(tst_daemon_stop(&d), 0); /* every line is written by now */
    check_log(log, pid, pid2);
    unlink(log);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_killed_client_gives_cache_bytes_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
