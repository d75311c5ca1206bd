/* SPDX-License-Identifier: Apache-2.0 */
/* test_client_logs: the daemon's per-client log lines against a flood of connections. At
 * info they are rate-limited and every line held back is counted in a "suppressed" line,
 * so that lines shown plus lines counted is exactly what happened; at debug every line is
 * there. Lines name the client by the id that events and status show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "nnd/nnd.h"

#define CLIENTS 100
#define PROBES  1 /* the harness's own connection, made to see the daemon ready */

typedef struct tally {
    unsigned connected, disconnected;
    unsigned long long suppressed;
    bool ids_in_order; /* "client N connected" lines name 1, 2, 3, ... as they come */
} tally;

/* Runs a daemon at level, connects and closes CLIENTS clients, stops it, reads its log. */
static tally flood(const char *level, double *seconds) {
    char log[] = "/tmp/nnd-client-logs-XXXXXX";
    int fd = mkstemp(log);
    assert_true(fd >= 0);
    close(fd);
    const char *args[] = {"--log-level", level, NULL};
    tst_daemon_opts o = {.extra_args = args, .log_path = log};
    tst_daemon d;
    assert_int_equal(tst_daemon_start_opts(&d, &o), 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < CLIENTS; i++) {
        char err[256];
        nnd_client *c = nnd_client_connect(d.socket_path, "flood", err, sizeof err);
        assert_non_null(c);
        nnd_client_close(c);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    *seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_int_equal(tst_daemon_stop(&d), 0); /* every disconnect is logged by now */
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    tally t = {.ids_in_order = true};
    unsigned long long last_id = 0, id, n;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        const char *m = strstr(line, " client ");
        if (m && sscanf(m, " client %llu connected:", &id) == 1 && strstr(m, "connected:")) {
            t.connected++;
            if (id <= last_id) t.ids_in_order = false;
            last_id = id;
        } else if (m && strstr(m, " disconnected (")) {
            t.disconnected++;
        } else if ((m = strstr(line, " info ")) &&
                   sscanf(m, " info %llu client log lines suppressed", &n) == 1) {
            t.suppressed += n;
        }
    }
    fclose(f);
    unlink(log);
    return t;
}

static void info_lines_are_rate_limited_and_counted(void **state) {
    (void)state;
    double seconds;
    tally t = flood("info", &seconds);
    print_message("info: %u connected, %u disconnected, %llu suppressed, in %.2f s\n", t.connected,
                  t.disconnected, t.suppressed, seconds);
    assert_int_equal(t.connected + t.disconnected + t.suppressed, 2 * (CLIENTS + PROBES));
    assert_true(t.ids_in_order);
    /* At most SRV_LOG_CLIENT_PER_S (20) a second, in every second the flood touched. */
    unsigned budget = 20 * (unsigned)(seconds + 2);
    assert_true(t.connected + t.disconnected <= budget);
    if (budget < 2 * (CLIENTS + PROBES)) assert_true(t.suppressed > 0);
}

static void debug_shows_every_line(void **state) {
    (void)state;
    double seconds;
    tally t = flood("debug", &seconds);
    assert_int_equal(t.connected, CLIENTS + PROBES);
    assert_int_equal(t.disconnected, CLIENTS + PROBES);
    assert_int_equal(t.suppressed, 0);
    assert_true(t.ids_in_order);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(info_lines_are_rate_limited_and_counted),
        cmocka_unit_test(debug_shows_every_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
