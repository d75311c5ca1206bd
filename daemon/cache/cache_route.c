/* SPDX-License-Identifier: Apache-2.0 */
/* cache_route.c: PrepareModel's route, decided in one place (srv_cache_route, cache.h). */
#include "daemon/cache/cache.h"
#include "daemon/cache/cache_devices.h"
#include "daemon/wire/convert.h"
#include "proto/model_bytes.h"

srv_prepare_route srv_cache_route(srv_cache *c, const srv_session *s, const Nnd__Model *wire,
                                  const eng_model_desc *m, const uint8_t *token) {
    srv_prepare_route r = {.token = token};
    if (srv_model_uses_extensions(wire) || !srv_cache_devices_ok(m)) {
        r.token = NULL; /* nothing cached, no client cache files */
        return r;
    }
    if (token && !srv_cache_save_pays(c, s, proto_wire_constant_bytes(wire))) {
        r.token = NULL;
        r.save_skipped = true;
    }
    r.cached = srv_cache_wants(c, s, m, r.token != NULL);
    return r;
}
