/* SPDX-License-Identifier: Apache-2.0 */
/* prepare.c: validated model -> immutable plan: execution order, shapes inferred as far
 * as they are known, a kernel per operation, and one arena for temporaries laid out by
 * liveness so that temporaries whose lifetimes do not overlap share bytes. */
#include <stdlib.h>
#include <string.h>

#include "engine/core/arena_plan.h"
#include "engine/backend.h"
#include "engine/plugins/extension.h"
#include "engine/core/flow.h"
#include "engine/base/footprint.h"
#include "engine/core/internal.h"
#include "engine/core/rewrites.h"
#include "engine/core/partition.h"
#include "engine/core/partition_sub.h"

#define FAIL(...) (schema_errf(err, errlen, __VA_ARGS__), SCHEMA_INVALID_ARGUMENT)

void eng_prepared_free(eng_prepared *p) {
    if (!p) return;
    for (uint32_t k = 0; p->steps && k < p->n_steps; k++)
        if (p->steps[k].part_len)
            eng_partition_release(p->steps[k].state); /* a driver partition's first step */
        else if (p->steps[k].backend && !p->steps[k].part_member)
            p->steps[k].backend->release(p->steps[k].state);
    for (uint32_t i = 0; i < p->n_pools; i++)
        if (p->pools[i].release) p->pools[i].release(p->pools[i].ctx);
    free(p->pools);
    free(p->operands);
    free(p->tensors);
    free(p->slot);
    free(p->driver_owned);
    free(p->steps);
    free(p->operand_lists);
    free(p->inputs);
    free(p->outputs);
    free(p->constants);
    free(p->channel_scales);
    free(p->channel_quant);
    free(p->extension_blobs);
    for (uint32_t i = 0; p->subplans && i < p->n_subplans; i++)
        eng_prepared_free(p->subplans[i]);
    free(p->subplans);
    eng_ext_release(p->ext_held, p->n_ext_held); /* last: step defs live in the plugins */
    free(p);
}

uint32_t eng_prepared_num_inputs(const eng_prepared *p) {
    return p->n_inputs;
}
uint32_t eng_prepared_num_outputs(const eng_prepared *p) {
    return p->n_outputs;
}
uint32_t eng_prepared_num_operations(const eng_prepared *p) {
    return p->n_steps;
}
const eng_operand_desc *eng_prepared_input(const eng_prepared *p, uint32_t i) {
    return i < p->n_inputs ? &p->operands[p->inputs[i]] : NULL;
}
const eng_operand_desc *eng_prepared_output(const eng_prepared *p, uint32_t i) {
    return i < p->n_outputs ? &p->operands[p->outputs[i]] : NULL;
}

static bool scalars_constant(const eng_prepared *p, const eng_step *st) {
    for (uint32_t j = 0; j < st->n_in; j++) {
        const eng_tensor *t = &p->tensors[st->in[j]];
        if (t->lifetime == SCHEMA_NO_VALUE) continue;
        if (!t->known) return false;
        if (!schema_type_is_tensor(t->type) && !t->data) return false;
    }
    return true;
}

static bool same_shape(const eng_tensor *a, const eng_tensor *b) {
    return a->known && b->known && a->rank == b->rank &&
           !memcmp(a->dims, b->dims, sizeof(uint32_t) * a->rank);
}

static void set_shape(eng_tensor *t, const eng_tensor *from) {
    t->rank = from->rank;
    memcpy(t->dims, from->dims, sizeof t->dims);
}

/* An IF's or WHILE's output shapes from the prepared subgraphs where they are fixed (both
 * branches agree; a loop's body keeps its carried shapes), else ENG_DEFER: the shapes become
 * known at execution. */
static schema_status flow_shape(const eng_prepared *p, const eng_step *st, eng_tensor **out) {
    const eng_prepared *a = st->sub[0], *b = st->sub[1];
    for (uint32_t j = 0; j < st->n_out; j++) {
        if (st->def->code == SCHEMA_OP_IF) {
            /* Both branches give the same shape: the IF's output has it whichever runs. */
            const eng_tensor *x = &a->tensors[a->outputs[j]], *y = &b->tensors[b->outputs[j]];
            if (!same_shape(x, y)) return ENG_DEFER;
            set_shape(out[j], x);
        } else {
            /* The body keeps a carried value's shape: the loop ends with the one it began. */
            const eng_tensor *x = &p->tensors[st->in[2 + j]], *y = &b->tensors[b->outputs[j]];
            if (!same_shape(x, y)) return ENG_DEFER;
            set_shape(out[j], x);
        }
    }
    return SCHEMA_OK;
}

