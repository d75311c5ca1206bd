/* SPDX-License-Identifier: Apache-2.0 */
/* harness_group.c: the cmocka side of the harness (harness.h): the group fixtures of a
 * program whose tests share one daemon, and the reply check. Kept out of harness.c so
 * that helpers built on the harness without cmocka (cache_client, run as another uid and
 * inside containers) do not need its library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/harness.h"

tst_daemon tst_group_daemon;
const char *const *tst_group_args;

int tst_group_setup(void **state) {
    (void)state;
    return tst_daemon_start(&tst_group_daemon, tst_group_args) == 0 ? 0 : -1;
}

int tst_group_teardown(void **state) {
    (void)state;
    tst_daemon *d = &tst_group_daemon;
    return d->pid > 0 && tst_daemon_stop(d) != 0 ? -1 : 0;
}

void tst_expect_reply(Nnd__Reply *r, int status, const char *needle) {
    if (!r) fail_msg("no reply, wanted status %d", status);
    const char *msg = r->message ? r->message : "";
    if ((int)r->status != status) fail_msg("status %d (%s), wanted %d", r->status, msg, status);
    if (needle && !strstr(msg, needle)) fail_msg("\"%s\" lacks \"%s\"", msg, needle);
    nnd__reply__free_unpacked(r, NULL);
}

void tst_expect_promtool_ok(const char *metrics) {
    if (system("command -v promtool >/dev/null") != 0) {
        print_message("no promtool here: the text format is not checked\n");
        skip();
    }
    char file[] = "/tmp/nnd-metrics-XXXXXX";
    int fd = mkstemp(file);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, metrics, strlen(metrics)), (ssize_t)strlen(metrics));
    close(fd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "promtool check metrics < %s", file);
    int rc = system(cmd);
    unlink(file);
    assert_int_equal(rc, 0);
}
