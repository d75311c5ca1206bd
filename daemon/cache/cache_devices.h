/* SPDX-License-Identifier: Apache-2.0 */
/* cache_devices: the device section of a cached compilation that runs steps on drivers
 * (nnd/driver.h, "Cache blobs"): which driver devices the compilation was made for and the
 * blobs of its driver steps, appended to the model cache bytes (storage/serialize.h
 * knows nothing of it).
 *
 * Contract:
 * - Whether a compilation for m's device set may be cached at all is the route's question
 *   (srv_cache_devices_ok(), cache.h): no driver in the set, or every driver keeps blobs.
 * - srv_cache_devices_fold(): the content key of a compilation with drivers is the key of
 *   its serialized model and data folded with the names and versions of its drivers (in
 *   the set's order) and drivers_only, so entries stay per device set.
 * - srv_cache_devices_append(): appends the section (devices, then one blob per driver step
 *   of p, then a trailer: the section's length and a magic) to *model. The client cache
 *   files hold the bytes with the section, and the index records their digest, so the
 *   blobs are checked with the rest before a driver sees them.
 * - srv_cache_devices_split(): finds the section at the end of model cache bytes (hostile
 *   input: every length is checked): 0 when there is none, 1 with *model_len the
 *   serialized model's bytes and d filled (blobs borrow from bytes), -1 with why set when
 *   the section is bad or names a device that is not loaded, of another version, or one
 *   without cache blobs. srv_cache_devices_apply() puts d into a model description
 *   (drivers, drivers_only, from_blobs, blobs); srv_cache_devices_clear() frees d.
 */
#ifndef SRV_CACHE_CACHE_DEVICES_H
#define SRV_CACHE_CACHE_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/devices/devices.h"
#include "engine/engine.h"
#include "storage/hash.h"

typedef struct srv_cache_devices {
    const struct eng_backend *drivers[SRV_MAX_DEVICES];
    uint32_t n_drivers;
    bool drivers_only;
    bool cpu_last; /* a set the client named (eng_model_desc.cpu_last) */
    eng_step_blob *blobs;
    uint32_t n_blobs;
} srv_cache_devices;

void srv_cache_devices_fold(const eng_model_desc *m, uint8_t key[STORE_HASH_LEN]);
schema_status srv_cache_devices_append(const eng_model_desc *m, const eng_prepared *p,
                                       store_buf *model, char *err, size_t errlen);
int srv_cache_devices_split(const uint8_t *bytes, size_t len, size_t *model_len,
                            srv_cache_devices *d, char *why, size_t whylen);
void srv_cache_devices_apply(const srv_cache_devices *d, eng_model_desc *m);
void srv_cache_devices_clear(srv_cache_devices *d);

#endif
