/* SPDX-License-Identifier: Apache-2.0 */
/* driver_probe.c: a driver plugin's device count, asked in process (driver_probe.h). */
#include "tests/support/driver_probe.h"

#include <dlfcn.h>
#include <stdio.h>

#include "nnd/driver.h"

int tst_driver_probe(const char *path) {
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!so) {
        fprintf(stderr, "driver probe: %s\n", dlerror());
        return -1;
    }
    const nnd_driver *drv = dlsym(so, NND_DRIVER_SYMBOL);
    if (!drv || drv->abi_version != NND_DRIVER_ABI_VERSION || !drv->open) {
        fprintf(stderr, "driver probe: %s: no driver of ABI %d\n", path, NND_DRIVER_ABI_VERSION);
        dlclose(so);
        return -1;
    }
    static nnd_driver_device_info info[NND_DRIVER_MAX_DEVICES];
    char err[256] = "";
    int n = drv->open(info, NND_DRIVER_MAX_DEVICES, err, sizeof err);
    if (n < 0) fprintf(stderr, "driver probe: %s: open: %s\n", path, err);
    if (n >= 0 && drv->close) drv->close();
    /* Not dlclose'd: an OpenCL ICD loaded by it may keep threads running in its code. */
    return n;
}
