/* SPDX-License-Identifier: Apache-2.0 */
/* cache_route: how PrepareModel prepares a model, decided in one place by the cache layer.
 *
 * Contract: srv_cache_route() answers for model m (its wire form and its description, the
 * device set applied) asked by session s with the client's cache token (NULL: none):
 * - cached: through the content cache (srv_cache_prepare() or its steps, cache.h): the
 *   model copied and hashed, its constants read from the daemon's copy. Never for a model
 *   using extensions (its engine codes name plugins loaded now, which neither a cache file
 *   nor a reload keeps) nor for one offered to a driver without cache blobs (its prepared
 *   state lives in the driver only, cache_devices.h); else as srv_cache_wants() says.
 * - in place otherwise: its constants used where the client put them, uncopied.
 * - token: the token to save client cache files under, or NULL: none asked, or the save
 *   would cost more than a compile (srv_cache_save_pays(); save_skipped set, the answer
 *   says so). c may be NULL (caching off). */
#ifndef NND_CACHE_ROUTE_H
#define NND_CACHE_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/clients/session.h"
#include "engine/engine.h"
#include "nnd.pb-c.h"

typedef struct srv_cache srv_cache;

typedef struct srv_prepare_route {
    bool cached;
    const uint8_t *token;
    bool save_skipped;
} srv_prepare_route;

srv_prepare_route srv_cache_route(srv_cache *c, const srv_session *s, const Nnd__Model *wire,
                                  const eng_model_desc *m, const uint8_t *token);

#endif
