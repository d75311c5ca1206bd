/* xnn.c: the XNNPACK backend (backend.h). Claims CONV_2D, DEPTHWISE_CONV_2D,
 * FULLY_CONNECTED, AVERAGE_POOL_2D, MAX_POOL_2D, ADD, MUL, RELU, RELU1, RELU6, LOGISTIC
 * and TANH on TENSOR_FLOAT32 and TENSOR_QUANT8_ASYMM, and HARD_SWISH and ELU (a constant
 * alpha) on TENSOR_FLOAT32, when shapes and parameters are fixed at prepare and XNNPACK
 * computes what the reference does:
 * - NHWC only; no per-channel quantized filters (XNNPACK's qc8 wants signed inputs).
 * - QUANT8 AVERAGE_POOL_2D only without padding (XNNPACK's qu8 average counts padded
 *   pixels; the reference does not) and with the output's quantization equal to the
 *   input's (the reference averages stored values). TANH on FLOAT32 has no XNNPACK
 *   operator in this version.
 * - XNNPACK's QUANT8 arithmetic requantizes in float (round to nearest even) where the
 *   reference uses gemmlowp fixed point: results agree within one step, the conformance
 *   tolerance. XNNPACK refuses some scale ratios at create; those steps stay reference.
 * Operators are created (weights packed) at claim and set up once there, so the
 * indirection buffers exist before the first execution; each run sets up the same shapes
 * with the execution's pointers, which allocates nothing, under a per-step lock because
 * an operator holds its setup. One pthreadpool, sized to the CPUs this process may use,
 * serves every operator; it is made with XNNPACK's initialization, once per process. Its
 * workers spin between the operators of an execution and sleep after its last. */
#include <pthread.h>
#include <pthreadpool.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <xnnpack.h>

#include "backend.h"
#include "ops/conv_walk.h"
#include "ops/fused_activation.h"
#include "ops/image_geometry.h"
#include "ops/kernel_errors.h"
#include "ops/operand.h"

/* ---- process-wide state ---------------------------------------------------------------- */

static pthread_once_t xnn_once = PTHREAD_ONCE_INIT;
static bool xnn_ready;
static pthreadpool_t xnn_pool; /* NULL: one CPU, operators run on the caller */

static void xnn_init(void) {
    if (xnn_initialize(NULL) != xnn_status_success) return;
    cpu_set_t set;
    long cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    if (cpus > 1) xnn_pool = pthreadpool_create((size_t)cpus);
    xnn_ready = true;
}

/* ---- per-step state ---------------------------------------------------------------- */

enum xnn_kind {
    XK_CONV,
    XK_FC,
    XK_AVG_POOL,
    XK_MAX_POOL,
    XK_ADD,
    XK_MUL,
    XK_CLAMP,
    XK_SIGMOID,
    XK_TANH,
    XK_HARD_SWISH, /* FLOAT32 only */
    XK_ELU         /* FLOAT32 only */
};

typedef struct xnn_step {
    xnn_operator_t op;
    enum xnn_kind kind;
    bool q8;        /* QUANT8_ASYMM, else FLOAT32 */
    uint32_t flags; /* for every create: XNN_FLAG_YIELD_WORKERS on a plan's last step */
    /* Setup arguments: images are batch x h x w, FC batch rows, unary ops n elements. */
    size_t batch, h, w;
    size_t a_rank, b_rank, a_shape[NND_MAX_RANK], b_shape[NND_MAX_RANK];
    size_t in_bytes[2], out_bytes; /* bytes of input 0 (and 1) read and output written */
    nnd_op_fn reference;
    pthread_mutex_t lock;
} xnn_step;

static size_t tensor_bytes(const nnd_tensor *t) {
    return nnd_elems(t) * nnd_type_size(t->type);
}

