/* SPDX-License-Identifier: Apache-2.0 */
/* execution: executions through the scheduler (sched/scheduler.h), from the request to its
 * answer: made (a place in the quota, then the request bound, bind.h), submitted, run by
 * the workers, answered back on the loop; Execute, BurstExecute and Cancel.
 *
 * Contract:
 * - srv_executions_start() measures the device's throughput (a few ms, sched/estimate.h), starts
 * the scheduler's workers and a wake-up handle (wakeup.h) through which they hand finished work
 * back to the loop, where replies are sent. srv_executions_stop() cancels everything (after the
 * server has closed every connection), joins the workers and closes the handle.
 * - Execute (and BurstExecute): the handler binds the request on the loop (bind.h), closes
 *   the request's other fds, submits, and returns; the reply goes out when the job is
 *   done. Admission refusals are answered at once with the HAL's code; Execute.priority
 *   UNSPECIFIED means the compilation's. The request's loop_timeout_ns bounds each WHILE
 *   loop (0: 2 s; at most 15 s); a loop past it ends the execution with
 *   MISSED_DEADLINE_TRANSIENT (engine.h).
 * - Cancel(request_id) stops the connection's execution that request started (queued,
 *   waiting on fences or running, at its next checkpoint): its reply is GENERAL_FAILURE
 *   "cancelled". Cancel answers done, or INVALID_ARGUMENT when nothing of that id is in
 *   flight (it may just have finished).
 * - Quota: every execution counts against quota.*.queued_executions (quota.h) of its
 *   session from the request (before its pools are mapped) until it ends, through
 *   fence waits, queue and run; over quota it is refused at once with
 *   RESOURCE_EXHAUSTED_TRANSIENT. Other ways of executing (bursts) take their place with
 *   srv_quota_take(s, SRV_QUOTA_QUEUED_EXECUTIONS, 1, ...) and give it back with
 *   srv_quota_add(s, SRV_QUOTA_QUEUED_EXECUTIONS, -1), or go through the same job.
 * - srv_executions_session_closed(), before the session is cleared: its queued and waiting
 *   work is cancelled, its running work stops at the next checkpoint; nothing is
 *   answered; its executions stop counting at once. Jobs hold references on their
 *   models (qos_sched_model), so a model the session frees lives until its last
 *   execution ends.
 * - Answered otherwise (ExecuteFenced, fenced.h): an execution made with
 *   srv_execution_make() is answered by no reply of its own; once held, it is in flight
 *   (Cancel, the session closing and stopping reach it) and ends exactly once through its
 *   end function, whether it ran, was refused, cancelled or failed while waiting. Before
 *   it is held, srv_execution_discard() lets it go unanswered.
 */
#ifndef SRV_CALLS_EXECUTION_H
#define SRV_CALLS_EXECUTION_H

#include <cjson/cJSON.h>

#include "daemon/base/daemon.h"
#include "proto/frame.h"
#include "sched/scheduler.h"
#include "daemon/clients/session.h"

typedef struct srv_executions srv_executions;
struct srv_burst_obj;

int srv_executions_start(srv_daemon *d, const qos_sched_config *cfg, char *err, size_t errlen);
void srv_executions_stop(srv_daemon *d);

/* The handlers; each answers req on s, now or later. model is the request's prepared
 * model, found in s by the caller. */
void srv_execute(srv_daemon *d, srv_session *s, proto_frame_in *in, const Nnd__Request *req,
                 qos_sched_model *model);
/* BurstExecute: as Execute (admission, deadline, timing, OUTPUT_INSUFFICIENT_SIZE, the
 * compilation's priority), its pools resolved through the burst's slots (burst.h). */
void srv_execute_burst(srv_daemon *d, srv_session *s, proto_frame_in *in, const Nnd__Request *req,
                       qos_sched_model *model, struct srv_burst_obj *b);
void srv_execution_cancel(srv_daemon *d, srv_session *s, const Nnd__Request *req);

void srv_executions_session_closed(srv_daemon *d, srv_session *s);

/* The Reply of execution id ended with st, as Execute answers it (ExecuteReply with shapes
 * and timing for NONE and OUTPUT_INSUFFICIENT_SIZE, status and message otherwise), handed
 * to out(ctx, reply) and gone when out returns. */
void srv_execution_reply(uint64_t id, schema_status st, const char *msg,
                         const eng_output_shape *shapes, uint32_t n_out, const Nnd__Timing *timing,
                         void (*out)(void *ctx, const Nnd__Reply *r), void *ctx);

/* The "scheduler" object of admin status. */
cJSON *srv_executions_status(srv_daemon *d);
/* Adds each device's queue to its object of `devices` (srv_devices_json(), in the table's
 * order): workers, running, queue_depth, run_segments (runs of part of an execution started
 * there) and arrived (executions that came to its queue from another device mid-run). */
void srv_executions_devices_status(srv_daemon *d, cJSON *devices);

/* ---- executions answered otherwise (fenced.h) ---- */

typedef struct srv_execution srv_execution;

/* How an execution ended, for its end function. */
typedef struct srv_execution_end {
    srv_session *s; /* NULL once the connection is gone: nobody to answer */
    uint64_t request_id;
    schema_status status;
    const char *msg;
    uint64_t end_ns;                /* when the run ended; 0 when it never ran */
    uint64_t run_ns;                /* time on a worker */
    const eng_output_shape *shapes; /* the outputs' shapes, n_out of them */
    uint32_t n_out;
    Nnd__Timing timing; /* as Execute reports it (measured or not) */
} srv_execution_end;
typedef void (*srv_execution_end_fn)(void *ctx, const srv_execution_end *end);

/* Makes the execution request id asks for (quota, then srv_bind(); b may be NULL), not
 * yet in flight. The caller closes in's other fds. */
schema_status srv_execution_make(srv_daemon *d, srv_session *s, proto_frame_in *in, uint64_t id,
                                 uint64_t model_handle, qos_sched_model *m, struct srv_burst_obj *b,
                                 const Nnd__ExecutionRequest *r, srv_execution **out, char *err,
                                 size_t errlen);
void srv_execution_discard(srv_execution *x);
/* Puts x in flight, not yet submitted, at priority prio, to end through end(ctx, ...). */
void srv_execution_hold(srv_execution *x, bool measure, qos_prio prio, srv_execution_end_fn end,
                        void *ctx);
/* The same for a BurstExecute (events mark it a burst's). */
void srv_execution_hold_burst(srv_execution *x, bool measure, qos_prio prio,
                              srv_execution_end_fn end, void *ctx);
/* When the request arrived (CLOCK_MONOTONIC ns). */
uint64_t srv_execution_arrival(const srv_execution *x);
/* x waits on something of the loop's (fences): cancelling it ends it at once. */
void srv_execution_wait(srv_execution *x);
/* How long each WHILE loop of x may run (the request's loop_timeout_ns; 0: the default). */
void srv_execution_loop_timeout(srv_execution *x, uint64_t loop_timeout_ns);
/* Submits x with deadline_ns (0: none); a refusal ends it at once. */
void srv_execution_submit(srv_execution *x, uint64_t deadline_ns);
/* Ends a waiting x without running it. */
void srv_execution_fail(srv_execution *x, schema_status st, const char *msg);
/* Counts a refusal made before any execution (admin status, "refused"). */
void srv_executions_note_refusal(srv_daemon *d, qos_refusal why);

#endif
