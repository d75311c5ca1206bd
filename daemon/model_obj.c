/* model_obj.c: the prepared model a session holds. See model_obj.h. */
#include "model_obj.h"

#include <stdlib.h>

/* Frees what keeps the prepared model alive, and o. */
void nnd_model_obj_destroy(void *p) {
    nnd_model_obj *o = p;
    if (o->ref)
        nnd_cache_unref(o->ref, o->uid);
    else
        nnd_prepared_free(o->prepared); /* releases the constant pools it owns */
    free(o);
}

/* The session's free function. Queued or running executions hold references on o->sm,
 * whose last one destroys o. */
void nnd_model_obj_free(void *p) {
    nnd_model_obj *o = p;
    if (o->sm)
        nnd_sched_model_unref(o->sm);
    else
        nnd_model_obj_destroy(o);
}
