/* SPDX-License-Identifier: Apache-2.0 */
/* opencl.c: nnd-opencl, the OpenCL GPU driver (driver ABI 2, include/nnd/driver.h;
 * docs/opencl.md). One nnd device per OpenCL GPU or accelerator (CPU devices such as
 * PoCL's only with NND_OPENCL_CPU=1), FLOAT32 operations lowered to the kernels of
 * kernels.cl (ocl_plan.h), a partition prepared once into device buffers and kernels
 * (ocl_exec.h), executions served by priority and completed from OpenCL's callbacks. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ocl_blob.h"
#include "ocl_exec.h"
#include "ocl_memory.h"
#include "ocl_plan.h"

static ocl_device *devices[NND_DRIVER_MAX_DEVICES];
static uint32_t n_devices;

/* Relative costs (nnd-reference 1.0, nnd-cpu 0.1). A CPU OpenCL device runs the same
 * cores as nnd-cpu through generic kernels: it ranks after nnd-cpu, before the reference.
 * A GPU: 0.05, twice nnd-cpu's speed, for FLOAT32 (docs/opencl.md says why). */
static nnd_driver_capabilities caps_for(const ocl_device *d) {
    nnd_driver_capabilities c;
    memset(&c, 0, sizeof c);
    nnd_driver_perf f = d->is_cpu ? (nnd_driver_perf){0.5f, 0.5f} : (nnd_driver_perf){0.05f, 0.1f};
    c.operand[NND_DRIVER_FLOAT32] = f;
    c.operand[NND_DRIVER_TENSOR_FLOAT32] = f;
    c.relaxed_scalar = f; /* relaxed FLOAT32 is computed in FLOAT32 */
    c.relaxed_tensor = f;
    c.cache_blobs = 1; /* the program binary (ocl_blob.h) */
    return c;
}

static int drv_open(nnd_driver_device_info *info, uint32_t max, char *err, size_t errlen) {
    if (max > NND_DRIVER_MAX_DEVICES) max = NND_DRIVER_MAX_DEVICES;
    uint32_t n = 0;
    if (ocl_devices_open(devices, max, &n, err, errlen)) return NND_DRIVER_GENERAL_FAILURE;
    n_devices = 0;
    for (uint32_t i = 0; i < n; i++) {
        ocl_device *d = devices[i];
        if (ocl_sched_start(d)) {
            ocl_device_close(d);
            continue;
        }
        devices[n_devices] = d;
        nnd_driver_device_info *o = &info[n_devices];
        memset(o, 0, sizeof *o);
        if (n_devices == 0)
            snprintf(o->name, sizeof o->name, "nnd-opencl");
        else
            snprintf(o->name, sizeof o->name, "nnd-opencl-%u", n_devices);
        snprintf(o->version, sizeof o->version, "%.20s %.24s %.16s", d->platform_name,
                 d->device_name, d->driver_version);
        o->type = NND_DRIVER_TYPE_GPU;
        o->caps = caps_for(d);
        o->device = d;
        n_devices++;
    }
    return (int)n_devices;
}

static void drv_close(void) {
    for (uint32_t i = 0; i < n_devices; i++) {
        ocl_sched_stop(devices[i]);
        ocl_memory_close(devices[i]);
        ocl_device_close(devices[i]);
        devices[i] = NULL;
    }
    n_devices = 0;
}

static int drv_supported(void *device, const nnd_driver_model *m, bool *supported, char *err,
                         size_t errlen) {
    /* The program is built by the first prepare(), which may take long: not here. */
    (void)device;
    for (uint32_t i = 0; i < m->n_operations; i++)
        supported[i] = false;
    ocl_plan plan;
    if (!ocl_plan_init(&plan, m, true)) {
        snprintf(err, errlen, "out of memory");
        return NND_DRIVER_GENERAL_FAILURE;
    }
    for (uint32_t i = 0; i < m->n_operations; i++)
        supported[i] = ocl_lower(&plan, &m->operations[i]);
    ocl_plan_free(&plan);
    return NND_DRIVER_OK;
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int drv_prepare(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *args,
                       nnd_driver_prepared_info *out, char *err, size_t errlen) {
    ocl_device *d = device;
    if (args && args->deadline_ns != NND_DRIVER_NO_DEADLINE && now_ns() >= args->deadline_ns) {
        snprintf(err, errlen, "the deadline passed before the partition was prepared");
        return NND_DRIVER_MISSED_DEADLINE_TRANSIENT;
    }
    ocl_plan plan;
    if (!ocl_plan_init(&plan, m, false)) {
        snprintf(err, errlen, "out of memory");
        return NND_DRIVER_GENERAL_FAILURE;
    }
    for (uint32_t i = 0; i < m->n_operations; i++)
        if (!ocl_lower(&plan, &m->operations[i])) {
            snprintf(err, errlen, "operation %u (type %d): %s", m->operations[i].index,
                     m->operations[i].type, plan.err);
            ocl_plan_free(&plan);
            return NND_DRIVER_UNSUPPORTED;
        }
    ocl_prepared *p = NULL;
    int status = ocl_prepare(d, m, &plan, &p, err, errlen);
    if (status) return status;
    out->prepared = p;
    out->held_bytes = p->held_bytes;
    return NND_DRIVER_OK;
}

/* A cached compilation: the program comes from the blob when the device has none built
 * yet; the partition is then lowered and its weights uploaded as prepare() does. */
static size_t drv_cache_save(void *prepared, uint32_t blob, void *buf, size_t cap) {
    const ocl_prepared *p = prepared;
    return blob == 0 ? ocl_blob_save(p->dev, buf, cap) : 0;
}

static int drv_cache_load(void *device, const nnd_driver_model *m,
                          const nnd_driver_prepare_args *args, const nnd_driver_blob *blobs,
                          uint32_t n_blobs, nnd_driver_prepared_info *out, char *err,
                          size_t errlen) {
    if (n_blobs != 1) {
        snprintf(err, errlen, "%u cache blobs, nnd-opencl makes 1", n_blobs);
        return NND_DRIVER_GENERAL_FAILURE;
    }
    if (ocl_blob_adopt(device, blobs[0].data, blobs[0].size, err, errlen))
        return NND_DRIVER_GENERAL_FAILURE;
    return drv_prepare(device, m, args, out, err, errlen);
}

static void drv_release(void *prepared) {
    ocl_release(prepared);
}

NND_DRIVER_EXPORT = {
    .abi_version = NND_DRIVER_ABI_VERSION,
    .struct_size = sizeof(nnd_driver),
    .name = "nnd-opencl",
    .open = drv_open,
    .close = drv_close,
    .supported_operations = drv_supported,
    .prepare = drv_prepare,
    .release = drv_release,
    .execute = ocl_execute,
    .start = ocl_start,
    .cancel = ocl_cancel,
    .allocate = ocl_memory_allocate,
    .memory_free = ocl_memory_free,
    .memory_read = ocl_memory_read,
    .memory_write = ocl_memory_write,
    .cache_save = drv_cache_save,
    .cache_load = drv_cache_load,
};
