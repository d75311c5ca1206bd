/* SPDX-License-Identifier: Apache-2.0 */
/* cache_route.c: PrepareModel's route, decided in one place (srv_cache_route, cache.h): the
 * questions it asks (may this device set be cached, does a client cache save pay, does the
 * content cache take the model) are answered here, from the cache's counters and limits. */
#include "daemon/cache/cache.h"

#include "daemon/base/log.h"
#include "daemon/cache/cache_internal.h"
#include "daemon/clients/rate.h"
#include "daemon/wire/convert.h"
#include "engine/backend.h"
#include "proto/model_bytes.h"
#include "storage/serialize.h"

bool srv_cache_devices_ok(const eng_model_desc *m) {
    for (uint32_t i = 0; i < m->n_drivers; i++)
        if (!m->drivers[i]->cache_blobs) return false;
    return true;
}

bool srv_cache_save_pays(srv_cache *c, const srv_session *s, uint64_t constant_bytes) {
    if (!c) return false;
    if (!c->save_max_bytes || constant_bytes <= c->save_max_bytes) return true;
    c->n.saves_over_limit++;
    srv_log_client(SRV_LOG_DEBUG,
                   "client %llu: cache files not saved: %llu bytes of constants, over "
                   "--cache-save-max-bytes %llu (a load would cost more than a compile)",
                   (unsigned long long)s->serial, (unsigned long long)constant_bytes,
                   (unsigned long long)c->save_max_bytes);
    return false;
}

void srv_cache_sight(const eng_model_desc *m, srv_cache_sighting *out) {
    out->size = store_ser_size(m);
    out->signed_ = out->size >= SRV_CACHE_SIGHTING_BYTES;
    if (out->signed_) srv_sighting_of(m, out->sig);
}

/* srv_cache_wants_sighted() for a model measured on the loop (size: store_ser_size(m)): its
 * signature is taken only when the content cache would take a model this large. */
static bool wants(srv_cache *c, const srv_session *s, const eng_model_desc *m, uint64_t size,
                  bool token) {
    if (!c) return false;
    srv_cache_sighting g = {.size = size};
    if (!token && !(c->max_bytes && g.size > 0 && g.size <= c->max_bytes)) return false;
    g.signed_ = g.size >= SRV_CACHE_SIGHTING_BYTES;
    if (g.signed_) srv_sighting_of(m, g.sig);
    return srv_cache_wants_sighted(c, s, &g, token);
}

bool srv_cache_wants_sighted(srv_cache *c, const srv_session *s, const srv_cache_sighting *g,
                             bool token) {
    if (!c) return false;
    uint64_t size = g->size;
    if (!token && !(c->max_bytes && size > 0 && size <= c->max_bytes)) return false;
    /* A large model is worth copying and hashing once it comes again: its first sighting
     * is prepared in place. A save records the sighting too, for a plain prepare later. */
    if (g->signed_ && !srv_sightings_seen(&c->sightings, g->sig) && !token) {
        c->n.first_sightings++;
        return false;
    }
    /* The copy is the app's to pay for: past its quota the model stays in client memory. */
    char why[SCHEMA_ERR_LEN];
    if (srv_quota_app_check(&s->quota, SRV_QUOTA_CACHE_BYTES, size, why, sizeof why) != SCHEMA_OK) {
        c->n.quota_skipped++;
        srv_log_debug("client %llu: model prepared in place, uncached: %s",
                      (unsigned long long)s->serial, why);
        return false;
    }
    /* Copying and hashing run on the loop: no app may keep it at that (rate.h). */
    if (!srv_rate_take(s->uid, SRV_RATE_CACHE_COPY, (double)size, srv_now_ns())) {
        c->n.rate_skipped++;
        srv_log_debug("client %llu: model prepared in place, uncached: uid %u over its rate of "
                      "content-cache copies",
                      (unsigned long long)s->serial, (unsigned)s->uid);
        return false;
    }
    return true;
}

srv_prepare_route srv_cache_route(srv_cache *c, const srv_session *s, const Nnd__Model *wire,
                                  const eng_model_desc *m, const uint8_t *token) {
    srv_prepare_route r = {.token = token, .size = store_ser_size(m)};
    if (srv_model_uses_extensions(wire) || !srv_cache_devices_ok(m)) {
        r.token = NULL; /* nothing cached, no client cache files */
        return r;
    }
    if (token && !srv_cache_save_pays(c, s, proto_wire_constant_bytes(wire))) {
        r.token = NULL;
        r.save_skipped = true;
    }
    r.cached = wants(c, s, m, r.size, r.token != NULL);
    return r;
}