/* Infers output shapes where inputs allow; marks the plan dynamic otherwise. A shape the
 * model declares must agree with the inferred one. */
static schema_status infer_shapes(eng_prepared *p, bool relaxed, char *err, size_t errlen) {
    eng_tensor *in[512], *out[64];
    for (uint32_t k = 0; k < p->n_steps; k++) {
        eng_step *st = &p->steps[k];
        bool flow = st->sub[0] != NULL;
        if (!flow && (!scalars_constant(p, st) || !st->def->shape)) {
            p->dynamic = true;
            continue;
        }
        eng_tensor declared[64];
        for (uint32_t j = 0; j < st->n_in; j++)
            in[j] = &p->tensors[st->in[j]];
        for (uint32_t j = 0; j < st->n_out; j++) {
            out[j] = &p->tensors[st->out[j]];
            declared[j] = *out[j];
        }
        eng_op_ctx c = {.def = st->def,
                        .index = st->index,
                        .in = in,
                        .n_in = st->n_in,
                        .out = out,
                        .n_out = st->n_out,
                        .relaxed = relaxed,
                        .err = err,
                        .errlen = errlen};
        schema_status s = flow ? flow_shape(p, st, out) : st->def->shape(&c);
        if (s == ENG_DEFER) {
            for (uint32_t j = 0; j < st->n_out; j++)
                *out[j] = declared[j];
            p->dynamic = true;
            continue;
        }
        if (s) return s;
        for (uint32_t j = 0; j < st->n_out; j++) {
            const eng_tensor *d = &declared[j];
            bool agree = d->rank == 0 || d->rank == out[j]->rank;
            for (uint32_t r = 0; agree && r < d->rank; r++)
                agree = d->dims[r] == 0 || d->dims[r] == out[j]->dims[r];
            if (!agree)
                return FAIL("%s #%u: output %u (operand %u) is declared with other dimensions than "
                            "the operation produces",
                            st->def->name, st->index, j, st->out[j]);
            out[j]->known = true;
            eng_operand_desc *od = &p->operands[st->out[j]];
            od->rank = out[j]->rank;
            memcpy(od->dims, out[j]->dims, sizeof od->dims);
        }
    }
    return SCHEMA_OK;
}

static size_t align_up(size_t n) {
    return (n + ENG_ARENA_ALIGN - 1) & ~(size_t)(ENG_ARENA_ALIGN - 1);
}

static const uint8_t *constant_bytes(const eng_model_desc *m, const eng_operand_desc *o) {
    return (o->lifetime == SCHEMA_CONSTANT_COPY ? m->operand_values : m->pools[o->pool].base) +
           o->offset;
}

/* CONSTANT_COPY values are copied; CONSTANT_REFERENCE values are used in place unless
 * they are misaligned for their element type. */
static bool needs_own_copy(const eng_model_desc *m, const eng_operand_desc *o) {
    if (o->lifetime == SCHEMA_CONSTANT_COPY) return o->length > 0;
    if (o->lifetime != SCHEMA_CONSTANT_REFERENCE) return false;
    size_t align = schema_type_size(o->type);
    return align > 1 && (uintptr_t)constant_bytes(m, o) % align != 0;
}

