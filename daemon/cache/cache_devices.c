/* SPDX-License-Identifier: Apache-2.0 */
/* cache_devices.c: the device section of cached driver compilations. See cache_devices.h.
 * Layout (little-endian): u32 flags (bit 0: drivers_only, bit 1: cpu_last), u32 n_drivers, per
 * driver its name and version (u32 length, bytes each); u32 n_blobs, per blob u32 operation, u32
 * driver, u64 length, bytes; then the trailer: u64 length of all before it, "NNDDEVS1". */
#include "daemon/cache/cache_devices.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"

#define MAGIC       "NNDDEVS1"
#define TRAILER_LEN 16

/* The device table's entry for a driver backend. */
static const srv_device *device_of(const eng_backend *b) {
    size_t n;
    const srv_device *d = srv_devices(&n);
    for (size_t i = 0; i < n; i++)
        if (d[i].backend == b) return &d[i];
    return NULL;
}

static const char *version_of(const eng_backend *b) {
    const srv_device *d = device_of(b);
    return d && d->version ? d->version : "";
}

/* A growing byte string; a failed growth leaves ok false. */
typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
    bool ok;
} wbuf;

static void put(wbuf *w, const void *v, size_t n) {
    if (!w->ok) return;
    if (w->len + n > w->cap) {
        size_t cap = (w->len + n) * 2 + 64;
        uint8_t *p = realloc(w->p, cap);
        if (!p) return (void)(w->ok = false);
        w->p = p, w->cap = cap;
    }
    if (n) memcpy(w->p + w->len, v, n);
    w->len += n;
}

static void put_u32(wbuf *w, uint32_t v) {
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(w, b, 4);
}

static void put_u64(wbuf *w, uint64_t v) {
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}

static void put_str(wbuf *w, const char *s) {
    put_u32(w, (uint32_t)strlen(s));
    put(w, s, strlen(s));
}

/* The devices part: what the content key is folded with. */
static void put_devices(wbuf *w, const eng_model_desc *m) {
    put_u32(w, (m->drivers_only ? 1u : 0u) | (m->cpu_last ? 2u : 0u));
    put_u32(w, m->n_drivers);
    for (uint32_t i = 0; i < m->n_drivers; i++) {
        put_str(w, m->drivers[i]->name);
        put_str(w, version_of(m->drivers[i]));
    }
}

void srv_cache_devices_fold(const eng_model_desc *m, uint8_t key[STORE_HASH_LEN]) {
    if (!m->n_drivers) return;
    wbuf w = {.ok = true};
    put_devices(&w, m);
    uint8_t digest[1][STORE_HASH_LEN];
    const uint8_t *p[1] = {w.p};
    size_t len[1] = {w.len};
    if (w.ok && store_hash_bufs(p, len, 1, digest) == 0) {
        uint8_t folded[STORE_HASH_LEN];
        store_hash_combine(key, digest[0], folded);
        memcpy(key, folded, STORE_HASH_LEN);
    } else {
        memset(key, 0xff, STORE_HASH_LEN); /* matches nothing a model hashes to */
    }
    free(w.p);
}

schema_status srv_cache_devices_append(const eng_model_desc *m, const eng_prepared *p,
                                       store_buf *model, char *err, size_t errlen) {
    eng_step_blob *blobs;
    uint32_t n_blobs;
    schema_status st =
        eng_prepared_blobs(p, m->drivers, m->n_drivers, &blobs, &n_blobs, err, errlen);
    if (st != SCHEMA_OK) return st;
    wbuf w = {.ok = true};
    put_devices(&w, m);
    put_u32(&w, n_blobs);
    for (uint32_t i = 0; i < n_blobs; i++) {
        put_u32(&w, blobs[i].operation);
        put_u32(&w, blobs[i].driver);
        put_u64(&w, blobs[i].len);
        put(&w, blobs[i].data, blobs[i].len);
    }
    eng_step_blobs_free(blobs, n_blobs);
    put_u64(&w, w.len);
    put(&w, MAGIC, 8);
    store_buf grown;
    if (!w.ok || store_buf_alloc(&grown, model->len + w.len) < 0) {
        free(w.p);
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory");
    }
    memcpy(grown.p, model->p, model->len);
    memcpy(grown.p + model->len, w.p, w.len);
    free(w.p);
    store_buf_free(model);
    *model = grown;
    return SCHEMA_OK;
}

/* ---- reading ----------------------------------------------------------------------- */

typedef struct rbuf {
    const uint8_t *p;
    size_t len, at;
    bool ok;
} rbuf;

