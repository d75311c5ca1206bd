/* SPDX-License-Identifier: Apache-2.0 */
/* fenced: ExecuteFenced and GetFencedExecutionInfo: executions that wait for sync fences
 * on the loop and signal their own when they end (execution.h runs them).
 *
 * Contract:
 * - ExecuteFenced: the reply comes at once with an execution handle (a session object of
 *   kind SRV_OBJ_EXECUTION) and an eventfd. The job waits in the loop for every fence in
 *   wait_for_fds to become readable (an eventfd with a non-zero count, or a signalled
 *   sync_file; a sync_file signalled with an error fails the execution), then is admitted
 *   with deadline min(deadline_ns, fences' time + timeout_after_fence_ns), at its
 *   compilation's priority. A fence index missing or named twice, or an fd that cannot be
 *   waited on, is INVALID_ARGUMENT; a deadline already past is MISSED_DEADLINE_PERSISTENT.
 * - The eventfd is written once the execution ended, whatever its outcome, and stays
 *   readable; GetFencedExecutionInfo then answers its status and timings, or, asked
 *   earlier, answers when it ends. Releasing the handle lets the execution finish; those
 *   still waiting for its info are answered GENERAL_FAILURE.
 * - Cancel, the session closing and the daemon stopping reach a fenced execution as any
 *   other (execution.h).
 */
#ifndef SRV_CALLS_FENCED_H
#define SRV_CALLS_FENCED_H

#include "daemon/base/daemon.h"
#include "proto/frame.h"
#include "sched/scheduler.h"
#include "daemon/clients/session.h"

/* model is the request's prepared model, found in s by the caller. */
void srv_execute_fenced(srv_daemon *d, srv_session *s, proto_frame_in *in, const Nnd__Request *req,
                        qos_sched_model *model);
void srv_fenced_info(srv_daemon *d, srv_session *s, const Nnd__Request *req);

#endif
