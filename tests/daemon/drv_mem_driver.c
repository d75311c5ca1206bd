/* SPDX-License-Identifier: Apache-2.0 */
/* drv_mem_driver: a device driver for test_driver_memory, "nnd-memtest": RELU only
 * (drv_relu.h), ranked before everything (0.01 for every type), with both optional parts
 * of the ABI: device memory (blocks of its own, handles 1, 2, ...) and cache blobs (one
 * per partition). Every call the test counts appends one line to the file named by
 * NND_TEST_DRV_LOG: "prepare", "serialize" (cache_save writing), "deserialize"
 * (cache_load), "allocate", "free", "read", "write", "execute", "in-handle" and
 * "out-handle" (an argument execute() got in device memory), and per role allocate() gets
 * "role first=<f> ops=<n> <in|out> <index> <frequency>" (the role's prepared partition by
 * its first operation's index in the client's model and its operation count; first=-1:
 * not a live partition of this driver). cache_load() faults (SIGSEGV) while the file
 * NND_TEST_DRV_LOG.fault exists. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/daemon/drv_relu.h"

#define OP_RELU    19
#define MAX_BLOCKS 64
#define BLOB_MAGIC 0x4d454d54u /* "MEMT" */

static void note(const char *what) {
    drv_note("%s", what);
}

/* ---- device memory --------------------------------------------------------------------- */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    unsigned char *bytes;
    uint64_t size;
} g_blocks[MAX_BLOCKS];

static unsigned char *block(uint64_t h, uint64_t off, size_t n) {
    pthread_mutex_lock(&g_lock);
    unsigned char *p = NULL;
    if (h >= 1 && h <= MAX_BLOCKS && g_blocks[h - 1].bytes && off + n <= g_blocks[h - 1].size)
        p = g_blocks[h - 1].bytes + off;
    pthread_mutex_unlock(&g_lock);
    return p;
}

/* The live prepared partitions: which client operation each starts at, how many it has. */
#define MAX_PARTS 64
static struct {
    const void *prepared;
    uint32_t first, ops;
} g_parts[MAX_PARTS];

static void part_add(const void *prepared, const nnd_driver_model *m) {
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_PARTS; i++)
        if (!g_parts[i].prepared) {
            g_parts[i].prepared = prepared;
            g_parts[i].first = m->operations[0].index;
            g_parts[i].ops = m->n_operations;
            break;
        }
    pthread_mutex_unlock(&g_lock);
}

static void part_drop(const void *prepared) {
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_PARTS; i++)
        if (g_parts[i].prepared == prepared) g_parts[i].prepared = NULL;
    pthread_mutex_unlock(&g_lock);
}

static void note_role(const nnd_driver_buffer_role *r) {
    int first = -1;
    uint32_t ops = 0;
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_PARTS; i++)
        if (r->prepared && g_parts[i].prepared == r->prepared)
            first = (int)g_parts[i].first, ops = g_parts[i].ops;
    pthread_mutex_unlock(&g_lock);
    drv_note("role first=%d ops=%u %s %u %g", first, ops, r->is_output ? "out" : "in", r->index,
             (double)r->frequency);
}

/* execute(): an argument in device memory, noted. */
static void *mem_at(uint64_t h, size_t n) {
    return block(h, 0, n);
}

static int m_allocate(void *device, const nnd_driver_buffer_desc *desc, uint64_t *out, char *err,
                      size_t errlen) {
    (void)device, (void)err, (void)errlen;
    note("allocate");
    for (uint32_t i = 0; i < desc->n_roles; i++)
        note_role(&desc->roles[i]);
    uint64_t bytes = desc->bytes;
    unsigned char *p = calloc(1, bytes);
    uint64_t h = 0;
    pthread_mutex_lock(&g_lock);
    for (uint64_t i = 0; p && !h && i < MAX_BLOCKS; i++)
        if (!g_blocks[i].bytes) g_blocks[i].bytes = p, g_blocks[i].size = bytes, h = i + 1;
    pthread_mutex_unlock(&g_lock);
    if (!h) free(p);
    *out = h;
    return h ? NND_DRIVER_OK : NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
}

static void m_free(void *device, uint64_t h) {
    (void)device;
    note("free");
    pthread_mutex_lock(&g_lock);
    if (h >= 1 && h <= MAX_BLOCKS) {
        free(g_blocks[h - 1].bytes);
        g_blocks[h - 1].bytes = NULL;
    }
    pthread_mutex_unlock(&g_lock);
}

