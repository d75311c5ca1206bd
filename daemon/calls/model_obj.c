/* SPDX-License-Identifier: Apache-2.0 */
/* model_obj.c: the prepared model a session holds. See model_obj.h. */
#include "daemon/calls/model_obj.h"

#include <stdlib.h>

#include "daemon/wire/convert.h"
#include "daemon/devices/devices.h"

/* Frees what keeps the prepared model alive, and o. */
static void srv_model_obj_destroy(void *p) {
    srv_model_obj *o = p;
    if (o->ref)
        srv_cache_unref(o->ref, o->uid);
    else
        eng_prepared_free(o->prepared); /* releases the constant pools it owns */
    free(o);
}

/* The session's free function. Queued or running executions hold references on o->sm,
 * whose last one destroys o. */
void srv_model_obj_free(void *p) {
    srv_model_obj *o = p;
    if (o->sm)
        qos_sched_model_unref(o->sm);
    else
        srv_model_obj_destroy(o);
}

schema_status srv_model_obj_view(srv_daemon *d, srv_model_obj *o, int wire_priority, char *err,
                                 size_t errlen) {
    if (o->sm) return SCHEMA_OK;
    int prio = srv_prio_from_wire(wire_priority, QOS_PRIO_MEDIUM);
    uint8_t *lanes = malloc(eng_prepared_num_operations(o->prepared) + 1);
    if (!lanes) return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory");
    schema_status st =
        qos_sched_model_new(d->sched, o->prepared, prio < 0 ? QOS_PRIO_MEDIUM : (qos_prio)prio,
                            srv_model_obj_destroy, o, &o->sm, err, errlen);
    if (st == SCHEMA_OK) {
        /* Each step queues on its device. Out of memory here leaves every step on nnd-cpu's
         * queue: results the same, devices less independent. */
        srv_device_step_lanes(o->prepared, lanes);
        (void)qos_sched_model_set_lanes(o->sm, lanes);
    }
    free(lanes);
    return st;
}

schema_status srv_model_obj_sched(srv_daemon *d, srv_session *s, uint64_t handle, uint64_t whose,
                                  qos_sched_model **out, char *err, size_t errlen) {
    srv_model_obj *o = srv_session_find(s, handle, SRV_OBJ_PREPARED);
    if (!o)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "burst 0x%016llx: its prepared model 0x%016llx has been released",
                            (unsigned long long)whose, (unsigned long long)handle);
    schema_status st = srv_model_obj_view(d, o, NND__PRIORITY__PRIORITY_UNSPECIFIED, err, errlen);
    if (st != SCHEMA_OK) return st;
    *out = o->sm;
    return SCHEMA_OK;
}