static schema_status copy_model(eng_prepared *p, const eng_model_desc *m, const uint32_t *order,
                                char *err, size_t errlen) {
    p->n_operands = m->n_operands;
    p->n_inputs = m->n_inputs;
    p->n_outputs = m->n_outputs;
    p->n_steps = m->n_operations;
    p->relaxed = m->relaxed;
    p->reference_only = m->reference_only;
    size_t n_scales = 0, n_lists = 0;
    for (uint32_t i = 0; i < m->n_operands; i++)
        n_scales += m->operands[i].channel_quant.n_scales;
    for (uint32_t k = 0; k < m->n_operations; k++)
        n_lists += m->operations[k].n_inputs + m->operations[k].n_outputs;
    p->operands = malloc(sizeof(eng_operand_desc) * (m->n_operands + 1));
    p->tensors = malloc(sizeof(eng_tensor) * (m->n_operands + 1));
    p->slot = malloc(sizeof(size_t) * (m->n_operands + 1));
    p->channel_quant = calloc(m->n_operands + 1, sizeof(eng_channel_quant));
    p->channel_scales = malloc(sizeof(float) * (n_scales + 1));
    p->steps = calloc(m->n_operations, sizeof(eng_step));
    p->operand_lists = malloc(sizeof(uint32_t) * (n_lists + 1));
    p->inputs = malloc(sizeof(uint32_t) * m->n_inputs);
    p->outputs = malloc(sizeof(uint32_t) * m->n_outputs);
    size_t const_bytes = 0, blob_bytes = 0;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        if (needs_own_copy(m, &m->operands[i])) const_bytes += align_up(m->operands[i].length);
        blob_bytes += m->operands[i].extension_len;
    }
    p->extension_blobs = malloc(blob_bytes + 1);
    p->constants_bytes = align_up(const_bytes + 1);
    p->constants = aligned_alloc(ENG_ARENA_ALIGN, p->constants_bytes);
    if (!p->operands || !p->tensors || !p->slot || !p->channel_quant || !p->channel_scales ||
        !p->steps || !p->operand_lists || !p->inputs || !p->outputs || !p->constants ||
        !p->extension_blobs)
        return FAIL("out of memory preparing model");
    memcpy(p->operands, m->operands, sizeof(eng_operand_desc) * m->n_operands);
    memcpy(p->inputs, m->inputs, sizeof(uint32_t) * m->n_inputs);
    memcpy(p->outputs, m->outputs, sizeof(uint32_t) * m->n_outputs);
    float *sc = p->channel_scales;
    size_t at = 0, blob_at = 0;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        eng_operand_desc *o = &p->operands[i];
        if (needs_own_copy(m, o)) {
            /* Kernels may read constants as int32 or float: give each an aligned home. */
            memcpy(p->constants + at, constant_bytes(m, o), o->length);
            o->lifetime = SCHEMA_CONSTANT_COPY;
            o->offset = at;
            at += align_up(o->length);
        }
        /* Extension data is borrowed from the caller; plugins see it at execution too. */
        if (o->extension_len) {
            memcpy(p->extension_blobs + blob_at, o->extension_data, o->extension_len);
            o->extension_data = p->extension_blobs + blob_at;
            blob_at += o->extension_len;
        } else {
            o->extension_data = NULL;
        }
        if (o->channel_quant.n_scales) {
            memcpy(sc, o->channel_quant.scales, sizeof(float) * o->channel_quant.n_scales);
            o->channel_quant.scales = sc;
            sc += o->channel_quant.n_scales;
        }
    }
    uint32_t *lists = p->operand_lists;
    for (uint32_t k = 0; k < m->n_operations; k++) {
        const eng_operation_desc *op = &m->operations[order[k]];
        eng_step *st = &p->steps[k];
        st->def = eng_op_lookup(op->type);
        st->index = order[k];
        st->n_in = op->n_inputs;
        st->n_out = op->n_outputs;
        memcpy(lists, op->inputs, sizeof(uint32_t) * op->n_inputs);
        st->in = lists;
        lists += op->n_inputs;
        memcpy(lists, op->outputs, sizeof(uint32_t) * op->n_outputs);
        st->out = lists;
        lists += op->n_outputs;
    }
    return SCHEMA_OK;
}

/* One graph's plan: steps in order, kernels, shapes and arena. subplans holds the plans
 * of the referenced subgraphs prepared so far, every one this graph runs among them. */
