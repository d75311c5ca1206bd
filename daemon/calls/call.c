/* SPDX-License-Identifier: Apache-2.0 */
/* call.c: answering the request a handler has. See call.h. */
#include "daemon/calls/call.h"

#include <stdarg.h>
#include <stdio.h>

#include "daemon/base/log.h"
#include "daemon/wire/reply.h"

void srv_call_reply(srv_call *c) {
    srv_call_reply_fds(c, NULL, 0);
}

void srv_call_done(srv_call *c, schema_status st) {
    if (st != SCHEMA_OK) {
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    Nnd__Empty done = NND__EMPTY__INIT;
    c->reply.result_case = NND__REPLY__RESULT_DONE;
    c->reply.done = &done;
    srv_call_reply(c);
}

void srv_call_reply_fds(srv_call *c, const int *fds, size_t nfds) {
    proto_frame_close_untaken(c->in); /* the fds the call did not keep go first */
    if (c->reply.status != NND__ERROR_STATUS__NONE)
        srv_log_debug("client %llu: %s id %llu: %s: %s", (unsigned long long)c->s->serial, c->name,
                      (unsigned long long)c->req->id, srv_wire_status_name(c->reply.status),
                      c->reply.message);
    c->s->send(c->s->send_ctx, &c->reply.base, fds, nfds);
}

void srv_call_fail(srv_call *c, schema_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    c->reply.status = srv_wire_status(st);
    c->reply.message = c->msg;
    c->reply.result_case = NND__REPLY__RESULT__NOT_SET;
    srv_call_reply(c);
}

bool srv_call_room_for(srv_call *c, srv_obj_kind kind) {
    schema_status st = srv_session_check_quota(c->s, kind, c->err, sizeof c->err);
    if (st != SCHEMA_OK) srv_call_fail(c, st, "%s", c->err);
    return st == SCHEMA_OK;
}
