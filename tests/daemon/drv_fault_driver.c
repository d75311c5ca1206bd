/* SPDX-License-Identifier: Apache-2.0 */
/* drv_fault_driver: a driver built to fail, on driver ABI 2, for test_driver_host: device
 * "nnd-fault", float32 RELU only. What execute() does depends on the first input element:
 * DRV_FAULT_HANG never returns; DRV_FAULT_LEAK leaks 1 MiB (touched) and computes;
 * DRV_FAULT_SLOW_READ reads its input's first element, waits 300 ms, then reads the whole
 * input (the test shrinks the input's file meanwhile); anything else computes RELU. Built a
 * second time with DRV_FAULT_CRASH3 ("nnd-crash3"), whose every third execute() in a
 * process dies of SIGSEGV, and a third time with DRV_FAULT_ASYNC ("nnd-async"), which has
 * start() and cancel() (each execution on a thread of its own); DRV_FAULT_ABI1 states ABI
 * version 1 and DRV_FAULT_CRASH_LOAD dies of SIGSEGV in its constructor (both refused).
 * DRV_FAULT_SLEEP waits 100 ms, then computes. It offers device memory (blocks of its own) and
 * cache blobs (one, naming the partition's size), so the proxy's paths for both are exercised. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nnd/driver.h"

#define DRV_FAULT_HANG      7001.0f
#define DRV_FAULT_LEAK      7003.0f
#define DRV_FAULT_SLOW_READ 7002.0f
#define DRV_FAULT_SLEEP     7004.0f
#define OP_RELU             19
#define MAX_BLOCKS          16

#ifdef DRV_FAULT_CRASH_LOAD
__attribute__((constructor)) static void crash_at_load(void) {
    raise(SIGSEGV);
}
#endif

static int f_open(nnd_driver_device_info *devices, uint32_t max, char *err, size_t errlen) {
    (void)err, (void)errlen;
    if (max < 1) return 0;
    memset(&devices[0], 0, sizeof devices[0]);
#if defined(DRV_FAULT_CRASH3)
    snprintf(devices[0].name, sizeof devices[0].name, "nnd-crash3");
#elif defined(DRV_FAULT_ASYNC)
    snprintf(devices[0].name, sizeof devices[0].name, "nnd-async");
#else
    snprintf(devices[0].name, sizeof devices[0].name, "nnd-fault");
#endif
    snprintf(devices[0].version, sizeof devices[0].version, "test");
    devices[0].type = NND_DRIVER_TYPE_ACCELERATOR;
    for (int i = 0; i < NND_DRIVER_OPERAND_TYPES; i++)
        devices[0].caps.operand[i] = (nnd_driver_perf){2.0f, 2.0f};
    devices[0].caps.cache_blobs = 1;
    devices[0].device = (void *)devices; /* any non-NULL token */
    return 1;
}

static void f_close(void) {}

static int f_supported(void *device, const nnd_driver_model *m, bool *supported, char *err,
                       size_t errlen) {
    (void)device, (void)err, (void)errlen;
    for (uint32_t i = 0; i < m->n_operations; i++)
        supported[i] = m->operations[i].type == OP_RELU &&
                       m->operands[m->operations[i].inputs[0]].type == NND_DRIVER_TENSOR_FLOAT32;
    return NND_DRIVER_OK;
}

typedef struct prepared {
    uint32_t n_operations;
} prepared;

static int f_prepare(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                     nnd_driver_prepared_info *out, char *err, size_t errlen) {
    (void)device, (void)a;
    if (m->n_operations != 1 || m->operations[0].type != OP_RELU) {
        snprintf(err, errlen, "nnd-fault prepares one RELU only");
        return NND_DRIVER_UNSUPPORTED;
    }
    prepared *p = calloc(1, sizeof *p);
    if (!p) return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    p->n_operations = m->n_operations;
    out->prepared = p;
    out->held_bytes = sizeof *p;
    return NND_DRIVER_OK;
}

static void f_release(void *p) {
    free(p);
}

static unsigned char *g_blocks[MAX_BLOCKS];
static uint64_t g_sizes[MAX_BLOCKS];

