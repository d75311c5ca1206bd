/* SPDX-License-Identifier: Apache-2.0 */
/* driver_backend.c: a driver's device as an engine backend. See driver_backend.h. */
#include "engine/backends/drivers/driver_backend.h"

#include <string.h>

static eng_driver_dev *dev_of(const eng_backend *b) {
    return b->driver;
}

static schema_status not_a_kernel(eng_op_ctx *c) {
    return schema_failf(c->err, c->errlen, SCHEMA_GENERAL_FAILURE,
                        "%s #%u: a driver partition's step run as a kernel", c->def->name,
                        c->index);
}

static uint64_t mem_alloc(const eng_backend *b, const eng_operand_desc *operand, uint64_t bytes,
                          const nnd_driver_buffer_role *roles, uint32_t n_roles) {
    eng_driver_dev *v = dev_of(b);
    nnd_driver_buffer_desc desc = {.bytes = bytes, .n_roles = n_roles, .roles = roles};
    desc.operand.lifetime = NND_DRIVER_TEMPORARY;
    if (operand && operand->rank <= NND_DRIVER_MAX_RANK) {
        desc.operand.type = operand->type;
        desc.operand.rank = operand->rank;
        memcpy(desc.operand.dims, operand->dims, sizeof(uint32_t) * operand->rank);
        desc.operand.scale = operand->scale;
        desc.operand.zero_point = operand->zero_point;
    }
    uint64_t h = 0;
    char err[SCHEMA_ERR_LEN] = "";
    int rc = eng_drv_allocate(v, &desc, &h, err, sizeof err);
    if (rc > 0) eng_driver_logf(2, "driver %s: allocate: %s", v->info.name, err);
    return rc == NND_DRIVER_OK ? h : 0;
}

static void mem_free(const eng_backend *b, uint64_t handle) {
    eng_drv_memory_free(dev_of(b), handle);
}

static schema_status mem_copy(const eng_backend *b, bool write, uint64_t handle, uint64_t offset,
                              void *buf, size_t bytes, char *err, size_t errlen) {
    eng_driver_dev *v = dev_of(b);
    if (eng_drv_disabled(v))
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "driver %s is disabled after a fault: its device memory is lost",
                            v->info.name);
    int rc = eng_drv_memory_copy(v, write, handle, offset, buf, bytes);
    if (rc == NND_DRIVER_OK) return SCHEMA_OK;
    return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                        "driver %s %s %zu bytes of its memory: %s", v->info.name,
                        write ? "writing" : "reading", bytes,
                        rc < 0 ? "faulted, the driver is disabled" : "failed");
}

static schema_status mem_read(const eng_backend *b, uint64_t handle, uint64_t offset, void *dst,
                              size_t bytes, char *err, size_t errlen) {
    return mem_copy(b, false, handle, offset, dst, bytes, err, errlen);
}

static schema_status mem_write(const eng_backend *b, uint64_t handle, uint64_t offset,
                               const void *src, size_t bytes, char *err, size_t errlen) {
    return mem_copy(b, true, handle, offset, (void *)src, bytes, err, errlen);
}

void eng_driver_backend_init(eng_driver_dev *v) {
    v->backend = (eng_backend){.name = v->info.name, .run = not_a_kernel, .impl = v, .driver = v};
    if (v->lib->has_memory) {
        v->backend.mem_alloc = mem_alloc;
        v->backend.mem_free = mem_free;
        v->backend.mem_read = mem_read;
        v->backend.mem_write = mem_write;
    }
    if (v->lib->has_cache) v->backend.cache_blobs = v->info.caps.cache_blobs;
}
