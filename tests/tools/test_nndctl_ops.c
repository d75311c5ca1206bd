/* SPDX-License-Identifier: Apache-2.0 */
/* test_nndctl_ops: nndctl as an operator meets it, against a real daemon: -V/--version,
 * -h/--help with its defaults, an unknown option; status, metrics and events finding the
 * daemon's state directory through the daemon itself; "permission denied" (not a wait, not
 * "no socket") for a user who may not open the bus; replies over nanomsg's default 1 MiB
 * limit; and metrics: every status field exported, the text accepted by promtool, the
 * values those of status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "proto/paths.h"
#include "metrics/prom.h"
#include "tests/support/subprocess.h"

#define NOBODY 65534

static tst_daemon daemon_;
static char out[4 << 20];

static int nndctl(const char *const *args, int uid) {
    return tst_run(NNDCTL_PATH, args, uid, true, out, sizeof out, 30000);
}

static int setup(void **state) {
    (void)state;
    /* The defaults must not find the daemon: only what it reports may. */
    unsetenv("NND_SOCKET");
    unsetenv("NND_STATE_DIR");
    setenv("XDG_STATE_HOME", "/nonexistent/state", 1);
    return tst_daemon_start(&daemon_, NULL);
}

static int teardown(void **state) {
    (void)state;
    if (daemon_.pid > 0) tst_daemon_stop(&daemon_);
    return 0;
}

static void version_and_defaults_in_help(void **state) {
    (void)state;
    const char *version[] = {"--version", NULL}, *v[] = {"-V", NULL};
    assert_int_equal(nndctl(version, 0), 0);
    assert_true(!strncmp(out, "nndctl ", 7) && out[7] >= '0' && out[7] <= '9');
    assert_int_equal(nndctl(v, 0), 0);
    assert_true(!strncmp(out, "nndctl ", 7) && out[7] >= '0' && out[7] <= '9');
    const char *h[] = {"-h", NULL}, *bad[] = {"-x", NULL};
    assert_int_equal(nndctl(h, 0), 0);
    assert_true(!strncmp(out, "usage: nndctl ", 14));
    assert_int_equal(nndctl(bad, 0), 2);
    assert_non_null(strstr(out, "unknown option -x"));
    setenv("NND_SOCKET", daemon_.socket_path, 1);
    const char *help[] = {"--help", NULL};
    int rc = nndctl(help, 0);
    unsetenv("NND_SOCKET");
    assert_int_equal(rc, 0);
    char here[400];
    snprintf(here, sizeof here, "(here: %s)", daemon_.socket_path);
    assert_non_null(strstr(out, here));
    char dir[300];
    assert_non_null(proto_default_state_dir(dir, sizeof dir)); /* /var/lib/nnd for root */
    snprintf(here, sizeof here, "(here: %s)", dir);
    assert_non_null(strstr(out, here));
    assert_non_null(strstr(out, "metrics"));
}

/* Only --socket: the state directory comes from the daemon. */
static void state_dir_through_the_daemon(void **state) {
    (void)state;
    const char *status[] = {"--socket", daemon_.socket_path, "status", "--json", NULL};
    assert_int_equal(nndctl(status, 0), 0);
    cJSON *j = cJSON_Parse(out);
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(j, "state_dir");
    assert_true(cJSON_IsString(dir));
    assert_string_equal(dir->valuestring, daemon_.state_dir);
    cJSON_Delete(j);
    const char *metrics[] = {"--socket", daemon_.socket_path, "metrics", NULL};
    assert_int_equal(nndctl(metrics, 0), 0);
    assert_non_null(strstr(out, "\nnnd_executions_total "));
    /* events: subscribed through the reported directory, it sees a client come. */
    const char *events[] = {"--socket", daemon_.socket_path, "events", "--count", "1", NULL};
    tst_child ch = tst_spawn(NNDCTL_PATH, events, 0, false);
    assert_true(ch.pid > 0);
    int rc = -1;
    for (int i = 0; i < 50 && rc < 0; i++) {
        usleep(100 * 1000);
        char err[256];
        nnd_client_close(nnd_client_connect(daemon_.socket_path, "eventful", err, sizeof err));
        if (waitpid(ch.pid, NULL, WNOHANG) == ch.pid) rc = 0;
    }
    if (rc == 0) ch.pid = -1; /* reaped: only the output is left */
    if (ch.pid > 0) rc = tst_finish(ch, out, sizeof out, 100);
    assert_int_equal(rc, 0);
}

/* A user who may reach the socket but not the daemon's state directory. */
static void permission_denied_says_so(void **state) {
    (void)state;
    if (geteuid() != 0) skip();
    assert_int_equal(chmod(daemon_.dir, 0711), 0); /* the socket reachable, state/ not */
    const char *const cmds[][6] = {
        {"--socket", daemon_.socket_path, "status", NULL},
        {"--socket", daemon_.socket_path, "metrics", NULL},
        {"--socket", daemon_.socket_path, "events", "--count", "1", NULL},
        {"--socket", daemon_.socket_path, "cache", "list", NULL},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        int rc = nndctl(cmds[i], NOBODY);
        print_message("%s: %d: %s", cmds[i][2], rc, out);
        assert_int_equal(rc, 1); /* at once: events does not wait for what never appears */
        assert_non_null(strstr(out, "permission denied"));
    }
    assert_int_equal(chmod(daemon_.dir, 0700), 0);
}

