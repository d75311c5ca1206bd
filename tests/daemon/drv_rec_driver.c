/* SPDX-License-Identifier: Apache-2.0 */
/* drv_rec_driver: recording test drivers for test_partitions (RELU partitions, drv_relu.h).
 * Every call the test counts appends a line to NND_TEST_DRV_LOG:
 *   "prepare <device> ops=<n> prio=<priority> type=<first input's type>",
 *   "execute <device> prio=<p> deadline=<0|1> in=<n> out=<n>", "cache_save", "cache_load",
 *   and for the asynchronous build "start", "complete <status>", "cancel".
 * NND_TEST_REC_DEVICE picks the one device open() reports:
 *   "rec" (default): 0.01 for every type (before nnd-cpu), one cache blob per partition;
 *   "f16": fast for TENSOR_FLOAT16 (0.01), slow for every other type (5.0), but
 *          TENSOR_FLOAT32's power usage 0.01: LOW_POWER gives it FLOAT32 work too.
 * Built with REC_ASYNC: device "rec-async", start() and cancel() only: each execution
 * completes from a thread of its own 100 ms after its start (sooner when cancelled:
 * GENERAL_FAILURE), or when its deadline passes first: MISSED_DEADLINE_TRANSIENT. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/daemon/drv_relu.h"

static char g_name[NND_DRIVER_MAX_NAME + 1];

static int r_open(nnd_driver_device_info *d, uint32_t max, char *err, size_t errlen) {
    (void)err, (void)errlen;
    if (max < 1) return 0;
    const char *which = getenv("NND_TEST_REC_DEVICE");
    bool f16 = which && !strcmp(which, "f16");
#ifdef REC_ASYNC
    snprintf(d->name, sizeof d->name, "rec-async");
#else
    snprintf(d->name, sizeof d->name, f16 ? "rec-f16" : "rec");
#endif
    snprintf(g_name, sizeof g_name, "%s", d->name);
    snprintf(d->version, sizeof d->version, "rec 1");
    d->type = NND_DRIVER_TYPE_ACCELERATOR;
    nnd_driver_perf fast = {0.01f, 0.01f}, slow = {5.0f, 5.0f};
    for (int t = 0; t < NND_DRIVER_OPERAND_TYPES; t++)
        d->caps.operand[t] = f16 ? slow : fast;
    if (f16) {
        d->caps.operand[NND_DRIVER_TENSOR_FLOAT16] = fast;
        d->caps.operand[NND_DRIVER_TENSOR_FLOAT32].power_usage = 0.01f;
    }
    d->caps.relaxed_scalar = d->caps.relaxed_tensor = slow;
    d->caps.cache_blobs = 1;
    return 1;
}

static void r_close(void) {}

static int r_prepare(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                     nnd_driver_prepared_info *out, char *err, size_t errlen) {
    (void)device;
    drv_note("prepare %s ops=%u prio=%d type=%d", g_name, m->n_operations, a->priority,
             m->operands[m->operations[0].inputs[0]].type);
    drv_relu *p;
    int rc = drv_relu_prepare(m, &p, err, errlen);
    out->prepared = p;
    out->held_bytes = 4096;
    return rc;
}

static void r_release(void *prepared) {
    drv_relu_free(prepared);
}

static void note_execute(const nnd_driver_execution *x) {
    drv_note("execute %s prio=%d deadline=%d in=%u out=%u", g_name, x->priority,
             x->deadline_ns != NND_DRIVER_NO_DEADLINE, x->n_inputs, x->n_outputs);
}

/* The blob: REC_BLOB_MAGIC, then the partition's operation count (a test finds it in the
 * cache files by the magic). */
#define REC_BLOB_MAGIC "rec-blob"
#define REC_BLOB_BYTES (sizeof REC_BLOB_MAGIC - 1 + sizeof(uint32_t))

