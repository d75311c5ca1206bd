/* dispatch: answers the calls of one Request, on the session it came from.
 *
 * Contract:
 * - One handler per call of Request.call; every reply echoes Request.id. A request
 *   with no call is INVALID_ARGUMENT; calls not built yet answer GENERAL_FAILURE
 *   "<Call>: not implemented yet".
 * - Engine statuses go out numerically equal to ErrorStatus, except NND_UNSUPPORTED,
 *   which clients see as INVALID_ARGUMENT.
 * - Executions run inline on the loop thread; the checkpoint stops them when the session
 *   is closing or the request's deadline has passed.
 * - fds the handlers do not take stay in `in` for the caller to close.
 */
#ifndef NND_DISPATCH_H
#define NND_DISPATCH_H

#include <stdint.h>

#include "daemon.h"
#include "engine.h"
#include "frame.h"
#include "session.h"

void nnd_dispatch(nnd_daemon *d, nnd_session *s, nnd_frame_in *in);
/* Sends a reply carrying only a status and message (for frames that never parsed). */
void nnd_reply_status(nnd_session *s, uint64_t id, nnd_status st, const char *message);
/* The wire ErrorStatus for an engine status. */
Nnd__ErrorStatus nnd_wire_status(nnd_status st);

#endif
