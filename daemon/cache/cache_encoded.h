/* SPDX-License-Identifier: Apache-2.0 */
/* cache_encoded: a model encoded for the content cache, its bytes and their digests
 * (srv_cache_encode() in cache.h), apart from cache.h so that the entry maker
 * (cache_entry.c) reads it without including its caller's header. */
#ifndef SRV_CACHE_CACHE_ENCODED_H
#define SRV_CACHE_CACHE_ENCODED_H

#include <stdint.h>

#include "daemon/cache/cache_devices.h"
#include "storage/hash.h"
#include "storage/serialize.h"

typedef struct srv_cache_encoded {
    store_buf model, data;
    uint8_t key[STORE_HASH_LEN];
    uint8_t data_digest[STORE_HASH_LEN];
    srv_cache_devices dev; /* the driver devices of the set (no blobs yet) */
} srv_cache_encoded;

#endif
