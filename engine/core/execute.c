/* SPDX-License-Identifier: Apache-2.0 */
/* execute.c: runs a prepared plan against caller memory. Inputs and outputs are bound in
 * place (no copies); temporaries live in the exec's arena, or in per-operand buffers
 * that grow once and are reused when their size is only known at execution. */
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/base/scratch.h"
#include "engine/core/flow.h"
#include "engine/core/internal.h"
#include "engine/core/partition_run.h"

#define FAIL(...) (schema_errf(err, errlen, __VA_ARGS__), SCHEMA_INVALID_ARGUMENT)

static size_t align64(size_t n) {
    return (n + 63) & ~(size_t)63;
}

static const eng_arena_allocator *g_partition_arena;

void eng_set_partition_arena_allocator(const eng_arena_allocator *a) {
    g_partition_arena = a;
}

void eng_exec_free(eng_exec *e) {
    if (!e) return;
    if (e->owns_subs) {
        for (uint32_t i = 0; e->subs && i < e->p->n_subplans; i++)
            eng_exec_free(e->subs[i]);
        free(e->subs);
    }
    eng_flow_exec_free(e);
    eng_partition_run_free(e->part);
    if (e->dyn)
        for (uint32_t i = 0; i < e->p->n_operands; i++)
            free(e->dyn[i]);
    free(e->dyn);
    free(e->dyn_cap);
    if (e->io_copy)
        for (uint32_t i = 0; i < e->p->n_inputs + e->p->n_outputs; i++)
            free(e->io_copy[i]);
    free(e->io_copy);
    free(e->io_copy_cap);
    free(e->out_caller);
    free(e->tensors);
    free(e->ptrs);
    free(e->step_ptr);
    if (e->arena_from)
        e->arena_from->release(e->arena, e->arena_bytes);
    else
        free(e->arena);
    eng_scratch_free(&e->scratch);
    free(e);
}

/* One graph's exec; subs is the tree's table of subgraph execs. */
static eng_exec *exec_new(const eng_prepared *p, eng_exec **subs) {
    eng_exec *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->p = p;
    e->subs = subs;
    e->stopped_at = UINT32_MAX;
    e->run_flow = eng_flow_run;
    size_t n_ptrs = 0;
    for (uint32_t k = 0; k < p->n_steps; k++)
        n_ptrs += p->steps[k].n_in + p->steps[k].n_out;
    e->tensors = malloc(sizeof(eng_tensor) * (p->n_operands + 1));
    e->ptrs = malloc(sizeof(eng_tensor *) * (n_ptrs + 1));
    e->step_ptr = malloc(sizeof(size_t) * (p->n_steps + 1));
    e->arena_bytes = align64(p->arena_size + 1);
    if (p->driver_owned && g_partition_arena) { /* crossings: memory the drivers reach */
        e->arena_from = g_partition_arena;
        e->arena = g_partition_arena->alloc(e->arena_bytes);
    } else {
        e->arena = aligned_alloc(64, e->arena_bytes);
    }
    e->dyn = calloc(p->n_operands + 1, sizeof(void *));
    e->dyn_cap = calloc(p->n_operands + 1, sizeof(size_t));
    size_t n_io = (size_t)p->n_inputs + p->n_outputs + 1;
    e->io_copy = calloc(n_io, sizeof(void *));
    e->io_copy_cap = calloc(n_io, sizeof(size_t));
    e->out_caller = calloc(p->n_outputs + 1, sizeof(void *));
    if (!e->tensors || !e->ptrs || !e->step_ptr || !e->arena || !e->dyn || !e->dyn_cap ||
        !e->io_copy || !e->io_copy_cap || !e->out_caller || eng_flow_exec_init(e)) {
        eng_exec_free(e);
        return NULL;
    }
    /* The pointer lists never change: tensors live at fixed addresses in e->tensors. */
    size_t at = 0;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        e->step_ptr[k] = at;
        for (uint32_t j = 0; j < st->n_in; j++)
            e->ptrs[at++] = &e->tensors[st->in[j]];
        for (uint32_t j = 0; j < st->n_out; j++)
            e->ptrs[at++] = &e->tensors[st->out[j]];
    }
    return e;
}

eng_exec *eng_exec_create(const eng_prepared *p) {
    eng_exec **subs = p->n_subplans ? calloc(p->n_subplans, sizeof *subs) : NULL;
    if (p->n_subplans && !subs) return NULL;
    eng_exec *e = exec_new(p, subs);
    if (!e) {
        free(subs);
        return NULL;
    }
    e->owns_subs = true;
    for (uint32_t i = 0; i < p->n_subplans; i++)
        if (!(subs[i] = exec_new(p->subplans[i], subs))) {
            eng_exec_free(e);
            return NULL;
        }
    return e;
}

/* SIZE_MAX for a tensor too large to exist: no buffer is ever that large. */
/* Where a tensor of this type bound to caller memory at data (n bytes) lives during the
 * run: the caller's memory, or when that is misaligned for the element type (a request
 * may place arguments at any offset) or `apart` asks for it, the aligned stand-in `slot`
 * of e. NULL: no memory. */
