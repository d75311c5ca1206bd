/* SPDX-License-Identifier: Apache-2.0 */
/* prepare_off_loop: PrepareModel of a large model through the content cache, with its
 * copy and hash (linear in the model's bytes: a 60 MiB model costs tens of milliseconds,
 * more on a busy machine) on libuv's worker threads, so that it holds up no other client.
 *
 * Contract:
 * - PrepareModel (prepare.c) sends a model this way when it is this large (its serialized
 *   size at least SRV_PREPARE_OFF_LOOP_BYTES) and the session can answer later.
 * - srv_prepare_off_loop(): takes the model (desc, made to outlive its request by
 *   srv_model_desc_own(), and its plan from eng_plan(): validated once, on the loop), its
 *   pool views and the model object; holds the session (session.h: its connection reads
 *   nothing more until the answer, so requests keep their order), runs srv_cache_encode()
 *   on a worker thread, then on the loop the content cache's lookup: a hit answers; a
 *   miss's entry (its plan finished on the daemon's copy) is made on a worker too, and
 *   adopted and answered on the loop (cache.h srv_cache_encoded_hit and after), as the
 *   synchronous path does (reply given by `done`); it releases what it took. The cache
 *   fds are duplicated: the request's are closed when the call returns. A session closed
 *   meanwhile gets no answer; everything is freed.
 */
#ifndef SRV_CALLS_PREPARE_OFF_LOOP_H
#define SRV_CALLS_PREPARE_OFF_LOOP_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/calls/call.h"
#include "engine/engine.h"
#include "daemon/calls/model_obj.h"

#define SRV_PREPARE_OFF_LOOP_BYTES (1u << 20)

/* Answers the call once the model is prepared (st SCHEMA_OK, o holding it) or not. */
typedef void (*srv_prepare_done_fn)(srv_call *c, srv_model_obj *o, schema_status st, uint64_t t_ns,
                                    int priority);

/* The most a description may borrow from its message (srv_model_desc_own()) to go off the
 * loop: beyond it (constants inline), the model is prepared on the loop. */
#define SRV_PREPARE_OFF_LOOP_COPY_MAX (1u << 20)
/* desc's borrowed parts live in owned (srv_model_desc_own()); the preparation frees it,
 * desc and plan at its end. */
void srv_prepare_off_loop(srv_call *c, srv_model_obj *o, eng_model_desc *desc, void *owned,
                          eng_prepared *plan, eng_memory_view *views, size_t n_views,
                          uint32_t preference, int priority, const uint8_t *token, int model_fd,
                          int data_fd, srv_prepare_done_fn done);

/* In place (no content cache): a model of SRV_PREPARE_OFF_LOOP_OPS operations and operands
 * or more, or of SRV_PREPARE_OFF_LOOP_BYTES, is validated, planned and prepared (eng_prepare)
 * on a worker thread, the session held as above; the prepared model takes the views. A
 * description may borrow up to SRV_PREPARE_OFF_LOOP_OWN_MAX bytes from its message to go. */
#define SRV_PREPARE_OFF_LOOP_OPS     1024u
#define SRV_PREPARE_OFF_LOOP_OWN_MAX (64u << 20)
void srv_prepare_in_place_off_loop(srv_call *c, srv_model_obj *o, eng_model_desc *desc, void *owned,
                                   eng_memory_view *views, size_t n_views, int priority,
                                   srv_prepare_done_fn done);

#endif
