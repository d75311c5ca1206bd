/* cache_entry.c: prepared models made from serialized cache bytes. See cache_internal.h. */
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "cache_internal.h"

void nnd_cache_entry_free(nnd_cache_ref *e) {
    nnd_cache_users_free(&e->users);
    nnd_prepared_free(e->prepared); /* frees the data buffer too */
    nnd_buf_free(&e->model);
    free(e);
}

/* Decodes the first model_len bytes of model and prepares them with *heap into a new entry
 * (one reference, no key or model bytes yet: entry_finish) for the driver devices dev (may
 * be NULL: none), finishing plan (the same model planned from the client's description:
 * engine.h, nnd_plan) when there is one, else planning afresh. On success the prepared
 * model owns heap; on failure model and heap stay the caller's. plan is consumed. */
static nnd_status decode_prepare(nnd_cache *c, const nnd_buf *model, size_t model_len,
                                 nnd_buf *heap, nnd_prepared *plan, const nnd_cache_devices *dev,
                                 nnd_cache_ref **out, char *err, size_t errlen) {
    *out = NULL;
    nnd_cache_ref *e = calloc(1, sizeof *e);
    if (!e) {
        nnd_prepared_free(plan);
        nnd_errf(err, errlen, "out of memory");
        return NND_GENERAL_FAILURE;
    }
    nnd_ser_model sm;
    nnd_status st = nnd_ser_decode(model->p, model_len, heap->p, heap->len, &sm, err, errlen);
    if (st == NND_OK && strcmp(sm.build_id, c->build_id) != 0) {
        nnd_errf(err, errlen, "made by driver build %s, this is %s", sm.build_id, c->build_id);
        st = NND_GENERAL_FAILURE;
    }
    if (st == NND_OK) {
        if (dev) nnd_cache_devices_apply(dev, &sm.desc);
        sm.pool.release = nnd_buf_release; /* on success the prepared model owns the bytes */
        sm.pool.ctx = heap;
        st = plan ? nnd_prepare_planned(plan, &sm.desc, &e->prepared, err, errlen)
                  : nnd_prepare(&sm.desc, &e->prepared, err, errlen);
        plan = NULL;
    }
    nnd_prepared_free(plan); /* not reached: the bytes were refused */
    e->preference = sm.preference;
    nnd_ser_model_clear(&sm); /* the prepared model keeps its own copy of the plan */
    if (st != NND_OK) {
        free(e);
        return st;
    }
    e->cache = c;
    e->data = heap;
    e->refs = 1;
    *out = e;
    return NND_OK;
}

/* Gives an entry from decode_prepare() its key and its model bytes (taken from *model). */
static void entry_finish(nnd_cache_ref *e, const uint8_t key[NND_HASH_LEN], nnd_buf *model) {
    memcpy(e->key, key, NND_HASH_LEN);
    memcpy(e->file_key, key, NND_HASH_LEN);
    e->model = *model;
    memset(model, 0, sizeof *model);
    e->bytes = e->model.len + e->data->len;
}

/* A new entry of driver devices: its blobs go after its model bytes, and client cache files
 * of it have the digest of those (file_key). A driver without a blob costs the files only. */
static void add_device_section(nnd_cache_ref *e, const nnd_cache_encoded *x) {
    nnd_model_desc m;
    memset(&m, 0, sizeof m);
    nnd_cache_devices_apply(&x->dev, &m);
    char err[256];
    uint8_t digest[1][NND_HASH_LEN];
    const uint8_t *p[1];
    size_t len[1];
    if (nnd_cache_devices_append(&m, e->prepared, &e->model, err, sizeof err) != NND_OK ||
        (p[0] = e->model.p, len[0] = e->model.len, nnd_hash_bufs(p, len, 1, digest) < 0)) {
        e->no_files = true;
        return;
    }
    nnd_hash_combine(digest[0], x->data_digest, e->file_key);
    e->bytes = e->model.len + e->data->len;
}

