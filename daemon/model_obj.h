/* model_obj: the prepared model as a session holds it.
 *
 * Contract:
 * - An nnd_model_obj holds a prepared model, either its own (prepared in place) or a
 *   reference on a cache entry (cache.h), and its scheduler view (execution.h).
 * - The session stores it as NND_OBJ_PREPARED and frees it with nnd_model_obj_free():
 *   with a scheduler view, that drops the session's reference on the view, and the last
 *   reference (queued or running executions hold theirs) frees the model through
 *   nnd_model_obj_destroy(); without one, the model is destroyed at once.
 */
#ifndef NND_MODEL_OBJ_H
#define NND_MODEL_OBJ_H

#include <stdint.h>

#include "cache.h"
#include "engine.h"
#include "scheduler.h"

typedef struct nnd_model_obj {
    nnd_prepared *prepared; /* borrowed from ref when ref is set */
    nnd_cache_ref *ref;     /* a model from the cache, maybe shared with other sessions */
    nnd_sched_model *sm;    /* the scheduler's view: estimates, executions (execution.h) */
    uint32_t uid;           /* whose reference ref is (cache_users.h) */
} nnd_model_obj;

void nnd_model_obj_free(void *o);
void nnd_model_obj_destroy(void *o);

#endif
