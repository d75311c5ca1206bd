/* SPDX-License-Identifier: Apache-2.0 */
/* exec_steps.c: the step loop of a bound run (eng_exec_steps, internal.h), shared by a
 * model's run (execute.c) and the subgraphs control flow runs (flow_run.c). An IF or WHILE
 * step goes to e->run_flow, the control flow runner execute.c gave the exec: the loop
 * knows no runner by name, so the runner can call back into the loop for its subgraphs. */
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/base/scratch.h"
#include "engine/core/device_sync.h"
#include "engine/core/internal.h"
#include "engine/core/partition_run.h"

/* Gives a temporary whose size is only known now a buffer that is reused next time. */
schema_status eng_exec_size_operand(eng_exec *e, uint32_t o, char *err, size_t errlen) {
    eng_tensor *t = &e->tensors[o];
    size_t need = eng_tensor_bytes(t);
    if (e->p->slot[o] != ENG_NO_SLOT && t->bytes >= need) return SCHEMA_OK;
    if (e->dyn_cap[o] < need) {
        if (eng_alloc_over_limit(need))
            return (schema_errf(err, errlen, "operand %u would take %zu bytes, over the limit", o,
                                need),
                    SCHEMA_GENERAL_FAILURE);
        void *b = realloc(e->dyn[o], need);
        if (!b)
            return (schema_errf(err, errlen, "out of memory for operand %u (%zu bytes)", o, need),
                    SCHEMA_GENERAL_FAILURE);
        e->dyn[o] = b;
        e->dyn_cap[o] = need;
    }
    t->data = e->dyn[o];
    t->bytes = e->dyn_cap[o];
    return SCHEMA_OK;
}

/* A temporary's shape computed at execution must keep the dimensions the model declares
 * for it (0: unknown), as the runtime's CPU executor requires: else the run fails. */
static schema_status check_declared(const eng_prepared *p, const eng_step *st, uint32_t j,
                                    const eng_tensor *t, char *err, size_t errlen) {
    const eng_operand_desc *d = &p->operands[st->out[j]];
    bool agree = d->rank == 0 || d->rank == t->rank;
    for (uint32_t r = 0; agree && r < d->rank; r++)
        agree = d->dims[r] == 0 || d->dims[r] == t->dims[r];
    if (agree) return SCHEMA_OK;
    return schema_failf(
        err, errlen, SCHEMA_INVALID_ARGUMENT,
        "%s #%u: output %u (operand %u) computes to other dimensions than the model "
        "declares for it",
        st->def->name, st->index, j, st->out[j]);
}

