/* execution: executions through the scheduler (sched/scheduler.h), from the request to its
 * answer: made (a place in the quota, then the request bound, bind.h), submitted, run by
 * the workers, answered back on the loop; Execute, BurstExecute and Cancel.
 *
 * Contract:
 * - nnd_executions_start() measures the device's throughput (a few ms, cost.h), starts the
 *   scheduler's workers and a uv_async_t through which they hand finished work back to
 *   the loop, where replies are sent. nnd_executions_stop() cancels everything (after the
 *   server has closed every connection), joins the workers and closes the handle.
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
 *   nnd_quota_take(s, NND_QUOTA_QUEUED_EXECUTIONS, 1, ...) and give it back with
 *   nnd_quota_add(s, NND_QUOTA_QUEUED_EXECUTIONS, -1), or go through the same job.
 * - nnd_executions_session_closed(), before the session is cleared: its queued and waiting
 *   work is cancelled, its running work stops at the next checkpoint; nothing is
 *   answered; its executions stop counting at once. Jobs hold references on their
 *   models (nnd_sched_model), so a model the session frees lives until its last
 *   execution ends.
 * - Answered otherwise (ExecuteFenced, fenced.h): an execution made with
 *   nnd_execution_make() is answered by no reply of its own; once held, it is in flight
 *   (Cancel, the session closing and stopping reach it) and ends exactly once through its
 *   end function, whether it ran, was refused, cancelled or failed while waiting. Before
 *   it is held, nnd_execution_discard() lets it go unanswered.
 */
#ifndef NND_EXECUTION_H
#define NND_EXECUTION_H

#include <cjson/cJSON.h>

#include "daemon.h"
#include "frame.h"
#include "scheduler.h"
#include "session.h"

typedef struct nnd_executions nnd_executions;
struct nnd_burst_obj;

int nnd_executions_start(nnd_daemon *d, const nnd_sched_config *cfg, char *err, size_t errlen);
void nnd_executions_stop(nnd_daemon *d);

/* Wraps a prepared model for the scheduler (see nnd_sched_model_new). */
nnd_status nnd_execution_model(nnd_daemon *d, const nnd_prepared *p, int wire_priority,
                               void (*release)(void *), void *ctx, nnd_sched_model **out, char *err,
                               size_t errlen);

/* The handlers; each answers req on s, now or later. model is the request's prepared
 * model, found in s by the caller. */
void nnd_execute(nnd_daemon *d, nnd_session *s, nnd_frame_in *in, const Nnd__Request *req,
                 nnd_sched_model *model);
/* BurstExecute: as Execute (admission, deadline, timing, OUTPUT_INSUFFICIENT_SIZE, the
 * compilation's priority), its pools resolved through the burst's slots (burst.h). */
void nnd_execute_burst(nnd_daemon *d, nnd_session *s, nnd_frame_in *in, const Nnd__Request *req,
                       nnd_sched_model *model, struct nnd_burst_obj *b);
void nnd_execution_cancel(nnd_daemon *d, nnd_session *s, const Nnd__Request *req);

void nnd_executions_session_closed(nnd_daemon *d, nnd_session *s);

/* The Reply of execution id ended with st, as Execute answers it (ExecuteReply with shapes
 * and timing for NONE and OUTPUT_INSUFFICIENT_SIZE, status and message otherwise), handed
 * to out(ctx, reply) and gone when out returns. */
void nnd_execution_reply(uint64_t id, nnd_status st, const char *msg,
                         const nnd_output_shape *shapes, uint32_t n_out, const Nnd__Timing *timing,
                         void (*out)(void *ctx, const Nnd__Reply *r), void *ctx);

/* The "scheduler" object of admin status. */
cJSON *nnd_executions_status(nnd_daemon *d);
/* Adds each device's queue to its object of `devices` (nnd_devices_json(), in the table's
 * order): workers, running, queue_depth, run_segments (runs of part of an execution started
 * there) and arrived (executions that came to its queue from another device mid-run). */
void nnd_executions_devices_status(nnd_daemon *d, cJSON *devices);

/* ---- executions answered otherwise (fenced.h) ---- */

typedef struct nnd_execution nnd_execution;

/* How an execution ended, for its end function. */
typedef struct nnd_execution_end {
    nnd_session *s; /* NULL once the connection is gone: nobody to answer */
    uint64_t request_id;
    nnd_status status;
    const char *msg;
    uint64_t end_ns;                /* when the run ended; 0 when it never ran */
    uint64_t run_ns;                /* time on a worker */
    const nnd_output_shape *shapes; /* the outputs' shapes, n_out of them */
    uint32_t n_out;
    Nnd__Timing timing; /* as Execute reports it (measured or not) */
} nnd_execution_end;
typedef void (*nnd_execution_end_fn)(void *ctx, const nnd_execution_end *end);

/* Makes the execution request id asks for (quota, then nnd_bind(); b may be NULL), not
 * yet in flight. The caller closes in's other fds. */
nnd_status nnd_execution_make(nnd_daemon *d, nnd_session *s, nnd_frame_in *in, uint64_t id,
                              uint64_t model_handle, nnd_sched_model *m, struct nnd_burst_obj *b,
                              const Nnd__ExecutionRequest *r, nnd_execution **out, char *err,
                              size_t errlen);
void nnd_execution_discard(nnd_execution *x);
/* Puts x in flight, not yet submitted, at priority prio, to end through end(ctx, ...). */
void nnd_execution_hold(nnd_execution *x, bool measure, nnd_prio prio, nnd_execution_end_fn end,
                        void *ctx);
/* The same for a BurstExecute (events mark it a burst's). */
void nnd_execution_hold_burst(nnd_execution *x, bool measure, nnd_prio prio,
                              nnd_execution_end_fn end, void *ctx);
/* When the request arrived (CLOCK_MONOTONIC ns). */
uint64_t nnd_execution_arrival(const nnd_execution *x);
/* x waits on something of the loop's (fences): cancelling it ends it at once. */
void nnd_execution_wait(nnd_execution *x);
/* How long each WHILE loop of x may run (the request's loop_timeout_ns; 0: the default). */
void nnd_execution_loop_timeout(nnd_execution *x, uint64_t loop_timeout_ns);
/* Submits x with deadline_ns (0: none); a refusal ends it at once. */
void nnd_execution_submit(nnd_execution *x, uint64_t deadline_ns);
/* Ends a waiting x without running it. */
void nnd_execution_fail(nnd_execution *x, nnd_status st, const char *msg);
/* Counts a refusal made before any execution (admin status, "refused"). */
void nnd_executions_note_refusal(nnd_daemon *d, nnd_refusal why);

#endif
