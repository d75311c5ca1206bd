/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_blob.c: a prepared partition's cache blob (ocl_blob.h). */
#include "ocl_blob.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_cache.h"

#define MAGIC "NNDOCLB1"

typedef struct blob_head {
    char magic[8];
    char key[OCL_CACHE_KEY_HEX];
    char platform[96], device[96], driver[64];
} blob_head;

#define HEAD_LEN (sizeof(blob_head) + 8)

static void head_of(ocl_device *d, blob_head *h) {
    memset(h, 0, sizeof *h);
    memcpy(h->magic, MAGIC, 8);
    ocl_device_key(d, h->key);
    snprintf(h->platform, sizeof h->platform, "%s", d->platform_name);
    snprintf(h->device, sizeof h->device, "%s", d->device_name);
    snprintf(h->driver, sizeof h->driver, "%s", d->driver_version);
}

size_t ocl_blob_save(ocl_device *d, void *buf, size_t cap) {
    size_t size = 0;
    unsigned char *bin = ocl_device_binary(d, &size);
    if (!bin) return 0;
    size_t total = HEAD_LEN + size;
    if (buf && cap >= total) {
        blob_head h;
        head_of(d, &h);
        uint8_t len[8];
        for (int i = 0; i < 8; i++)
            len[i] = (uint8_t)((uint64_t)size >> (8 * i));
        memcpy(buf, &h, sizeof h);
        memcpy((uint8_t *)buf + sizeof h, len, 8);
        memcpy((uint8_t *)buf + HEAD_LEN, bin, size);
    }
    free(bin);
    return total;
}

int ocl_blob_adopt(ocl_device *d, const void *blob, size_t len, char *err, size_t errlen) {
    blob_head got, want;
    if (!blob || len < HEAD_LEN) {
        snprintf(err, errlen, "cache blob too short (%zu bytes)", len);
        return -1;
    }
    memcpy(&got, blob, sizeof got);
    uint64_t size = 0;
    for (int i = 0; i < 8; i++)
        size |= (uint64_t)((const uint8_t *)blob)[sizeof got + (size_t)i] << (8 * i);
    if (memcmp(got.magic, MAGIC, 8) || size != len - HEAD_LEN || !size ||
        got.key[OCL_CACHE_KEY_HEX - 1] || got.platform[sizeof got.platform - 1] ||
        got.device[sizeof got.device - 1] || got.driver[sizeof got.driver - 1]) {
        snprintf(err, errlen, "not a cache blob of this driver's format");
        return -1;
    }
    head_of(d, &want);
    bool same_names = !strcmp(got.platform, want.platform) && !strcmp(got.device, want.device) &&
                      !strcmp(got.driver, want.driver);
    if (!same_names) {
        snprintf(err, errlen,
                 "cache blob made for \"%.40s\" \"%.48s\" driver \"%.32s\", not for this device, "
                 "\"%.40s\" \"%.48s\" driver \"%.32s\"",
                 got.platform, got.device, got.driver, want.platform, want.device, want.driver);
        return -1;
    }
    if (strcmp(got.key, want.key)) {
        snprintf(err, errlen,
                 "cache blob made for this device with other kernels or build options (another "
                 "nnd-opencl build, or NND_OPENCL_BUILD_OPTIONS)");
        return -1;
    }
    return ocl_device_adopt_binary(d, (const unsigned char *)blob + HEAD_LEN, (size_t)size, err,
                                   errlen);
}