static enum xnn_status setup(xnn_step *s, const void *a, const void *b, void *y) {
    pthreadpool_t tp = xnn_pool;
    switch (s->kind) {
    case XK_CONV:
        return s->q8 ? xnn_setup_convolution2d_nhwc_qu8(s->op, s->batch, s->h, s->w, a, y, tp)
                     : xnn_setup_convolution2d_nhwc_f32(s->op, s->batch, s->h, s->w, a, y, tp);
    case XK_AVG_POOL:
        return s->q8 ? xnn_setup_average_pooling2d_nhwc_qu8(s->op, s->batch, s->h, s->w, a, y, tp)
                     : xnn_setup_average_pooling2d_nhwc_f32(s->op, s->batch, s->h, s->w, a, y, tp);
    case XK_MAX_POOL:
        return s->q8 ? xnn_setup_max_pooling2d_nhwc_u8(s->op, s->batch, s->h, s->w, a, y, tp)
                     : xnn_setup_max_pooling2d_nhwc_f32(s->op, s->batch, s->h, s->w, a, y, tp);
    case XK_FC:
        return s->q8 ? xnn_setup_fully_connected_nc_qu8(s->op, s->batch, a, y, tp)
                     : xnn_setup_fully_connected_nc_f32(s->op, s->batch, a, y, tp);
    case XK_ADD:
        return s->q8 ? xnn_setup_add_nd_qu8(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a,
                                            b, y, tp)
                     : xnn_setup_add_nd_f32(s->op, s->a_rank, s->a_shape, s->b_rank, s->b_shape, a,
                                            b, y, tp);
    case XK_MUL:
        return s->q8 ? xnn_setup_multiply_nd_qu8(s->op, s->a_rank, s->a_shape, s->b_rank,
                                                 s->b_shape, a, b, y, tp)
                     : xnn_setup_multiply_nd_f32(s->op, s->a_rank, s->a_shape, s->b_rank,
                                                 s->b_shape, a, b, y, tp);
    case XK_CLAMP:
        return s->q8 ? xnn_setup_clamp_nc_u8(s->op, 1, a, y, tp)
                     : xnn_setup_clamp_nc_f32(s->op, 1, a, y, tp);
    case XK_SIGMOID:
        return s->q8 ? xnn_setup_sigmoid_nc_qu8(s->op, 1, a, y, tp)
                     : xnn_setup_sigmoid_nc_f32(s->op, 1, a, y, tp);
    case XK_TANH: return xnn_setup_tanh_nc_qu8(s->op, 1, a, y, tp);
    case XK_HARD_SWISH: return xnn_setup_hardswish_nc_f32(s->op, 1, a, y, tp);
    case XK_ELU: return xnn_setup_elu_nc_f32(s->op, 1, a, y, tp);
    }
    return xnn_status_invalid_parameter;
}

