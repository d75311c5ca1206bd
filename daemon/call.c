/* call.c: answering the request a handler has. See call.h. */
#include "call.h"

#include <stdarg.h>
#include <stdio.h>

#include "log.h"
#include "reply.h"

void nnd_call_reply(nnd_call *c) {
    nnd_call_reply_fds(c, NULL, 0);
}

void nnd_call_reply_fds(nnd_call *c, const int *fds, size_t nfds) {
    nnd_close_unclaimed(c->in); /* the fds the call did not keep go first */
    if (c->reply.status != NND__ERROR_STATUS__NONE)
        nnd_log_debug("client %llu: %s id %llu: %s: %s", (unsigned long long)c->s->serial, c->name,
                      (unsigned long long)c->req->id, nnd_wire_status_name(c->reply.status),
                      c->reply.message);
    c->s->send(c->s->send_ctx, &c->reply.base, fds, nfds);
}

void nnd_call_fail(nnd_call *c, nnd_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    c->reply.status = nnd_wire_status(st);
    c->reply.message = c->msg;
    c->reply.result_case = NND__REPLY__RESULT__NOT_SET;
    nnd_call_reply(c);
}

bool nnd_call_room_for(nnd_call *c, nnd_obj_kind kind) {
    nnd_status st = nnd_session_check_quota(c->s, kind, c->err, sizeof c->err);
    if (st != NND_OK) nnd_call_fail(c, st, "%s", c->err);
    return st == NND_OK;
}
