/* SPDX-License-Identifier: Apache-2.0 */
/* off_loop: a call's work on libuv's worker threads, answered later from the loop.
 *
 * Contract: srv_off_loop_run() holds the call's session (session.h: its connections read
 * nothing more until the answer, so its requests keep their order), runs work(ctx) on a
 * worker thread, then on the loop answer(c, ctx) with a call standing for the original
 * one (same request id, name and start time; no request fds). A session closed meanwhile
 * gets no answer: drop(ctx) instead. Either frees ctx. When the work cannot be queued,
 * answer() runs at once with *queued false. Returns nothing: every path answers or drops. */
#ifndef SRV_CALLS_OFF_LOOP_H
#define SRV_CALLS_OFF_LOOP_H

#include <stdbool.h>

#include "daemon/calls/call.h"

typedef struct srv_off_loop_fns {
    void (*work)(void *ctx);                             /* on a worker thread */
    void (*answer)(srv_call *c, void *ctx, bool queued); /* on the loop */
    void (*drop)(void *ctx);                             /* on the loop, session closed */
} srv_off_loop_fns;

void srv_off_loop_run(srv_call *c, const srv_off_loop_fns *fns, void *ctx);

/* Frees an unpacked (malloc'd) message on a worker thread: a spilled request of a large
 * model is hundreds of thousands of blocks, tens of milliseconds to free, that the loop
 * would owe every other client. Freed at once when no work can be queued; NULL is a no-op. */
void srv_off_loop_free_msg(uv_loop_t *loop, ProtobufCMessage *msg);

#endif
