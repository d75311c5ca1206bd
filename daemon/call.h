/* call: one request being answered by its handler (dispatch.c, prepare.c): the request,
 * its session, the reply being built, and the ways to answer it.
 *
 * Contract:
 * - nnd_call_reply() sends c->reply as the handler set it, after closing the request's fds
 *   the handler did not keep: once answered, the daemon holds nothing of the request but
 *   what it was asked to keep. A failure is logged at debug level.
 *   nnd_call_reply_fds() does the same with fds (borrowed: the caller closes them).
 * - nnd_call_fail() answers status st (reply.h maps it) with a formatted message and no
 *   result.
 * - nnd_call_room_for() tells whether the session may hold one more object of kind
 *   (session.h, quota.h); when not, it has answered.
 */
#ifndef NND_CALL_H
#define NND_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon.h"
#include "engine.h"
#include "frame.h"
#include "nnd.pb-c.h"
#include "session.h"

typedef struct nnd_call {
    nnd_daemon *d;
    nnd_session *s;
    nnd_frame_in *in;
    const Nnd__Request *req;
    const char *name; /* the call's message name, e.g. "PrepareModel" */
    Nnd__Reply reply;
    uint64_t t0;           /* CLOCK_MONOTONIC when dispatch began */
    char err[NND_ERR_LEN]; /* filled by the engine, pools and convert */
    char msg[NND_ERR_LEN + 64];
} nnd_call;

void nnd_call_reply(nnd_call *c);
void nnd_call_reply_fds(nnd_call *c, const int *fds, size_t nfds);
void nnd_call_fail(nnd_call *c, nnd_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
bool nnd_call_room_for(nnd_call *c, nnd_obj_kind kind);

#endif
