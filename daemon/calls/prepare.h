/* SPDX-License-Identifier: Apache-2.0 */
/* prepare: the calls that prepare models (GetSupportedOperations, PrepareModel,
 * PrepareModelFromCache), and the prepared model as a session holds it.
 *
 * Contract:
 * - A model's pools are mapped read-only (pool.h) and the model converted (convert.h;
 *   vendor extensions only for clients allowed them, extensions.h). A model pool that
 *   shrinks while it is read fails the call with GENERAL_FAILURE.
 * - PrepareModel and PrepareModelFromCache first check the priority (INVALID_ARGUMENT),
 *   the quotas for one more prepared model and the deadline (MISSED_DEADLINE_PERSISTENT).
 *   PrepareModel goes the route the cache layer gives (srv_cache_route, cache.h):
 *   through the daemon's cache (always with a client token, otherwise when the content
 *   cache is on and the model fits; never a model using extensions) or in place; cache
 *   arguments in a form the daemon does not take prepare without caching, and so does a
 *   token for a model over the save limit, answered with cache_save_skipped.
 * PrepareModelFromCache needs a 32-byte token and one model and one data cache file
 * (INVALID_ARGUMENT otherwise), and caching on (GENERAL_FAILURE otherwise).
 * - A prepared model is stored in the session (SRV_OBJ_PREPARED) as an srv_model_obj
 *   (model_obj.h) with its scheduler view (srv_model_obj_view), made when prepared: one beyond the
 *   device's limits is refused.
 */
#ifndef SRV_CALLS_PREPARE_H
#define SRV_CALLS_PREPARE_H

#include "daemon/calls/call.h"

void srv_on_get_supported_operations(srv_call *c);
void srv_on_prepare_model(srv_call *c);
void srv_on_prepare_model_from_cache(srv_call *c);

#endif
