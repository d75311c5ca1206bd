/* SPDX-License-Identifier: Apache-2.0 */
/* test_reload (integration): the daemon as a Linux service, on a real daemon.
 * - SIGHUP with a changed quota in the config file: the new limit holds for a client that
 *   stays connected through the reload (admin status, which nndctl status prints, shows
 *   it), and the log names the change; a changed key that needs a restart is a warning;
 *   a config file that no longer reads is refused with an error line, the settings in
 *   force kept; nndctl reload does the same as SIGHUP and fails on a bad file.
 * - systemd's notification protocol, with a socket of the test's as NOTIFY_SOCKET:
 *   READY=1 and a STATUS= line once serving, WATCHDOG=1 pings at the asked interval,
 *   RELOADING=1 then READY=1 around a reload, STOPPING=1 at shutdown.
 * - The journal's line format when stderr is the JOURNAL_STREAM: "<6>" info lines and
 *   "<3>" errors with no timestamp, also for a bad config file at start; a plain file
 *   gets timestamped lines. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "nnd/nnd_wire.h"
#include "tests/support/harness.h"
#include "tests/support/qos_models.h"
#include "tests/support/subprocess.h"

typedef struct fixture {
    tst_daemon d;
    char config[64], log[80];
} fixture;

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

/* Starts a daemon with text as its config file, its stderr into f->log. */
static void start(fixture *f, const char *text) {
    snprintf(f->config, sizeof f->config, "/tmp/nnd-reload-XXXXXX");
    int fd = mkstemp(f->config);
    assert_true(fd >= 0);
    close(fd);
    write_file(f->config, text);
    snprintf(f->log, sizeof f->log, "%s.log", f->config);
    write_file(f->log, "");
    const char *args[] = {"--config", f->config, NULL};
    tst_daemon_opts o = {.extra_args = args, .log_path = f->log};
    assert_int_equal(tst_daemon_start_opts(&f->d, &o), 0);
}

static void stop(fixture *f) {
    assert_int_equal(tst_daemon_stop(&f->d), 0);
    unlink(f->config);
    unlink(f->log);
}

/* Whether the daemon's log holds needle, waiting up to 5 s for it. */
static bool log_has(const fixture *f, const char *needle) {
    for (int i = 0; i < 500; i++) {
        size_t len;
        char *text = (char *)tst_read_file(f->log, &len);
        bool found = text && strstr(text, needle);
        free(text);
        if (found) return true;
        usleep(10000);
    }
    return false;
}

/* quotas.limits.connection.prepared_models in admin status. */
static double conn_models_limit(const fixture *f) {
    cJSON *root = tst_admin_status(&f->d);
    cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "quotas"), "limits");
    v = cJSON_GetObjectItem(cJSON_GetObjectItem(v, "connection"), "prepared_models");
    double x = cJSON_IsNumber(v) ? v->valuedouble : -1;
    cJSON_Delete(root);
    return x;
}

static void wait_limit(const fixture *f, double want) {
    for (int i = 0; i < 500 && conn_models_limit(f) != want; i++)
        usleep(10000);
    assert_true(conn_models_limit(f) == want);
}

static int prepare(nnd_client *c, uint32_t len, char *err, size_t errlen) {
    qos_chain m;
    qos_chain_init(&m, 1, len);
    uint64_t h;
    int st = nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h, err, errlen);
    qos_chain_free(&m);
    return st;
}

static void expect_refused(nnd_client *c, uint32_t len, const char *quota) {
    char err[256] = "";
    int st = prepare(c, len, err, sizeof err);
    if (st != NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT || !strstr(err, quota))
        fail_msg("prepare: %d \"%s\", wanted a refusal naming \"%s\"", st, err, quota);
}

static void expect_prepared(nnd_client *c, uint32_t len) {
    char err[256] = "";
    if (prepare(c, len, err, sizeof err) != 0) fail_msg("prepare: %s", err);
}

static void test_sighup_quota(void **state) {
    (void)state;
    fixture f;
    start(&f, "quota.connection.prepared_models = 2\nworkers = 1\n");
    char err[256];
    nnd_client *c = nnd_client_connect(f.d.socket_path, "reload", err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    expect_prepared(c, 4);
    expect_prepared(c, 8);
    expect_refused(c, 12, "quota.connection.prepared_models (2)");

    /* A higher limit: the same connection may now hold a third model. */
    write_file(f.config, "quota.connection.prepared_models = 3\nworkers = 2\n");
    assert_int_equal(kill(f.d.pid, SIGHUP), 0);
    wait_limit(&f, 3);
    assert_true(log_has(&f, "reload: quota.connection.prepared_models: 2 -> 3"));
    assert_true(log_has(&f, "reload: workers changed (1 -> 2): it takes effect at the next "
                            "restart"));
    expect_prepared(c, 12);
    expect_refused(c, 16, "quota.connection.prepared_models (3)");

    /* A file that no longer reads: refused, logged, the limit in force kept. */
    write_file(f.config, "quota.connection.prepared_models = lots\n");
    assert_int_equal(kill(f.d.pid, SIGHUP), 0);
    assert_true(log_has(&f, "reload refused, the settings in force are kept: "));
    assert_true(log_has(&f, ":1: quota.connection.prepared_models: \"lots\""));
    assert_true(conn_models_limit(&f) == 3);
    expect_refused(c, 16, "quota.connection.prepared_models (3)");

    /* nndctl reload: the same, and its exit status says whether the file was taken. */
    char out[4096];
    const char *args[] = {"--state-dir", f.d.state_dir, "reload", NULL};
    assert_int_equal(tst_run(NNDCTL_PATH, args, 0, true, out, sizeof out, 10000), 1);
    assert_non_null(strstr(out, "reload refused"));
    write_file(f.config, "quota.connection.prepared_models = 4\n");
    assert_int_equal(tst_run(NNDCTL_PATH, args, 0, true, out, sizeof out, 10000), 0);
    assert_true(conn_models_limit(&f) == 4); /* no wait: nndctl waited for the reload */
    expect_prepared(c, 16);
    nnd_client_close(c);
    stop(&f);
}

/* ---- sd_notify ------------------------------------------------------------------------- */

/* A datagram socket at path, as systemd's notification socket. */
static int notify_socket(const char *path) {
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    unlink(path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    return fd;
}

/* Appends the datagrams that come within ms to text, until one holds needle (true). */
static bool receive_until(int fd, char *text, size_t cap, const char *needle, int ms) {
    for (int waited = 0; waited < ms; waited += 10) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10) <= 0) continue;
        char msg[512];
        ssize_t n = recv(fd, msg, sizeof msg - 1, 0);
        if (n <= 0) continue;
        msg[n] = '\0';
        size_t at = strlen(text);
        snprintf(text + at, cap - at, "%s\n", msg);
        if (strstr(msg, needle)) return true;
    }
    return false;
}

