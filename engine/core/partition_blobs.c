/* SPDX-License-Identifier: Apache-2.0 */
/* partition_blobs.c: driver partitions as cache blobs (engine.h eng_prepared_blobs()).
 * One eng_step_blob per partition, its bytes (little-endian): u32 steps, u32 blobs, u64
 * length of each blob, then the blobs' bytes, as the driver's cache_save() made them. The
 * daemon's cache hashes them with the rest of the compilation. */
#include <stdlib.h>
#include <string.h>

#include "engine/core/partition_blobs.h"
#include "engine/core/partition_sub.h"

/* The largest blob a driver may make of one partition. */
#define BLOB_MAX (1ull << 30)

void eng_step_blobs_free(eng_step_blob *b, uint32_t n) {
    for (uint32_t i = 0; b && i < n; i++)
        free((void *)b[i].data);
    free(b);
}

static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

bool eng_partition_blob_parse(const uint8_t *data, size_t len, uint32_t *n_steps,
                              nnd_driver_blob *blobs, uint32_t *n_blobs, uint32_t max) {
    if (!data || len < 8) return false;
    *n_steps = get_u32(data);
    *n_blobs = get_u32(data + 4);
    if (*n_blobs == 0 || *n_blobs > max || (len - 8) / 8 < *n_blobs) return false;
    size_t at = 8 + (size_t)8 * *n_blobs;
    for (uint32_t i = 0; i < *n_blobs; i++) {
        uint64_t n = get_u32(data + 8 + 8 * i) | (uint64_t)get_u32(data + 12 + 8 * i) << 32;
        if (n > len - at) return false;
        blobs[i] = (nnd_driver_blob){.data = data + at, .size = (size_t)n};
        at += (size_t)n;
    }
    return at == len;
}

/* The blobs of one partition in the format above, malloc'd into *out. */
static schema_status save_partition(const eng_partition *part, uint8_t **out, size_t *len,
                                    char *err, size_t errlen) {
    eng_driver_dev *dev = part->dev;
    uint32_t n = dev->info.caps.cache_blobs;
    if (!dev->lib->has_cache || !n || n > 64)
        return schema_failf(err, errlen, SCHEMA_UNSUPPORTED, "device %s keeps no cache blobs",
                            dev->info.name);
    size_t sizes[64], total = 8 + (size_t)8 * n;
    for (uint32_t i = 0; i < n; i++) {
        sizes[i] = eng_drv_cache_save(dev, part->prepared, i, NULL, 0);
        if (!sizes[i] || sizes[i] > BLOB_MAX)
            return schema_failf(err, errlen, SCHEMA_UNSUPPORTED,
                                "device %s gave no cache blob %u of a partition", dev->info.name,
                                i);
        total += sizes[i];
    }
    uint8_t *b = malloc(total);
    if (!b) return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory");
    put_u32(b, part->n_steps);
    put_u32(b + 4, n);
    size_t at = 8 + (size_t)8 * n;
    for (uint32_t i = 0; i < n; i++) {
        put_u32(b + 8 + 8 * i, (uint32_t)sizes[i]);
        put_u32(b + 12 + 8 * i, (uint32_t)((uint64_t)sizes[i] >> 32));
        if (eng_drv_cache_save(dev, part->prepared, i, b + at, sizes[i]) != sizes[i]) {
            free(b);
            return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                                "device %s changed its mind about a blob's size", dev->info.name);
        }
        at += sizes[i];
    }
    *out = b;
    *len = total;
    return SCHEMA_OK;
}

schema_status eng_prepared_blobs(const eng_prepared *p, const eng_backend *const *drivers,
                                 uint32_t n_drivers, eng_step_blob **out, uint32_t *n_out,
                                 char *err, size_t errlen) {
    *out = NULL;
    *n_out = 0;
    eng_step_blob *b = calloc(p->n_steps + 1, sizeof *b);
    if (!b) return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory");
    uint32_t n = 0;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        if (!st->part_len) continue; /* the CPU's: prepared again from the model */
        uint32_t d = 0;
        while (d < n_drivers && drivers[d] != st->backend)
            d++;
        if (d == n_drivers) continue;
        schema_status s = save_partition(st->state, (uint8_t **)&b[n].data, &b[n].len, err, errlen);
        if (s) {
            eng_step_blobs_free(b, n);
            return s;
        }
        b[n].operation = st->index;
        b[n++].driver = d;
    }
    *out = b;
    *n_out = n;
    return SCHEMA_OK;
}
