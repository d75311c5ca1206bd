/* SPDX-License-Identifier: Apache-2.0 */
/* call: one request being answered by its handler (dispatch.c, prepare.c): the request,
 * its session, the reply being built, and the ways to answer it.
 *
 * Contract:
 * - srv_call_reply() sends c->reply as the handler set it, after closing the request's fds
 *   the handler did not keep: once answered, the daemon holds nothing of the request but
 *   what it was asked to keep. A failure is logged at debug level.
 *   srv_call_reply_fds() does the same with fds (borrowed: the caller closes them).
 * - srv_call_fail() answers status st (reply.h maps it) with a formatted message and no
 *   result.
 * - srv_call_room_for() tells whether the session may hold one more object of kind
 *   (session.h, quota.h); when not, it has answered.
 */
#ifndef SRV_CALLS_CALL_H
#define SRV_CALLS_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/base/daemon.h"
#include "engine/engine.h"
#include "proto/frame.h"
#include "nnd.pb-c.h"
#include "daemon/clients/session.h"

typedef struct srv_call {
    srv_daemon *d;
    srv_session *s;
    proto_frame_in *in;
    const Nnd__Request *req;
    const char *name; /* the call's message name, e.g. "PrepareModel" */
    Nnd__Reply reply;
    uint64_t t0;              /* CLOCK_MONOTONIC when dispatch began */
    char err[SCHEMA_ERR_LEN]; /* filled by the engine, pools and convert */
    char msg[SCHEMA_ERR_LEN + 64];
} srv_call;

void srv_call_reply(srv_call *c);
/* Answers a call that returns nothing: DONE when st is SCHEMA_OK, else st with c->err. */
void srv_call_done(srv_call *c, schema_status st);
void srv_call_reply_fds(srv_call *c, const int *fds, size_t nfds);
void srv_call_fail(srv_call *c, schema_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool srv_call_room_for(srv_call *c, srv_obj_kind kind);

#endif