static void *io_slot(eng_exec *e, size_t slot, size_t n) {
    if (!e->io_copy[slot] || e->io_copy_cap[slot] < n) {
        void *b = aligned_alloc(64, align64(n + 1));
        if (!b) return NULL;
        free(e->io_copy[slot]);
        e->io_copy[slot] = b;
        e->io_copy_cap[slot] = align64(n + 1);
    }
    return e->io_copy[slot];
}

static void *io_home(eng_exec *e, size_t slot, int32_t type, void *data, size_t n, bool apart) {
    size_t a = schema_type_size(type);
    if (!data || (!apart && (a <= 1 || (uintptr_t)data % a == 0))) return data;
    return io_slot(e, slot, n);
}

static schema_status bind_input(eng_exec *e, uint32_t i, const eng_io *io, char *err,
                                size_t errlen) {
    eng_tensor *t = &e->tensors[e->p->inputs[i]];
    t->readable_past = 0;
    if (io->has_no_value) {
        t->lifetime = SCHEMA_NO_VALUE;
        t->data = NULL;
        t->bytes = 0;
        return SCHEMA_OK;
    }
    if (io->rank) {
        if (io->rank > ENG_MAX_RANK) return FAIL("input %u: rank %u over the limit", i, io->rank);
        if (t->rank && t->rank != io->rank)
            return FAIL("input %u: request gives rank %u, the model has %u", i, io->rank, t->rank);
        for (uint32_t r = 0; r < io->rank; r++)
            if (t->rank && t->dims[r] && t->dims[r] != io->dims[r])
                return FAIL("input %u: request gives dimension %u = %u, the model has %u", i, r,
                            io->dims[r], t->dims[r]);
        t->rank = io->rank;
        memcpy(t->dims, io->dims, sizeof(uint32_t) * io->rank);
        t->known = true;
    } else if (!t->known) {
        return FAIL("input %u has unknown dimensions; the request must give them", i);
    }
    size_t need = eng_tensor_bytes(t);
    if (need == SIZE_MAX) return FAIL("input %u: dimensions claim more than 2^48 bytes", i);
    if (io->length < need)
        return FAIL("input %u: %zu bytes given, its type and dimensions need %zu", i, io->length,
                    need);
    if (io->device) { /* a host copy, filled when some step needs it */
        t->device = io->device;
        t->device_handle = io->device_handle;
        t->device_sync = ENG_HOST_STALE;
        t->data = io_slot(e, i, need);
        t->bytes = need;
        if (!t->data)
            return (schema_errf(err, errlen, "out of memory for input %u", i),
                    SCHEMA_GENERAL_FAILURE);
        return SCHEMA_OK;
    }
    if (!io->data && need) return FAIL("input %u has no memory", i);
    t->data = io_home(e, i, t->type, io->data, need, false);
    if (!t->data && need)
        return (schema_errf(err, errlen, "out of memory aligning input %u", i),
                SCHEMA_GENERAL_FAILURE);
    t->bytes = io->length;
    if (t->data == io->data) t->readable_past = io->readable_past;
    if (t->data != io->data) {
        memcpy(t->data, io->data, need);
        t->bytes = need;
    }
    return SCHEMA_OK;
}

/* A request may omit a model input only where every operation reading it takes it as an
 * optional input: each such operation's check runs again with the input omitted (on copies
 * of its tensors, temporaries without data, as at prepare). */
static schema_status check_omitted(eng_exec *e, char *err, size_t errlen) {
    const eng_prepared *p = e->p;
    schema_status s = SCHEMA_OK;
    eng_tensor *copy = NULL, **ptrs = NULL;
    for (uint32_t k = 0; k < p->n_steps && !s; k++) {
        const eng_step *st = &p->steps[k];
        eng_tensor **bound = e->ptrs + e->step_ptr[k];
        bool omitted = false;
        for (uint32_t j = 0; j < st->n_in && !omitted; j++)
            omitted = bound[j]->lifetime == SCHEMA_NO_VALUE &&
                      p->tensors[st->in[j]].lifetime == SCHEMA_MODEL_INPUT;
        if (!omitted) continue;
        uint32_t n = st->n_in + st->n_out;
        eng_tensor *c2 = realloc(copy, sizeof *copy * n);
        eng_tensor **p2 = c2 ? realloc(ptrs, sizeof *ptrs * n) : NULL;
        if (c2) copy = c2;
        if (p2) ptrs = p2;
        if (!c2 || !p2) {
            schema_errf(err, errlen, "out of memory checking omitted inputs");
            s = SCHEMA_GENERAL_FAILURE;
            break;
        }
        for (uint32_t j = 0; j < n; j++) {
            copy[j] = *bound[j];
            if (copy[j].lifetime == SCHEMA_TEMPORARY || copy[j].lifetime == SCHEMA_MODEL_OUTPUT)
                copy[j].data = NULL, copy[j].bytes = 0;
            ptrs[j] = &copy[j];
        }
        eng_op_ctx c = {.def = st->def,
                        .index = st->index,
                        .in = ptrs,
                        .n_in = st->n_in,
                        .out = ptrs + st->n_in,
                        .n_out = st->n_out,
                        .relaxed = p->relaxed,
                        .err = err,
                        .errlen = errlen};
        if (eng_check_op(&c) != SCHEMA_OK) s = SCHEMA_INVALID_ARGUMENT;
    }
    free(copy);
    free(ptrs);
    return s;
}

