/* bind: an execution request's memory, resolved in one step: its pools mapped, its
 * arguments bound inside them, its driver buffers taken, ready inputs and outputs handed
 * back; then held for the execution and let go at its end.
 *
 * Contract:
 * - nnd_bind() resolves every pool of r:
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
 * - The caller provides the storage, pointed at before nnd_bind(): pools and views (scratch
 *   for the binding) of r->n_pools entries, inputs and outputs of the prepared model's
 *   counts.
 * - After the run: nnd_binding_regrow() when it returned OUTPUT_INSUFFICIENT_SIZE (flexible
 *   driver buffers grown, outputs re-pointed: run once more); nnd_binding_finish() when it
 *   is over or will not happen (the buffers take what was written, the status is adjusted
 *   as buffer.h says); nnd_binding_release() unmaps the pools and ends what finish did
 *   not, as a run that never happened.
 * - Loop thread only: pools and bursts are the loop's.
 */
#ifndef NND_BIND_H
#define NND_BIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "engine.h"
#include "frame.h"
#include "nnd.pb-c.h"
#include "pool.h"
#include "session.h"

struct nnd_burst_obj;

typedef struct nnd_binding {
    nnd_pool *pools;             /* the caller's storage */
    nnd_memory_view *views;      /* the caller's scratch */
    nnd_io *inputs, *outputs;    /* the caller's storage, ready once bound */
    size_t n_pools;              /* mapped, to release: 0 until bound */
    nnd_buffer_binding *buffers; /* driver buffers held; NULL when none (or finished) */
} nnd_binding;

/* b: the burst the request came through, or NULL; model_handle and p: its prepared model. */
nnd_status nnd_bind(nnd_binding *bd, nnd_session *s, nnd_frame_in *in, struct nnd_burst_obj *b,
                    uint64_t model_handle, const nnd_prepared *p, const Nnd__ExecutionRequest *r,
                    char *err, size_t errlen);
bool nnd_binding_regrow(nnd_binding *bd, const nnd_output_shape *shapes);
void nnd_binding_finish(nnd_binding *bd, bool ran, nnd_status *st, const nnd_output_shape *shapes,
                        char *err, size_t errlen);
void nnd_binding_release(nnd_binding *bd);

#endif