static int m_read(void *device, uint64_t h, uint64_t off, void *dst, size_t n) {
    (void)device;
    note("read");
    const unsigned char *p = block(h, off, n);
    if (!p) return NND_DRIVER_GENERAL_FAILURE;
    memcpy(dst, p, n);
    return 0;
}

static int m_write(void *device, uint64_t h, uint64_t off, const void *src, size_t n) {
    (void)device;
    note("write");
    unsigned char *p = block(h, off, n);
    if (!p) return NND_DRIVER_GENERAL_FAILURE;
    memcpy(p, src, n);
    return 0;
}

/* ---- partitions ------------------------------------------------------------------------- */

static int t_open(nnd_driver_device_info *d, uint32_t max, char *err, size_t errlen) {
    (void)err, (void)errlen;
    if (max < 1) return 0;
    snprintf(d->name, sizeof d->name, "nnd-memtest");
    snprintf(d->version, sizeof d->version, "memtest 2");
    d->type = NND_DRIVER_TYPE_ACCELERATOR;
    nnd_driver_perf fast = {0.01f, 0.01f};
    for (int t = 0; t < NND_DRIVER_OPERAND_TYPES; t++)
        d->caps.operand[t] = fast;
    d->caps.cache_blobs = 1;
    return 1;
}

static void t_close(void) {}

static int t_prepare(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                     nnd_driver_prepared_info *out, char *err, size_t errlen) {
    (void)device, (void)a;
    note("prepare");
    drv_relu *p;
    int rc = drv_relu_prepare(m, &p, err, errlen);
    out->prepared = p;
    if (rc == NND_DRIVER_OK) part_add(p, m);
    return rc;
}

static void t_release(void *prepared) {
    part_drop(prepared);
    drv_relu_free(prepared);
}

static int t_execute(nnd_driver_execution *x) {
    note("execute");
    for (uint32_t i = 0; i < x->n_inputs; i++)
        if (!x->inputs[i].data) note("in-handle");
    for (uint32_t i = 0; i < x->n_outputs; i++)
        if (!x->outputs[i].data) note("out-handle");
    return drv_relu_run(x->prepared, x, mem_at);
}

/* ---- cache blobs: magic, operation count ------------------------------------------------- */

static size_t t_cache_save(void *prepared, uint32_t i, void *buf, size_t cap) {
    uint32_t blob[2] = {BLOB_MAGIC, drv_relu_ops(prepared)};
    if (i != 0) return 0;
    if (cap >= sizeof blob) note("serialize"), memcpy(buf, blob, sizeof blob);
    return sizeof blob;
}

static int t_cache_load(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                        const nnd_driver_blob *blobs, uint32_t n_blobs,
                        nnd_driver_prepared_info *out, char *err, size_t errlen) {
    (void)device, (void)a;
    note("deserialize");
    char flag[600];
    snprintf(flag, sizeof flag, "%s.fault",
             getenv("NND_TEST_DRV_LOG") ? getenv("NND_TEST_DRV_LOG") : "");
    if (access(flag, F_OK) == 0) *(volatile int *)(uintptr_t)errlen = 0; /* a wild store */
    uint32_t b[2];
    if (n_blobs != 1 || blobs[0].size != sizeof b) return NND_DRIVER_GENERAL_FAILURE;
    memcpy(b, blobs[0].data, sizeof b);
    if (b[0] != BLOB_MAGIC || b[1] != m->n_operations) return NND_DRIVER_GENERAL_FAILURE;
    drv_relu *p;
    int rc = drv_relu_prepare(m, &p, err, errlen);
    out->prepared = p;
    if (rc == NND_DRIVER_OK) part_add(p, m);
    return rc;
}

NND_DRIVER_EXPORT = {
    .abi_version = NND_DRIVER_ABI_VERSION,
    .struct_size = sizeof(nnd_driver),
    .name = "nnd-memtest",
    .open = t_open,
    .close = t_close,
    .supported_operations = drv_relu_supported_operations,
    .prepare = t_prepare,
    .release = t_release,
    .execute = t_execute,
    .allocate = m_allocate,
    .memory_free = m_free,
    .memory_read = m_read,
    .memory_write = m_write,
    .cache_save = t_cache_save,
    .cache_load = t_cache_load,
};