static int count(const char *text, const char *needle) {
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void test_notify(void **state) {
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/nnd-notify-%d", (int)getpid());
    int fd = notify_socket(path);
    setenv("NOTIFY_SOCKET", path, 1);
    setenv("WATCHDOG_USEC", "200000", 1); /* a ping every 100 ms */
    fixture f;
    start(&f, "log_level = info\n");
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    static char text[65536];
    text[0] = '\0';
    assert_true(receive_until(fd, text, sizeof text, "READY=1", 5000));
    assert_true(
        receive_until(fd, text, sizeof text, "STATUS=serving 0 clients, 0 prepared models", 5000));
    /* At least three pings in a second: 100 ms apart, with room for a slow machine. */
    for (int i = 0; i < 3; i++)
        assert_true(receive_until(fd, text, sizeof text, "WATCHDOG=1", 1000));
    assert_int_equal(kill(f.d.pid, SIGHUP), 0);
    assert_true(receive_until(fd, text, sizeof text, "RELOADING=1", 5000));
    size_t before = strlen(text);
    assert_true(receive_until(fd, text, sizeof text, "READY=1", 5000));
    assert_true(count(text + before, "READY=1") == 1);
    int pid = f.d.pid;
    stop(&f);
    assert_true(receive_until(fd, text, sizeof text, "STOPPING=1", 1000));
    (void)pid;
    close(fd);
    unlink(path);
}

/* ---- the journal's format -------------------------------------------------------------- */

static void test_journal_format(void **state) {
    (void)state;
    fixture f;
    /* Plain lines first: a timestamp and the level word. */
    start(&f, "log_level = info\n");
    assert_true(log_has(&f, "Z info nnd "));
    stop(&f);
    /* The log file as the journal's stream: priorities, no timestamps. */
    snprintf(f.config, sizeof f.config, "/tmp/nnd-reload-XXXXXX");
    int fd = mkstemp(f.config);
    assert_true(fd >= 0);
    close(fd);
    write_file(f.config, "log_level = info\n");
    snprintf(f.log, sizeof f.log, "%s.log", f.config);
    write_file(f.log, "");
    struct stat st;
    assert_int_equal(stat(f.log, &st), 0);
    char js[64];
    snprintf(js, sizeof js, "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    setenv("JOURNAL_STREAM", js, 1);
    const char *args[] = {"--config", f.config, NULL};
    tst_daemon_opts o = {.extra_args = args, .log_path = f.log};
    assert_int_equal(tst_daemon_start_opts(&f.d, &o), 0);
    unsetenv("JOURNAL_STREAM");
    write_file(f.config, "log_level = nonsense\n");
    assert_int_equal(kill(f.d.pid, SIGHUP), 0);
    if (!log_has(&f, "\n<3>reload refused")) {
        size_t n;
        char *t = (char *)tst_read_file(f.log, &n);
        fail_msg("no error line with its priority in:\n%s", t ? t : "(no log)");
    }
    assert_true(log_has(&f, "<6>nnd "));
    size_t len;
    char *text = (char *)tst_read_file(f.log, &len);
    assert_non_null(text);
    /* Every line starts with a priority; none with a timestamp. */
    for (char *line = text; *line; line = strchr(line, '\n') + 1) {
        if (line[0] != '<' || !strchr("3467", line[1]) || line[2] != '>')
            fail_msg("a line without its priority: %.80s", line);
        if (!strchr(line, '\n')) break;
        if (!strchr(line, '\n')[1]) break;
    }
    free(text);
    stop(&f);

    /* A bad file at start, stderr the journal: the message at priority err, exit status 2. */
    write_file(f.config, "log_level = nonsense\n");
    char cmd[512], out[1024];
    snprintf(cmd, sizeof cmd,
             ": >%s && JOURNAL_STREAM=$(stat -c %%d:%%i %s) %s --config %s 2>%s; echo $?; cat %s",
             f.log, f.log, TST_NND_PATH, f.config, f.log, f.log);
    const char *sh_args[] = {"-c", cmd, NULL};
    assert_int_equal(tst_run("/bin/sh", sh_args, 0, true, out, sizeof out, 10000), 0);
    if (strncmp(out, "2\n<3>nnd: ", 10) || !strstr(out, ":1: log_level: \"nonsense\""))
        fail_msg("a bad config file at start under the journal: %s", out);
    unlink(f.config);
    unlink(f.log);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sighup_quota),
        cmocka_unit_test(test_notify),
        cmocka_unit_test(test_journal_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
