/* SPDX-License-Identifier: Apache-2.0 */
/* rewrites.c: preparation's rewrites of a claimed plan (rewrites.h): a MEAN and the ADD of 0
 * that requantizes it, rounded once; FP16 regions computed in float. */
#include "engine/core/rewrites.h"

#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/core/internal.h"
#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/operand.h"

/* The smallest ratio of the ADD's output scale to the constant's for which the ADD of 0
 * still passes every value through: its 2^20 headroom then keeps the rounding of the
 * intermediate sums far below half a step. */
#define FOLD_MIN_SCALE_RATIO (1.0 / 16384.0)

/* Per operand, how many step inputs read it and the last step that does: one pass over
 * the steps, so that the fold stays linear in the model however many MEANs it has. */
typedef struct reader_count {
    uint32_t n, last;
} reader_count;

static reader_count *count_readers(const struct eng_prepared *p) {
    reader_count *r = calloc(p->n_operands ? p->n_operands : 1, sizeof *r);
    if (!r) return NULL;
    for (uint32_t k = 0; k < p->n_steps; k++)
        for (uint32_t j = 0; j < p->steps[k].n_in; j++) {
            uint32_t o = p->steps[k].in[j];
            if (o >= p->n_operands) continue;
            r[o].n++;
            r[o].last = k;
        }
    return r;
}

/* A constant 8-bit tensor of the given type whose every element is real 0. */
static bool constant_zero(const eng_tensor *t, int32_t type) {
    if (t->type != type || !t->data || !t->known) return false;
    if (t->lifetime != SCHEMA_CONSTANT_COPY && t->lifetime != SCHEMA_CONSTANT_REFERENCE)
        return false;
    size_t n = eng_elems(t);
    int32_t qmin = eng_q8_min(type);
    for (size_t i = 0; i < n; i++)
        if (eng_q8_get(t->data, i, qmin) != t->zero_point) return false;
    return n > 0;
}

static bool same_shape(const eng_tensor *a, const eng_tensor *b) {
    return a->known && b->known && a->rank == b->rank &&
           memcmp(a->dims, b->dims, sizeof(uint32_t) * a->rank) == 0;
}

/* Whether step k (a MEAN) writes a temporary that only an ADD of 0 reads; its index then
 * in *add. */
static bool foldable(const struct eng_prepared *p, const reader_count *readers, uint32_t k,
                     uint32_t *add) {
    const eng_step *mean = &p->steps[k];
    if (mean->def->code != SCHEMA_OP_MEAN || mean->n_out != 1) return false;
    const eng_tensor *t = &p->tensors[mean->out[0]];
    if (!eng_is_quant8(t->type) || t->lifetime != SCHEMA_TEMPORARY) return false;
    if (readers[mean->out[0]].n != 1) return false;
    *add = readers[mean->out[0]].last;
    const eng_step *a = &p->steps[*add];
    if (a->def->code != SCHEMA_OP_ADD || a->n_in != 3 || a->n_out != 1) return false;
    uint32_t other = a->in[0] == mean->out[0] ? a->in[1] : a->in[0];
    const eng_tensor *c = &p->tensors[other], *act = &p->tensors[a->in[2]];
    const eng_tensor *out = &p->tensors[a->out[0]];
    if (!act->data || act->type != SCHEMA_INT32 || eng_i32(act) != 0) return false;
    if (!constant_zero(c, t->type) || out->type != t->type || !same_shape(out, t)) return false;
    return out->scale > 0 && (double)out->scale >= FOLD_MIN_SCALE_RATIO * (double)c->scale;
}

uint32_t eng_fold_requantize(struct eng_prepared *p) {
    uint32_t folded = 0, means = 0;
    if (p->dynamic) return 0;
    for (uint32_t k = 0; k < p->n_steps; k++)
        means += p->steps[k].def->code == SCHEMA_OP_MEAN;
    if (!means) return 0;
    reader_count *readers = count_readers(p);
    if (!readers) return 0; /* out of memory: the model runs unfolded, as the spec reads it */
    for (uint32_t k = 0; k < p->n_steps; k++) {
        uint32_t add;
        if (!foldable(p, readers, k, &add)) continue;
        uint32_t tmp = p->steps[k].out[0], out = p->steps[add].out[0];
        p->tensors[tmp].scale = p->operands[tmp].scale = p->tensors[out].scale;
        p->tensors[tmp].zero_point = p->operands[tmp].zero_point = p->tensors[out].zero_point;
        folded++;
    }
    free(readers);
    return folded;
}

/* ---- FP16 regions ---- */

static bool takes_float(const eng_step *st, bool output, uint32_t j) {
    const eng_backend *b = st->backend;
    return b && b->float32_operand && b->float32_operand(st->state, output, j);
}

uint32_t eng_plan_fp16_regions(eng_prepared *p) {
    if (p->dynamic) return 0;
    bool *widen = malloc(sizeof(bool) * (p->n_operands + 1));
    if (!widen) return 0; /* every step still converts its own operands */
    for (uint32_t i = 0; i < p->n_operands; i++) {
        const eng_tensor *t = &p->tensors[i];
        widen[i] = t->lifetime == SCHEMA_TEMPORARY && t->type == SCHEMA_TENSOR_FLOAT16 && t->known;
    }
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        for (uint32_t j = 0; j < st->n_in; j++)
            widen[st->in[j]] &= takes_float(st, false, j);
        for (uint32_t j = 0; j < st->n_out; j++)
            widen[st->out[j]] &= takes_float(st, true, j);
    }
    uint32_t changed = 0;
    for (uint32_t i = 0; i < p->n_operands; i++)
        if (widen[i]) p->tensors[i].type = SCHEMA_TENSOR_FLOAT32, changed++;
    free(widen);
    return changed;
}
