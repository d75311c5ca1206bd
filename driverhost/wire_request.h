/* SPDX-License-Identifier: Apache-2.0 */
/* wire_request: the heads of the proxy's calls, written by the proxy (proxy*.c) and read by
 * the driver host (host_main.c, host_exec.c). Partitions follow as wire.h's dh_put_model.
 *
 * Contract:
 * - prepare, cache_load:  device index, nnd_driver_prepare_args, (cache_load: n blobs, each
 *                         u64 size then its bytes), then the partition;
 *   allocate:             device index, the operand (type, rank, dims, scale, zero point),
 *                         u64 bytes, n roles, each the host's prepared id, is_output, index,
 *                         frequency;
 *   execute:              dh_exec_head, then exactly n_inputs + n_outputs dh_arg;
 *   memory read, write:   device index, handle, offset, the buffer's dh_arg;
 *   cache_save:           the host's prepared id, blob, capacity, the buffer's dh_arg.
 * - The readers never read past the body and allocate only what the body's length can
 *   hold; they return 0, or -EPROTO for a short body or a count past its limit
 *   (DH_MAX_BLOBS blobs, roles or arguments more than the body holds, a rank over
 *   NND_DRIVER_MAX_RANK), -ENOMEM. Prepared ids come back as the writer gave them (the host
 *   checks them); bytes after a head are the caller's (the partition).
 */
#ifndef DH_WIRE_REQUEST_H
#define DH_WIRE_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "driverhost/wire.h"
#include "nnd/driver.h"

#define DH_MAX_BLOBS 16u

void dh_prepare_req_put(dh_wbuf *w, uint32_t dev, const nnd_driver_prepare_args *args, bool load,
                        const nnd_driver_blob *blobs, uint32_t n_blobs);
/* blobs (DH_MAX_BLOBS entries) point into the body. */
int dh_prepare_req_get(dh_rbuf *r, bool load, uint32_t *dev, nnd_driver_prepare_args *args,
                       nnd_driver_blob *blobs, uint32_t *n_blobs);

/* remotes[i]: the host's prepared id of desc->roles[i] (whose `prepared` is not sent). */
void dh_allocate_req_put(dh_wbuf *w, uint32_t dev, const nnd_driver_buffer_desc *desc,
                         const uint64_t *remotes);
/* desc->roles is malloc'd (free it), n_roles + 1 entries; *remotes likewise (the ids). */
int dh_allocate_req_get(dh_rbuf *r, uint32_t *dev, nnd_driver_buffer_desc *desc,
                        uint64_t **remotes);

/* The head; the arguments follow (dh_get of each dh_arg). */
int dh_exec_req_get(dh_rbuf *r, dh_exec_head *head);

void dh_copy_req_put(dh_wbuf *w, uint32_t dev, uint64_t handle, uint64_t offset, const dh_arg *buf);
int dh_copy_req_get(dh_rbuf *r, uint32_t *dev, uint64_t *handle, uint64_t *offset, dh_arg *buf);

void dh_save_req_put(dh_wbuf *w, uint64_t remote, uint32_t blob, uint64_t cap, const dh_arg *buf);
int dh_save_req_get(dh_rbuf *r, uint64_t *remote, uint32_t *blob, uint64_t *cap, dh_arg *buf);

#endif
