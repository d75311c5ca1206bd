/* SPDX-License-Identifier: Apache-2.0 */
/* dispatch: answers the calls of one Request, on the session it came from.
 *
 * Contract:
 * - One handler per call of Request.call; every reply echoes Request.id. A request
 *   with no call is INVALID_ARGUMENT. Every call of the schema has a handler; a call case
 *   the table lacks (a schema ahead of it) would answer GENERAL_FAILURE
 *   "<Call>: not implemented yet".
 * - Statuses go out as reply.h maps them.
 * - GetSupportedOperations, PrepareModel and PrepareModelFromCache are prepare.h's.
 * - Execute, BurstExecute and Cancel go to execution.h, ExecuteFenced and
 *   GetFencedExecutionInfo to fenced.h; executions are answered when the scheduler's
 *   workers are done.
 * - ConfigureBurst makes a burst (burst.h) for one of the session's prepared models;
 *   BurstExecute on a burst whose model was released since is INVALID_ARGUMENT;
 *   BurstForget answers done whether or not the slots were cached; Release frees a burst
 *   with its slots. Prepared models get the scheduler's view
 *   (estimate seeded by the cost model) when prepared (prepare.h); one beyond the
 *   device's limits is RESOURCE_EXHAUSTED_PERSISTENT.
 *   ConfigureBurst with channel = true also sets up the burst's shared-memory channel
 *   (burst_channel.h) and sends its memfd with the reply (channel = true); when it cannot,
 *   the burst works over the socket alone (channel = false).
 * - fds the handlers do not take stay in `in` for the caller to close.
 */
#ifndef SRV_CALLS_DISPATCH_H
#define SRV_CALLS_DISPATCH_H

#include <stdint.h>

#include "daemon/base/daemon.h"
#include "engine/engine.h"
#include "proto/frame.h"
#include "daemon/clients/session.h"

void srv_dispatch(srv_daemon *d, srv_session *s, proto_frame_in *in);

#endif