static schema_status plan_graph(const eng_model_desc *m, eng_prepared *const *subplans,
                                eng_prepared **out, char *err, size_t errlen) {
    eng_prepared *p = calloc(1, sizeof *p);
    uint32_t *order = malloc(sizeof(uint32_t) * m->n_operations);
    if (!p || !order) {
        free(p), free(order);
        return FAIL("out of memory preparing model");
    }
    schema_status s = eng_order_operations(m, order, err, errlen);
    /* The plugins behind extension codes stay loaded as long as this plan. */
    if (!s) s = eng_ext_hold_model(m, &p->ext_held, &p->n_ext_held, err, errlen);
    if (!s) s = copy_model(p, m, order, err, errlen);
    free(order);
    if (!s) {
        /* Tensors point at the plan's own copy of the operand descriptions and constants. */
        eng_model_desc own = *m;
        own.operands = p->operands;
        s = eng_model_tensors(&own, p->tensors, p->channel_quant, p->constants, err, errlen);
    }
    for (uint32_t k = 0; !s && k < p->n_steps; k++) {
        eng_step *st = &p->steps[k];
        if (eng_flow_is_op(st->def->code)) {
            /* IF: inputs 1 and 2 name the branches; WHILE: inputs 0 and 1. */
            uint32_t first = st->def->code == SCHEMA_OP_IF;
            for (uint32_t j = 0; j < 2; j++) {
                st->sub_index[j] = (uint32_t)p->operands[st->in[first + j]].offset;
                st->sub[j] = subplans[st->sub_index[j]];
            }
            p->n_flow_steps++;
            continue;
        }
        const eng_tensor *key =
            st->n_in > st->def->key_input ? &p->tensors[st->in[st->def->key_input]] : NULL;
        st->run = key ? eng_op_kernel(st->def, key->type) : NULL;
        if (!st->run)
            s = (schema_errf(err, errlen, "%s #%u: no kernel for these operand types",
                             st->def->name, st->index),
                 SCHEMA_UNSUPPORTED);
    }
    if (!s) s = infer_shapes(p, m->relaxed, err, errlen);
    if (!s) s = eng_plan_arena(p, err, errlen);
    if (s) {
        eng_prepared_free(p); /* pools still belong to the caller: p->pools is NULL */
        return s;
    }
    for (uint32_t i = 0; i < p->n_operands && !p->dynamic; i++)
        if (!p->tensors[i].known && p->tensors[i].lifetime != SCHEMA_NO_VALUE &&
            p->tensors[i].lifetime != SCHEMA_SUBGRAPH)
            p->dynamic = true;
    eng_fold_requantize(p);
    *out = p;
    return SCHEMA_OK;
}

/* The referenced subgraphs' plans, callees first, into subplans (n_referenced entries). */
static schema_status plan_subgraphs(const eng_model_desc *m, eng_prepared **subplans, char *err,
                                    size_t errlen) {
    uint32_t *order = malloc(sizeof(uint32_t) * (m->n_referenced + 1));
    if (!order) return FAIL("out of memory preparing subgraphs");
    schema_status s = eng_flow_check_references(m, order, err, errlen);
    char inner[SCHEMA_ERR_LEN];
    for (uint32_t i = 0; i < m->n_referenced && !s; i++) {
        eng_model_desc view = eng_flow_graph(m, order[i]);
        inner[0] = 0;
        s = plan_graph(&view, subplans, &subplans[order[i]], inner, sizeof inner);
        if (s)
            schema_errf(err, errlen, "referenced subgraph %u: %s", order[i], inner);
        else
            eng_flow_pass_cost(subplans[order[i]]);
    }
    free(order);
    return s;
}

/* Builds the plan without taking the caller's pools: shared by prepare and validate. */
static schema_status build_plan(const eng_model_desc *m, eng_prepared **out, char *err,
                                size_t errlen) {
    *out = NULL;
    schema_status s = eng_validate_model(m, NULL, err, errlen);
    if (s) return s == SCHEMA_UNSUPPORTED ? SCHEMA_INVALID_ARGUMENT : s;
    eng_prepared **subplans = calloc(m->n_referenced + 1, sizeof *subplans);
    if (!subplans) return FAIL("out of memory preparing model");
    eng_prepared *p = NULL;
    s = plan_subgraphs(m, subplans, err, errlen);
    if (!s) s = plan_graph(m, subplans, &p, err, errlen);
    if (s) {
        for (uint32_t i = 0; i < m->n_referenced; i++)
            eng_prepared_free(subplans[i]);
        free(subplans);
        return s == SCHEMA_UNSUPPORTED ? SCHEMA_INVALID_ARGUMENT : s;
    }
    p->subplans = subplans;
    p->n_subplans = m->n_referenced;
    eng_flow_pass_cost(p);
    p->arena_total = p->arena_size;
    for (uint32_t i = 0; i < p->n_subplans; i++)
        p->arena_total += subplans[i]->arena_size;
    *out = p;
    return SCHEMA_OK;
}

