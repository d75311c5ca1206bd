/* SPDX-License-Identifier: Apache-2.0 */
/* reply.c: statuses on the wire and status-only answers. See reply.h. */
#include "daemon/wire/reply.h"

#include "daemon/base/log.h"

Nnd__ErrorStatus srv_wire_status(schema_status st) {
    if (st == SCHEMA_UNSUPPORTED) return NND__ERROR_STATUS__INVALID_ARGUMENT;
    if ((int)st < 0 || (int)st > SCHEMA_RESOURCE_EXHAUSTED_PERSISTENT)
        return NND__ERROR_STATUS__GENERAL_FAILURE;
    return (Nnd__ErrorStatus)st;
}

const char *srv_wire_status_name(Nnd__ErrorStatus st) {
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&nnd__error_status__descriptor, (int)st);
    return v ? v->name : "?";
}

const char *srv_status_wire_name(schema_status st) {
    return srv_wire_status_name(srv_wire_status(st));
}

void srv_reply_status(srv_session *s, uint64_t id, schema_status st, const char *message) {
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = id;
    r.status = srv_wire_status(st);
    r.message = (char *)message;
    s->send(s->send_ctx, &r.base, NULL, 0);
}

void srv_reply_error(srv_session *s, uint64_t id, const char *call, schema_status st,
                     const char *message) {
    srv_log_debug("client %llu: %s id %llu: %s: %s", (unsigned long long)s->serial, call,
                  (unsigned long long)id, srv_status_wire_name(st), message);
    srv_reply_status(s, id, st, message);
}
