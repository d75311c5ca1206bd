/* SPDX-License-Identifier: Apache-2.0 */
/* convert: wire messages to engine descriptions, checking what the wire allows but the
 * engine's fixed-size structures do not (ranks, counts, offsets against pools).
 * - srv_model_from_proto(): the description borrows from the message and the pool
 *   views; both must outlive it (or srv_model_desc_own() copies what it borrows from the
 *   message). srv_model_desc_clear() frees what it allocated.
 * - srv_request_from_proto(): binds each argument to memory inside its mapped pool,
 *   refusing any location that runs past the pool (INVALID_ARGUMENT naming it).
 * - srv_prio_from_wire(): a wire Priority as the scheduler's. */
#ifndef SRV_WIRE_CONVERT_H
#define SRV_WIRE_CONVERT_H

#include "engine/engine.h"
#include "nnd.pb-c.h"
#include "proto/frame.h"
#include "sched/sched_config.h"

schema_status srv_model_from_proto(const Nnd__Model *m, eng_memory_view *pool_views, size_t n_views,
                                   eng_model_desc *out, char *err, size_t errlen);
/* As srv_model_from_proto(), which is this with allow_extensions false. Vendor extensions
 * (engine/plugins/extension.h): a client that may not use them (allow_extensions false) is
 * refused any model with an extensionNameToPrefix entry, and, while a plugin claims OEM,
 * any use of OEM_OPERATION or the OEM types. Otherwise extensionNameToPrefix must be a
 * bijection between prefixes 1..65535 and names of loaded extensions, and every type and
 * operation code's prefix must be in it; each prefix is then rewritten to its
 * extension's engine id. Violations are INVALID_ARGUMENT naming the entry or operand. */
schema_status srv_model_from_proto_ext(const Nnd__Model *m, eng_memory_view *pool_views,
                                       size_t n_views, bool allow_extensions, eng_model_desc *out,
                                       char *err, size_t errlen);
/* Whether the model names extensions or uses OEM_OPERATION or the OEM types. */
bool srv_model_uses_extensions(const Nnd__Model *m);
/* A spilled request's model is walked on the worker that unpacked it, not on the loop:
 * srv_request_noted() gives what that worker notes of a Request (proto_frame_in.noted), and
 * srv_request_uses_extensions() answers srv_model_uses_extensions() for in's model m from
 * it when it was noted, walking m otherwise. */
#define SRV_NOTED_EXTENSIONS_CHECKED 1u
#define SRV_NOTED_USES_EXTENSIONS    2u
uint32_t srv_request_noted(const Nnd__Request *req);
bool srv_request_uses_extensions(const proto_frame_in *in, const Nnd__Model *m);
/* A wire Priority (LOW 90, MEDIUM 100, HIGH 110; 0 = unspecified gives dflt) as a qos_prio,
 * or -1 for any other value. */
int srv_prio_from_wire(int wire, qos_prio dflt);
void srv_model_desc_clear(eng_model_desc *d);
/* Copies into one block everything d borrows from its message (the operand lists of
 * operations and graphs, channel scales, extension data, operand values) and points d at
 * the copies, so that d outlives the message (not the pool views). Returns the block, to
 * free after srv_model_desc_clear(d), or NULL, d unchanged, when it would be over
 * max_bytes or memory is short. */
void *srv_model_desc_own(eng_model_desc *d, size_t max_bytes);

schema_status srv_request_from_proto(const Nnd__ExecutionRequest *r, const eng_prepared *p,
                                     const eng_memory_view *pools, size_t n_pools, eng_io *inputs,
                                     eng_io *outputs, char *err, size_t errlen);

#endif