/* Whether every operand of the step has a known shape (an omitted input counts as known). */
static bool shapes_known(const eng_op_ctx *c) {
    for (uint32_t j = 0; j < c->n_in; j++)
        if (!c->in[j]->known && c->in[j]->lifetime != SCHEMA_NO_VALUE) return false;
    for (uint32_t j = 0; j < c->n_out; j++)
        if (!c->out[j]->known) return false;
    return true;
}

/* Offers every step whose tensors all have known shapes and that no driver partition took
 * to XNNPACK unless cpu_fast is false, last step first (backend.h); steps it does not claim
 * keep the reference kernel. Not done for eng_validate(): claims build operators and pack
 * weights. */
static void claim_steps(eng_prepared *p, bool cpu_fast) {
    const char *env = getenv("NND_REFERENCE_KERNELS");
    if (env && *env && strcmp(env, "0") != 0) cpu_fast = false;
    if (!cpu_fast) return;
    eng_tensor *in[ENG_STEP_MAX_IN], *out[ENG_STEP_MAX_OUT];
    char err[SCHEMA_ERR_LEN]; /* a declined claim's message is not kept */
    bool last = true;
    const eng_backend *be = &eng_backend_xnnpack;
    for (uint32_t k = p->n_steps; k-- > 0;) {
        eng_step *st = &p->steps[k];
        if (st->backend || !eng_step_offerable(st)) continue; /* a driver's partition */
        eng_op_ctx c = eng_step_ctx(p, st, be, in, out, err, sizeof err);
        if (!shapes_known(&c)) continue;
        void *state = be->claim(&c, last);
        if (!state) continue;
        eng_step_take(st, be, state);
        last = false;
    }
}

/* With no CPU device, every step must have gone to a driver. */
static schema_status all_on_drivers(const eng_prepared *p, char *err, size_t errlen) {
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        if (st->backend && st->backend != &eng_backend_xnnpack) continue;
        return FAIL("%s #%u: none of the devices this compilation names runs it%s", st->def->name,
                    st->index, st->sub[0] ? " (control flow runs on the CPU devices only)" : "");
    }
    return SCHEMA_OK;
}

/* The backend a step counts for: the CPU (NULL) for the reference kernels and XNNPACK. */
static const eng_backend *device_backend(const eng_step *st) {
    return st->backend == &eng_backend_xnnpack ? NULL : st->backend;
}

/* Fills p->on once the claims are made. */
static void count_steps_on(eng_prepared *p) {
    p->n_on = 0;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_backend *b = device_backend(&p->steps[k]);
        uint32_t i = 0;
        while (i < p->n_on && p->on[i].backend != b)
            i++;
        if (i == ENG_PLAN_BACKENDS) continue; /* more backends than devices: not counted */
        if (i == p->n_on) p->on[p->n_on++].backend = b, p->on[i].steps = p->on[i].partitions = 0;
        p->on[i].steps++;
        if (p->steps[k].part_len) p->on[i].partitions++;
    }
}

uint32_t eng_prepared_steps_on(const eng_prepared *p, const eng_backend *b) {
    for (uint32_t i = 0; i < p->n_on; i++)
        if (p->on[i].backend == b) return p->on[i].steps;
    return 0;
}

uint32_t eng_prepared_partitions_on(const eng_prepared *p, const eng_backend *b) {
    for (uint32_t i = 0; i < p->n_on; i++)
        if (p->on[i].backend == b) return p->on[i].partitions;
    return 0;
}

const eng_backend *eng_prepared_step_backend(const eng_prepared *p, uint32_t k) {
    return k < p->n_steps ? device_backend(&p->steps[k]) : NULL;
}

