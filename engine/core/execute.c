/* SPDX-License-Identifier: Apache-2.0 */
/* execute.c: runs a prepared plan against caller memory. Inputs and outputs are bound in
 * place (no copies); temporaries live in the exec's arena, or in per-operand buffers
 * that grow once and are reused when their size is only known at execution. */
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/core/flow.h"
#include "engine/core/internal.h"

#define FAIL(...) (schema_errf(err, errlen, __VA_ARGS__), NND_INVALID_ARGUMENT)

static size_t align64(size_t n) {
    return (n + 63) & ~(size_t)63;
}

/* Whether one allocation of an execution (a temporary sized at execution, or scratch) is
 * over the limit: such sizes follow shapes a request's data chooses, and memory that is
 * granted gets written. NND_EXEC_ALLOC_LIMIT_MB overrides the default of 4 GiB. */
static bool over_alloc_limit(size_t bytes) {
    if (bytes <= ((size_t)64 << 20)) return false;
    const char *v = getenv("NND_EXEC_ALLOC_LIMIT_MB");
    unsigned long long mb = v && *v ? strtoull(v, NULL, 10) : 4096;
    return mb < (SIZE_MAX >> 20) && bytes > ((size_t)mb << 20);
}

void *eng_scratch(eng_op_ctx *c, size_t bytes) {
    eng_scratch_pool *s = c->scratch;
    if (!s || over_alloc_limit(bytes)) return NULL;
    bytes = align64(bytes ? bytes : 1);
    if (s->cap - s->used >= bytes) {
        void *p = s->base + s->used;
        s->used += bytes;
        return p;
    }
    /* Overflow: a chunk for this run only; the next run gets one big enough base. */
    void **extra = realloc(s->extra, sizeof(void *) * (s->n_extra + 1));
    if (!extra) return NULL;
    s->extra = extra;
    void *p = aligned_alloc(64, bytes);
    if (!p) return NULL;
    s->extra[s->n_extra++] = p;
    s->extra_bytes += bytes;
    return p;
}

void eng_scratch_reset(eng_scratch_pool *s) {
    s->used = 0;
    if (!s->n_extra) return;
    size_t want = align64(s->cap + s->extra_bytes + s->extra_bytes / 2);
    for (size_t i = 0; i < s->n_extra; i++)
        free(s->extra[i]);
    s->n_extra = 0;
    s->extra_bytes = 0;
    uint8_t *base = aligned_alloc(64, want);
    if (base) {
        free(s->base);
        s->base = base;
        s->cap = want;
    }
}

void eng_scratch_free(eng_scratch_pool *s) {
    eng_scratch_reset(s);
    free(s->base);
    free(s->extra);
    memset(s, 0, sizeof *s);
}