/* A constant pool that lost its pages (engine.h: eng_memory_view.lost) reads as zeros:
 * no execution of the model may compute from it again. */
static schema_status constants_intact(const eng_prepared *p, char *err, size_t errlen) {
    for (uint32_t i = 0; i < p->n_pools; i++)
        if (p->pools[i].lost && p->pools[i].lost(p->pools[i].ctx))
            return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                                "constant pool %u of this prepared model shrank after "
                                "preparation: the prepared model is no longer usable, prepare "
                                "the model again",
                                i);
    return SCHEMA_OK;
}

schema_status eng_exec_run(eng_exec *e, const eng_io *inputs, const eng_io *outputs,
                           eng_output_shape *shapes, const eng_checkpoint *cp, char *err,
                           size_t errlen) {
    const eng_prepared *p = e->p;
    schema_status intact = constants_intact(p, err, errlen);
    if (intact) return intact;
    e->started = false;
    e->device_ns = e->driver_ns = UINT64_MAX;
    eng_partition_run_reset(e->part);
    /* A loop a checkpoint stopped in an earlier run is not continued by a fresh one. */
    eng_flow_reset(e);
    for (uint32_t i = 0; i < p->n_subplans; i++)
        eng_flow_reset(e->subs[i]);
    eng_exec_reset(e);
    bool omitted = false;
    for (uint32_t i = 0; i < p->n_inputs; i++) {
        schema_status s = bind_input(e, i, &inputs[i], err, errlen);
        if (s) return s;
        omitted |= inputs[i].has_no_value;
    }
    if (omitted) {
        schema_status s = check_omitted(e, err, errlen);
        if (s) return s;
    }
    e->insufficient = false;
    for (uint32_t i = 0; i < p->n_outputs; i++) {
        eng_tensor *t = &e->tensors[p->outputs[i]];
        t->bytes = outputs[i].data || outputs[i].device ? outputs[i].length : 0;
        if (outputs[i].device) {
            t->device = outputs[i].device;
            t->device_handle = outputs[i].device_handle;
            t->device_sync = 0;
            /* Computed at data when an input has the same device bytes: kernels assume
             * their operands do not overlap. */
            for (uint32_t j = 0; j < p->n_inputs; j++)
                if (inputs[j].device == t->device && inputs[j].device_handle == t->device_handle)
                    t->device_sync = ENG_HOST_ONLY;
            t->data = io_slot(e, p->n_inputs + i, t->bytes);
            e->out_caller[i] = NULL;
            if (!t->data) {
                schema_errf(err, errlen, "out of memory for output %u", i);
                return SCHEMA_GENERAL_FAILURE;
            }
            if (t->known && t->bytes < eng_tensor_bytes(t)) e->insufficient = true;
            continue;
        }
        /* An output sharing bytes with an input or another output is computed apart and
         * copied back: kernels assume their operands do not overlap (memcpy). */
        bool apart = false;
        for (uint32_t j = 0; j < p->n_inputs + i && !apart && outputs[i].data; j++) {
            const eng_io *o = j < p->n_inputs ? &inputs[j] : &outputs[j - p->n_inputs];
            uintptr_t a = (uintptr_t)outputs[i].data, b = (uintptr_t)o->data;
            apart = b && a < b + o->length && b < a + t->bytes;
        }
        t->data = io_home(e, p->n_inputs + i, t->type, outputs[i].data, t->bytes, apart);
        if (!t->data && t->bytes) {
            schema_errf(err, errlen, "out of memory aligning output %u", i);
            return SCHEMA_GENERAL_FAILURE;
        }
        e->out_caller[i] = t->data != outputs[i].data ? outputs[i].data : NULL;
        if (t->known && t->bytes < eng_tensor_bytes(t)) e->insufficient = true;
    }
    e->started = true;
    return eng_exec_steps(e, 0, shapes, cp, err, errlen);
}

schema_status eng_exec_resume(eng_exec *e, uint32_t from, eng_output_shape *shapes,
                              const eng_checkpoint *cp, char *err, size_t errlen) {
    if (!e->started || from > e->p->n_steps) {
        schema_errf(err, errlen, "no stopped run to resume at operation %u", from);
        return SCHEMA_GENERAL_FAILURE;
    }
    schema_status intact = constants_intact(e->p, err, errlen);
    if (intact) return intact;
    return eng_exec_steps(e, from, shapes, cp, err, errlen);
}