static int f_execute(nnd_driver_execution *x) {
#ifdef DRV_FAULT_CRASH3
    static int calls;
    if (++calls % 3 == 0) raise(SIGSEGV);
#endif
    if (x->n_inputs != 1 || x->n_outputs != 1) return NND_DRIVER_INVALID_ARGUMENT;
    const nnd_driver_arg *in = &x->inputs[0];
    nnd_driver_arg *out = &x->outputs[0];
    const float *src = in->data;
    float *dst = out->data;
    if (!src && in->memory && in->memory <= MAX_BLOCKS) src = (float *)g_blocks[in->memory - 1];
    if (!dst && out->memory && out->memory <= MAX_BLOCKS) dst = (float *)g_blocks[out->memory - 1];
    if (!src || !dst) return NND_DRIVER_INVALID_ARGUMENT;
    size_t n = in->length / sizeof(float);
    if (n && src[0] == DRV_FAULT_HANG)
        for (;;)
            pause();
    if (n && src[0] == DRV_FAULT_LEAK) {
        char *leak = malloc(1u << 20);
        if (!leak) return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
        memset(leak, 1, 1u << 20);
    }
    if (n && src[0] == DRV_FAULT_SLEEP) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (n && src[0] == DRV_FAULT_SLOW_READ) {
        volatile float first = src[0];
        (void)first;
        struct timespec ts = {0, 300 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (out->length < n * sizeof(float)) return NND_DRIVER_OUTPUT_INSUFFICIENT_SIZE;
    for (size_t i = 0; i < n; i++)
        dst[i] = src[i] > 0 ? src[i] : 0;
    out->rank = in->rank;
    memcpy(out->dims, in->dims, sizeof out->dims);
    if (x->measure) x->time_on_device_ns = 1000, x->time_in_driver_ns = 2000;
    return NND_DRIVER_OK;
}

#ifdef DRV_FAULT_ASYNC
static void *work(void *arg) {
    nnd_driver_execution *x = arg;
    x->complete(x, f_execute(x));
    return NULL;
}

static int f_start(nnd_driver_execution *x) {
    pthread_t t;
    if (pthread_create(&t, NULL, work, x) != 0) return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    pthread_detach(t);
    return NND_DRIVER_STARTED;
}

static void f_cancel(nnd_driver_execution *x) {
    (void)x;
}
#endif

static int f_allocate(void *device, const nnd_driver_buffer_desc *desc, uint64_t *handle, char *err,
                      size_t errlen) {
    (void)device;
    for (uint64_t i = 0; i < MAX_BLOCKS; i++)
        if (!g_blocks[i]) {
            g_blocks[i] = calloc(1, desc->bytes ? desc->bytes : 1);
            if (!g_blocks[i]) break;
            g_sizes[i] = desc->bytes;
            *handle = i + 1;
            return NND_DRIVER_OK;
        }
    snprintf(err, errlen, "no block free");
    return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
}

static void f_memory_free(void *device, uint64_t handle) {
    (void)device;
    if (handle < 1 || handle > MAX_BLOCKS) return;
    free(g_blocks[handle - 1]);
    g_blocks[handle - 1] = NULL;
}

static int f_memory_read(void *device, uint64_t handle, uint64_t offset, void *dst, size_t n) {
    (void)device;
    if (handle < 1 || handle > MAX_BLOCKS || !g_blocks[handle - 1]) return 1;
    memcpy(dst, g_blocks[handle - 1] + offset, n);
    return NND_DRIVER_OK;
}

static int f_memory_write(void *device, uint64_t handle, uint64_t offset, const void *src,
                          size_t n) {
    (void)device;
    if (handle < 1 || handle > MAX_BLOCKS || !g_blocks[handle - 1]) return 1;
    memcpy(g_blocks[handle - 1] + offset, src, n);
    return NND_DRIVER_OK;
}

#define BLOB "nnd-fault blob v1"

static size_t f_cache_save(void *p, uint32_t blob, void *buf, size_t cap) {
    (void)p;
    if (blob != 0) return 0;
    if (buf && cap >= sizeof BLOB) memcpy(buf, BLOB, sizeof BLOB);
    return sizeof BLOB;
}

static int f_cache_load(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                        const nnd_driver_blob *blobs, uint32_t n_blobs,
                        nnd_driver_prepared_info *out, char *err, size_t errlen) {
    if (n_blobs != 1 || blobs[0].size != sizeof BLOB || memcmp(blobs[0].data, BLOB, sizeof BLOB)) {
        snprintf(err, errlen, "not a blob of nnd-fault");
        return NND_DRIVER_GENERAL_FAILURE;
    }
    return f_prepare(device, m, a, out, err, errlen);
}

NND_DRIVER_EXPORT = {
#ifdef DRV_FAULT_ABI1
    .abi_version = 1,
#else
    .abi_version = NND_DRIVER_ABI_VERSION,
#endif
    .struct_size = sizeof(nnd_driver),
    .name = "nnd-fault",
    .open = f_open,
    .close = f_close,
    .supported_operations = f_supported,
    .prepare = f_prepare,
    .release = f_release,
    .execute = f_execute,
#ifdef DRV_FAULT_ASYNC
    .start = f_start,
    .cancel = f_cancel,
#endif
    .allocate = f_allocate,
    .memory_free = f_memory_free,
    .memory_read = f_memory_read,
    .memory_write = f_memory_write,
    .cache_save = f_cache_save,
    .cache_load = f_cache_load,
};
