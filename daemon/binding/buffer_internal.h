/* SPDX-License-Identifier: Apache-2.0 */
/* buffer_internal: what one driver buffer does for one argument of an execution, for
 * buffer_binding.c, which binds a whole request through these. Nothing else includes this
 * header; the contract of driver buffers is buffer.h's.
 *
 * - srv_buffer_find() is the owner's live buffer under token with a reference taken, NULL
 *   for anyone else's, a retired or a made-up token.
 * - srv_buffer_begin() takes read or write access without waiting (GENERAL_FAILURE "busy"
 *   on a conflict; need_init also refuses contents never written); srv_buffer_end() gives
 *   it back.
 * - With access held: srv_buffer_bind_input() points io at the contents and their shape;
 *   srv_buffer_bind_output() at the buffer's room, first growing a flexible buffer whose
 *   size the model and the request tell (never one the request also reads: read);
 *   srv_buffer_regrow_output() grows it to the shape a run said it needs (false when it
 *   cannot: fixed, read, shape unknown or contradicting it, or the growth refused, then
 *   with *grow_st and grow_err set); srv_buffer_end_output() ends the output's write,
 *   taking the result's shape when *st is SCHEMA_OK and it fits (else GENERAL_FAILURE in *st
 *   and err), leaving the contents uninitialized otherwise.
 */
#ifndef SRV_BINDING_BUFFER_INTERNAL_H
#define SRV_BINDING_BUFFER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* The types of buffer.h, named here without including it: buffer.c, which includes this
 * header, is buffer.h's own unit. */
struct srv_session;
typedef struct srv_buffer srv_buffer;

srv_buffer *srv_buffer_find(uint64_t token, const struct srv_session *owner);
/* Whether b was allocated for input or output `index` of the prepared model `model`. */
bool srv_buffer_has_role(const srv_buffer *b, uint64_t model, uint32_t index, bool output);

schema_status srv_buffer_begin(srv_buffer *b, bool write, bool need_init, char *err, size_t errlen);
void srv_buffer_end(srv_buffer *b, bool write);

/* Input i of the request; io's dimensions are the request's. */
schema_status srv_buffer_bind_input(srv_buffer *b, uint32_t i, eng_io *io, char *err,
                                    size_t errlen);
/* Output i, o its operand in the prepared model. */
schema_status srv_buffer_bind_output(srv_buffer *b, const eng_operand_desc *o, uint32_t i,
                                     bool read, eng_io *io, char *err, size_t errlen);
bool srv_buffer_regrow_output(srv_buffer *b, bool read, const eng_output_shape *needed, eng_io *io,
                              schema_status *grow_st, char *grow_err, size_t grow_errlen);
void srv_buffer_end_output(srv_buffer *b, uint32_t i, const eng_output_shape *result,
                           schema_status *st, char *err, size_t errlen);

#endif
