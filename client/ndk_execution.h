/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_execution: ANeuralNetworksExecution as its compute calls share it: the object, its
 * arguments and results (ndk_execution.c), and the steps of one computation that compute,
 * startCompute and burstCompute (ndk_compute.c) and the fenced startComputeWithDependencies
 * (ndk_fenced.c) have in common.
 *
 * Contract:
 * - An execution goes PREPARATION -> COMPUTATION -> COMPLETED; a reusable one
 *   (setReusable) goes from COMPLETED to COMPUTATION again as often as it is computed, with
 *   the arguments it was given. One computation at a time: a second one is BAD_STATE.
 * - ndk_execution_begin() starts a computation: BAD_STATE when the state does not allow
 *   one, BAD_DATA when an argument is missing (both leave the execution as it was), else
 *   the execution is in COMPUTATION and *j holds the request, pointer inputs staged. A
 *   reusable execution keeps its request and staging memfd from one computation to the
 *   next. Any failure after that goes through ndk_execution_end().
 * - ndk_execution_end() completes the computation with an NDK code and what the daemon
 *   reported (x: output shapes, NULL when it reported none; timings). An output shape
 *   that contradicts a dimension the output was declared with turns success into
 *   OP_FAILED, as the NNAPI runtime does. Pointer outputs are copied out, descriptor
 *   memories learn whether they hold a value, the staging memfd goes back. Returns the
 *   code the computation completed with.
 * - While a computation runs without its caller (a startCompute thread, a fenced event),
 *   ndk_execution_hold() marks the execution owned by it; ANeuralNetworksExecution_free()
 *   then leaves the freeing to ndk_execution_unhold(), which the owner calls last.
 */
#ifndef CLI_NDK_EXECUTION_H
#define CLI_NDK_EXECUTION_H

#include "client/ndk_request.h"
#include "client/ndk_shared.h"

enum { NDK_EXEC_PREPARATION, NDK_EXEC_COMPUTATION, NDK_EXEC_COMPLETED };

/* One computation's request and staging memfd (st.fd -1: no pointer argument). */
typedef struct ndk_job {
    ndk_staging st;
    ndk_request r;
} ndk_job;

struct ANeuralNetworksExecution {
    ANeuralNetworksCompilation *c;
    uint32_t n_in, n_out;
    ndk_arg *in, *out; /* ndk_request.h */
    bool measure;
    uint64_t timeout_ns;
    uint64_t loop_timeout_ns;
    bool reusable;
    bool padding;  /* lengths may exceed what the data needs */
    bool args_set; /* a setter succeeded: padding can no longer change */
    atomic_int state;
    int result;                            /* once COMPLETED */
    uint64_t time_device, time_driver;     /* the launched execution's timing */
    uint64_t fenced_device, fenced_driver; /* from its fences on (fenced only) */
    pthread_mutex_t lock;                  /* guards owned and freed */
    bool owned;                            /* a computation in flight owns it */
    bool freed;                            /* freed while owned: the owner frees it */
    /* A reusable execution keeps its job across computations and, from the second on,
     * computes through a daemon burst of its own, which keeps its memory mapped. */
    bool has_kept;
    ndk_job kept;
    nnd_burst *own_burst;
    bool own_burst_failed;     /* the daemon refused one: compute without */
    ndk_attributes attributes; /* addExtensionAttribute's, before the first computation */
};

/* Starts a computation (see above). */
NDK_HIDDEN int ndk_execution_begin(ANeuralNetworksExecution *e, ndk_job *j);
/* Completes it; fenced (may be NULL) is the timing from the fences on. */
NDK_HIDDEN int ndk_execution_end(ANeuralNetworksExecution *e, ndk_job *j, int rc,
                                 const Nnd__ExecuteReply *x, const Nnd__Timing *fenced);
/* The checks every compute call makes before it starts anything: BAD_STATE, BAD_DATA. */
NDK_HIDDEN int ndk_execution_ready(const ANeuralNetworksExecution *e);
NDK_HIDDEN void ndk_execution_hold(ANeuralNetworksExecution *e);
NDK_HIDDEN void ndk_execution_unhold(ANeuralNetworksExecution *e);
/* True for an execution of a compilation made for exactly one device. */
NDK_HIDDEN bool ndk_execution_single_device(const ANeuralNetworksExecution *e);
/* The absolute deadline of a computation starting now (0: none). */
NDK_HIDDEN uint64_t ndk_execution_deadline(const ANeuralNetworksExecution *e);
/* The NDK code of a libnnd execution call's return: as ndk_session_code(), but a reply
 * that did not come by the deadline is MISSED_DEADLINE_TRANSIENT, and INVALID_ARGUMENT (a
 * shape conflict found as the model runs) is OP_FAILED. */
NDK_HIDDEN int ndk_execution_code(const ANeuralNetworksExecution *e, int rc, uint64_t deadline);
/* ANeuralNetworksExecution_compute, through a daemon burst (nnd.h, "bursts"). */
NDK_HIDDEN int ndk_execution_compute_burst(ANeuralNetworksExecution *e, nnd_burst *b);

#endif
