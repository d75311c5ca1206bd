/* SPDX-License-Identifier: Apache-2.0 */
/* flow_run.c: IF and WHILE at execution: subgraph runs bound to the outer tensors, the
 * loop's carried values, the loop timeout, and stopping and resuming inside. See flow.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/core/flow.h"
#include "engine/base/clock.h"

#define FAIL(st, ...) (schema_errf(err, errlen, __VA_ARGS__), (st))

enum { FLOW_IDLE, FLOW_BRANCH, FLOW_CONDITION, FLOW_BODY };

typedef struct flow_buf {
    void *data;
    size_t cap;
} flow_buf;

struct eng_flow_state {
    int phase;        /* FLOW_IDLE, or where a stopped run of this step continues */
    bool then_branch; /* IF: the branch that runs */
    /* WHILE: the loop's inputs, carried values first, as the next condition and body read
     * them; the buffers holding carried values the body wrote; the condition's output. */
    uint32_t n_values, n_carried;
    eng_tensor *values;
    eng_tensor **value_ptrs;
    flow_buf *held;
    eng_tensor cond;
    eng_tensor *cond_ptr;
    uint8_t cond_byte;
    uint64_t iterations;
    uint64_t start_ns;   /* the loop's start, moved on by the time it spent stopped */
    uint64_t stopped_ns; /* when a checkpoint stopped it */
};

schema_status eng_flow_exec_init(eng_exec *e) {
    const eng_prepared *p = e->p;
    if (!p->n_flow_steps) return SCHEMA_OK;
    if (!(e->flow = calloc(p->n_steps, sizeof *e->flow))) return SCHEMA_GENERAL_FAILURE;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        eng_flow_state *f = &e->flow[k];
        if (!st->sub[0] || st->def->code != SCHEMA_OP_WHILE) continue;
        f->n_values = st->n_in - 2;
        f->n_carried = st->sub[1]->n_outputs;
        f->values = calloc(f->n_values, sizeof *f->values);
        f->value_ptrs = calloc(f->n_values, sizeof *f->value_ptrs);
        f->held = calloc(f->n_carried, sizeof *f->held);
        if (!f->values || !f->value_ptrs || !f->held) return SCHEMA_GENERAL_FAILURE;
        for (uint32_t i = 0; i < f->n_values; i++)
            f->value_ptrs[i] = &f->values[i];
        f->cond = (eng_tensor){.type = SCHEMA_TENSOR_BOOL8,
                               .rank = 1,
                               .dims = {1},
                               .data = &f->cond_byte,
                               .bytes = 1,
                               .lifetime = SCHEMA_MODEL_OUTPUT,
                               .known = true};
        f->cond_ptr = &f->cond;
    }
    return SCHEMA_OK;
}

void eng_flow_exec_free(eng_exec *e) {
    for (uint32_t k = 0; e->flow && k < e->p->n_steps; k++) {
        eng_flow_state *f = &e->flow[k];
        for (uint32_t i = 0; f->held && i < f->n_carried; i++)
            free(f->held[i].data);
        free(f->held);
        free(f->values);
        free(f->value_ptrs);
    }
    free(e->flow);
    e->flow = NULL;
}

void eng_flow_reset(eng_exec *e) {
    for (uint32_t k = 0; e->flow && k < e->p->n_steps; k++)
        e->flow[k].phase = FLOW_IDLE;
}

/* ---- one subgraph run ------------------------------------------------------------------- */

/* The checkpoint a subgraph's run calls: the outer one, told the outer step's index. */
typedef struct nested {
    const eng_checkpoint *outer;
    uint32_t step;
} nested;

static schema_status nested_check(void *ctx, uint32_t next_op) {
    const nested *n = ctx;
    (void)next_op;
    return n->outer->check(n->outer->ctx, n->step);
}

static void dims_text(const eng_tensor *t, char *buf, size_t len) {
    size_t at = (size_t)snprintf(buf, len, "[");
    for (uint32_t r = 0; r < t->rank && at < len; r++)
        at += (size_t)snprintf(buf + at, len - at, r ? ",%u" : "%u", t->dims[r]);
    if (at < len) snprintf(buf + at, len - at, "]");
}

/* Binds subgraph exec x for a fresh run: input i reads in[i] in place; output j is written
 * into dst[j] (an outer tensor of known shape with room for it) or, where dst is NULL or
 * dst[j] is, into x's own buffer, sized as a temporary is. */
