/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_exec: prepared partitions on a device and their execution.
 *
 * Contract:
 * - ocl_prepare() turns a plan into device state: constant buffers uploaded once (the
 *   re-laid weights among them), and one execution context made at once (each context
 *   holds the partition's temporaries, input and output buffers and its kernels with
 *   their arguments set, temporaries whose lives do not overlap in one buffer, recorded into a
 * command buffer where the device has cl_khr_command_buffer); up to OCL_MAX_IN_FLIGHT contexts are
 * made as concurrent executions need them. It takes the plan's contents.
 * - ocl_start() checks an execution's arguments (a wrong count, a size or shape that is not
 *   the partition's: INVALID_ARGUMENT or OUTPUT_INSUFFICIENT_SIZE at once, complete() not
 *   called), then queues it: the device's scheduler thread serves queued executions
 *   highest priority first (FIFO within one), at most OCL_MAX_IN_FLIGHT on the device at
 *   once, each enqueued as input writes, the launches and output reads; the last read's
 *   event callback calls complete() exactly once. ocl_execute() does the same and waits.
 *   ocl_cancel() drops an execution not yet on the device (complete() with
 *   GENERAL_FAILURE); one already there runs to its end.
 * - Yielding: an execution whose priority is below the highest queued on the device in the
 *   last OCL_YIELD_WINDOW_NS yields to it. It goes to the device in OCL_YIELD_PIECES pieces
 *   of its launches (plain enqueues, no command buffer), back in the queue between two, and
 *   at most one yielding execution is on the device at once; so a HIGH execution arriving
 *   under a LOW flood waits for one piece of one LOW execution, not for whole ones.
 * - ocl_release() frees a prepared partition no execution uses. */
#ifndef OCL_EXEC_H
#define OCL_EXEC_H

#include "nnd/driver.h"
#include "ocl_device.h"
#include "ocl_plan.h"

#define OCL_MAX_IN_FLIGHT   2
#define OCL_YIELD_PIECES    8
#define OCL_YIELD_WINDOW_NS 2000000000ull

typedef struct ocl_ctx ocl_ctx;

typedef struct ocl_io {
    uint32_t buf; /* the plan's buffer, or UINT32_MAX when no launch touches it */
    size_t bytes;
    uint32_t rank;
    uint32_t dims[NND_DRIVER_MAX_RANK];
} ocl_io;

typedef struct ocl_prepared {
    ocl_device *dev;
    ocl_plan plan;
    cl_mem *consts; /* per plan buffer: CONST ones' device copies */
    uint32_t n_in, n_out;
    ocl_io *in, *out;
    /* Each context's device buffers: one per slot; temporaries whose uses do not overlap
     * share one. slot_of: per plan buffer (UINT32_MAX: a constant, or unused). */
    uint32_t *slot_of;
    size_t *slot_bytes;
    uint32_t n_slots;
    ocl_ctx *free_ctx; /* under the scheduler's lock */
    uint32_t n_ctx;
    uint64_t held_bytes, device_bytes;
} ocl_prepared;

int ocl_prepare(ocl_device *d, const nnd_driver_model *m, ocl_plan *plan, ocl_prepared **out,
                char *err, size_t errlen);
void ocl_release(ocl_prepared *p);
/* A context for p (made now); NULL with a message. */
ocl_ctx *ocl_ctx_make(ocl_prepared *p, char *err, size_t errlen);
/* Enqueues the context's launches on q (after the input writes, before the reads). */
cl_int ocl_ctx_enqueue(ocl_ctx *c, cl_command_queue q);
/* Launches [from, to) alone, each its own enqueue (a yielding execution's piece). */
cl_int ocl_ctx_enqueue_range(ocl_ctx *c, cl_command_queue q, uint32_t from, uint32_t to);
cl_mem ocl_ctx_mem(ocl_ctx *c, uint32_t buf);
void ocl_ctx_free(ocl_ctx *c);
/* The free list link of a context. */
ocl_ctx **ocl_ctx_next(ocl_ctx *c);

int ocl_sched_start(ocl_device *d);
void ocl_sched_stop(ocl_device *d);
int ocl_start(nnd_driver_execution *x);
int ocl_execute(nnd_driver_execution *x);
void ocl_cancel(nnd_driver_execution *x);

#endif