/* Runs steps from..n_steps-1 of a run whose bindings are in place, then reports shapes. */
schema_status eng_exec_steps(eng_exec *e, uint32_t from, eng_output_shape *shapes,
                             const eng_checkpoint *cp, char *err, size_t errlen) {
    const eng_prepared *p = e->p;
    schema_status s = SCHEMA_OK;
    e->stopped_at = UINT32_MAX;
    /* A partition that a device completed since the run left its thread. */
    if (from < p->n_steps && p->steps[from].part_len && eng_partition_completed(e, from)) {
        s = eng_partition_finish(e, from, err, errlen);
        from += p->steps[from].part_len;
    }
    if (!s && (!e->insufficient || p->dynamic)) {
        for (uint32_t k = from; k < p->n_steps; k++) {
            const eng_step *st = &p->steps[k];
            if (st->part_member) continue; /* run with its partition's first step */
            if (cp && cp->check && (s = cp->check(cp->ctx, k)) != SCHEMA_OK) {
                e->stopped_at = k;
                break;
            }
            if (st->part_len) {
                /* Shapes inside a partition are known at prepare: the driver's business. */
                if (e->insufficient) continue;
                s = eng_partition_run(e, k, cp, err, errlen);
                if (s == ENG_ON_DEVICE) e->stopped_at = k;
                if (s) break;
                continue;
            }
            eng_tensor **ptrs = e->ptrs + e->step_ptr[k];
            if (st->sub[0]) {
                /* IF, WHILE (flow.h): their inputs are stale once an output fell short. */
                if (e->insufficient) break;
                if ((s = eng_exec_inputs_to_host(ptrs, st->n_in, NULL, true, err, errlen)) !=
                    SCHEMA_OK)
                    break;
                if ((s = e->run_flow(e, k, cp, err, errlen)) != SCHEMA_OK) break;
                eng_exec_outputs_written(ptrs + st->n_in, st->n_out, NULL);
                continue;
            }
            /* Shapes of a dynamic model may read any input's bytes. */
            if ((s = eng_exec_inputs_to_host(ptrs, st->n_in, st->backend, p->dynamic, err, errlen)))
                break;
            eng_op_ctx c = {.def = st->def,
                            .index = st->index,
                            .in = ptrs,
                            .n_in = st->n_in,
                            .out = ptrs + st->n_in,
                            .n_out = st->n_out,
                            .relaxed = p->relaxed,
                            .scratch = &e->scratch,
                            .state = st->state,
                            .err = err,
                            .errlen = errlen};
            if (p->dynamic) {
                /* What prepare could not judge (ranks and values known only now) is judged
                 * before shape() and the kernel rely on it; not on a run that has stopped
                 * computing (insufficient output), whose later temporaries are stale. */
                if (!e->insufficient && (s = eng_check_op(&c)) != SCHEMA_OK) {
                    s = SCHEMA_INVALID_ARGUMENT;
                    break;
                }
                s = st->def->shape(&c);
                if (s == ENG_DEFER && e->insufficient) {
                    s = SCHEMA_OK;
                    break; /* shapes downstream depend on outputs that were not computed */
                }
                if (s == ENG_DEFER)
                    s = (schema_errf(err, errlen, "%s #%u: shape not computable", st->def->name,
                                     st->index),
                         SCHEMA_GENERAL_FAILURE);
                if (s) break;
                for (uint32_t j = 0; j < st->n_out && !s; j++) {
                    eng_tensor *t = c.out[j];
                    if (t->lifetime == SCHEMA_TEMPORARY &&
                        !(s = check_declared(p, st, j, t, err, errlen)))
                        s = eng_exec_size_operand(e, st->out[j], err, errlen);
                    else if (t->bytes < eng_tensor_bytes(t))
                        e->insufficient = true;
                }
                if (s) break;
            }
            if (e->insufficient) continue;
            s = st->run(&c);
            eng_scratch_reset(&e->scratch);
            if (s) break;
            eng_exec_outputs_written(c.out, st->n_out, st->backend);
        }
    }
    if (s == ENG_ON_DEVICE) return s; /* the rest when the partition completes */
    for (uint32_t i = 0; !s && !e->insufficient && i < p->n_outputs; i++) {
        eng_tensor *t = &e->tensors[p->outputs[i]];
        if (e->out_caller[i]) memcpy(e->out_caller[i], t->data, eng_tensor_bytes(t));
        if (t->device && (t->device_sync & ENG_DEVICE_STALE) &&
            !(s = t->device->mem_write(t->device, t->device_handle, 0, t->data, eng_tensor_bytes(t),
                                       err, errlen)))
            t->device_sync &= (uint8_t)~ENG_DEVICE_STALE;
    }
    if (!s && e->insufficient) {
        s = SCHEMA_OUTPUT_INSUFFICIENT_SIZE;
        schema_errf(err, errlen, "an output buffer is too small for its result");
    }
    if (shapes)
        for (uint32_t i = 0; i < p->n_outputs; i++) {
            const eng_tensor *t = &e->tensors[p->outputs[i]];
            shapes[i].rank = t->rank;
            memcpy(shapes[i].dims, t->dims, sizeof shapes[i].dims);
            shapes[i].sufficient = t->bytes >= eng_tensor_bytes(t);
        }
    if (s == SCHEMA_UNSUPPORTED) s = SCHEMA_GENERAL_FAILURE;
    return s;
}

void eng_exec_reset(eng_exec *e) {
    const eng_prepared *p = e->p;
    memcpy(e->tensors, p->tensors, sizeof(eng_tensor) * p->n_operands);
    for (uint32_t i = 0; i < p->n_operands; i++)
        if (p->slot[i] != ENG_NO_SLOT) {
            e->tensors[i].data = e->arena + p->slot[i];
            e->tensors[i].bytes = eng_tensor_bytes(&e->tensors[i]);
        }
}