static schema_status bind_sub(eng_exec *x, eng_tensor *const *in, eng_tensor *const *dst,
                              const char *what, char *err, size_t errlen) {
    const eng_prepared *q = x->p;
    eng_exec_reset(x);
    x->insufficient = false;
    x->started = true;
    x->stopped_at = UINT32_MAX;
    for (uint32_t i = 0; i < q->n_inputs; i++) {
        eng_tensor *t = &x->tensors[q->inputs[i]];
        const eng_tensor *src = in[i];
        bool fits = !t->rank || t->rank == src->rank;
        for (uint32_t r = 0; fits && t->rank && r < t->rank; r++)
            fits = !t->dims[r] || t->dims[r] == src->dims[r];
        if (!fits) {
            char have[96], want[96];
            dims_text(src, have, sizeof have);
            dims_text(t, want, sizeof want);
            return FAIL(SCHEMA_INVALID_ARGUMENT,
                        "%s: input %u has dimensions %s, the subgraph's operand %u declares %s",
                        what, i, have, q->inputs[i], want);
        }
        t->rank = src->rank;
        memcpy(t->dims, src->dims, sizeof t->dims);
        t->known = true;
        t->data = src->data;
        t->bytes = src->bytes;
    }
    for (uint32_t j = 0; j < q->n_outputs; j++) {
        uint32_t o = q->outputs[j];
        eng_tensor *t = &x->tensors[o];
        if (dst && dst[j]) {
            t->data = dst[j]->data;
            t->bytes = dst[j]->bytes;
            continue;
        }
        t->lifetime = SCHEMA_TEMPORARY; /* kept in x: sized by the run, as a temporary is */
        t->data = NULL;
        t->bytes = 0;
        if (t->known) {
            schema_status s = eng_exec_size_operand(x, o, err, errlen);
            if (s) return s;
        }
    }
    return SCHEMA_OK;
}

/* Runs (or with resume, continues) a bound subgraph exec x for step k of its caller. A
 * failure of its own gets `what` in front of its message; a checkpoint's is left as is. */
static schema_status run_sub(uint32_t k, eng_exec *x, bool resume, const eng_checkpoint *cp,
                             const char *what, char *err, size_t errlen) {
    nested n = {cp, k};
    eng_checkpoint w = {.check = cp && cp->check ? nested_check : NULL,
                        .ctx = &n,
                        .loop_timeout_ns = cp ? cp->loop_timeout_ns : 0};
    schema_status s = eng_exec_steps(x, resume ? x->stopped_at : 0, NULL, &w, err, errlen);
    if (!s && x->insufficient)
        return FAIL(SCHEMA_GENERAL_FAILURE, "%s: an output is larger than the operand it feeds",
                    what);
    if (s && x->stopped_at == UINT32_MAX && err && errlen) {
        char inner[SCHEMA_ERR_LEN];
        snprintf(inner, sizeof inner, "%s", err);
        schema_errf(err, errlen, "%s: %s", what, inner);
    }
    return s;
}

/* After a subgraph run of step k failed with s: a checkpoint's stop is remembered so that
 * the step continues there; anything else ends the step. */
static schema_status stopped(eng_exec *e, uint32_t k, const eng_exec *x, int phase,
                             schema_status s) {
    eng_flow_state *f = &e->flow[k];
    if (x->stopped_at == UINT32_MAX) {
        f->phase = FLOW_IDLE;
        return s;
    }
    f->phase = phase;
    f->stopped_ns = eng_now_ns();
    e->stopped_at = k;
    return s;
}

/* Outer output t (operand o of e) takes the shape and bytes a subgraph produced. A
 * temporary gets a buffer of e's own (or, with swap, exchanges buffers with the subgraph
 * exec, copying nothing); a model output is copied into, or reported insufficient. */