void eng_exec_free(eng_exec *e) {
    if (!e) return;
    if (e->owns_subs) {
        for (uint32_t i = 0; e->subs && i < e->p->n_subplans; i++)
            eng_exec_free(e->subs[i]);
        free(e->subs);
    }
    eng_flow_exec_free(e);
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
    size_t n_ptrs = 0;
    for (uint32_t k = 0; k < p->n_steps; k++)
        n_ptrs += p->steps[k].n_in + p->steps[k].n_out;
    e->tensors = malloc(sizeof(eng_tensor) * (p->n_operands + 1));
    e->ptrs = malloc(sizeof(eng_tensor *) * (n_ptrs + 1));
    e->step_ptr = malloc(sizeof(size_t) * (p->n_steps + 1));
    e->arena = aligned_alloc(64, align64(p->arena_size + 1));
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
size_t eng_tensor_bytes(const eng_tensor *t) {
    uint64_t n = schema_shape_bytes(t->type, t->rank, t->dims);
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

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

/* ---- device memory (backend.h): host copies of inputs and outputs bound to it ---------- */

/* Before a step on runs_on (NULL: the CPU, or any step when all) reads its inputs. */
static schema_status inputs_to_host(eng_tensor **in, uint32_t n, const eng_backend *runs_on,
                                    bool all, char *err, size_t errlen) {
    for (uint32_t j = 0; j < n; j++) {
        eng_tensor *t = in[j];
        if (!t->device || !(t->device_sync & NND_HOST_STALE) || (t->device == runs_on && !all))
            continue;
        schema_status s = t->device->mem_read(t->device, t->device_handle, 0, t->data,
                                              eng_tensor_bytes(t), err, errlen);
        if (s) return s;
        t->device_sync &= (uint8_t)~NND_HOST_STALE;
    }
    return NND_OK;
}

/* After a step on runs_on wrote its outputs: which copy is now the newest. */
static void outputs_written(eng_tensor **out, uint32_t n, const eng_backend *runs_on) {
    for (uint32_t j = 0; j < n; j++) {
        eng_tensor *t = out[j];
        if (!t->device) continue;
        bool on_device = t->device == runs_on && !(t->device_sync & NND_HOST_ONLY);
        t->device_sync = (uint8_t)((t->device_sync & NND_HOST_ONLY) |
                                   (on_device ? NND_HOST_STALE : NND_DEVICE_STALE));
    }
}

static schema_status bind_input(eng_exec *e, uint32_t i, const eng_io *io, char *err,
                                size_t errlen) {
    eng_tensor *t = &e->tensors[e->p->inputs[i]];
    t->readable_past = 0;
    if (io->has_no_value) {
        t->lifetime = NND_NO_VALUE;
        t->data = NULL;
        t->bytes = 0;
        return NND_OK;
    }
    if (io->rank) {
        if (io->rank > NND_MAX_RANK) return FAIL("input %u: rank %u over the limit", i, io->rank);
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
        t->device_sync = NND_HOST_STALE;
        t->data = io_slot(e, i, need);
        t->bytes = need;
        if (!t->data)
            return (schema_errf(err, errlen, "out of memory for input %u", i), NND_GENERAL_FAILURE);
        return NND_OK;
    }
    if (!io->data && need) return FAIL("input %u has no memory", i);
    t->data = io_home(e, i, t->type, io->data, need, false);
    if (!t->data && need)
        return (schema_errf(err, errlen, "out of memory aligning input %u", i),
                NND_GENERAL_FAILURE);
    t->bytes = io->length;
    if (t->data == io->data) t->readable_past = io->readable_past;
    if (t->data != io->data) {
        memcpy(t->data, io->data, need);
        t->bytes = need;
    }
    return NND_OK;
}

/* A request may omit a model input only where every operation reading it takes it as an
 * optional input: each such operation's check runs again with the input omitted (on copies
 * of its tensors, temporaries without data, as at prepare). */
static schema_status check_omitted(eng_exec *e, char *err, size_t errlen) {
    const eng_prepared *p = e->p;
    schema_status s = NND_OK;
    eng_tensor *copy = NULL, **ptrs = NULL;
    for (uint32_t k = 0; k < p->n_steps && !s; k++) {
        const eng_step *st = &p->steps[k];
        eng_tensor **bound = e->ptrs + e->step_ptr[k];
        bool omitted = false;
        for (uint32_t j = 0; j < st->n_in && !omitted; j++)
            omitted = bound[j]->lifetime == NND_NO_VALUE &&
                      p->tensors[st->in[j]].lifetime == NND_MODEL_INPUT;
        if (!omitted) continue;
        uint32_t n = st->n_in + st->n_out;
        eng_tensor *c2 = realloc(copy, sizeof *copy * n);
        eng_tensor **p2 = c2 ? realloc(ptrs, sizeof *ptrs * n) : NULL;
        if (c2) copy = c2;
        if (p2) ptrs = p2;
        if (!c2 || !p2) {
            schema_errf(err, errlen, "out of memory checking omitted inputs");
            s = NND_GENERAL_FAILURE;
            break;
        }
        for (uint32_t j = 0; j < n; j++) {
            copy[j] = *bound[j];
            if (copy[j].lifetime == NND_TEMPORARY || copy[j].lifetime == NND_MODEL_OUTPUT)
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
        if (eng_check_op(&c) != NND_OK) s = NND_INVALID_ARGUMENT;
    }
    free(copy);
    free(ptrs);
    return s;
}

/* Gives a temporary whose size is only known now a buffer that is reused next time. */
schema_status eng_exec_size_operand(eng_exec *e, uint32_t o, char *err, size_t errlen) {
    eng_tensor *t = &e->tensors[o];
    size_t need = eng_tensor_bytes(t);
    if (e->p->slot[o] != NND_NO_SLOT && t->bytes >= need) return NND_OK;
    if (e->dyn_cap[o] < need) {
        if (over_alloc_limit(need))
            return (schema_errf(err, errlen, "operand %u would take %zu bytes, over the limit", o,
                                need),
                    NND_GENERAL_FAILURE);
        void *b = realloc(e->dyn[o], need);
        if (!b)
            return (schema_errf(err, errlen, "out of memory for operand %u (%zu bytes)", o, need),
                    NND_GENERAL_FAILURE);
        e->dyn[o] = b;
        e->dyn_cap[o] = need;
    }
    t->data = e->dyn[o];
    t->bytes = e->dyn_cap[o];
    return NND_OK;
}

/* A temporary's shape computed at execution must keep the dimensions the model declares
 * for it (0: unknown), as the runtime's CPU executor requires: else the run fails. */
static schema_status check_declared(const eng_prepared *p, const eng_step *st, uint32_t j,
                                    const eng_tensor *t, char *err, size_t errlen) {
    const eng_operand_desc *d = &p->operands[st->out[j]];
    bool agree = d->rank == 0 || d->rank == t->rank;
    for (uint32_t r = 0; agree && r < d->rank; r++)
        agree = d->dims[r] == 0 || d->dims[r] == t->dims[r];
    if (agree) return NND_OK;
    return schema_failf(
        err, errlen, NND_INVALID_ARGUMENT,
        "%s #%u: output %u (operand %u) computes to other dimensions than the model "
        "declares for it",
        st->def->name, st->index, j, st->out[j]);
}

/* Runs steps from..n_steps-1 of a run whose bindings are in place, then reports shapes. */
schema_status eng_exec_steps(eng_exec *e, uint32_t from, eng_output_shape *shapes,
                             const eng_checkpoint *cp, char *err, size_t errlen) {
    const eng_prepared *p = e->p;
    schema_status s = NND_OK;
    e->stopped_at = UINT32_MAX;
    if (!e->insufficient || p->dynamic) {
        for (uint32_t k = from; k < p->n_steps; k++) {
            const eng_step *st = &p->steps[k];
            if (cp && cp->check && (s = cp->check(cp->ctx, k)) != NND_OK) {
                e->stopped_at = k;
                break;
            }
            eng_tensor **ptrs = e->ptrs + e->step_ptr[k];
            if (st->sub[0]) {
                /* IF, WHILE (flow.h): their inputs are stale once an output fell short. */
                if (e->insufficient) break;
                if ((s = inputs_to_host(ptrs, st->n_in, NULL, true, err, errlen)) != NND_OK) break;
                if ((s = eng_flow_run(e, k, cp, err, errlen)) != NND_OK) break;
                outputs_written(ptrs + st->n_in, st->n_out, NULL);
                continue;
            }
            /* Shapes of a dynamic model may read any input's bytes. */
            if ((s = inputs_to_host(ptrs, st->n_in, st->backend, p->dynamic, err, errlen))) break;
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
                if (!e->insufficient && (s = eng_check_op(&c)) != NND_OK) {
                    s = NND_INVALID_ARGUMENT;
                    break;
                }
                s = st->def->shape(&c);
                if (s == NND_DEFER && e->insufficient) {
                    s = NND_OK;
                    break; /* shapes downstream depend on outputs that were not computed */
                }
                if (s == NND_DEFER)
                    s = (schema_errf(err, errlen, "%s #%u: shape not computable", st->def->name,
                                     st->index),
                         NND_GENERAL_FAILURE);
                if (s) break;
                for (uint32_t j = 0; j < st->n_out && !s; j++) {
                    eng_tensor *t = c.out[j];
                    if (t->lifetime == NND_TEMPORARY &&
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
            outputs_written(c.out, st->n_out, st->backend);
        }
    }
    for (uint32_t i = 0; !s && !e->insufficient && i < p->n_outputs; i++) {
        eng_tensor *t = &e->tensors[p->outputs[i]];
        if (e->out_caller[i]) memcpy(e->out_caller[i], t->data, eng_tensor_bytes(t));
        if (t->device && (t->device_sync & NND_DEVICE_STALE) &&
            !(s = t->device->mem_write(t->device, t->device_handle, 0, t->data, eng_tensor_bytes(t),
                                       err, errlen)))
            t->device_sync &= (uint8_t)~NND_DEVICE_STALE;
    }
    if (!s && e->insufficient) {
        s = NND_OUTPUT_INSUFFICIENT_SIZE;
        schema_errf(err, errlen, "an output buffer is too small for its result");
    }
    if (shapes)
        for (uint32_t i = 0; i < p->n_outputs; i++) {
            const eng_tensor *t = &e->tensors[p->outputs[i]];
            shapes[i].rank = t->rank;
            memcpy(shapes[i].dims, t->dims, sizeof shapes[i].dims);
            shapes[i].sufficient = t->bytes >= eng_tensor_bytes(t);
        }
    if (s == NND_UNSUPPORTED) s = NND_GENERAL_FAILURE;
    return s;
}

void eng_exec_reset(eng_exec *e) {
    const eng_prepared *p = e->p;
    memcpy(e->tensors, p->tensors, sizeof(eng_tensor) * p->n_operands);
    for (uint32_t i = 0; i < p->n_operands; i++)
        if (p->slot[i] != NND_NO_SLOT) {
            e->tensors[i].data = e->arena + p->slot[i];
            e->tensors[i].bytes = eng_tensor_bytes(&e->tensors[i]);
        }
}

/* A constant pool that lost its pages (engine.h: eng_memory_view.lost) reads as zeros:
 * no execution of the model may compute from it again. */
static schema_status constants_intact(const eng_prepared *p, char *err, size_t errlen) {
    for (uint32_t i = 0; i < p->n_pools; i++)
        if (p->pools[i].lost && p->pools[i].lost(p->pools[i].ctx))
            return schema_failf(err, errlen, NND_GENERAL_FAILURE,
                                "constant pool %u of this prepared model shrank after "
                                "preparation: the prepared model is no longer usable, prepare "
                                "the model again",
                                i);
    return NND_OK;
}

schema_status eng_exec_run(eng_exec *e, const eng_io *inputs, const eng_io *outputs,
                           eng_output_shape *shapes, const eng_checkpoint *cp, char *err,
                           size_t errlen) {
    const eng_prepared *p = e->p;
    schema_status intact = constants_intact(p, err, errlen);
    if (intact) return intact;
    e->started = false;
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
                    t->device_sync = NND_HOST_ONLY;
            t->data = io_slot(e, p->n_inputs + i, t->bytes);
            e->out_caller[i] = NULL;
            if (!t->data) {
                schema_errf(err, errlen, "out of memory for output %u", i);
                return NND_GENERAL_FAILURE;
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
            return NND_GENERAL_FAILURE;
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
        return NND_GENERAL_FAILURE;
    }
    schema_status intact = constants_intact(e->p, err, errlen);
    if (intact) return intact;
    return eng_exec_steps(e, from, shapes, cp, err, errlen);
}
