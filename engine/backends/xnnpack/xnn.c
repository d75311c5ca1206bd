/* SPDX-License-Identifier: Apache-2.0 */
/* xnn.c: the XNNPACK backend (backend.h). Claims CONV_2D, DEPTHWISE_CONV_2D,
 * FULLY_CONNECTED, AVERAGE_POOL_2D, MAX_POOL_2D, ADD, SUB, MUL, RELU, RELU1, RELU6,
 * LOGISTIC and TANH on TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM and TENSOR_QUANT8_ASYMM_SIGNED,
 * HARD_SWISH and ELU (a constant alpha) on TENSOR_FLOAT32, BATCH_MATMUL on TENSOR_FLOAT32
 * and TENSOR_QUANT8_ASYMM_SIGNED, SOFTMAX on the last axis on TENSOR_FLOAT32 and
 * TENSOR_QUANT8_ASYMM (xnn_batch_matmul.c, xnn_transformer.c), DIV (xnn_eltwise.c), MEAN over the
 * trailing axes, RSQRT and SQRT on TENSOR_FLOAT32 (xnn_norm.c), when shapes and parameters are
 * fixed at prepare and XNNPACK computes what the reference does (the families' claims:
 * xnn_conv.c, xnn_eltwise.c; signed operators: xnn_qs8.c):
 * - NHWC only; per-channel quantized filters (TENSOR_QUANT8_SYMM_PER_CHANNEL) only with
 *   signed inputs (XNNPACK's qc8); signed per-tensor filters only with zero point 0.
 * - XNNPACK's 8-bit arithmetic requantizes in float (round to nearest even) where the
 *   reference uses gemmlowp fixed point: results agree within one step, the conformance
 *   tolerance. XNNPACK refuses some scale ratios at create; those steps stay reference.
 *   Where the CPU has AVX-512 (VNNI), 8-bit convolutions and ADD/SUB of one shape take the
 *   engine's own kernels instead, bit-exact with the reference (xnn_qconv.c, qadd.h).
 * - TENSOR_FLOAT16: every operation above with a FLOAT32 operator takes it (xnn_fp16.c):
 *   constants converted to float once here, FP16 activations converted where they meet
 *   the operator, and none between steps of an FP16 region (float32_operand()).
 * Operators are created (weights packed) at claim and set up once there, so the
 * indirection buffers exist before the first execution; each run sets up the same shapes
 * with the execution's pointers, which allocates nothing, under a per-step lock because
 * an operator holds its setup. One pthreadpool, sized to the CPUs this process may use,
 * serves every operator; it is made with XNNPACK's initialization, once per process, and its
 * threads are pinned to CPUs of their own, off the caller's (pool_place.h). Its
 * workers spin between the operators of an execution and sleep after its last. While other
 * threads fill the machine's CPUs an operator runs on the calling thread alone
 * (cpu_crowd.h says why). Packed
 * weights live in xnn_alloc.h's blocks, kept for reuse after their operator goes. */
#include <pthread.h>
#include <pthreadpool.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backend.h"
#include "engine/backends/xnnpack/cpu_crowd.h"
#include "engine/backends/xnnpack/pool_place.h"
#include "engine/base/footprint.h"
#include "engine/ops_common/fused_activation.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/backends/xnnpack/xnn_alloc.h"
#include "engine/backends/xnnpack/xnn_step.h"

/* ---- process-wide state ---------------------------------------------------------------- */

static pthread_once_t xnnb_once = PTHREAD_ONCE_INIT;
static bool xnnb_ready;
static pthreadpool_t xnnb_pool; /* NULL: one CPU, operators run on the caller */

static void xnnb_init(void) {
    if (xnn_initialize(eng_xnn_allocator()) != xnn_status_success) return;
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    if (cpus > 1) xnnb_pool = pthreadpool_create((size_t)cpus);
    eng_pool_place_init(xnnb_pool);
    xnnb_ready = true;
}

/* ---- per-step state ---------------------------------------------------------------- */

/* The pool, or NULL (the calling thread alone) while other threads fill the CPUs
 * (cpu_crowd.h). An operator is set up and run with the same choice. */
static pthreadpool_t xnnb_threads(void) {
    if (!xnnb_pool || eng_cpus_crowded(pthreadpool_get_threads_count(xnnb_pool))) return NULL;
    eng_pool_place_caller();
    return xnnb_pool;
}

/* Points the operator at this run's memory; a composite's run sets up itself. */
static enum xnn_status setup(xnnb_step *s, const void *a, const void *b, void *y,
                             pthreadpool_t tp) {
    return s->kind ? s->kind->setup(s, a, b, y, tp) : xnn_status_success;
}

