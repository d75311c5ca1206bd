/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_priority (integration): one process, one connection (the NNAPI layer's): a
 * thread's HIGH executions keep their latency while another thread of the process floods
 * LOW executions of the same model. Their p90 under the flood is at most 1.5 times their
 * p90 with the daemon idle (tests/ndk/ndk_load.h takes both in alternating blocks). A client
 * that makes one thread's call wait for another's reply measures 2 or more.
 *
 * The bound is judged only from a measurement the machine lets through: when other
 * processes than this test and its daemon kept more than a fifth of a CPU busy meanwhile
 * (tests/support/quiet.h, measured rather than guessed from the load average), or the idle
 * p90 is over 1.5 times the idle median, the machine, not the client, decided the tail, and
 * the measurement is taken again. The best of up to three judged measurements must hold; when
 * none of six could be judged, the test is skipped (status 77), saying so. Under a sanitizer
 * (TST_TIMING_MEANINGFUL is 0) the instrumented client and daemon, not the scheduling, decide
 * the ratio: one measurement is taken, reported and not judged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <unistd.h>

#include "tests/ndk/ndk_fixture.h"
#include "tests/ndk/ndk_load.h"
#include "tests/support/quiet.h"

#define JUDGED   3
#define ATTEMPTS 6
#define LIMIT    1.5
#define NOISY    1.5 /* idle p90 over idle median: the machine is too busy to judge */
/* CPUs the rest of the machine may keep busy during a judged measurement (quiet.h) */
#define QUIET_OTHERS 0.2

static bool g_skipped;

static void test_high_under_low_flood(void **state) {
    (void)state;
    ndk_fc_chain c;
    assert_int_equal(ndk_fc_chain_build(&c, 12, 16, 512), 0);
    double best = 0;
    int judged = 0;
    for (int k = 0; k < ATTEMPTS && judged < JUDGED && !(judged && best <= LIMIT); k++) {
        ndk_priority_result r;
        tst_quiet quiet;
        tst_quiet_start(&quiet, g_daemon.pid);
        assert_int_equal(ndk_priority_run(&c, 100, &r), 0);
        assert_true(r.low_done > 0);
        double ratio = r.flood_p90_ns / r.idle_p90_ns, others = tst_quiet_others(&quiet);
        bool quiet_enough = others <= QUIET_OTHERS && r.idle_p90_ns <= NOISY * r.idle_median_ns;
        print_message("# HIGH p90 idle %.2f ms (median %.2f), under a LOW flood %.2f ms: ratio "
                      "%.3f; the rest of the machine kept %.2f CPUs busy%s\n",
                      r.idle_p90_ns / 1e6, r.idle_median_ns / 1e6, r.flood_p90_ns / 1e6, ratio,
                      others,
                      !TST_TIMING_MEANINGFUL ? " (under a sanitizer: not judged)"
                      : quiet_enough         ? ""
                                             : " (machine too busy: not judged)");
        if (!TST_TIMING_MEANINGFUL) break;
        if (!quiet_enough) continue;
        best = !judged || ratio < best ? ratio : best;
        judged++;
    }
    ndk_fc_chain_free(&c);
    if (!TST_TIMING_MEANINGFUL) return;
    if (!judged) {
        g_skipped = true;
        print_message("# skipped: the machine was too busy to judge a latency bound\n");
        skip();
    }
    assert_true(best <= LIMIT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_high_under_low_flood),
        cmocka_unit_test(test_clean_stop),
    };
    int failed = cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
    return failed ? failed : g_skipped ? 77 : 0;
}
