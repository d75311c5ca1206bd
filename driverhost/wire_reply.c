/* SPDX-License-Identifier: Apache-2.0 */
/* wire_reply: the driver host's reply bodies, written and read (wire_reply.h). */
#include "driverhost/wire_reply.h"

#include <errno.h>
#include <string.h>

void dh_reply_head_put(dh_wbuf *w, int status, const char *err) {
    dh_put_u32(w, (uint32_t)status);
    dh_put_str(w, err ? err : "");
}

int dh_reply_head_get(dh_rbuf *r, int *status, char *err, size_t cap) {
    *status = (int)dh_get_u32(r);
    dh_get_str(r, err, cap);
    return r->bad ? -EPROTO : 0;
}

void dh_hello_put(dh_wbuf *w, const dh_hello *hello) {
    dh_put_u32(w, hello->has);
    dh_put_u32(w, hello->n_devices);
    for (uint32_t i = 0; i < hello->n_devices && i < NND_DRIVER_MAX_DEVICES; i++)
        dh_put(w, &hello->devices[i], sizeof hello->devices[i]);
}

int dh_hello_get(dh_rbuf *r, dh_hello *hello) {
    hello->has = dh_get_u32(r);
    hello->n_devices = dh_get_u32(r);
    if (hello->n_devices > NND_DRIVER_MAX_DEVICES) r->bad = true;
    for (uint32_t i = 0; i < hello->n_devices && !r->bad; i++) {
        nnd_driver_device_info *d = &hello->devices[i];
        dh_get(r, d, sizeof *d);
        d->name[NND_DRIVER_MAX_NAME] = '\0';
        d->version[sizeof d->version - 1] = '\0';
    }
    return r->bad ? -EPROTO : 0;
}

void dh_supported_put(dh_wbuf *w, const bool *supported, uint32_t n) {
    dh_put_u32(w, n);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t b = supported[i] ? 1 : 0;
        dh_put(w, &b, 1);
    }
}

int dh_supported_get(dh_rbuf *r, uint32_t n_operations, bool *supported) {
    uint32_t n = dh_get_u32(r);
    if (r->bad || n != n_operations) return -EPROTO;
    const uint8_t *b = dh_take(r, n);
    if (!b) return -EPROTO;
    for (uint32_t i = 0; i < n; i++)
        supported[i] = b[i] != 0;
    return 0;
}

void dh_prepared_put(dh_wbuf *w, uint64_t remote, uint64_t held_bytes) {
    dh_put_u64(w, remote);
    dh_put_u64(w, held_bytes);
}

int dh_prepared_get(dh_rbuf *r, uint64_t *remote, uint64_t *held_bytes) {
    *remote = dh_get_u64(r);
    *held_bytes = dh_get_u64(r);
    return r->bad || !*remote ? -EPROTO : 0;
}

void dh_exec_reply_put(dh_wbuf *w, uint64_t time_on_device_ns, uint64_t time_in_driver_ns,
                       const nnd_driver_arg *outputs, uint32_t n_outputs) {
    dh_put_u64(w, time_on_device_ns);
    dh_put_u64(w, time_in_driver_ns);
    for (uint32_t i = 0; i < n_outputs; i++) {
        const nnd_driver_arg *o = &outputs[i];
        dh_put_u32(w, o->rank > NND_DRIVER_MAX_RANK ? NND_DRIVER_MAX_RANK : o->rank);
        dh_put(w, o->dims, sizeof o->dims);
    }
}

int dh_exec_reply_get(dh_rbuf *r, uint64_t *time_on_device_ns, uint64_t *time_in_driver_ns,
                      nnd_driver_arg *outputs, uint32_t n_outputs) {
    *time_on_device_ns = dh_get_u64(r);
    *time_in_driver_ns = dh_get_u64(r);
    for (uint32_t i = 0; i < n_outputs && !r->bad; i++) {
        uint32_t rank = dh_get_u32(r);
        uint32_t dims[NND_DRIVER_MAX_RANK];
        dh_get(r, dims, sizeof dims);
        if (r->bad || rank > NND_DRIVER_MAX_RANK) return -EPROTO;
        outputs[i].rank = rank;
        memcpy(outputs[i].dims, dims, sizeof dims);
    }
    return r->bad ? -EPROTO : 0;
}

void dh_allocated_put(dh_wbuf *w, uint64_t handle) {
    dh_put_u64(w, handle);
}

int dh_allocated_get(dh_rbuf *r, uint64_t *handle) {
    *handle = dh_get_u64(r);
    return r->bad || !*handle ? -EPROTO : 0;
}

void dh_saved_put(dh_wbuf *w, uint64_t size) {
    dh_put_u64(w, size);
}

int dh_saved_get(dh_rbuf *r, uint64_t *size) {
    *size = dh_get_u64(r);
    return r->bad ? -EPROTO : 0;
}