static void xnnb_release(void *state) {
    xnnb_step *s = state;
    if (!s) return;
    if (s->op) xnn_delete_operator(s->op);
    if (s->composite) s->composite->release(s->extra);
    free(s->wide[0]), free(s->wide[1]);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* Where the operator reads input j from: the caller's or arena memory, a constant
 * converted at claim, or (an FP16 tensor of an f16 step) its float conversion in scratch.
 * NULL when out of scratch memory. */
static const void *operator_input(eng_op_ctx *c, const xnnb_step *s, int j, const eng_tensor *t) {
    size_t n = s->in_elems[j];
    if (s->wide[j]) return s->wide[j];
    if (t->type != SCHEMA_TENSOR_FLOAT16)
        return xnnb_overread_safe(c, t, t->data, n * schema_type_size(t->type));
    float *f = eng_scratch(c, n * sizeof(float) + XNN_EXTRA_BYTES);
    if (f) xnnb_f16_to_f32(t->data, f, n);
    return f;
}

/* A call the operator cannot take: the reference kernel's, unless an FP16 region gave
 * some tensor of this step float storage the reference does not read. */
static schema_status not_taken(eng_op_ctx *c, const xnnb_step *s) {
    for (uint32_t j = 0; s->f16 && j < c->n_in + c->n_out; j++) {
        const eng_tensor *t = j < c->n_in ? c->in[j] : c->out[j - c->n_in];
        if (t->type == SCHEMA_TENSOR_FLOAT32)
            return (eng_fail(c, "an FP16 step inside a float region cannot run its fast path "
                                "(out of scratch memory, or shapes other than prepared)"),
                    SCHEMA_GENERAL_FAILURE);
    }
    return s->reference(c);
}

static schema_status xnnb_run(eng_op_ctx *c) {
    xnnb_step *s = c->state;
    if (!s->kind) return s->composite->run(c, s, xnnb_threads());
    bool binary = s->kind->binary;
    const eng_tensor *a = c->in[0], *b = binary ? c->in[1] : NULL;
    eng_tensor *y = c->out[0];
    /* The shapes were fixed at prepare; anything else goes to the reference. */
    if (eng_elems(a) != s->in_elems[0] || (b && eng_elems(b) != s->in_elems[1]) ||
        eng_elems(y) != s->out_elems || !a->data || (b && !b->data) || !y->data)
        return not_taken(c, s);
    const void *ad = operator_input(c, s, 0, a), *bd = b ? operator_input(c, s, 1, b) : NULL;
    bool narrow_out = y->type == SCHEMA_TENSOR_FLOAT16;
    size_t out_bytes = s->out_elems * schema_type_size(y->type);
    void *yd = narrow_out ? eng_scratch(c, s->out_elems * sizeof(float)) : y->data;
    /* Multi-pass max pooling (windows over 9 elements) reads its output back in whole
     * vectors, up to XNN_EXTRA_BYTES past its end: the inputs' rule, then a copy out. */
    if (s->kind->reads_output && !narrow_out)
        yd = (void *)xnnb_overread_safe(c, y, y->data, out_bytes);
    if (!ad || (b && !bd) || !yd) return not_taken(c, s);
    pthreadpool_t tp = xnnb_threads();
    pthread_mutex_lock(&s->lock);
    enum xnn_status st = setup(s, ad, bd, yd, tp);
    if (st == xnn_status_success) st = xnn_run_operator(s->op, tp);
    pthread_mutex_unlock(&s->lock);
    if (st != xnn_status_success)
        return (eng_fail(c, "XNNPACK operator failed (status %d)", (int)st),
                SCHEMA_GENERAL_FAILURE);
    if (narrow_out)
        xnnb_f32_to_f16(yd, y->data, s->out_elems);
    else if (yd != y->data)
        memcpy(y->data, yd, out_bytes);
    return SCHEMA_OK;
}

static bool xnnb_float32_operand(const void *state, bool output, uint32_t j) {
    const xnnb_step *s = state;
    bool binary = s->kind && s->kind->binary;
    return s->f16 && (output ? j == 0 : j == 0 || (binary && j == 1));
}

/* ---- claims ------------------------------------------------------------------------------ */

typedef enum xnn_status (*family_claim)(eng_op_ctx *, xnnb_step *);

/* The claim of the operation's fast path (XNNB_FAST_PATHS), NULL for none; *weighted
 * says whether the step takes a constant filter and bias. */
static family_claim family_of(int32_t code, bool *weighted) {
    switch (code) {
#define XNNB_CASE(op, claim, w)                                                                    \
    case SCHEMA_OP_##op: *weighted = (w); return claim;
        XNNB_FAST_PATHS(XNNB_CASE)
#undef XNNB_CASE
    default: return NULL;
    }
}

static bool eight_bit(int32_t type) {
    return type == SCHEMA_TENSOR_QUANT8_ASYMM || type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED;
}

/* Below this many input and output elements a step without weights stays on the reference
 * kernel: an XNNPACK operator is kilobytes of state to create and hold and a setup per run,
 * more than such a loop costs (a 100,000-step chain of [4] ADDs compiled 3 to 5 times faster
 * without them). The model's last step keeps its operator, whose run lets the pool's
 * workers rest (XNN_FLAG_YIELD_WORKERS). */
#define XNNB_MIN_ELEMENTS 16

/* Whether the step's tensors (of one computing type) are of a kind the families take. */
static bool claimable(const eng_op_ctx *c, bool weighted, bool last) {
    const eng_tensor *x = c->in[0], *y = c->out[0];
    if (x->type != y->type || (x->type != SCHEMA_TENSOR_FLOAT32 && !eight_bit(x->type)) ||
        eng_elems(x) == 0 || eng_elems(y) == 0 || !xnnb_zero_point_fits(x) ||
        !xnnb_zero_point_fits(y))
        return false;
    if (!weighted)
        return last || eng_elems(x) >= XNNB_MIN_ELEMENTS || eng_elems(y) >= XNNB_MIN_ELEMENTS;
    /* Weights and bias must be constants of the input's kind; a per-channel filter only
     * with signed inputs (qc8). */
    const eng_tensor *f = c->in[1], *bias = c->in[2];
    bool filter_kind = f->type == x->type || (x->type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED &&
                                              f->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL);
    return c->n_in >= 4 && f->data && bias->data && filter_kind && xnnb_zero_point_fits(f) &&
           bias->type ==
               (x->type == SCHEMA_TENSOR_FLOAT32 ? SCHEMA_TENSOR_FLOAT32 : SCHEMA_TENSOR_INT32);
}

/* Creates the operator and, with a first setup on stand-in pointers (never
 * dereferenced), its indirection buffers, so that executions only re-point them. */
static bool create(eng_op_ctx *c, xnnb_step *s, family_claim claim) {
    static const uint8_t stand_in[64];
    uint8_t stand_out[64];
    return claim(c, s) == xnn_status_success &&
           setup(s, stand_in, stand_in, stand_out, xnnb_pool) == xnn_status_success;
}

static void *xnnb_claim(eng_op_ctx *c, bool last) {
    bool weighted = false;
    family_claim claim = family_of(c->def->code, &weighted);
    if (!claim || c->n_in < 1 || c->n_out != 1) return NULL;
    /* An FP16 step runs the FLOAT32 operator on its tensors widened to float. */
    bool f16 = c->in[0]->type == SCHEMA_TENSOR_FLOAT16;
    eng_op_ctx wide_c;
    xnnb_widened w = {0};
    if (f16 && !xnnb_widen(c, &wide_c, &w)) return NULL;
    eng_op_ctx *cc = f16 ? &wide_c : c;
    xnnb_step *s = NULL;
    if (claimable(cc, weighted, last)) {
        pthread_once(&xnnb_once, xnnb_init);
        s = xnnb_ready ? calloc(1, sizeof *s) : NULL;
    }
    if (s) {
        int32_t t = c->in[0]->type;
        s->dt = t == SCHEMA_TENSOR_QUANT8_ASYMM          ? XD_QU8
                : t == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED ? XD_QS8
                                                         : XD_F32;
        s->f16 = f16;
        /* pthreadpool workers spin for a while after each parallel region: right between
         * the operators of one execution, wasted after its last. */
        s->flags = last ? XNN_FLAG_YIELD_WORKERS : 0;
        s->reference = eng_op_kernel(c->def, c->in[0]->type);
        s->in_elems[0] = eng_elems(c->in[0]);
        s->out_elems = eng_elems(c->out[0]);
        pthread_mutex_init(&s->lock, NULL);
        if (!s->reference || !create(cc, s, claim)) {
            xnnb_release(s);
            s = NULL;
        }
    }
    /* Constant data inputs stay converted for the runs; weights are packed already. */
    for (int j = 0; s && f16 && j < 2 && (uint32_t)j < c->n_in; j++)
        if (xnnb_float32_operand(s, false, (uint32_t)j)) s->wide[j] = w.owned[j], w.owned[j] = NULL;
    if (f16) xnnb_widened_free(&w);
    /* The operators and packed weights counted themselves (xnn_alloc.h); the step adds its
     * own state and converted constants. */
    if (s) {
        eng_footprint_add_block(s);
        eng_footprint_add_block(s->wide[0]);
        eng_footprint_add_block(s->wide[1]);
    }
    return s;
}

const eng_backend eng_backend_xnnpack = {
    .name = "xnnpack",
    .claim = xnnb_claim,
    .run = xnnb_run,
    .release = xnnb_release,
    .float32_operand = xnnb_float32_operand,
};