static void xnn_release(void *state) {
    xnn_step *s = state;
    if (!s) return;
    if (s->op) xnn_delete_operator(s->op);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* XNNPACK may read up to XNN_EXTRA_BYTES past the end of an input. That is harmless while
 * it stays in the page holding the input's last byte (pages are at least 4 KiB); inputs
 * ending closer to a page end (caller memory can end right there) are copied to scratch
 * with room to spare. NULL when out of scratch memory. */
#define PAGE_MIN 4096u
static const void *overread_safe(nnd_op_ctx *c, const void *p, size_t n) {
    uintptr_t last = (uintptr_t)p + n - 1;
    if ((last & (PAGE_MIN - 1)) + XNN_EXTRA_BYTES < PAGE_MIN) return p;
    void *copy = nnd_scratch(c, n + XNN_EXTRA_BYTES);
    if (copy) memcpy(copy, p, n);
    return copy;
}

static nnd_status xnn_run(nnd_op_ctx *c) {
    xnn_step *s = c->state;
    bool binary = s->kind == XK_ADD || s->kind == XK_MUL;
    const nnd_tensor *a = c->in[0], *b = binary ? c->in[1] : NULL;
    nnd_tensor *y = c->out[0];
    /* The shapes were fixed at prepare; anything else goes to the reference. */
    if (tensor_bytes(a) != s->in_bytes[0] || (b && tensor_bytes(b) != s->in_bytes[1]) ||
        tensor_bytes(y) != s->out_bytes || !a->data || (b && !b->data) || !y->data)
        return s->reference(c);
    const void *ad = overread_safe(c, a->data, s->in_bytes[0]);
    const void *bd = b ? overread_safe(c, b->data, s->in_bytes[1]) : NULL;
    if (!ad || (b && !bd)) return s->reference(c);
    pthread_mutex_lock(&s->lock);
    enum xnn_status st = setup(s, ad, bd, y->data);
    if (st == xnn_status_success) st = xnn_run_operator(s->op, xnn_pool);
    pthread_mutex_unlock(&s->lock);
    if (st != xnn_status_success)
        return (nnd_fail(c, "XNNPACK operator failed (status %d)", (int)st), NND_GENERAL_FAILURE);
    return NND_OK;
}

/* ---- claims ------------------------------------------------------------------------------ */

static bool qu8_zero_point(const nnd_tensor *t) {
    return t->zero_point >= 0 && t->zero_point <= 255;
}

/* Output clamp for a fused activation: float bounds, or stored-value bounds. False when
 * the quantized range collapses (XNNPACK wants min < max). */
static bool act_bounds(const nnd_tensor *y, int32_t act, float *lo, float *hi, uint8_t *qlo,
                       uint8_t *qhi) {
    nnd_act_range_f32(act, lo, hi);
    int32_t l, h;
    nnd_act_range_quant(act, y->scale, y->zero_point, 0, 255, &l, &h);
    *qlo = (uint8_t)l, *qhi = (uint8_t)h;
    return y->type != NND_TENSOR_QUANT8_ASYMM || l < h;
}

static bool image_dims(const nnd_tensor *t, uint32_t *n, uint32_t *h, uint32_t *w, uint32_t *ch) {
    if (t->rank != 4) return false;
    *n = t->dims[0], *h = t->dims[1], *w = t->dims[2], *ch = t->dims[3];
    return true;
}

/* Paddings (top, right, bottom, left) per the explicit values or the implicit scheme, and
 * whether XNNPACK's output size (padded span - dilated window) / stride + 1 is the
 * output's. */
typedef struct window {
    uint32_t pad[4], fh, fw, sh, sw, dh, dw;
} window;

static bool window_fits(window *wd, int32_t scheme, const int32_t *explicit_tlbr, uint32_t in_h,
                        uint32_t in_w, uint32_t out_h, uint32_t out_w) {
    int32_t t = explicit_tlbr[0], l = explicit_tlbr[1], b = explicit_tlbr[2], r = explicit_tlbr[3];
    uint32_t unused;
    if (scheme) {
        nnd_implicit_padding(scheme, in_h, wd->sh, wd->fh, wd->dh, &unused, &t, &b);
        nnd_implicit_padding(scheme, in_w, wd->sw, wd->fw, wd->dw, &unused, &l, &r);
    }
    if (t < 0 || l < 0 || b < 0 || r < 0) return false;
    wd->pad[0] = (uint32_t)t, wd->pad[1] = (uint32_t)r, wd->pad[2] = (uint32_t)b;
    wd->pad[3] = (uint32_t)l;
    return out_h && out_w && nnd_window_out(in_h, wd->fh, wd->dh, wd->sh, t, b) == out_h &&
           nnd_window_out(in_w, wd->fw, wd->dw, wd->sw, l, r) == out_w;
}

/* XNNPACK builds an indirection buffer of one pointer per output pixel and window tap at
 * setup, that is at prepare: shapes come from the client, so past this bound a step stays
 * on the reference kernel instead of letting one prepare allocate without limit. */
#define XNN_MAX_INDIRECTION_BYTES (256.0 * 1024 * 1024)
static bool indirection_fits(uint32_t n, uint32_t oh, uint32_t ow, const window *wd) {
    return (double)n * oh * ow * wd->fh * wd->fw * sizeof(void *) <= XNN_MAX_INDIRECTION_BYTES;
}

/* XNNPACK asserts (an abort in Debian's build) that a quantized convolution's or fully
 * connected layer's requantization scale, input * filter / output, is in [2^-32, 256):
 * scales are the client's, so any other leaves the step to the reference kernel. */
static bool qu8_requant_ok(const nnd_tensor *x, const nnd_tensor *f, const nnd_tensor *y) {
    float r = x->scale * f->scale / y->scale; /* in float, as XNNPACK computes it */
    return r >= 0x1.0p-32f && r < 256.0f;
}

static enum xnn_status claim_conv(nnd_op_ctx *c, xnn_step *s) {
    const nnd_tensor *x = c->in[0], *f = c->in[1], *bias = c->in[2], *y = c->out[0];
    bool dw = c->def->code == NND_OP_DEPTHWISE_CONV_2D;
    nnd_conv_params p;
    if (nnd_conv_read_params(c, dw ? 1 : 0, &p) || p.nchw) return xnn_status_unsupported_parameter;
    uint32_t n, h, w, in_c, on, oh, ow, out_c;
    if (!image_dims(x, &n, &h, &w, &in_c) || !image_dims(y, &on, &oh, &ow, &out_c) ||
        f->rank != 4 || on != n)
        return xnn_status_unsupported_parameter;
    window wd = {.fh = f->dims[1],
                 .fw = f->dims[2],
                 .sh = (uint32_t)p.stride_h,
                 .sw = (uint32_t)p.stride_w,
                 .dh = (uint32_t)p.dil_h,
                 .dw = (uint32_t)p.dil_w};
    int32_t tlbr[4] = {p.pad_top, p.pad_left, p.pad_bottom, p.pad_right};
    if (!window_fits(&wd, p.scheme, tlbr, h, w, oh, ow) || !indirection_fits(n, oh, ow, &wd) ||
        (s->q8 && !qu8_requant_ok(x, f, y)))
        return xnn_status_unsupported_parameter;
    uint32_t groups = 1, group_in = in_c, group_out = out_c;
    if (dw) {
        if (f->dims[3] != out_c || p.extra <= 0 || (uint64_t)p.extra * in_c != out_c)
            return xnn_status_unsupported_parameter;
        groups = in_c, group_in = 1, group_out = (uint32_t)p.extra;
    } else if (f->dims[0] != out_c || f->dims[3] != in_c) {
        return xnn_status_unsupported_parameter;
    }
    float lo, hi;
    uint8_t qlo, qhi;
    if (!act_bounds(y, p.act, &lo, &hi, &qlo, &qhi)) return xnn_status_unsupported_parameter;
    uint32_t flags = s->flags | (dw ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0);
    s->kind = XK_CONV;
    s->batch = n, s->h = h, s->w = w;
    if (s->q8)
        return xnn_create_convolution2d_nhwc_qu8(
            wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3], wd.fh, wd.fw, wd.sh, wd.sw, wd.dh, wd.dw,
            groups, group_in, group_out, in_c, out_c, (uint8_t)x->zero_point, x->scale,
            (uint8_t)f->zero_point, f->scale, f->data, bias->data, (uint8_t)y->zero_point, y->scale,
            qlo, qhi, flags, &s->op);
    return xnn_create_convolution2d_nhwc_f32(
        wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3], wd.fh, wd.fw, wd.sh, wd.sw, wd.dh, wd.dw,
        groups, group_in, group_out, in_c, out_c, f->data, bias->data, lo, hi, flags, &s->op);
}

