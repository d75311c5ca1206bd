/* SPDX-License-Identifier: Apache-2.0 */
/* cache_entry.c: prepared models made from serialized cache bytes. See cache_internal.h. */
#include <stdlib.h>
#include <string.h>

#include "daemon/cache/cache_encoded.h"
#include "daemon/cache/cache_internal.h"

void srv_cache_entry_free(srv_cache_ref *e) {
    srv_cache_users_free(&e->users);
    eng_prepared_free(e->prepared); /* frees the data buffer too */
    store_buf_free(&e->model);
    free(e);
}

/* Decodes the first model_len bytes of model and prepares them with *heap into a new entry
 * (one reference, no key or model bytes yet: entry_finish) for the driver devices dev (may
 * be NULL: none), finishing plan (the same model planned from the client's description:
 * engine.h, eng_plan) when there is one, else planning afresh. On success the prepared
 * model owns heap; on failure model and heap stay the caller's. plan is consumed. */
static schema_status decode_prepare(srv_cache *c, const store_buf *model, size_t model_len,
                                    store_buf *heap, eng_prepared *plan,
                                    const srv_cache_devices *dev, srv_cache_ref **out, char *err,
                                    size_t errlen) {
    *out = NULL;
    srv_cache_ref *e = calloc(1, sizeof *e);
    if (!e) {
        eng_prepared_free(plan);
        schema_errf(err, errlen, "out of memory");
        return SCHEMA_GENERAL_FAILURE;
    }
    store_ser_model sm;
    schema_status st = store_ser_decode(model->p, model_len, heap->p, heap->len, &sm, err, errlen);
    if (st == SCHEMA_OK && strcmp(sm.build_id, c->build_id) != 0) {
        schema_errf(err, errlen, "made by driver build %s, this is %s", sm.build_id, c->build_id);
        st = SCHEMA_GENERAL_FAILURE;
    }
    if (st == SCHEMA_OK) {
        if (dev) srv_cache_devices_apply(dev, &sm.desc);
        sm.pool.release = store_buf_release; /* on success the prepared model owns the bytes */
        sm.pool.ctx = heap;
        st = plan ? eng_prepare_planned(plan, &sm.desc, &e->prepared, err, errlen)
                  : eng_prepare(&sm.desc, &e->prepared, err, errlen);
        plan = NULL;
    }
    eng_prepared_free(plan); /* not reached: the bytes were refused */
    e->preference = sm.preference;
    store_ser_model_clear(&sm); /* the prepared model keeps its own copy of the plan */
    if (st != SCHEMA_OK) {
        free(e);
        return st;
    }
    e->cache = c;
    e->data = heap;
    e->refs = 1;
    *out = e;
    return SCHEMA_OK;
}

/* What an entry holds in memory: its model and data bytes and the prepared model made from
 * them (engine.h eng_prepared_bytes: plan, operators, packed weights). */
static uint64_t entry_bytes(const srv_cache_ref *e) {
    return e->model.len + e->data->len + eng_prepared_bytes(e->prepared);
}

/* Gives an entry from decode_prepare() its key and its model bytes (taken from *model). */
static void entry_finish(srv_cache_ref *e, const uint8_t key[STORE_HASH_LEN], store_buf *model) {
    memcpy(e->key, key, STORE_HASH_LEN);
    memcpy(e->file_key, key, STORE_HASH_LEN);
    e->model = *model;
    memset(model, 0, sizeof *model);
    e->bytes = entry_bytes(e);
}

/* A new entry of driver devices: its blobs go after its model bytes, and client cache files
 * of it have the digest of those (file_key). A driver without a blob costs the files only. */
static void add_device_section(srv_cache_ref *e, const srv_cache_encoded *x) {
    eng_model_desc m;
    memset(&m, 0, sizeof m);
    srv_cache_devices_apply(&x->dev, &m);
    char err[256];
    uint8_t digest[1][STORE_HASH_LEN];
    const uint8_t *p[1];
    size_t len[1];
    if (srv_cache_devices_append(&m, e->prepared, &e->model, err, sizeof err) != SCHEMA_OK ||
        (p[0] = e->model.p, len[0] = e->model.len, store_hash_bufs(p, len, 1, digest) < 0)) {
        e->no_files = true;
        return;
    }
    store_hash_combine(digest[0], x->data_digest, e->file_key);
    e->bytes = entry_bytes(e);
}