/* ---- a reply over 1 MiB: a stand-in admin bus answering cache list ----------------------- */

#define BIG_ENTRIES 20000

static void *big_admin(void *arg) {
    const char *url = arg;
    int s = nn_socket(AF_SP, NN_REP);
    if (s < 0 || nn_bind(s, url) < 0) return NULL;
    void *req = NULL;
    if (nn_recv(s, &req, NN_MSG, 0) >= 0) {
        size_t cap = 64 + (size_t)BIG_ENTRIES * 200, n = 0;
        char *reply = malloc(cap);
        n += (size_t)snprintf(reply, cap, "{\"ok\":true,\"entries\":[");
        for (int i = 0; i < BIG_ENTRIES; i++)
            n += (size_t)snprintf(reply + n, cap - n,
                                  "%s{\"hash\":\"%064x\",\"model_bytes\":%d,\"data_bytes\":0,"
                                  "\"hits\":1,\"stored\":true,\"in_memory\":false,\"users\":0}",
                                  i ? "," : "", i, i);
        n += (size_t)snprintf(reply + n, cap - n, "]}");
        nn_send(s, reply, n, 0);
        free(reply);
        nn_freemsg(req);
    }
    usleep(200 * 1000); /* let the reply leave before the socket closes */
    nn_close(s);
    return NULL;
}

static void replies_over_one_mebibyte(void **state) {
    (void)state;
    char dir[] = "/tmp/nnd-big-XXXXXX", url[64];
    assert_non_null(mkdtemp(dir));
    snprintf(url, sizeof url, "ipc://%s/admin.ipc", dir);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, big_admin, url), 0);
    char path[64];
    snprintf(path, sizeof path, "%s/admin.ipc", dir);
    for (int i = 0; i < 100 && access(path, F_OK) < 0; i++)
        usleep(10 * 1000);
    const char *list[] = {"--state-dir", dir, "cache", "list", NULL};
    int rc = nndctl(list, 0);
    pthread_join(t, NULL);
    unlink(path);
    rmdir(dir);
    assert_int_equal(rc, 0);
    char last[64];
    snprintf(last, sizeof last, "\ncache: %d entries\n", BIG_ENTRIES);
    assert_non_null(strstr(out, last));
}

/* ---- metrics ------------------------------------------------------------------------------ */

static double status_number(const cJSON *status, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(status, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static void metrics_cover_status_and_pass_promtool(void **state) {
    (void)state;
    /* Some executions, and a client holding a connection, so that every part of status
     * (per-client and per-app lists included) has something in it. */
    const char *conf[] = {"--socket", daemon_.socket_path, "conformance",
                          TST_CONFORMANCE_DIR "/V1_0/add.json", NULL};
    assert_int_equal(nndctl(conf, 0), 0);
    char err[256];
    nnd_client *c = nnd_client_connect(daemon_.socket_path, "held", err, sizeof err);
    assert_non_null(c);

    cJSON *status = tst_admin_status(&daemon_);
    char *unmapped = NULL;
    char *text = met_prom_render(status, &unmapped);
    assert_non_null(text);
    if (unmapped) print_message("status fields without a metric: %s\n", unmapped);
    assert_null(unmapped);
    free(text);

    /* --state-dir: nndctl makes no connection of its own, so the counts are exact. */
    const char *metrics[] = {"--state-dir", daemon_.state_dir, "metrics", NULL};
    assert_int_equal(tst_run(NNDCTL_PATH, metrics, 0, false, out, sizeof out, 30000), 0);
    char line[160];
    snprintf(line, sizeof line, "\nnnd_executions_total %.0f\n",
             status_number(status, "executions"));
    assert_non_null(strstr(out, line));
    assert_non_null(strstr(out, "\nnnd_connections 1\n"));
    snprintf(line, sizeof line, "\nnnd_app_quota_used{uid=\"%u\",quota=\"connections\"} 1\n",
             (unsigned)getuid());
    assert_non_null(strstr(out, line));
    snprintf(line, sizeof line, "\nnnd_execution_latency_seconds_count{priority=\"medium\"} %.0f\n",
             status_number(status, "executions"));
    assert_non_null(strstr(out, line));
    assert_non_null(strstr(out, "# TYPE nnd_execution_latency_seconds histogram\n"));
    cJSON_Delete(status);
    nnd_client_close(c);

    tst_expect_promtool_ok(out);
}

static void clean_stop(void **state) {
    (void)state;
    assert_int_equal(tst_daemon_stop(&daemon_), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(version_and_defaults_in_help),
        cmocka_unit_test(state_dir_through_the_daemon),
        cmocka_unit_test(permission_denied_says_so),
        cmocka_unit_test(replies_over_one_mebibyte),
        cmocka_unit_test(metrics_cover_status_and_pass_promtool),
        cmocka_unit_test(clean_stop),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
