/* prepare_off_loop: PrepareModel of a large model through the content cache, with its
 * copy and hash (linear in the model's bytes: a 60 MiB model costs tens of milliseconds,
 * more on a busy machine) on libuv's worker threads, so that it holds up no other client.
 *
 * Contract:
 * - nnd_prepare_off_loop_wanted(): whether a model this large should go off the loop (its
 *   serialized size at least NND_PREPARE_OFF_LOOP_BYTES, and a session that can answer
 *   later).
 * - nnd_prepare_off_loop(): takes the model (desc, already validated), its pool views and
 *   the model object; holds the session (session.h: its connection reads nothing more
 *   until the answer, so requests keep their order), runs nnd_cache_encode() on a worker
 *   thread, then on the loop nnd_cache_prepare_encoded() and the answer, as the
 *   synchronous path does (reply given by `done`), and releases what it took. The cache
 *   fds are duplicated: the request's are closed when the call returns. A session closed
 *   meanwhile gets no answer; everything is freed.
 */
#ifndef NND_PREPARE_OFF_LOOP_H
#define NND_PREPARE_OFF_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "call.h"
#include "engine.h"
#include "model_obj.h"

#define NND_PREPARE_OFF_LOOP_BYTES (1u << 20)

/* Answers the call once the model is prepared (st NND_OK, o holding it) or not. */
typedef void (*nnd_prepare_done_fn)(nnd_call *c, nnd_model_obj *o, nnd_status st, uint64_t t_ns,
                                    int priority);

bool nnd_prepare_off_loop_wanted(const nnd_call *c, const nnd_model_desc *m);
/* A copy of the wire model that outlives the request (a model description borrows from
 * its message), or NULL when its message is over NND_PREPARE_OFF_LOOP_COPY_MAX bytes (its
 * constants inline: prepared on the loop) or memory is short. */
#define NND_PREPARE_OFF_LOOP_COPY_MAX (1u << 20)
Nnd__Model *nnd_prepare_model_copy(const Nnd__Model *m);
/* desc borrows from msg (a copy made above), which the preparation frees at its end. */
void nnd_prepare_off_loop(nnd_call *c, nnd_model_obj *o, nnd_model_desc *desc, Nnd__Model *msg,
                          nnd_memory_view *views, size_t n_views, uint32_t preference, int priority,
                          const uint8_t *token, int model_fd, int data_fd,
                          nnd_prepare_done_fn done);

#endif