static size_t r_cache_save(void *prepared, uint32_t i, void *buf, size_t cap) {
    uint32_t ops = drv_relu_ops(prepared);
    if (i != 0) return 0;
    if (cap >= REC_BLOB_BYTES) {
        drv_note("cache_save");
        memcpy(buf, REC_BLOB_MAGIC, sizeof REC_BLOB_MAGIC - 1);
        memcpy((char *)buf + sizeof REC_BLOB_MAGIC - 1, &ops, sizeof ops);
    }
    return REC_BLOB_BYTES;
}

static int r_cache_load(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                        const nnd_driver_blob *blobs, uint32_t n_blobs,
                        nnd_driver_prepared_info *out, char *err, size_t errlen) {
    (void)device, (void)a;
    drv_note("cache_load");
    uint32_t ops;
    if (n_blobs != 1 || blobs[0].size != REC_BLOB_BYTES ||
        memcmp(blobs[0].data, REC_BLOB_MAGIC, sizeof REC_BLOB_MAGIC - 1))
        return NND_DRIVER_GENERAL_FAILURE;
    memcpy(&ops, (const char *)blobs[0].data + sizeof REC_BLOB_MAGIC - 1, sizeof ops);
    if (ops != m->n_operations) return NND_DRIVER_GENERAL_FAILURE;
    drv_relu *p;
    int rc = drv_relu_prepare(m, &p, err, errlen);
    out->prepared = p;
    return rc;
}

#ifdef REC_ASYNC

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One started execution; slots are reused, never freed, so a late cancel() is harmless. */
typedef struct started {
    nnd_driver_execution *x;
    uint64_t at;
    atomic_bool cancelled;
} started;
static started g_slots[256];
static atomic_uint g_next;

static void *finish_later(void *arg) {
    started *s = arg;
    nnd_driver_execution *x = s->x;
    struct timespec ms = {0, 1000000L};
    int status = NND_DRIVER_OK;
    for (;;) {
        uint64_t now = now_ns();
        if (atomic_load(&s->cancelled)) {
            status = NND_DRIVER_GENERAL_FAILURE;
            snprintf(x->err, x->errlen, "cancelled");
            break;
        }
        if (x->deadline_ns && now > x->deadline_ns) {
            status = NND_DRIVER_MISSED_DEADLINE_TRANSIENT;
            snprintf(x->err, x->errlen, "the deadline passed on the device");
            break;
        }
        if (now - s->at >= 100000000ull) break;
        nanosleep(&ms, NULL);
    }
    if (status == NND_DRIVER_OK) status = drv_relu_run(x->prepared, x, NULL);
    drv_note("complete %d", status);
    x->complete(x, status);
    return NULL;
}

static int r_start(nnd_driver_execution *x) {
    note_execute(x);
    drv_note("start");
    started *s = &g_slots[atomic_fetch_add(&g_next, 1) % 256];
    s->x = x;
    s->at = now_ns();
    atomic_store(&s->cancelled, false);
    x->driver_data = s;
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, finish_later, s);
    pthread_attr_destroy(&attr);
    return rc == 0 ? NND_DRIVER_STARTED : NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
}

static void r_cancel(nnd_driver_execution *x) {
    drv_note("cancel");
    started *s = x->driver_data;
    if (s) atomic_store(&s->cancelled, true);
}

#else

static int r_execute(nnd_driver_execution *x) {
    note_execute(x);
    return drv_relu_run(x->prepared, x, NULL);
}

#endif

NND_DRIVER_EXPORT = {
    .abi_version = NND_DRIVER_ABI_VERSION,
    .struct_size = sizeof(nnd_driver),
    .name = "rec",
    .open = r_open,
    .close = r_close,
    .supported_operations = drv_relu_supported_operations,
    .prepare = r_prepare,
    .release = r_release,
#ifdef REC_ASYNC
    .start = r_start,
    .cancel = r_cancel,
#else
    .execute = r_execute,
#endif
    .cache_save = r_cache_save,
    .cache_load = r_cache_load,
};
