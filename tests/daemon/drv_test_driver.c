/* SPDX-License-Identifier: Apache-2.0 */
/* drv_test_driver: a misbehaving device driver for test_drivers, "nnd-test": RELU only
 * (drv_relu.h), ranked before everything (0.01 for every type). A partition's execute()
 * fails when its first input element is DRV_TEST_FAIL, and sleeps DRV_TEST_SLOW_MS before computing
 * when it is DRV_TEST_SLOW (a long device step for the deadline test), and faults (SIGSEGV) when it
 * is DRV_TEST_FAULT. When it is DRV_TEST_HOLD, it waits before computing until the file
 * /tmp/nnd-drv-test-release-PID exists (PID: the daemon's), the test's way to hold an
 * execution on this device for as long as it likes (60 s at most). Built a second time with
 * DRV_TEST_CRASH, whose constructor dies of SIGSEGV at load, and with DRV_TEST_ABI1, a
 * table that says ABI version 1 (refused with a line saying to rebuild). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/daemon/drv_relu.h"

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

static int t_open(nnd_driver_device_info *d, uint32_t max, char *err, size_t errlen) {
    (void)err, (void)errlen;
    if (max < 1) return 0;
    snprintf(d->name, sizeof d->name, "nnd-test");
    snprintf(d->version, sizeof d->version, "test");
    d->type = NND_DRIVER_TYPE_OTHER;
    nnd_driver_perf fast = {0.01f, 0.01f};
    for (int t = 0; t < NND_DRIVER_OPERAND_TYPES; t++)
        d->caps.operand[t] = fast;
    d->caps.relaxed_scalar = d->caps.relaxed_tensor = fast;
    return 1;
}

static void t_close(void) {}

static int t_prepare(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                     nnd_driver_prepared_info *out, char *err, size_t errlen) {
    (void)device, (void)a;
    drv_relu *p;
    int rc = drv_relu_prepare(m, &p, err, errlen);
    out->prepared = p;
    return rc;
}

static void t_release(void *prepared) {
    drv_relu_free(prepared);
}

static int t_execute(nnd_driver_execution *x) {
    float x0 = drv_relu_first(x->prepared, x, NULL);
    if (x0 == DRV_TEST_FAIL) {
        snprintf(x->err, x->errlen, "the test driver fails on %g", (double)DRV_TEST_FAIL);
        return NND_DRIVER_GENERAL_FAILURE;
    }
    if (x0 == DRV_TEST_FAULT) *(volatile int *)(uintptr_t)x->errlen = 0; /* a wild store */
    if (x0 == DRV_TEST_HOLD) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/nnd-drv-test-release-%d", (int)getpid());
        struct timespec ms = {0, 1000000L};
        for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++)
            nanosleep(&ms, NULL);
    }
    if (x0 == DRV_TEST_SLOW) {
        struct timespec ts = {0, DRV_TEST_SLOW_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    return drv_relu_run(x->prepared, x, NULL);
}

NND_DRIVER_EXPORT = {
#ifdef DRV_TEST_ABI1
    .abi_version = 1,
#else
    .abi_version = NND_DRIVER_ABI_VERSION,
#endif
    .struct_size = sizeof(nnd_driver),
    .name = "nnd-test",
    .open = t_open,
    .close = t_close,
    .supported_operations = drv_relu_supported_operations,
    .prepare = t_prepare,
    .release = t_release,
    .execute = t_execute,
};
