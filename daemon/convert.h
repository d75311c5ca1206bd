/* convert: wire messages to engine descriptions, checking what the wire allows but the
 * engine's fixed-size structures do not (ranks, counts, offsets against pools).
 * - nnd_model_from_proto(): the description borrows from the message and the pool
 *   views; both must outlive it. nnd_model_desc_clear() frees what it allocated.
 * - nnd_request_from_proto(): binds each argument to memory inside its mapped pool,
 *   refusing any location that runs past the pool (INVALID_ARGUMENT naming it). */
#ifndef NND_CONVERT_H
#define NND_CONVERT_H

#include "engine.h"
#include "nnd.pb-c.h"

nnd_status nnd_model_from_proto(const Nnd__Model *m, nnd_memory_view *pool_views, size_t n_views,
                                nnd_model_desc *out, char *err, size_t errlen);
void nnd_model_desc_clear(nnd_model_desc *d);

nnd_status nnd_request_from_proto(const Nnd__ExecutionRequest *r, const nnd_prepared *p,
                                  const nnd_memory_view *pools, size_t n_pools, nnd_io *inputs,
                                  nnd_io *outputs, char *err, size_t errlen);

#endif
