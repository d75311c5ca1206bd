/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_memory.c: device memory by handle (ocl_memory.h). */
#include "ocl_memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ocl_buf_entry {
    uint64_t handle;
    cl_mem mem;
    size_t bytes;
} ocl_buf_entry;

struct ocl_memory {
    pthread_mutex_t lock;
    ocl_buf_entry *entries;
    size_t n, cap;
    uint64_t next;
};

static struct ocl_memory *table(ocl_device *d) {
    pthread_mutex_lock(&d->build_lock); /* made once, under the device's lock */
    if (!d->memory && (d->memory = calloc(1, sizeof *d->memory))) {
        pthread_mutex_init(&d->memory->lock, NULL);
        d->memory->next = 1;
    }
    pthread_mutex_unlock(&d->build_lock);
    return d->memory;
}

int ocl_memory_allocate(void *device, const nnd_driver_buffer_desc *desc, uint64_t *handle,
                        char *err, size_t errlen) {
    ocl_device *d = device;
    struct ocl_memory *t = table(d);
    size_t bytes = (size_t)desc->bytes;
    if (!t || !bytes) {
        snprintf(err, errlen, !t ? "out of memory" : "a device buffer needs a size");
        return !t ? NND_DRIVER_GENERAL_FAILURE : NND_DRIVER_INVALID_ARGUMENT;
    }
    void *zeros = calloc(1, bytes);
    cl_int e = CL_OUT_OF_HOST_MEMORY;
    cl_mem m =
        zeros ? clCreateBuffer(d->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, zeros, &e)
              : NULL;
    free(zeros);
    if (!m) {
        snprintf(err, errlen, "cannot allocate %zu bytes on the OpenCL device (%d)", bytes, e);
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    pthread_mutex_lock(&t->lock);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        ocl_buf_entry *ne = realloc(t->entries, cap * sizeof *ne);
        if (!ne) {
            pthread_mutex_unlock(&t->lock);
            clReleaseMemObject(m);
            snprintf(err, errlen, "out of memory");
            return NND_DRIVER_GENERAL_FAILURE;
        }
        t->entries = ne, t->cap = cap;
    }
    *handle = t->next++;
    t->entries[t->n++] = (ocl_buf_entry){*handle, m, bytes};
    pthread_mutex_unlock(&t->lock);
    return NND_DRIVER_OK;
}

cl_mem ocl_memory_get(ocl_device *d, uint64_t handle, size_t *bytes) {
    struct ocl_memory *t = d->memory;
    cl_mem m = NULL;
    if (!t) return NULL;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n && !m; i++)
        if (t->entries[i].handle == handle) m = t->entries[i].mem, *bytes = t->entries[i].bytes;
    pthread_mutex_unlock(&t->lock);
    return m;
}

void ocl_memory_free(void *device, uint64_t handle) {
    ocl_device *d = device;
    struct ocl_memory *t = d->memory;
    if (!t) return;
    cl_mem m = NULL;
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < t->n; i++)
        if (t->entries[i].handle == handle) {
            m = t->entries[i].mem;
            t->entries[i] = t->entries[--t->n];
            break;
        }
    pthread_mutex_unlock(&t->lock);
    if (m) clReleaseMemObject(m);
}

static int copy(ocl_device *d, uint64_t handle, uint64_t offset, void *host, size_t bytes,
                bool read) {
    size_t size = 0;
    cl_mem m = ocl_memory_get(d, handle, &size);
    if (!m || offset > size || bytes > size - offset) return NND_DRIVER_INVALID_ARGUMENT;
    cl_int e = read
                   ? clEnqueueReadBuffer(d->queue, m, CL_TRUE, offset, bytes, host, 0, NULL, NULL)
                   : clEnqueueWriteBuffer(d->queue, m, CL_TRUE, offset, bytes, host, 0, NULL, NULL);
    return e ? NND_DRIVER_GENERAL_FAILURE : NND_DRIVER_OK;
}

int ocl_memory_read(void *device, uint64_t handle, uint64_t offset, void *dst, size_t bytes) {
    return copy(device, handle, offset, dst, bytes, true);
}

int ocl_memory_write(void *device, uint64_t handle, uint64_t offset, const void *src,
                     size_t bytes) {
    return copy(device, handle, offset, (void *)src, bytes, false);
}

void ocl_memory_close(ocl_device *d) {
    struct ocl_memory *t = d->memory;
    if (!t) return;
    for (size_t i = 0; i < t->n; i++)
        clReleaseMemObject(t->entries[i].mem);
    free(t->entries);
    pthread_mutex_destroy(&t->lock);
    free(t);
    d->memory = NULL;
}