static enum xnn_status claim_fc(nnd_op_ctx *c, xnn_step *s) {
    const nnd_tensor *x = c->in[0], *wt = c->in[1], *bias = c->in[2], *y = c->out[0];
    if (wt->rank != 2 || !c->in[3]->data) return xnn_status_unsupported_parameter;
    size_t units = wt->dims[0], size = wt->dims[1];
    if (!units || !size || nnd_elems(x) % size || nnd_elems(y) != nnd_elems(x) / size * units ||
        (s->q8 && !qu8_requant_ok(x, wt, y)))
        return xnn_status_unsupported_parameter;
    float lo, hi;
    uint8_t qlo, qhi;
    if (!act_bounds(y, nnd_i32(c->in[3]), &lo, &hi, &qlo, &qhi))
        return xnn_status_unsupported_parameter;
    s->kind = XK_FC;
    s->batch = nnd_elems(x) / size;
    if (s->q8)
        return xnn_create_fully_connected_nc_qu8(size, units, size, units, (uint8_t)x->zero_point,
                                                 x->scale, (uint8_t)wt->zero_point, wt->scale,
                                                 wt->data, bias->data, (uint8_t)y->zero_point,
                                                 y->scale, qlo, qhi, s->flags, &s->op);
    return xnn_create_fully_connected_nc_f32(size, units, size, units, wt->data, bias->data, lo, hi,
                                             s->flags, &s->op);
}

