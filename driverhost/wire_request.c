/* SPDX-License-Identifier: Apache-2.0 */
/* wire_request: the heads of the proxy's calls, written and read (wire_request.h). */
#include "driverhost/wire_request.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ROLE_BYTES 20u /* a role on the wire: id, is_output, index, frequency */

void dh_prepare_req_put(dh_wbuf *w, uint32_t dev, const nnd_driver_prepare_args *args, bool load,
                        const nnd_driver_blob *blobs, uint32_t n_blobs) {
    dh_put_u32(w, dev);
    dh_put(w, args, sizeof *args);
    if (!load) return;
    dh_put_u32(w, n_blobs);
    for (uint32_t i = 0; i < n_blobs; i++) {
        dh_put_u64(w, blobs[i].size);
        dh_put(w, blobs[i].data, blobs[i].size);
    }
}

int dh_prepare_req_get(dh_rbuf *r, bool load, uint32_t *dev, nnd_driver_prepare_args *args,
                       nnd_driver_blob *blobs, uint32_t *n_blobs) {
    *dev = dh_get_u32(r);
    dh_get(r, args, sizeof *args);
    *n_blobs = load ? dh_get_u32(r) : 0;
    if (*n_blobs > DH_MAX_BLOBS) r->bad = true;
    for (uint32_t i = 0; i < *n_blobs && !r->bad; i++) {
        uint64_t size = dh_get_u64(r);
        blobs[i].data = dh_take(r, (size_t)size);
        blobs[i].size = (size_t)size;
    }
    return r->bad ? -EPROTO : 0;
}

void dh_allocate_req_put(dh_wbuf *w, uint32_t dev, const nnd_driver_buffer_desc *desc,
                         const uint64_t *remotes) {
    const nnd_driver_operand *o = &desc->operand;
    dh_put_u32(w, dev);
    dh_put(w, &o->type, 4);
    dh_put_u32(w, o->rank);
    dh_put(w, o->dims, sizeof o->dims);
    dh_put(w, &o->scale, 4);
    dh_put(w, &o->zero_point, 4);
    dh_put_u64(w, desc->bytes);
    dh_put_u32(w, desc->n_roles);
    for (uint32_t i = 0; i < desc->n_roles; i++) {
        dh_put_u64(w, remotes[i]);
        dh_put_u32(w, desc->roles[i].is_output ? 1u : 0u);
        dh_put_u32(w, desc->roles[i].index);
        dh_put(w, &desc->roles[i].frequency, 4);
    }
}

int dh_allocate_req_get(dh_rbuf *r, uint32_t *dev, nnd_driver_buffer_desc *desc,
                        uint64_t **remotes) {
    memset(desc, 0, sizeof *desc);
    *remotes = NULL;
    nnd_driver_operand *o = &desc->operand;
    *dev = dh_get_u32(r);
    dh_get(r, &o->type, 4);
    o->rank = dh_get_u32(r);
    dh_get(r, o->dims, sizeof o->dims);
    dh_get(r, &o->scale, 4);
    dh_get(r, &o->zero_point, 4);
    desc->bytes = dh_get_u64(r);
    uint32_t n = dh_get_u32(r);
    /* The count is the sender's word: no more roles than the body holds. */
    if (r->bad || o->rank > NND_DRIVER_MAX_RANK || (uint64_t)n * ROLE_BYTES > r->len - r->pos)
        return -EPROTO;
    nnd_driver_buffer_role *roles = calloc((size_t)n + 1u, sizeof *roles);
    uint64_t *ids = calloc((size_t)n + 1u, sizeof *ids);
    if (!roles || !ids) {
        free(roles);
        free(ids);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        ids[i] = dh_get_u64(r);
        roles[i].is_output = dh_get_u32(r) != 0;
        roles[i].index = dh_get_u32(r);
        dh_get(r, &roles[i].frequency, 4);
    }
    desc->roles = roles, desc->n_roles = n;
    *remotes = ids;
    return 0;
}

int dh_exec_req_get(dh_rbuf *r, dh_exec_head *head) {
    dh_get(r, head, sizeof *head);
    uint64_t n = (uint64_t)head->n_inputs + head->n_outputs;
    if (r->bad || n * sizeof(dh_arg) != r->len - r->pos) return -EPROTO;
    return 0;
}

void dh_copy_req_put(dh_wbuf *w, uint32_t dev, uint64_t handle, uint64_t offset,
                     const dh_arg *buf) {
    dh_put_u32(w, dev);
    dh_put_u64(w, handle);
    dh_put_u64(w, offset);
    dh_put(w, buf, sizeof *buf);
}

int dh_copy_req_get(dh_rbuf *r, uint32_t *dev, uint64_t *handle, uint64_t *offset, dh_arg *buf) {
    *dev = dh_get_u32(r);
    *handle = dh_get_u64(r);
    *offset = dh_get_u64(r);
    dh_get(r, buf, sizeof *buf);
    return r->bad ? -EPROTO : 0;
}

void dh_save_req_put(dh_wbuf *w, uint64_t remote, uint32_t blob, uint64_t cap, const dh_arg *buf) {
    dh_put_u64(w, remote);
    dh_put_u32(w, blob);
    dh_put_u64(w, cap);
    dh_put(w, buf, sizeof *buf);
}

int dh_save_req_get(dh_rbuf *r, uint64_t *remote, uint32_t *blob, uint64_t *cap, dh_arg *buf) {
    *remote = dh_get_u64(r);
    *blob = dh_get_u32(r);
    *cap = dh_get_u64(r);
    dh_get(r, buf, sizeof *buf);
    return r->bad ? -EPROTO : 0;
}
