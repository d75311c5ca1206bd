/* test_ndk_priority (integration): one process, one connection (the NNAPI layer's): a
 * thread's HIGH executions keep their latency while another thread of the process floods
 * LOW executions of the same model. Their p90 under the flood is at most 1.5 times their
 * p90 with the daemon idle (tests/ndk_load.h takes both in alternating blocks). A busy
 * machine can spoil one measurement, so up to three are taken; a client that makes one
 * thread's call wait for another's reply fails all three (its ratio is 2 or more). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ndk_fixture.h"
#include "ndk_load.h"

#define ATTEMPTS 3
#define LIMIT    1.5

static void test_high_under_low_flood(void **state) {
    (void)state;
    ndk_fc_chain c;
    assert_int_equal(ndk_fc_chain_build(&c, 12, 16, 512), 0);
    double best = 0;
    for (int k = 0; k < ATTEMPTS; k++) {
        ndk_priority_result r;
        assert_int_equal(ndk_priority_run(&c, 100, &r), 0);
        double ratio = r.flood_p90_ns / r.idle_p90_ns;
        print_message("# HIGH p90 idle %.2f ms, under a LOW flood %.2f ms (ratio %.3f), %llu LOW "
                      "done\n",
                      r.idle_p90_ns / 1e6, r.flood_p90_ns / 1e6, ratio,
                      (unsigned long long)r.low_done);
        assert_true(r.low_done > 0);
        best = k == 0 || ratio < best ? ratio : best;
        if (best <= LIMIT) break;
    }
    ndk_fc_chain_free(&c);
    assert_true(best <= LIMIT);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_high_under_low_flood),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, ndk_setup, ndk_teardown);
}
