/* harness_group.c: the cmocka side of the harness (harness.h): the group fixtures of a
 * program whose tests share one daemon, and the reply check. Kept out of harness.c so
 * that helpers built on the harness without cmocka (cache_client, run as another uid and
 * inside containers) do not need its library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "harness.h"

nnd_test_daemon nnd_test_group_daemon;
const char *const *nnd_test_group_args;

int nnd_test_group_setup(void **state) {
    (void)state;
    return nnd_test_daemon_start(&nnd_test_group_daemon, nnd_test_group_args) == 0 ? 0 : -1;
}

int nnd_test_group_teardown(void **state) {
    (void)state;
    nnd_test_daemon *d = &nnd_test_group_daemon;
    return d->pid > 0 && nnd_test_daemon_stop(d) != 0 ? -1 : 0;
}

void nnd_test_expect_reply(Nnd__Reply *r, int status, const char *needle) {
    if (!r) fail_msg("no reply, wanted status %d", status);
    const char *msg = r->message ? r->message : "";
    if ((int)r->status != status) fail_msg("status %d (%s), wanted %d", r->status, msg, status);
    if (needle && !strstr(msg, needle)) fail_msg("\"%s\" lacks \"%s\"", msg, needle);
    nnd__reply__free_unpacked(r, NULL);
}