static schema_status hand_over(eng_exec *e, uint32_t o, eng_tensor *t, const eng_tensor *r,
                               flow_buf *swap, char *err, size_t errlen) {
    t->rank = r->rank;
    memcpy(t->dims, r->dims, sizeof t->dims);
    t->known = true;
    size_t need = eng_tensor_bytes(t);
    if (need == SIZE_MAX) return FAIL(SCHEMA_GENERAL_FAILURE, "operand %u is too large", o);
    if (t->lifetime == SCHEMA_TEMPORARY && swap) {
        void *b = e->dyn[o];
        size_t cap = e->dyn_cap[o];
        e->dyn[o] = swap->data;
        e->dyn_cap[o] = swap->cap;
        swap->data = b;
        swap->cap = cap;
        t->data = e->dyn[o];
        t->bytes = e->dyn_cap[o];
        return SCHEMA_OK;
    }
    if (t->lifetime == SCHEMA_TEMPORARY) {
        schema_status s = eng_exec_size_operand(e, o, err, errlen);
        if (s) return s;
    } else if (t->bytes < need) {
        e->insufficient = true;
        return SCHEMA_OK;
    }
    if (need) memcpy(t->data, r->data, need);
    return SCHEMA_OK;
}

/* Whether output t of step k is written in place: the plan knows its shape and it has
 * room (the arena's slot, or the caller's buffer). */
static bool in_place(const eng_exec *e, uint32_t o, const eng_tensor *t) {
    return e->p->tensors[o].known && t->data && t->bytes >= eng_tensor_bytes(t);
}

static schema_status same_dims(const eng_tensor *r, const eng_tensor *t, const char *what,
                               uint32_t j, uint32_t o, char *err, size_t errlen) {
    if (r->rank == t->rank && !memcmp(r->dims, t->dims, sizeof(uint32_t) * r->rank))
        return SCHEMA_OK;
    char have[96], want[96];
    dims_text(r, have, sizeof have);
    dims_text(t, want, sizeof want);
    return FAIL(SCHEMA_GENERAL_FAILURE, "%s: output %u has dimensions %s, its operand %u has %s",
                what, j, have, o, want);
}

/* ---- IF ---------------------------------------------------------------------------------- */

static schema_status run_if(eng_exec *e, uint32_t k, const eng_checkpoint *cp, char *err,
                            size_t errlen) {
    const eng_step *st = &e->p->steps[k];
    eng_flow_state *f = &e->flow[k];
    eng_tensor **in = e->ptrs + e->step_ptr[k], **out = in + st->n_in;
    bool resume = f->phase == FLOW_BRANCH;
    if (!resume) {
        if (!in[0]->data || in[0]->bytes < 1)
            return FAIL(SCHEMA_GENERAL_FAILURE, "IF #%u: the condition has no value", st->index);
        f->then_branch = *(const uint8_t *)in[0]->data != 0;
    }
    uint32_t b = f->then_branch ? 0 : 1;
    eng_exec *x = e->subs[st->sub_index[b]];
    char what[64];
    snprintf(what, sizeof what, "IF #%u %s branch (subgraph %u)", st->index, b ? "else" : "then",
             st->sub_index[b]);
    eng_tensor *dst[64];
    for (uint32_t j = 0; j < st->n_out; j++)
        dst[j] = in_place(e, st->out[j], out[j]) ? out[j] : NULL;
    schema_status s = resume ? SCHEMA_OK : bind_sub(x, in + 3, dst, what, err, errlen);
    if (!s) s = run_sub(k, x, resume, cp, what, err, errlen);
    if (s) return stopped(e, k, x, FLOW_BRANCH, s);
    f->phase = FLOW_IDLE;
    for (uint32_t j = 0; j < st->n_out && !s; j++) {
        uint32_t xo = x->p->outputs[j];
        const eng_tensor *r = &x->tensors[xo];
        if (dst[j]) {
            s = same_dims(r, out[j], what, j, st->out[j], err, errlen);
        } else {
            flow_buf mine = {x->dyn[xo], x->dyn_cap[xo]};
            s = hand_over(e, st->out[j], out[j], r, &mine, err, errlen);
            x->dyn[xo] = mine.data;
            x->dyn_cap[xo] = mine.cap;
        }
    }
    return s;
}

/* ---- WHILE ------------------------------------------------------------------------------- */

static uint64_t loop_timeout(const eng_checkpoint *cp) {
    uint64_t t = cp ? cp->loop_timeout_ns : 0;
    if (!t) return ENG_LOOP_TIMEOUT_DEFAULT_NS;
    return t > ENG_LOOP_TIMEOUT_MAX_NS ? ENG_LOOP_TIMEOUT_MAX_NS : t;
}

