/* SPDX-License-Identifier: Apache-2.0 */
/* reply: what every answer of the daemon shares: engine statuses on the wire and answers
 * that carry only a status.
 *
 * Contract:
 * - srv_wire_status(): engine statuses go out numerically equal to ErrorStatus, except
 *   SCHEMA_UNSUPPORTED, which clients see as INVALID_ARGUMENT; a status out of range is
 *   GENERAL_FAILURE. srv_wire_status_name() names a wire status ("INVALID_ARGUMENT"), "?"
 *   when the schema has no such value; srv_status_wire_name() names an engine status by its
 *   wire status.
 * - srv_reply_status() sends a Reply carrying only id, status and message.
 *   srv_reply_error() does the same after a debug log line
 *   "client N: <call> id I: <STATUS>: <message>".
 * - Every answer is preceded by proto_frame_close_untaken() (proto/frame.h): once answered,
 *   the daemon holds nothing of the request but what it was asked to keep.
 */
#ifndef SRV_WIRE_REPLY_H
#define SRV_WIRE_REPLY_H

#include <stdint.h>

#include "engine/engine.h"
#include "proto/frame.h"
#include "nnd.pb-c.h"
#include "daemon/clients/session.h"

Nnd__ErrorStatus srv_wire_status(schema_status st);
const char *srv_wire_status_name(Nnd__ErrorStatus st);
const char *srv_status_wire_name(schema_status st);

void srv_reply_status(srv_session *s, uint64_t id, schema_status st, const char *message);
void srv_reply_error(srv_session *s, uint64_t id, const char *call, schema_status st,
                     const char *message);

#endif