/* Pool operands: 0 input, then explicit padding (left, right, top, bottom) or a scheme,
 * stride w, stride h, filter w, filter h, activation, optional NCHW flag. */
static enum xnn_status claim_pool(nnd_op_ctx *c, xnn_step *s) {
    const nnd_tensor *x = c->in[0], *y = c->out[0];
    bool explicit_pad = c->n_in >= 10;
    uint32_t at = explicit_pad ? 5 : 2;
    for (uint32_t i = 1; i < c->n_in; i++)
        if (!c->in[i]->data) return xnn_status_unsupported_parameter;
    if (c->n_in == at + 6 && nnd_bool(c->in[at + 5])) return xnn_status_unsupported_parameter;
    uint32_t n, h, w, ch, on, oh, ow, oc;
    if (!image_dims(x, &n, &h, &w, &ch) || !image_dims(y, &on, &oh, &ow, &oc) || on != n ||
        oc != ch)
        return xnn_status_unsupported_parameter;
    int32_t v[4];
    for (int i = 0; i < 4; i++)
        if ((v[i] = nnd_i32(c->in[at + i])) <= 0) return xnn_status_unsupported_parameter;
    window wd = {.sw = (uint32_t)v[0],
                 .sh = (uint32_t)v[1],
                 .fw = (uint32_t)v[2],
                 .fh = (uint32_t)v[3],
                 .dh = 1,
                 .dw = 1};
    int32_t tlbr[4] = {0};
    if (explicit_pad) {
        tlbr[0] = nnd_i32(c->in[3]), tlbr[1] = nnd_i32(c->in[1]);
        tlbr[2] = nnd_i32(c->in[4]), tlbr[3] = nnd_i32(c->in[2]);
    }
    int32_t scheme = explicit_pad ? 0 : nnd_i32(c->in[1]);
    if (!window_fits(&wd, scheme, tlbr, h, w, oh, ow) || !indirection_fits(n, oh, ow, &wd))
        return xnn_status_unsupported_parameter;
    bool padded = wd.pad[0] | wd.pad[1] | wd.pad[2] | wd.pad[3];
    float lo, hi;
    uint8_t qlo, qhi;
    if (!act_bounds(y, nnd_i32(c->in[at + 4]), &lo, &hi, &qlo, &qhi))
        return xnn_status_unsupported_parameter;
    s->batch = n, s->h = h, s->w = w;
    if (c->def->code == NND_OP_MAX_POOL_2D) {
        s->kind = XK_MAX_POOL;
        if (s->q8)
            return xnn_create_max_pooling2d_nhwc_u8(wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3],
                                                    wd.fh, wd.fw, wd.sh, wd.sw, 1, 1, ch, ch, ch,
                                                    qlo, qhi, s->flags, &s->op);
        return xnn_create_max_pooling2d_nhwc_f32(wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3], wd.fh,
                                                 wd.fw, wd.sh, wd.sw, 1, 1, ch, ch, ch, lo, hi,
                                                 s->flags, &s->op);
    }
    s->kind = XK_AVG_POOL;
    if (s->q8) {
        if (padded || x->scale != y->scale || x->zero_point != y->zero_point)
            return xnn_status_unsupported_parameter;
        return xnn_create_average_pooling2d_nhwc_qu8(
            0, 0, 0, 0, wd.fh, wd.fw, wd.sh, wd.sw, ch, ch, ch, (uint8_t)x->zero_point, x->scale,
            (uint8_t)y->zero_point, y->scale, qlo, qhi, s->flags, &s->op);
    }
    return xnn_create_average_pooling2d_nhwc_f32(wd.pad[0], wd.pad[1], wd.pad[2], wd.pad[3], wd.fh,
                                                 wd.fw, wd.sh, wd.sw, ch, ch, ch, lo, hi, s->flags,
                                                 &s->op);
}