static const uint8_t *take(rbuf *r, uint64_t n) {
    if (!r->ok || n > r->len - r->at) return (void)(r->ok = false), NULL;
    const uint8_t *p = r->p + r->at;
    r->at += (size_t)n;
    return p;
}

static uint32_t get_u32(rbuf *r) {
    const uint8_t *b = take(r, 4);
    return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24
             : 0;
}

static uint64_t get_u64(rbuf *r) {
    uint64_t lo = get_u32(r);
    return lo | (uint64_t)get_u32(r) << 32;
}

/* A string into out (NUL-terminated); false when it does not fit. */
static bool get_str(rbuf *r, char *out, size_t cap) {
    uint32_t n = get_u32(r);
    const uint8_t *s = n < cap ? take(r, n) : NULL;
    if (!s) return r->ok = false;
    memcpy(out, s, n);
    out[n] = '\0';
    return true;
}

static const srv_device *device_named(const char *name) {
    size_t n;
    const srv_device *d = srv_devices(&n);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(d[i].name, name)) return &d[i];
    return NULL;
}

int srv_cache_devices_split(const uint8_t *bytes, size_t len, size_t *model_len,
                            srv_cache_devices *d, char *why, size_t whylen) {
    memset(d, 0, sizeof *d);
    if (len < TRAILER_LEN || memcmp(bytes + len - 8, MAGIC, 8) != 0) return 0;
    rbuf t = {.p = bytes + len - TRAILER_LEN, .len = 8, .ok = true};
    uint64_t section = get_u64(&t);
    if (section > len - TRAILER_LEN) return snprintf(why, whylen, "device section too long"), -1;
    rbuf r = {.p = bytes + len - TRAILER_LEN - section, .len = (size_t)section, .ok = true};
    *model_len = len - TRAILER_LEN - (size_t)section;
    uint32_t flags = get_u32(&r);
    d->drivers_only = flags & 1u;
    d->cpu_last = flags & 2u;
    d->n_drivers = get_u32(&r);
    if (!r.ok || flags > 3 || d->n_drivers == 0 || d->n_drivers > SRV_MAX_DEVICES)
        return snprintf(why, whylen, "bad device list in the device section"), -1;
    for (uint32_t i = 0; i < d->n_drivers; i++) {
        char name[64], version[128];
        if (!get_str(&r, name, sizeof name) || !get_str(&r, version, sizeof version))
            return snprintf(why, whylen, "bad device name in the device section"), -1;
        const srv_device *dev = device_named(name);
        if (!dev || !dev->backend)
            return snprintf(why, whylen, "made for device %s, which is not loaded", name), -1;
        if (strcmp(dev->version ? dev->version : "", version) != 0)
            return snprintf(why, whylen, "made by %s version \"%s\", the loaded one is \"%s\"",
                            name, version, dev->version ? dev->version : ""),
                   -1;
        if (srv_device_disabled(dev))
            return snprintf(why, whylen, "made for device %s, which is disabled after a fault",
                            name),
                   -1;
        if (!dev->backend->cache_blobs)
            return snprintf(why, whylen, "device %s keeps no cache blobs", name), -1;
        d->drivers[i] = dev->backend;
    }
    d->n_blobs = get_u32(&r);
    if (!r.ok || d->n_blobs > (r.len - r.at) / 16)
        return snprintf(why, whylen, "bad blob count in the device section"), -1;
    d->blobs = calloc(d->n_blobs + 1, sizeof *d->blobs);
    if (!d->blobs) return snprintf(why, whylen, "out of memory"), -1;
    for (uint32_t i = 0; i < d->n_blobs; i++) {
        d->blobs[i].operation = get_u32(&r);
        d->blobs[i].driver = get_u32(&r);
        d->blobs[i].len = (size_t)get_u64(&r);
        d->blobs[i].data = take(&r, d->blobs[i].len);
        if (!r.ok || d->blobs[i].driver >= d->n_drivers) {
            r.ok = false;
            break;
        }
    }
    if (!r.ok || r.at != r.len) {
        srv_cache_devices_clear(d);
        return snprintf(why, whylen, "bad blob in the device section"), -1;
    }
    return 1;
}

void srv_cache_devices_apply(const srv_cache_devices *d, eng_model_desc *m) {
    m->drivers = d->n_drivers ? d->drivers : NULL;
    m->n_drivers = d->n_drivers;
    m->drivers_only = d->drivers_only;
    m->cpu_last = d->cpu_last;
    m->from_blobs = d->blobs != NULL;
    m->blobs = d->blobs;
    m->n_blobs = d->n_blobs;
}

void srv_cache_devices_clear(srv_cache_devices *d) {
    free(d->blobs);
    memset(d, 0, sizeof *d);
}
