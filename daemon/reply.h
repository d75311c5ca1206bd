/* reply: what every answer of the daemon shares: engine statuses on the wire, answers that
 * carry only a status, and the request's fds let go before answering.
 *
 * Contract:
 * - nnd_wire_status(): engine statuses go out numerically equal to ErrorStatus, except
 *   NND_UNSUPPORTED, which clients see as INVALID_ARGUMENT; a status out of range is
 *   GENERAL_FAILURE. nnd_wire_status_name() names a wire status ("INVALID_ARGUMENT"), "?"
 *   when the schema has no such value; nnd_status_wire_name() names an engine status by its
 *   wire status.
 * - nnd_reply_status() sends a Reply carrying only id, status and message.
 *   nnd_reply_error() does the same after a debug log line
 *   "client N: <call> id I: <STATUS>: <message>".
 * - nnd_close_unclaimed() closes every fd of the request that no handler took (in may be
 *   NULL). Every answer is preceded by it: once answered, the daemon holds nothing of the
 *   request but what it was asked to keep.
 */
#ifndef NND_REPLY_H
#define NND_REPLY_H

#include <stdint.h>

#include "engine.h"
#include "frame.h"
#include "nnd.pb-c.h"
#include "session.h"

Nnd__ErrorStatus nnd_wire_status(nnd_status st);
const char *nnd_wire_status_name(Nnd__ErrorStatus st);
const char *nnd_status_wire_name(nnd_status st);

void nnd_reply_status(nnd_session *s, uint64_t id, nnd_status st, const char *message);
void nnd_reply_error(nnd_session *s, uint64_t id, const char *call, nnd_status st,
                     const char *message);

void nnd_close_unclaimed(nnd_frame_in *in);

#endif
