/* SPDX-License-Identifier: Apache-2.0 */
/* drv_test_driver: a misbehaving device driver for test_drivers, "nnd-test": float32 RELU
 * only, ranked before everything (exec_time 0.01). Its execute() fails when the first
 * input element is DRV_TEST_FAIL, and sleeps DRV_TEST_SLOW_MS before computing when it is
 * DRV_TEST_SLOW (a long device step for the deadline test), and faults (SIGSEGV) when it
 * is DRV_TEST_FAULT. When it is DRV_TEST_HOLD, it waits before computing until the file
 * /tmp/nnd-drv-test-release-PID exists (PID: the daemon's), the test's way to hold an
 * execution on this device for as long as it likes (60 s at most). Built a second time with
 * DRV_TEST_CRASH, whose constructor dies of SIGSEGV at load. Its descriptor ends at release()
 * (NND_DRIVER_SIZE_BASE), as drivers built before the optional callbacks do. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/backends/drivers/driver_abi1.h"

#define DRV_TEST_FAIL    6666.0f
#define DRV_TEST_SLOW    7777.0f
#define DRV_TEST_SLOW_MS 60
#define DRV_TEST_FAULT   5555.0f
#define DRV_TEST_HOLD    8888.0f
#define OP_RELU          19

#ifdef DRV_TEST_CRASH
__attribute__((constructor)) static void crash_at_load(void) {
    raise(SIGSEGV);
}
#endif

static bool t_supports(const nnd_driver_step *s) {
    return s->operation == OP_RELU && s->n_inputs == 1 &&
           s->inputs[0].type == NND_EXT_TENSOR_FLOAT32 && s->outputs[0].rank > 0;
}

/* Its steps keep no state of their own: one token stands for each. After the fault test
 * the daemon never calls this driver again, release included (driver.h), so an allocated
 * state would be left behind by design. */
static char g_step_token;

static void *t_prepare(const nnd_driver_step *s) {
    return t_supports(s) ? &g_step_token : NULL;
}

static int t_execute(void *state, nnd_driver_step *s) {
    (void)state;
    const float *x = s->inputs[0].data;
    float *y = s->outputs[0].data;
    size_t n = s->outputs[0].length / sizeof(float);
    if (n && x[0] == DRV_TEST_FAIL) {
        snprintf(s->err, s->errlen, "the test driver fails on %g", (double)DRV_TEST_FAIL);
        return NND_EXT_FAILED;
    }
    if (n && x[0] == DRV_TEST_FAULT) *(volatile int *)(uintptr_t)s->errlen = 0; /* a wild store */
    if (n && x[0] == DRV_TEST_HOLD) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/nnd-drv-test-release-%d", (int)getpid());
        struct timespec ms = {0, 1000000L};
        for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++)
            nanosleep(&ms, NULL);
    }
    if (n && x[0] == DRV_TEST_SLOW) {
        struct timespec ts = {0, DRV_TEST_SLOW_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] : 0;
    return 0;
}

static void t_release(void *state) {
    (void)state;
}

NND_DRIVER_EXPORT = {
    .abi_version = NND_DRIVER_ABI_VERSION,
    .struct_size = NND_DRIVER_SIZE_BASE, /* built as the first drivers were: no optional parts */
    .name = "nnd-test",
    .version = "test",
    .type = NND_DRIVER_TYPE_OTHER,
    .exec_time = 0.01f,
    .supports = t_supports,
    .prepare = t_prepare,
    .execute = t_execute,
    .release = t_release,
};
