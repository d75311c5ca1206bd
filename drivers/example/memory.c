/* SPDX-License-Identifier: Apache-2.0 */
/* memory.c: the example driver's device memory. See memory.h. */
#include "memory.h"
#include "partitions.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnd/driver.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    unsigned char *bytes; /* NULL: the slot is free */
    uint64_t size;
} blocks[EX_MAX_BLOCKS];

int ex_memory_allocate(void *device, const nnd_driver_buffer_desc *desc, uint64_t *out, char *err,
                       size_t errlen) {
    (void)device; /* the type and shape do not matter here; the roles are checked */
    /* Each role names a partition of ours: a real driver would place the buffer where those
     * partitions read or write it (and might lay it out as they want it). */
    for (uint32_t i = 0; i < desc->n_roles; i++) {
        const nnd_driver_buffer_role *r = &desc->roles[i];
        if (!ex_partitions_has_io(r->prepared, r->is_output, r->index) ||
            !(r->frequency > 0.0f && r->frequency <= 1.0f)) {
            snprintf(err, errlen, "role %u is no %s %u of a partition of this driver", i,
                     r->is_output ? "output" : "input", r->index);
            return NND_DRIVER_INVALID_ARGUMENT;
        }
    }
    uint64_t bytes = desc->bytes;
    unsigned char *p = calloc(1, bytes ? bytes : 1); /* zeroed, as the ABI asks */
    uint64_t handle = 0;
    pthread_mutex_lock(&lock);
    for (uint64_t i = 0; p && !handle && i < EX_MAX_BLOCKS; i++)
        if (!blocks[i].bytes) {
            blocks[i].bytes = p;
            blocks[i].size = bytes;
            handle = i + 1;
        }
    pthread_mutex_unlock(&lock);
    if (!handle) free(p); /* out of slots: the daemon keeps the buffer in its own memory */
    *out = handle;
    return handle ? NND_DRIVER_OK : NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
}

void ex_memory_free(void *device, uint64_t handle) {
    (void)device;
    pthread_mutex_lock(&lock);
    if (handle >= 1 && handle <= EX_MAX_BLOCKS) {
        free(blocks[handle - 1].bytes);
        blocks[handle - 1].bytes = NULL;
    }
    pthread_mutex_unlock(&lock);
}

/* The bytes [offset, offset + n) of a handle, or NULL. A block's bytes stay put while the
 * daemon uses its handle, so the pointer outlives the lock. */
static unsigned char *range(uint64_t handle, uint64_t offset, size_t n) {
    unsigned char *p = NULL;
    pthread_mutex_lock(&lock);
    if (handle >= 1 && handle <= EX_MAX_BLOCKS && blocks[handle - 1].bytes &&
        offset <= blocks[handle - 1].size && n <= blocks[handle - 1].size - offset)
        p = blocks[handle - 1].bytes + offset;
    pthread_mutex_unlock(&lock);
    return p;
}

int ex_memory_read(void *device, uint64_t handle, uint64_t offset, void *dst, size_t bytes) {
    (void)device;
    const unsigned char *p = range(handle, offset, bytes);
    if (!p) return NND_DRIVER_GENERAL_FAILURE;
    memcpy(dst, p, bytes);
    return 0;
}

int ex_memory_write(void *device, uint64_t handle, uint64_t offset, const void *src, size_t bytes) {
    (void)device;
    unsigned char *p = range(handle, offset, bytes);
    if (!p) return NND_DRIVER_GENERAL_FAILURE;
    memcpy(p, src, bytes);
    return 0;
}

void *ex_memory_at(uint64_t handle, size_t bytes) {
    return range(handle, 0, bytes);
}
