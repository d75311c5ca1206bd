/* SPDX-License-Identifier: Apache-2.0 */
/* partitions.c: the driver partitions each device holds now. See partitions.h. */
#include "daemon/admin/partitions.h"

#include <string.h>

#include "daemon/base/bus.h"
#include "daemon/calls/model_obj.h"
#include "daemon/clients/session.h"
#include "daemon/net/server.h"
#include "engine/backend.h"
#include "engine/engine.h"

typedef struct listing {
    cJSON *devices;
    const srv_session *s;
    uint64_t handle;
} listing;

/* The held_partitions array of the device entry named name; NULL when none. */
static cJSON *list_of(cJSON *devices, const char *name) {
    cJSON *d;
    cJSON_ArrayForEach(d, devices) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "name");
        if (cJSON_IsString(n) && name && !strcmp(n->valuestring, name))
            return cJSON_GetObjectItemCaseSensitive(d, "held_partitions");
    }
    return NULL;
}

static void add_partition(const eng_partition_view *v, void *ctx) {
    const listing *l = ctx;
    cJSON *list = list_of(l->devices, v->backend->name);
    cJSON *e = list ? cJSON_CreateObject() : NULL;
    if (!e) return;
    srv_json_add_client(e, l->s->serial, l->s->pid, l->s->uid);
    cJSON_AddStringToObject(e, "app", l->s->name);
    srv_json_add_handle(e, "compilation", l->handle);
    cJSON_AddNumberToObject(e, "first_operation", v->first_op);
    cJSON_AddNumberToObject(e, "operations", v->operations);
    srv_json_add_u64(e, "held_bytes", v->held_bytes);
    cJSON_AddItemToArray(list, e);
}

static void add_session(srv_session *s, void *ctx) {
    listing *l = ctx;
    l->s = s;
    for (size_t i = 0; i < s->cap; i++) {
        const srv_handle_slot *slot = &s->slots[i];
        if (!slot->handle || slot->kind != SRV_OBJ_PREPARED) continue;
        const srv_model_obj *o = slot->obj;
        if (!o || !o->prepared) continue;
        l->handle = slot->handle;
        eng_prepared_each_partition(o->prepared, add_partition, l);
    }
}

void srv_admin_partitions(srv_daemon *d, cJSON *devices) {
    cJSON *dev;
    cJSON_ArrayForEach(dev, devices)
        cJSON_AddItemToObject(dev, "held_partitions", cJSON_CreateArray());
    listing l = {.devices = devices};
    srv_server_foreach(d->server, add_session, &l);
}