static void shape_of(const nnd_tensor *t, size_t *rank, size_t *shape) {
    /* A rank-0 tensor broadcasts like one element. */
    *rank = t->rank ? t->rank : 1;
    shape[0] = 1;
    for (uint32_t i = 0; i < t->rank; i++)
        shape[i] = t->dims[i];
}

static enum xnn_status claim_binary(nnd_op_ctx *c, xnn_step *s) {
    const nnd_tensor *a = c->in[0], *b = c->in[1], *y = c->out[0];
    if (a->type != b->type || a->rank > XNN_MAX_TENSOR_DIMS || b->rank > XNN_MAX_TENSOR_DIMS ||
        !c->in[2]->data || (s->q8 && (!qu8_zero_point(b) || !qu8_zero_point(y))))
        return xnn_status_unsupported_parameter;
    float lo, hi;
    uint8_t qlo, qhi;
    if (!act_bounds(y, nnd_i32(c->in[2]), &lo, &hi, &qlo, &qhi))
        return xnn_status_unsupported_parameter;
    shape_of(a, &s->a_rank, s->a_shape);
    shape_of(b, &s->b_rank, s->b_shape);
    s->in_bytes[1] = tensor_bytes(b);
    bool add = c->def->code == NND_OP_ADD;
    s->kind = add ? XK_ADD : XK_MUL;
    uint8_t za = (uint8_t)a->zero_point, zb = (uint8_t)b->zero_point, zy = (uint8_t)y->zero_point;
    if (s->q8 && add)
        return xnn_create_add_nd_qu8(za, a->scale, zb, b->scale, zy, y->scale, qlo, qhi, s->flags,
                                     &s->op);
    if (s->q8)
        return xnn_create_multiply_nd_qu8(za, a->scale, zb, b->scale, zy, y->scale, qlo, qhi,
                                          s->flags, &s->op);
    return add ? xnn_create_add_nd_f32(lo, hi, s->flags, &s->op)
               : xnn_create_multiply_nd_f32(lo, hi, s->flags, &s->op);
}

static enum xnn_status claim_unary(nnd_op_ctx *c, xnn_step *s) {
    const nnd_tensor *x = c->in[0], *y = c->out[0];
    size_t n = nnd_elems(x);
    s->batch = n;
    uint8_t zx = (uint8_t)x->zero_point, zy = (uint8_t)y->zero_point;
    int32_t act;
    switch (c->def->code) {
    case NND_OP_LOGISTIC:
        s->kind = XK_SIGMOID;
        if (s->q8)
            return xnn_create_sigmoid_nc_qu8(n, n, n, zx, x->scale, zy, y->scale, 0, 255, s->flags,
                                             &s->op);
        return xnn_create_sigmoid_nc_f32(n, n, n, s->flags, &s->op);
    case NND_OP_TANH:
        s->kind = XK_TANH;
        if (!s->q8) return xnn_status_unsupported_parameter;
        return xnn_create_tanh_nc_qu8(n, n, n, zx, x->scale, zy, y->scale, 0, 255, s->flags,
                                      &s->op);
    case NND_OP_HARD_SWISH:
        s->kind = XK_HARD_SWISH;
        if (s->q8) return xnn_status_unsupported_parameter;
        return xnn_create_hardswish_nc_f32(n, n, n, s->flags, &s->op);
    case NND_OP_ELU:
        s->kind = XK_ELU;
        if (s->q8 || !c->in[1]->data) return xnn_status_unsupported_parameter;
        return xnn_create_elu_nc_f32(n, n, n, nnd_f32(c->in[1]), s->flags, &s->op);
    case NND_OP_RELU1: act = NND_FUSED_RELU1; break;
    case NND_OP_RELU6: act = NND_FUSED_RELU6; break;
    default: act = NND_FUSED_RELU; break;
    }
    float lo, hi;
    uint8_t qlo, qhi;
    if (!act_bounds(y, act, &lo, &hi, &qlo, &qhi)) return xnn_status_unsupported_parameter;
    s->kind = XK_CLAMP;
    if (s->q8) return xnn_create_clamp_nc_u8(n, n, n, qlo, qhi, s->flags, &s->op);
    return xnn_create_clamp_nc_f32(n, n, n, lo, hi, s->flags, &s->op);
}