schema_status eng_supported_operations_on(const eng_model_desc *m, bool *supported,
                                          eng_refused_fn on_refused, void *ctx, char *err,
                                          size_t errlen) {
    schema_status s = eng_supported_operations_why(m, supported, on_refused, ctx, err, errlen);
    if (s || !m->drivers_only) return s;
    eng_prepared *p = NULL;
    char ignored[SCHEMA_ERR_LEN];
    if (build_plan(m, &p, ignored, sizeof ignored) != SCHEMA_OK) {
        /* Valid operations whose model cannot be planned (shapes) have no driver step. */
        memset(supported, 0, sizeof(bool) * m->n_operations);
        return SCHEMA_OK;
    }
    /* Each driver answers for the whole graph once (partition.h). */
    bool *any = calloc(p->n_steps + 1, sizeof(bool)),
         *one = malloc(sizeof(bool) * (p->n_steps + 1));
    for (uint32_t d = 0; any && one && d < m->n_drivers; d++) {
        if (!m->drivers[d]->driver) continue;
        eng_partition_supported(p, m->drivers[d]->driver, one);
        for (uint32_t k = 0; k < p->n_steps; k++)
            any[k] |= one[k];
    }
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        if (supported[st->index] && !(supported[st->index] = any && any[k]) && on_refused)
            on_refused(ctx, st->index, "no device the request names runs it");
    }
    free(any);
    free(one);
    eng_prepared_free(p);
    return SCHEMA_OK;
}

schema_status eng_validate(const eng_model_desc *m, char *err, size_t errlen) {
    eng_prepared *p = NULL;
    schema_status s = build_plan(m, &p, err, errlen);
    eng_prepared_free(p);
    return s;
}

schema_status eng_plan(const eng_model_desc *m, eng_prepared **plan, char *err, size_t errlen) {
    return build_plan(m, plan, err, errlen);
}

/* Points one graph's plan at m's constants where m holds them in place (aligned
 * CONSTANT_REFERENCE), as a plan built from m would; false when m is not the graph the plan
 * was built from. The plan's own copies then unused are freed. */
static bool rebind_constants(eng_prepared *p, const eng_model_desc *m) {
    if (p->n_operands != m->n_operands || p->n_steps != m->n_operations) return false;
    bool own_left = false;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        const eng_operand_desc *o = &m->operands[i];
        eng_operand_desc *po = &p->operands[i];
        if (po->type != o->type || po->length != o->length) return false;
        if (o->lifetime == SCHEMA_CONSTANT_REFERENCE && !needs_own_copy(m, o)) {
            po->lifetime = o->lifetime, po->pool = o->pool, po->offset = o->offset;
            p->tensors[i].lifetime = o->lifetime;
            p->tensors[i].data = (void *)constant_bytes(m, o);
        }
        own_left |= po->lifetime == SCHEMA_CONSTANT_COPY;
    }
    if (!own_left) {
        free(p->constants);
        p->constants = NULL;
        p->constants_bytes = 0;
    }
    return true;
}

static size_t measure_bytes(const eng_prepared *p);

schema_status eng_prepare_planned(eng_prepared *p, const eng_model_desc *m, eng_prepared **out,
                                  char *err, size_t errlen) {
    schema_status s = SCHEMA_OK;
    bool same = rebind_constants(p, m) && p->n_subplans == m->n_referenced;
    for (uint32_t i = 0; same && i < p->n_subplans; i++) {
        eng_model_desc view = eng_flow_graph(m, i);
        same = rebind_constants(p->subplans[i], &view);
    }
    if (!same) {
        eng_prepared_free(p);
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "the model changed between planning and preparation");
    }
    bool cpu_fast = !m->reference_only && !m->drivers_only;
    /* What the backends allocate from here on is the model's (footprint.h). */
    eng_footprint_begin(&p->backend_bytes);
    if ((s = eng_partition_model(p, m, err, errlen)) != SCHEMA_OK) {
        eng_footprint_end();
        eng_prepared_free(p);
        return s;
    }
    claim_steps(p, cpu_fast);
    /* Subgraphs' FP16 steps convert at each fast step; only the main plan gets regions. */
    for (uint32_t i = 0; cpu_fast && i < p->n_subplans; i++) /* each pass rests the workers */
        claim_steps(p->subplans[i], true);
    eng_footprint_end();
    if (m->drivers_only && (s = all_on_drivers(p, err, errlen)) != SCHEMA_OK) {
        eng_prepared_free(p);
        return s;
    }
    count_steps_on(p);
    /* Temporaries inside FP16 regions became float: lay the arena out for their size. */
    /* Temporaries inside driver partitions get none. */
    bool widened = eng_plan_fp16_regions(p);
    if ((widened || p->driver_owned) && (s = eng_plan_arena(p, err, errlen)) != SCHEMA_OK) {
        eng_prepared_free(p);
        return s;
    }
    /* Take ownership of the constant pools last, once nothing can fail. */
    p->pools = malloc(sizeof(eng_memory_view) * (m->n_pools + 1));
    if (!p->pools) {
        eng_prepared_free(p);
        return FAIL("out of memory preparing model");
    }
    p->n_pools = m->n_pools;
    if (m->n_pools) memcpy(p->pools, m->pools, sizeof(eng_memory_view) * m->n_pools);
    p->held_bytes = measure_bytes(p);
    *out = p;
    return SCHEMA_OK;
}

