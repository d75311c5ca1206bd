/* qos: executions through the scheduler (sched/scheduler.h): Execute, ExecuteFenced,
 * GetFencedExecutionInfo and Cancel, fences, and completions back on the loop.
 *
 * Contract:
 * - nnd_qos_start() measures the device's throughput (a few ms, cost.h), starts the
 *   scheduler's workers and a uv_async_t through which they hand finished work back to
 *   the loop, where replies are sent. nnd_qos_stop() cancels everything (after the
 *   server has closed every connection), joins the workers and closes the handle.
 * - Execute (and BurstExecute): the handler maps the pools and binds the request on the
 *   loop (pool.h, burst.h and buffer.h are loop-side), closes the request's other fds,
 *   submits, and returns; the reply goes out when the job is done. Admission refusals
 *   are answered at once with the HAL's code; Execute.priority UNSPECIFIED means the
 *   compilation's.
 * - ExecuteFenced: the reply comes at once with an execution handle (a session object
 *   of kind NND_OBJ_EXECUTION) and an eventfd. The job waits in the loop for every fence
 *   in wait_for_fds to become readable (an eventfd with a non-zero count, or a signalled
 *   sync_file; a sync_file signalled with an error fails the execution), then is
 *   admitted with deadline min(deadline_ns, fences' time + timeout_after_fence_ns). The
 *   eventfd is written once the execution ended, whatever its outcome, and stays
 *   readable; GetFencedExecutionInfo then answers its status and timings, or, asked
 *   earlier, answers when it ends. Releasing the handle lets the execution finish.
 * - Cancel(request_id) stops the connection's execution that request started (queued,
 *   waiting on fences or running, at its next checkpoint): its reply is GENERAL_FAILURE
 *   "cancelled". Cancel answers done, or INVALID_ARGUMENT when nothing of that id is in
 *   flight (it may just have finished).
 * - Quota: every execution counts against quota.*.queued_executions (quota.h) of its
 *   session from the request (before its pools are mapped) until it ends, through
 *   fence waits, queue and run; over quota it is refused at once with
 *   RESOURCE_EXHAUSTED_TRANSIENT. Other ways of executing (bursts) take their place with
 *   nnd_quota_take(s, NND_QUOTA_QUEUED_EXECUTIONS, 1, ...) and give it back with
 *   nnd_quota_add(s, NND_QUOTA_QUEUED_EXECUTIONS, -1), or go through the same job.
 * - nnd_qos_session_closed(), before the session is cleared: its queued and waiting
 *   work is cancelled, its running work stops at the next checkpoint; nothing is
 *   answered; its executions stop counting at once. Jobs hold references on their
 *   models (nnd_sched_model), so a model the session frees lives until its last
 *   execution ends.
 */
#ifndef NND_QOS_H
#define NND_QOS_H

#include <cjson/cJSON.h>

#include "daemon.h"
#include "frame.h"
#include "scheduler.h"
#include "session.h"

typedef struct nnd_qos nnd_qos;
struct nnd_burst;

int nnd_qos_start(nnd_daemon *d, const nnd_sched_config *cfg, char *err, size_t errlen);
void nnd_qos_stop(nnd_daemon *d);

/* Wraps a prepared model for the scheduler (see nnd_sched_model_new). */
nnd_status nnd_qos_model(nnd_daemon *d, const nnd_prepared *p, int wire_priority,
                         void (*release)(void *), void *ctx, nnd_sched_model **out, char *err,
                         size_t errlen);

/* The handlers; each answers req on s, now or later. model is the request's prepared
 * model, found in s by the caller. */
void nnd_qos_execute(nnd_daemon *d, nnd_session *s, nnd_frame_in *in, const Nnd__Request *req,
                     nnd_sched_model *model);
void nnd_qos_execute_fenced(nnd_daemon *d, nnd_session *s, nnd_frame_in *in,
                            const Nnd__Request *req, nnd_sched_model *model);
/* BurstExecute: as Execute (admission, deadline, timing, OUTPUT_INSUFFICIENT_SIZE, the
 * compilation's priority), its pools resolved through the burst's slots (burst.h). */
void nnd_qos_burst_execute(nnd_daemon *d, nnd_session *s, nnd_frame_in *in, const Nnd__Request *req,
                           nnd_sched_model *model, struct nnd_burst *b);
void nnd_qos_fenced_info(nnd_daemon *d, nnd_session *s, const Nnd__Request *req);
void nnd_qos_cancel(nnd_daemon *d, nnd_session *s, const Nnd__Request *req);

void nnd_qos_session_closed(nnd_daemon *d, nnd_session *s);

/* The "scheduler" object of admin status. */
cJSON *nnd_qos_status(nnd_daemon *d);

#endif
