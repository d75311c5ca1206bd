/* SPDX-License-Identifier: Apache-2.0 */
/* model_obj: the prepared model as a session holds it.
 *
 * Contract:
 * - An srv_model_obj holds a prepared model, either its own (prepared in place) or a
 *   reference on a cache entry (cache.h), and its scheduler view (sched/scheduler.h, made with the
 * daemon's scheduler d->sched).
 * - The session stores it as SRV_OBJ_PREPARED and frees it with srv_model_obj_free():
 *   with a scheduler view, that drops the session's reference on the view, and the last
 *   reference (queued or running executions hold theirs) frees the model through
 *   srv_model_obj_destroy(); without one, the model is destroyed at once.
 * - srv_model_obj_view(): makes o's scheduler view (o->sm) unless it has one, at the
 *   wire priority given (UNSPECIFIED: the default): its cost seed and estimate, each step
 *   on its device's queue; a model beyond the device is refused (qos_sched_model_new).
 *   Every view is made here, with the model object: at PrepareModel with its priority, or
 *   on first use for a model that has none.
 * - srv_model_obj_sched(): the scheduler's view of the prepared model `handle` of session
 *   s, made on first use; INVALID_ARGUMENT naming `whose` (a burst's handle, for the
 *   message) once the model has been released. Loop thread only.
 */
#ifndef SRV_CALLS_MODEL_OBJ_H
#define SRV_CALLS_MODEL_OBJ_H

#include <stdint.h>

#include "daemon/cache/cache.h"
#include "daemon/base/daemon.h"
#include "engine/engine.h"
#include "sched/scheduler.h"
#include "daemon/clients/session.h"

typedef struct srv_model_obj {
    eng_prepared *prepared;  /* borrowed from ref when ref is set */
    srv_cache_ref *ref;      /* a model from the cache, maybe shared with other sessions */
    qos_sched_model *sm;     /* the scheduler's view: estimates, executions (execution.h) */
    uint32_t uid;            /* whose reference ref is (cache_users.h) */
    bool cache_save_skipped; /* PrepareModel's answer: cache files given, not saved (cache.h) */
} srv_model_obj;

void srv_model_obj_free(void *o);
schema_status srv_model_obj_view(srv_daemon *d, srv_model_obj *o, int wire_priority, char *err,
                                 size_t errlen);
schema_status srv_model_obj_sched(srv_daemon *d, srv_session *s, uint64_t handle, uint64_t whose,
                                  qos_sched_model **out, char *err, size_t errlen);

#endif