static void *xnn_claim(nnd_op_ctx *c, bool last) {
    enum xnn_status (*claim)(nnd_op_ctx *, xnn_step *);
    switch (c->def->code) {
    case NND_OP_CONV_2D:
    case NND_OP_DEPTHWISE_CONV_2D: claim = claim_conv; break;
    case NND_OP_FULLY_CONNECTED: claim = claim_fc; break;
    case NND_OP_AVERAGE_POOL_2D:
    case NND_OP_MAX_POOL_2D: claim = claim_pool; break;
    case NND_OP_ADD:
    case NND_OP_MUL: claim = claim_binary; break;
    case NND_OP_RELU:
    case NND_OP_RELU1:
    case NND_OP_RELU6:
    case NND_OP_LOGISTIC:
    case NND_OP_TANH:
    case NND_OP_HARD_SWISH:
    case NND_OP_ELU: claim = claim_unary; break;
    default: return NULL;
    }
    const nnd_tensor *x = c->in[0], *y = c->out[0];
    bool weighted = claim == claim_conv || claim == claim_fc;
    /* FLOAT32 and unsigned 8-bit only: TENSOR_QUANT8_ASYMM_SIGNED (XNNPACK's qs8) stays on
     * the reference kernels until a fast path reproduces them exactly. */
    if (c->n_in < 1 || c->n_out != 1 || x->type != y->type ||
        (x->type != NND_TENSOR_FLOAT32 && x->type != NND_TENSOR_QUANT8_ASYMM) ||
        nnd_elems(x) == 0 || nnd_elems(y) == 0 || !qu8_zero_point(x) || !qu8_zero_point(y))
        return NULL;
    /* Weights and bias must be constants of the input's kind (no per-channel filter). */
    if (weighted &&
        (c->n_in < 4 || !c->in[1]->data || !c->in[2]->data || c->in[1]->type != x->type ||
         !qu8_zero_point(c->in[1]) ||
         c->in[2]->type != (x->type == NND_TENSOR_FLOAT32 ? NND_TENSOR_FLOAT32 : NND_TENSOR_INT32)))
        return NULL;
    pthread_once(&xnn_once, xnn_init);
    if (!xnn_ready) return NULL;
    xnn_step *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->q8 = x->type == NND_TENSOR_QUANT8_ASYMM;
    /* pthreadpool workers spin for a while after each parallel region: right between
     * the operators of one execution, wasted after its last. */
    s->flags = last ? XNN_FLAG_YIELD_WORKERS : 0;
    s->reference = nnd_op_kernel(c->def, x->type);
    s->in_bytes[0] = tensor_bytes(x);
    s->out_bytes = tensor_bytes(y);
    pthread_mutex_init(&s->lock, NULL);
    /* A first setup on stand-in pointers (never dereferenced) sizes the indirection
     * buffers, so that executions only re-point them. */
    static const uint8_t stand_in[64];
    uint8_t stand_out[64];
    if (!s->reference || claim(c, s) != xnn_status_success ||
        setup(s, stand_in, stand_in, stand_out) != xnn_status_success) {
        xnn_release(s);
        return NULL;
    }
    return s;
}

const nnd_backend nnd_backend_xnnpack = {
    .name = "xnnpack",
    .claim = xnn_claim,
    .run = xnn_run,
    .release = xnn_release,
};