schema_status srv_cache_make_entry(srv_cache *c, const srv_cache_encoded *x, store_buf *model,
                                   store_buf *data, eng_prepared *plan, srv_cache_ref **out,
                                   char *err, size_t errlen) {
    *out = NULL;
    store_buf *heap = store_buf_detach(data);
    if (!heap) {
        eng_prepared_free(plan);
        store_buf_free(data);
        store_buf_free(model);
        schema_errf(err, errlen, "out of memory");
        return SCHEMA_GENERAL_FAILURE;
    }
    schema_status st = decode_prepare(c, model, model->len, heap, plan, &x->dev, out, err, errlen);
    if (st != SCHEMA_OK) {
        store_buf_release(heap);
        store_buf_free(model);
        return st;
    }
    entry_finish(*out, x->key, model);
    if (x->dev.n_drivers) add_device_section(*out, x);
    return SCHEMA_OK;
}

/* Bytes with a device section: hashed first, so that no driver reads a blob that was not
 * checked; prepared only when the digest is the one expected. */
static int prepare_checked_first(srv_cache *c, store_buf bufs[2], store_buf *heap,
                                 const uint8_t expect[STORE_HASH_LEN], uint8_t key[STORE_HASH_LEN],
                                 srv_cache_ref **out, schema_status *made, char *why,
                                 size_t whylen) {
    const uint8_t *p[2] = {bufs[0].p, heap->p};
    size_t len[2] = {bufs[0].len, heap->len};
    uint8_t digest[2][STORE_HASH_LEN];
    if (store_hash_bufs(p, len, 2, digest) < 0) {
        store_buf_free(&bufs[0]), store_buf_release(heap);
        schema_errf(why, whylen, "out of memory hashing the cache files");
        return -1;
    }
    store_hash_combine(digest[0], digest[1], key);
    srv_cache_devices dev = {0};
    size_t model_len = 0;
    *made = SCHEMA_GENERAL_FAILURE;
    if (memcmp(key, expect, STORE_HASH_LEN) != 0)
        schema_errf(why, whylen, "not checked"); /* the caller refuses the mismatch */
    else if (srv_cache_devices_split(bufs[0].p, bufs[0].len, &model_len, &dev, why, whylen) > 0)
        *made = decode_prepare(c, &bufs[0], model_len, heap, NULL, &dev, out, why, whylen);
    srv_cache_devices_clear(&dev);
    if (*made == SCHEMA_OK)
        entry_finish(*out, key, &bufs[0]);
    else
        store_buf_release(heap);
    store_buf_free(&bufs[0]);
    return 0;
}

/* The hash runs on its own thread while this one decodes and prepares. */
int srv_cache_prepare_while_hashing(srv_cache *c, store_buf bufs[2],
                                    const uint8_t expect[STORE_HASH_LEN],
                                    uint8_t key[STORE_HASH_LEN], srv_cache_ref **out,
                                    schema_status *made, char *why, size_t whylen) {
    *out = NULL;
    memset(key, 0, STORE_HASH_LEN);
    store_buf *heap = store_buf_detach(&bufs[1]);
    if (!heap) {
        store_buf_free(&bufs[0]), store_buf_free(&bufs[1]);
        schema_errf(why, whylen, "out of memory");
        return -1;
    }
    size_t model_len;
    srv_cache_devices probe;
    int section = srv_cache_devices_split(bufs[0].p, bufs[0].len, &model_len, &probe, why, whylen);
    srv_cache_devices_clear(&probe);
    if (section != 0)
        return prepare_checked_first(c, bufs, heap, expect, key, out, made, why, whylen);
    const uint8_t *p[2] = {bufs[0].p, heap->p};
    size_t len[2] = {bufs[0].len, heap->len};
    store_hash_task *t = store_hash_start(p, len, 2);
    if (!t) {
        store_buf_free(&bufs[0]), store_buf_release(heap);
        schema_errf(why, whylen, "out of memory hashing the cache files");
        return -1;
    }
    *made = decode_prepare(c, &bufs[0], bufs[0].len, heap, NULL, NULL, out, why, whylen);
    uint8_t digest[2][STORE_HASH_LEN];
    int rc = store_hash_join(t, digest); /* the bytes outlive the hash: freed only below */
    if (rc == 0) store_hash_combine(digest[0], digest[1], key);
    if (*made == SCHEMA_OK)
        entry_finish(*out, key, &bufs[0]);
    else
        store_buf_release(heap);
    store_buf_free(&bufs[0]);
    if (rc < 0) {
        if (*out) srv_cache_entry_free(*out);
        *out = NULL;
        schema_errf(why, whylen, "out of memory hashing the cache files");
        return -1;
    }
    return 0;
}
