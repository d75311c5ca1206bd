/* SPDX-License-Identifier: Apache-2.0 */
/* bind: an execution request's memory, resolved in one step: its pools mapped, its
 * arguments bound inside them, its driver buffers taken, ready inputs and outputs handed
 * back; then held for the execution and let go at its end.
 *
 * Contract:
 * - srv_bind() resolves every pool of r:
 *     registered         by token, a view of the connection's mapping (memreg.h);
 *     with a burst       through the burst's slots (burst.h);
 *     without            memfd, mmap_fd and dma-buf pools mapped through the session's
 *                        pool cache, made on first use (pool.h);
 *     driver buffers     an empty view either way, bound below.
 *   Then every output must point into a pool mapped writable (INVALID_ARGUMENT "output N
 *   points into pool P, which is read-only"), every argument is bound inside its pool
 *   (convert.h) and every argument naming a driver buffer to the buffer's bytes, with its
 *   access taken (buffer.h). Statuses and messages are those of the modules named.
 * - All or nothing: on failure nothing stays mapped or held, and the burst keeps no slot
 *   this request cached; on success the burst's new slots are committed.
 * - The caller provides the storage, pointed at before srv_bind(): pools and views (scratch
 *   for the binding) of r->n_pools entries, inputs and outputs of the prepared model's
 *   counts.
 * - After the run: srv_binding_regrow() when it returned OUTPUT_INSUFFICIENT_SIZE (flexible
 *   driver buffers grown, outputs re-pointed: run once more); srv_binding_finish() when it
 *   is over or will not happen (the buffers take what was written, the status is adjusted
 *   as buffer.h says); srv_binding_release() unmaps the pools and ends what finish did
 *   not, as a run that never happened.
 * - Loop thread only: pools and bursts are the loop's.
 */
#ifndef SRV_BINDING_BIND_H
#define SRV_BINDING_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/binding/buffer.h"
#include "engine/engine.h"
#include "proto/frame.h"
#include "nnd.pb-c.h"
#include "daemon/clients/pool.h"
#include "daemon/clients/session.h"

struct srv_burst_obj;

typedef struct srv_binding {
    srv_pool *pools;             /* the caller's storage */
    eng_memory_view *views;      /* the caller's scratch */
    eng_io *inputs, *outputs;    /* the caller's storage, ready once bound */
    size_t n_pools;              /* mapped, to release: 0 until bound */
    srv_buffer_binding *buffers; /* driver buffers held; NULL when none (or finished) */
} srv_binding;

/* b: the burst the request came through, or NULL; model_handle and p: its prepared model. */
schema_status srv_bind(srv_binding *bd, srv_session *s, proto_frame_in *in, struct srv_burst_obj *b,
                       uint64_t model_handle, const eng_prepared *p, const Nnd__ExecutionRequest *r,
                       char *err, size_t errlen);
bool srv_binding_regrow(srv_binding *bd, const eng_output_shape *shapes);
void srv_binding_finish(srv_binding *bd, bool ran, schema_status *st,
                        const eng_output_shape *shapes, char *err, size_t errlen);
void srv_binding_release(srv_binding *bd);

#endif
