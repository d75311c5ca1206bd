/* reply.c: statuses on the wire and status-only answers. See reply.h. */
#include "reply.h"

#include <unistd.h>

#include "log.h"

Nnd__ErrorStatus nnd_wire_status(nnd_status st) {
    if (st == NND_UNSUPPORTED) return NND__ERROR_STATUS__INVALID_ARGUMENT;
    if ((int)st < 0 || (int)st > NND_RESOURCE_EXHAUSTED_PERSISTENT)
        return NND__ERROR_STATUS__GENERAL_FAILURE;
    return (Nnd__ErrorStatus)st;
}

const char *nnd_wire_status_name(Nnd__ErrorStatus st) {
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&nnd__error_status__descriptor, (int)st);
    return v ? v->name : "?";
}

const char *nnd_status_wire_name(nnd_status st) {
    return nnd_wire_status_name(nnd_wire_status(st));
}

void nnd_reply_status(nnd_session *s, uint64_t id, nnd_status st, const char *message) {
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = id;
    r.status = nnd_wire_status(st);
    r.message = (char *)message;
    s->send(s->send_ctx, &r.base, NULL, 0);
}

void nnd_reply_error(nnd_session *s, uint64_t id, const char *call, nnd_status st,
                     const char *message) {
    nnd_log_debug("client %llu: %s id %llu: %s: %s", (unsigned long long)s->serial, call,
                  (unsigned long long)id, nnd_status_wire_name(st), message);
    nnd_reply_status(s, id, st, message);
}

void nnd_close_unclaimed(nnd_frame_in *in) {
    for (size_t i = 0; in && i < in->nfds; i++) {
        if (in->fds[i] >= 0) close(in->fds[i]);
        in->fds[i] = -1;
    }
}
