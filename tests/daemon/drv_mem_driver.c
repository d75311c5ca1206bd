/* SPDX-License-Identifier: Apache-2.0 */
/* drv_mem_driver: a device driver for test_driver_memory, "nnd-memtest": float32 RELU only,
 * ranked before everything (exec_time 0.01), with both optional parts of the ABI: device
 * memory (blocks of its own, handles 1, 2, ...) and cache blobs. Every call the test
 * counts appends one line to the file named by NND_TEST_DRV_LOG: "prepare", "serialize",
 * "deserialize", "allocate", "free", "read", "write", "execute", "in-handle" and
 * "out-handle" (an operand execute() got in device memory). deserialize() faults (SIGSEGV)
 * while the file NND_TEST_DRV_LOG.fault exists. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/backends/drivers/driver_abi1.h"

#define OP_RELU    19
#define MAX_BLOCKS 64
#define BLOB_MAGIC 0x4d454d54u /* "MEMT" */

static void note(const char *what) {
    const char *path = getenv("NND_TEST_DRV_LOG");
    if (!path) return;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[32];
    int n = snprintf(line, sizeof line, "%s\n", what);
    if (write(fd, line, (size_t)n) != n) { /* the test then counts one short */
    }
    close(fd);
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

static uint64_t m_allocate(uint64_t bytes) {
    note("allocate");
    unsigned char *p = calloc(1, bytes);
    uint64_t h = 0;
    pthread_mutex_lock(&g_lock);
    for (uint64_t i = 0; p && !h && i < MAX_BLOCKS; i++)
        if (!g_blocks[i].bytes) g_blocks[i].bytes = p, g_blocks[i].size = bytes, h = i + 1;
    pthread_mutex_unlock(&g_lock);
    if (!h) free(p);
    return h;
}

static void m_free(uint64_t h) {
    note("free");
    pthread_mutex_lock(&g_lock);
    if (h >= 1 && h <= MAX_BLOCKS) {
        free(g_blocks[h - 1].bytes);
        g_blocks[h - 1].bytes = NULL;
    }
    pthread_mutex_unlock(&g_lock);
}

static int m_read(uint64_t h, uint64_t off, void *dst, size_t n) {
    note("read");
    const unsigned char *p = block(h, off, n);
    if (!p) return NND_EXT_FAILED;
    memcpy(dst, p, n);
    return 0;
}

static int m_write(uint64_t h, uint64_t off, const void *src, size_t n) {
    note("write");
    unsigned char *p = block(h, off, n);
    if (!p) return NND_EXT_FAILED;
    memcpy(p, src, n);
    return 0;
}

/* ---- steps ------------------------------------------------------------------------------ */

static bool t_supports(const nnd_driver_step *s) {
    return s->operation == OP_RELU && s->n_inputs == 1 &&
           s->inputs[0].type == NND_EXT_TENSOR_FLOAT32 && s->outputs[0].rank > 0;
}

static uint64_t elements(const nnd_driver_step *s) {
    uint64_t n = 1;
    for (uint32_t r = 0; r < s->outputs[0].rank; r++)
        n *= s->outputs[0].dims[r];
    return n;
}

/* A state is the operation's element count: all execute() needs. */
static void *t_prepare(const nnd_driver_step *s) {
    if (!t_supports(s)) return NULL;
    note("prepare");
    uint64_t *n = malloc(sizeof *n);
    if (n) *n = elements(s);
    return n;
}

static int t_execute(void *state, nnd_driver_step *s) {
    note("execute");
    size_t n = (size_t) * (const uint64_t *)state;
    const float *x = s->inputs[0].data;
    float *y = s->outputs[0].data;
    if (s->input_memory[0])
        note("in-handle"), x = (const float *)block(s->input_memory[0], 0, 4 * n);
    if (s->output_memory[0]) note("out-handle"), y = (float *)block(s->output_memory[0], 0, 4 * n);
    if (!x || !y) {
        snprintf(s->err, s->errlen, "no such device memory");
        return NND_EXT_FAILED;
    }
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] : 0;
    return 0;
}

static void t_release(void *state) {
    free(state);
}

/* ---- cache blobs: magic, element count ---------------------------------------------------- */

static size_t t_serialize(const void *state, void *buf, size_t cap) {
    uint32_t blob[3] = {BLOB_MAGIC};
    memcpy(&blob[1], state, sizeof(uint64_t));
    if (cap >= sizeof blob) note("serialize"), memcpy(buf, blob, sizeof blob);
    return sizeof blob;
}

static void *t_deserialize(const nnd_driver_step *s, const void *blob, size_t size) {
    note("deserialize");
    char flag[600];
    snprintf(flag, sizeof flag, "%s.fault",
             getenv("NND_TEST_DRV_LOG") ? getenv("NND_TEST_DRV_LOG") : "");
    if (access(flag, F_OK) == 0) *(volatile int *)(uintptr_t)s->errlen = 0; /* a wild store */
    uint32_t b[3];
    if (size != sizeof b) return NULL;
    memcpy(b, blob, sizeof b);
    uint64_t *n = malloc(sizeof *n);
    if (!n || b[0] != BLOB_MAGIC) return free(n), NULL;
    memcpy(n, &b[1], sizeof *n);
    if (*n != elements(s)) return free(n), NULL;
    return n;
}

NND_DRIVER_EXPORT = {
    .abi_version = NND_DRIVER_ABI_VERSION,
    .struct_size = sizeof(nnd_driver),
    .name = "nnd-memtest",
    .version = "memtest 1",
    .type = NND_DRIVER_TYPE_ACCELERATOR,
    .exec_time = 0.01f,
    .supports = t_supports,
    .prepare = t_prepare,
    .execute = t_execute,
    .release = t_release,
    .memory_allocate = m_allocate,
    .memory_free = m_free,
    .memory_read = m_read,
    .memory_write = m_write,
    .serialize = t_serialize,
    .deserialize = t_deserialize,
};