/* The body's outputs become the carried values: their buffers move to the loop, the loop's
 * old ones (read by the body just run, dead now) to the body for its next iteration. */
static void carry(eng_flow_state *f, eng_exec *xb) {
    for (uint32_t i = 0; i < f->n_carried; i++) {
        uint32_t o = xb->p->outputs[i];
        flow_buf old = f->held[i];
        f->held[i] = (flow_buf){xb->dyn[o], xb->dyn_cap[o]};
        xb->dyn[o] = old.data;
        xb->dyn_cap[o] = old.cap;
        eng_tensor *v = &f->values[i];
        *v = xb->tensors[o];
        v->data = f->held[i].data;
        v->bytes = f->held[i].cap;
    }
}

static schema_status run_while(eng_exec *e, uint32_t k, const eng_checkpoint *cp, char *err,
                               size_t errlen) {
    const eng_step *st = &e->p->steps[k];
    eng_flow_state *f = &e->flow[k];
    eng_tensor **in = e->ptrs + e->step_ptr[k], **out = in + st->n_in;
    eng_exec *xc = e->subs[st->sub_index[0]], *xb = e->subs[st->sub_index[1]];
    uint64_t timeout = loop_timeout(cp);
    int phase = f->phase;
    char what[96];
    schema_status s = SCHEMA_OK;
    if (phase == FLOW_IDLE) {
        for (uint32_t i = 0; i < f->n_values; i++)
            f->values[i] = *in[2 + i];
        f->iterations = 0;
        f->start_ns = eng_now_ns();
    } else {
        f->start_ns += eng_now_ns() - f->stopped_ns; /* time spent stopped does not count */
    }
    for (;;) {
        if (phase != FLOW_BODY) {
            snprintf(what, sizeof what, "WHILE #%u condition (subgraph %u), iteration %llu",
                     st->index, st->sub_index[0], (unsigned long long)f->iterations);
            if (phase == FLOW_IDLE)
                s = bind_sub(xc, f->value_ptrs, &f->cond_ptr, what, err, errlen);
            if (!s) s = run_sub(k, xc, phase == FLOW_CONDITION, cp, what, err, errlen);
            if (s) return stopped(e, k, xc, FLOW_CONDITION, s);
            phase = FLOW_IDLE;
            if (!f->cond_byte) break;
            uint64_t ran = eng_now_ns() - f->start_ns;
            if (ran > timeout) {
                f->phase = FLOW_IDLE;
                return FAIL(SCHEMA_MISSED_DEADLINE_TRANSIENT,
                            "WHILE #%u: the loop ran %llu ms, past its timeout of %llu ms, and "
                            "its condition still held after %llu iterations",
                            st->index, (unsigned long long)(ran / 1000000),
                            (unsigned long long)(timeout / 1000000),
                            (unsigned long long)f->iterations);
            }
        }
        snprintf(what, sizeof what, "WHILE #%u body (subgraph %u), iteration %llu", st->index,
                 st->sub_index[1], (unsigned long long)f->iterations);
        if (phase == FLOW_IDLE) s = bind_sub(xb, f->value_ptrs, NULL, what, err, errlen);
        if (!s) s = run_sub(k, xb, phase == FLOW_BODY, cp, what, err, errlen);
        if (s) return stopped(e, k, xb, FLOW_BODY, s);
        phase = FLOW_IDLE;
        carry(f, xb);
        f->iterations++;
    }
    f->phase = FLOW_IDLE;
    snprintf(what, sizeof what, "WHILE #%u", st->index);
    for (uint32_t j = 0; j < st->n_out && !s; j++) {
        if (in_place(e, st->out[j], out[j])) {
            s = same_dims(&f->values[j], out[j], what, j, st->out[j], err, errlen);
            size_t need = eng_tensor_bytes(out[j]);
            if (!s && need) memcpy(out[j]->data, f->values[j].data, need);
        } else {
            s = hand_over(e, st->out[j], out[j], &f->values[j], NULL, err, errlen);
        }
    }
    return s;
}

schema_status eng_flow_run(eng_exec *e, uint32_t k, const eng_checkpoint *cp, char *err,
                           size_t errlen) {
    return e->p->steps[k].def->code == SCHEMA_OP_IF ? run_if(e, k, cp, err, errlen)
                                                    : run_while(e, k, cp, err, errlen);
}