nnd_status nnd_cache_make_entry(nnd_cache *c, const nnd_cache_encoded *x, nnd_buf *model,
                                nnd_buf *data, nnd_prepared *plan, nnd_cache_ref **out, char *err,
                                size_t errlen) {
    *out = NULL;
    nnd_buf *heap = nnd_buf_detach(data);
    if (!heap) {
        nnd_prepared_free(plan);
        nnd_buf_free(data);
        nnd_buf_free(model);
        nnd_errf(err, errlen, "out of memory");
        return NND_GENERAL_FAILURE;
    }
    nnd_status st = decode_prepare(c, model, model->len, heap, plan, &x->dev, out, err, errlen);
    if (st != NND_OK) {
        nnd_buf_release(heap);
        nnd_buf_free(model);
        return st;
    }
    entry_finish(*out, x->key, model);
    if (x->dev.n_drivers) add_device_section(*out, x);
    return NND_OK;
}

/* Bytes with a device section: hashed first, so that no driver reads a blob that was not
 * checked; prepared only when the digest is the one expected. */
static int prepare_checked_first(nnd_cache *c, nnd_buf bufs[2], nnd_buf *heap,
                                 const uint8_t expect[NND_HASH_LEN], uint8_t key[NND_HASH_LEN],
                                 nnd_cache_ref **out, nnd_status *made, char *why, size_t whylen) {
    const uint8_t *p[2] = {bufs[0].p, heap->p};
    size_t len[2] = {bufs[0].len, heap->len};
    uint8_t digest[2][NND_HASH_LEN];
    if (nnd_hash_bufs(p, len, 2, digest) < 0) {
        nnd_buf_free(&bufs[0]), nnd_buf_release(heap);
        nnd_errf(why, whylen, "out of memory hashing the cache files");
        return -1;
    }
    nnd_hash_combine(digest[0], digest[1], key);
    nnd_cache_devices dev = {0};
    size_t model_len = 0;
    *made = NND_GENERAL_FAILURE;
    if (memcmp(key, expect, NND_HASH_LEN) != 0)
        nnd_errf(why, whylen, "not checked"); /* the caller refuses the mismatch */
    else if (nnd_cache_devices_split(bufs[0].p, bufs[0].len, &model_len, &dev, why, whylen) > 0)
        *made = decode_prepare(c, &bufs[0], model_len, heap, NULL, &dev, out, why, whylen);
    nnd_cache_devices_clear(&dev);
    if (*made == NND_OK)
        entry_finish(*out, key, &bufs[0]);
    else
        nnd_buf_release(heap);
    nnd_buf_free(&bufs[0]);
    return 0;
}

/* The hash runs on its own thread while this one decodes and prepares. */
int nnd_cache_prepare_while_hashing(nnd_cache *c, nnd_buf bufs[2],
                                    const uint8_t expect[NND_HASH_LEN], uint8_t key[NND_HASH_LEN],
                                    nnd_cache_ref **out, nnd_status *made, char *why,
                                    size_t whylen) {
    *out = NULL;
    memset(key, 0, NND_HASH_LEN);
    nnd_buf *heap = nnd_buf_detach(&bufs[1]);
    if (!heap) {
        nnd_buf_free(&bufs[0]), nnd_buf_free(&bufs[1]);
        nnd_errf(why, whylen, "out of memory");
        return -1;
    }
    size_t model_len;
    nnd_cache_devices probe;
    int section = nnd_cache_devices_split(bufs[0].p, bufs[0].len, &model_len, &probe, why, whylen);
    nnd_cache_devices_clear(&probe);
    if (section != 0)
        return prepare_checked_first(c, bufs, heap, expect, key, out, made, why, whylen);
    const uint8_t *p[2] = {bufs[0].p, heap->p};
    size_t len[2] = {bufs[0].len, heap->len};
    nnd_hash_task *t = nnd_hash_start(p, len, 2);
    if (!t) {
        nnd_buf_free(&bufs[0]), nnd_buf_release(heap);
        nnd_errf(why, whylen, "out of memory hashing the cache files");
        return -1;
    }
    *made = decode_prepare(c, &bufs[0], bufs[0].len, heap, NULL, NULL, out, why, whylen);
    uint8_t digest[2][NND_HASH_LEN];
    int rc = nnd_hash_join(t, digest); /* the bytes outlive the hash: freed only below */
    if (rc == 0) nnd_hash_combine(digest[0], digest[1], key);
    if (*made == NND_OK)
        entry_finish(*out, key, &bufs[0]);
    else
        nnd_buf_release(heap);
    nnd_buf_free(&bufs[0]);
    if (rc < 0) {
        if (*out) nnd_cache_entry_free(*out);
        *out = NULL;
        nnd_errf(why, whylen, "out of memory hashing the cache files");
        return -1;
    }
    return 0;
}
