/* model_obj.c: the prepared model a session holds. See model_obj.h. */
#include "model_obj.h"

#include <stdlib.h>

#include "execution.h"

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

nnd_status nnd_model_obj_sched(nnd_daemon *d, nnd_session *s, uint64_t handle, uint64_t whose,
                               nnd_sched_model **out, char *err, size_t errlen) {
    nnd_model_obj *o = nnd_session_find(s, handle, NND_OBJ_PREPARED);
    if (!o)
        return nnd_failf(err, errlen, NND_INVALID_ARGUMENT,
                         "burst 0x%016llx: its prepared model 0x%016llx has been released",
                         (unsigned long long)whose, (unsigned long long)handle);
    if (!o->sm) {
        nnd_status st = nnd_execution_model(d, o->prepared, NND__PRIORITY__PRIORITY_UNSPECIFIED,
                                            nnd_model_obj_destroy, o, &o->sm, err, errlen);
        if (st != NND_OK) return st;
    }
    *out = o->sm;
    return NND_OK;
}
