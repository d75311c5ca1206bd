/* SPDX-License-Identifier: Apache-2.0 */
/* flow: control flow, HAL 1.3's IF and WHILE over a model's referenced subgraphs.
 * Internal to engine/ (nothing outside it includes this).
 *
 * Graphs: the main graph and referenced subgraph r are each described as a model of
 * their own by eng_flow_graph() (operand values, pools and the referenced list shared);
 * index m->n_referenced names the main graph. Each is validated and prepared into a plan
 * of its own; the main graph's plan owns the others (eng_prepared.subplans), and a step
 * of IF or WHILE names the plans it runs (eng_step.sub).
 *
 * Validation (flow_check.c), as HAL 1.3 defines it:
 * - eng_flow_check_references(): SUBGRAPH operands (type and lifetime go together, the
 *   offset names a referenced subgraph, no length, pool or dimensions), no subgraph that
 *   references itself through any chain, nesting at most ENG_MAX_SUBGRAPH_DEPTH, the
 *   counts within ENG_MAX_SUBGRAPHS and the operand and operation limits over all graphs.
 *   It orders the referenced subgraphs so that each comes after every one it references.
 * - eng_flow_check_op(): an IF's or WHILE's signature against the subgraphs it names: the
 *   counts, a condition of one TENSOR_BOOL8 element, and every operand passed in or out
 *   compatible with the subgraph's (type, scale, zero point, channel quantization,
 *   extension data equal; rank and dimensions equal where both are known). Messages name
 *   the operation, the subgraph and the operands.
 *
 * Preparation: prepare.c infers an IF's or WHILE's output shapes from the prepared
 * subgraphs where they are fixed, else ENG_DEFER: the shapes become known at execution.
 * eng_flow_pass_cost() (step.c) totals one pass of a plan (an IF counts its larger
 * branch, a WHILE one iteration), memoized per plan so that shared subgraphs cost nothing
 * more.
 *
 * Execution (flow_run.c): every exec of a main graph makes one exec per referenced
 * subgraph, shared by the whole tree (a subgraph is never running twice at once: no graph
 * references itself). eng_flow_run() runs step k of e, which is an IF or WHILE:
 * - Inputs are the outer tensors, read in place. An output whose shape the outer plan
 *   knows is written in place; one known only at execution is computed into the
 *   subgraph exec's own buffer and handed over (a temporary's buffer is exchanged, a
 *   model output copied, or reported insufficient). A WHILE keeps its carried values in
 *   buffers of its own, exchanged with the body's outputs after each iteration, and
 *   copies the final values out once.
 * - The checkpoint runs inside with index k. When it stops the run, the step remembers
 *   where (branch, condition or body, iteration), sets e->stopped_at to k, and the next
 *   eng_flow_run() of that step (eng_exec_resume) continues there. eng_flow_reset()
 *   forgets stopped steps before a fresh run.
 * - A WHILE whose condition still holds once the loop has run longer than the
 *   checkpoint's loop timeout (time spent stopped not counted) fails with
 *   SCHEMA_MISSED_DEADLINE_TRANSIENT, not resumable.
 */
#ifndef ENG_CORE_FLOW_H
#define ENG_CORE_FLOW_H

#include "engine/core/internal.h"

typedef struct eng_flow_state eng_flow_state;

bool eng_flow_is_op(int32_t code);
eng_model_desc eng_flow_graph(const eng_model_desc *m, uint32_t g);
schema_status eng_flow_check_references(const eng_model_desc *m, uint32_t *order, char *err,
                                        size_t errlen);
schema_status eng_flow_check_op(const eng_model_desc *g, uint32_t k, char *err, size_t errlen);

void eng_flow_pass_cost(eng_prepared *p);

schema_status eng_flow_exec_init(eng_exec *e);
void eng_flow_exec_free(eng_exec *e);
void eng_flow_reset(eng_exec *e);
schema_status eng_flow_run(eng_exec *e, uint32_t k, const eng_checkpoint *cp, char *err,
                           size_t errlen);

#endif