schema_status eng_prepare(const eng_model_desc *m, eng_prepared **out, char *err, size_t errlen) {
    eng_prepared *p = NULL;
    schema_status s = build_plan(m, &p, err, errlen);
    return s ? s : eng_prepare_planned(p, m, out, err, errlen);
}

bool eng_prepared_reference_only(const eng_prepared *p) {
    return p->reference_only;
}

bool eng_prepared_loops(const eng_prepared *p) {
    for (uint32_t i = 0; i <= p->n_subplans; i++) {
        const eng_prepared *g = i < p->n_subplans ? p->subplans[i] : p;
        for (uint32_t k = 0; k < g->n_steps && g->n_flow_steps; k++)
            if (g->steps[k].def->code == SCHEMA_OP_WHILE) return true;
    }
    return false;
}

size_t eng_prepared_arena_bytes(const eng_prepared *p) {
    return p->arena_total;
}

/* ---- what a prepared model holds and what preparing a model copies (eng_prepared_bytes,
 * eng_model_copy_bytes: engine.h), counted from the plan; what its backends allocated is
 * the per-thread account of engine/base/footprint.h ---- */

/* One graph's plan, without its subplans. */
static size_t plan_bytes(const eng_prepared *p) {
    size_t n = sizeof *p, ops = (size_t)p->n_operands + 1, lists = 1, scales = 1, blobs = 1;
    n += ops *
         (sizeof *p->operands + sizeof *p->tensors + sizeof *p->slot + sizeof *p->channel_quant);
    for (uint32_t k = 0; k < p->n_steps; k++)
        lists += p->steps[k].n_in + p->steps[k].n_out;
    for (uint32_t i = 0; i < p->n_operands; i++) {
        const eng_operand_desc *o = &p->operands[i];
        scales += o->channel_quant.n_scales;
        blobs += o->extension_len;
    }
    n += (size_t)p->n_steps * sizeof *p->steps + lists * sizeof *p->operand_lists;
    n += ((size_t)p->n_inputs + p->n_outputs) * sizeof(uint32_t) + scales * sizeof(float);
    /* Plan-owned constants: CONSTANT_COPY ones, and references copied for alignment. */
    n += (size_t)(p->n_pools + 1) * sizeof *p->pools + p->constants_bytes + blobs;
    return n + p->backend_bytes;
}

static size_t measure_bytes(const eng_prepared *p) {
    size_t n = plan_bytes(p) + (size_t)p->n_subplans * sizeof *p->subplans;
    for (uint32_t i = 0; i < p->n_subplans; i++)
        n += plan_bytes(p->subplans[i]);
    return n;
}

size_t eng_prepared_bytes(const eng_prepared *p) {
    if (!p) return 0;
    return p->held_bytes ? p->held_bytes : measure_bytes(p);
}

/* One graph's constants a preparation copies (prepare.c: CONSTANT_COPY values, and
 * references misaligned for their element type); operands not yet validated count 0. */
static uint64_t graph_copies(const eng_model_desc *m) {
    uint64_t n = 0;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        const eng_operand_desc *o = &m->operands[i];
        if (o->lifetime == SCHEMA_CONSTANT_COPY) {
            n += o->length;
        } else if (o->lifetime == SCHEMA_CONSTANT_REFERENCE && o->pool < m->n_pools &&
                   o->offset <= m->pools[o->pool].size &&
                   o->length <= m->pools[o->pool].size - o->offset) {
            size_t align = schema_type_size(o->type);
            uintptr_t at = (uintptr_t)(m->pools[o->pool].base + o->offset);
            if (align > 1 && at % align) n += o->length;
        }
    }
    return n;
}

uint64_t eng_model_copy_bytes(const eng_model_desc *m) {
    uint64_t n = graph_copies(m);
    for (uint32_t r = 0; r < m->n_referenced; r++) {
        eng_model_desc g = eng_model_referenced(m, r);
        n += graph_copies(&g);
    }
    return n;
}
