/* common.c: shared kernel math and checks. See common.h. */
#include "common.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static nnd_status vfail(nnd_op_ctx *c, nnd_status s, const char *fmt, va_list ap) {
    if (c->err && c->errlen) {
        int n = snprintf(c->err, c->errlen, "%s #%u: ", c->def ? c->def->name : "operation",
                         c->index);
        if (n >= 0 && (size_t)n < c->errlen) vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    }
    return s;
}

nnd_status nnd_fail(nnd_op_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    nnd_status s = vfail(c, NND_INVALID_ARGUMENT, fmt, ap);
    va_end(ap);
    return s;
}

nnd_status nnd_unsupported(nnd_op_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    nnd_status s = vfail(c, NND_UNSUPPORTED, fmt, ap);
    va_end(ap);
    return s;
}

nnd_status nnd_check_count(nnd_op_ctx *c, uint32_t min_in, uint32_t max_in, uint32_t min_out,
                           uint32_t max_out) {
    if (c->n_in < min_in || c->n_in > max_in) {
        if (min_in == max_in) return nnd_fail(c, "takes %u inputs, got %u", min_in, c->n_in);
        return nnd_fail(c, "takes %u to %u inputs, got %u", min_in, max_in, c->n_in);
    }
    if (c->n_out < min_out || c->n_out > max_out) {
        if (min_out == max_out) return nnd_fail(c, "has %u outputs, got %u", min_out, c->n_out);
        return nnd_fail(c, "has %u to %u outputs, got %u", min_out, max_out, c->n_out);
    }
    return NND_OK;
}

nnd_status nnd_check_type(nnd_op_ctx *c, const nnd_tensor *t, const char *what, int n, ...) {
    va_list ap;
    va_start(ap, n);
    bool ok = false;
    for (int i = 0; i < n; i++)
        if (va_arg(ap, int) == t->type) ok = true;
    va_end(ap);
    if (ok) return NND_OK;
    return nnd_unsupported(c, "%s has type %s, not supported here", what, nnd_type_name(t->type));
}

nnd_status nnd_check_rank(nnd_op_ctx *c, const nnd_tensor *t, const char *what, uint32_t min,
                          uint32_t max) {
    if (t->rank == 0 && !t->known) return NND_OK; /* unknown rank: judged at execution */
    if (t->rank < min || t->rank > max) {
        if (min == max) return nnd_fail(c, "%s must have rank %u, has %u", what, min, t->rank);
        return nnd_fail(c, "%s must have rank %u to %u, has %u", what, min, max, t->rank);
    }
    return NND_OK;
}

nnd_status nnd_check_scalar(nnd_op_ctx *c, uint32_t i, int32_t type) {
    if (i >= c->n_in) return nnd_fail(c, "input %u missing", i);
    if (c->in[i]->type != type)
        return nnd_fail(c, "input %u must be %s, is %s", i, nnd_type_name(type),
                        nnd_type_name(c->in[i]->type));
    return NND_OK;
}

nnd_status nnd_check_activation(nnd_op_ctx *c, uint32_t i) {
    nnd_status s = nnd_check_scalar(c, i, NND_INT32);
    if (s) return s;
    const nnd_tensor *t = c->in[i];
    if (t->data) {
        int32_t a = nnd_i32(t);
        if (a < NND_FUSED_NONE || a > NND_FUSED_RELU6)
            return nnd_fail(c, "fused activation %d (input %u) is not 0..3", a, i);
    }
    return NND_OK;
}

nnd_status nnd_check_same_type(nnd_op_ctx *c, uint32_t i, uint32_t o) {
    if (c->in[i]->type != c->out[o]->type)
        return nnd_fail(c, "output %u has type %s, input %u has %s", o,
                        nnd_type_name(c->out[o]->type), i, nnd_type_name(c->in[i]->type));
    return NND_OK;
}

int32_t nnd_i32(const nnd_tensor *t) {
    int32_t v;
    memcpy(&v, t->data, sizeof v);
    return v;
}

float nnd_f32(const nnd_tensor *t) {
    if (t->type == NND_FLOAT16 || t->type == NND_TENSOR_FLOAT16) {
        nnd_half h;
        memcpy(&h, t->data, sizeof h);
        return (float)h;
    }
    float v;
    memcpy(&v, t->data, sizeof v);
    return v;
}

bool nnd_bool(const nnd_tensor *t) { return *(const uint8_t *)t->data != 0; }

size_t nnd_elems(const nnd_tensor *t) { return nnd_dims_product(t, 0, t->rank); }

size_t nnd_dims_product(const nnd_tensor *t, uint32_t from, uint32_t to) {
    size_t n = 1;
    for (uint32_t i = from; i < to && i < t->rank; i++) n *= t->dims[i];
    return n;
}

void nnd_set_shape(nnd_tensor *t, uint32_t rank, const uint32_t *dims) {
    t->rank = rank;
    for (uint32_t i = 0; i < rank; i++) t->dims[i] = dims[i];
    t->known = true;
}

void nnd_act_range_f32(int32_t act, float *lo, float *hi) {
    *lo = -INFINITY;
    *hi = INFINITY;
    if (act == NND_FUSED_RELU) *lo = 0.f;
    else if (act == NND_FUSED_RELU1) *lo = -1.f, *hi = 1.f;
    else if (act == NND_FUSED_RELU6) *lo = 0.f, *hi = 6.f;
}

void nnd_act_range_quant(int32_t act, float scale, int32_t zero_point, int32_t qmin,
                         int32_t qmax, int32_t *lo, int32_t *hi) {
    /* As the reference: quantize the real bounds with round-to-nearest, then clamp. The
     * clamp comes before the conversion to int: a tiny scale (or none, for a float output)
     * gives a quotient no int32 holds. */
#define Q(x) nnd_quantize_value((x), scale, zero_point, qmin, qmax)
    *lo = qmin;
    *hi = qmax;
    if (act == NND_FUSED_RELU) {
        *lo = Q(0.f);
    } else if (act == NND_FUSED_RELU6) {
        *lo = Q(0.f);
        *hi = Q(6.f);
    } else if (act == NND_FUSED_RELU1) {
        *lo = Q(-1.f);
        *hi = Q(1.f);
    }
#undef Q
}

void nnd_quantize_multiplier(double m, int32_t *q, int *shift) {
    if (m == 0.0) {
        *q = 0;
        *shift = 0;
        return;
    }
    double f = frexp(m, shift);
    int64_t r = (int64_t)llround(f * (double)(1ll << 31));
    if (r == (1ll << 31)) {
        r /= 2;
        ++*shift;
    }
    *q = (int32_t)r;
}

int32_t nnd_srdhm(int32_t a, int32_t b) {
    if (a == b && a == INT32_MIN) return INT32_MAX;
    int64_t ab = (int64_t)a * (int64_t)b;
    int64_t nudge = ab >= 0 ? (1 << 30) : (1 - (1 << 30));
    return (int32_t)((ab + nudge) / (1ll << 31));
}

int32_t nnd_rounding_shift_right(int32_t x, int e) {
    if (e <= 0) return x;
    if (e > 31) return 0; /* |x| / 2^32 < 1/2 rounds to 0; and no shift that wide is defined */
    int32_t mask = (int32_t)((1ll << e) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

int32_t nnd_mul_by_quantized(int32_t x, int32_t q, int shift) {
    /* A left shift past 32 saturates any non-zero x just as 32 does (and past 62 would not
     * be defined): extreme scale ratios give such shifts. */
    int left = shift > 0 ? (shift > 32 ? 32 : shift) : 0;
    int right = shift > 0 ? 0 : -shift;
    int64_t shifted = (int64_t)x * ((int64_t)1 << left);
    if (shifted > INT32_MAX) shifted = INT32_MAX;
    if (shifted < INT32_MIN) shifted = INT32_MIN;
    return nnd_rounding_shift_right(nnd_srdhm((int32_t)shifted, q), right);
}

double nnd_conv_multiplier(float in_scale, float filter_scale, float out_scale) {
    return (double)in_scale * (double)filter_scale / (double)out_scale;
}

int32_t nnd_quantize_value(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
    float v = roundf(x / scale) + (float)zero_point;
    if (!(v > (float)qmin)) return qmin; /* also catches NaN */
    if (v > (float)qmax) return qmax;
    return (int32_t)v;
}

nnd_status nnd_broadcast_shape(nnd_op_ctx *c, const nnd_tensor *a, const nnd_tensor *b,
                               nnd_tensor *out) {
    uint32_t rank = a->rank > b->rank ? a->rank : b->rank;
    uint32_t dims[NND_MAX_RANK];
    for (uint32_t i = 0; i < rank; i++) {
        int ia = (int)a->rank - (int)rank + (int)i, ib = (int)b->rank - (int)rank + (int)i;
        uint32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return nnd_fail(c, "shapes do not broadcast: dimension %u is %u and %u", i, da, db);
        dims[i] = da == 1 ? db : da;
    }
    nnd_set_shape(out, rank, dims);
    return NND_OK;
}

void nnd_broadcast_walk(const nnd_tensor *a, const nnd_tensor *b, const nnd_tensor *out,
                        nnd_bcast_row_fn row, void *ctx) {
    uint32_t rank = out->rank;
    size_t total = nnd_elems(out);
    if (total == 0) return;
    if (rank == 0) {
        row(ctx, 0, 0, 0, 0, 0, 1);
        return;
    }
    /* Element strides of a and b in output coordinates, 0 on broadcast dimensions. */
    size_t sa[NND_MAX_RANK], sb[NND_MAX_RANK];
    size_t acc_a = 1, acc_b = 1;
    for (int i = (int)rank - 1; i >= 0; i--) {
        int ia = (int)a->rank - (int)rank + i, ib = (int)b->rank - (int)rank + i;
        uint32_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        sa[i] = da == 1 ? 0 : acc_a;
        sb[i] = db == 1 ? 0 : acc_b;
        acc_a *= da;
        acc_b *= db;
    }
    uint32_t inner = out->dims[rank - 1];
    uint32_t idx[NND_MAX_RANK] = {0};
    size_t off_a = 0, off_b = 0;
    for (size_t o = 0; o < total; o += inner) {
        row(ctx, o, off_a, sa[rank - 1], off_b, sb[rank - 1], inner);
        for (int d = (int)rank - 2; d >= 0; d--) {
            idx[d]++;
            off_a += sa[d];
            off_b += sb[d];
            if (idx[d] < out->dims[d]) break;
            off_a -= sa[d] * idx[d];
            off_b -= sb[d] * idx[d];
            idx[d] = 0;
        }
    }
}

void nnd_implicit_padding(int32_t scheme, uint32_t in, uint32_t stride, uint32_t filter,
                          uint32_t dilation, uint32_t *out, int32_t *pad_head,
                          int32_t *pad_tail) {
    uint32_t eff = (filter - 1) * dilation + 1;
    *pad_head = *pad_tail = 0;
    if (scheme == NND_PADDING_SAME) {
        *out = (in + stride - 1) / stride;
        int64_t total = (int64_t)(*out - 1) * stride + eff - in;
        if (total < 0) total = 0;
        *pad_head = (int32_t)(total / 2);
        *pad_tail = (int32_t)(total - total / 2);
    } else {
        *out = in >= eff ? (in - eff + stride) / stride : 0;
    }
}

uint32_t nnd_window_out(uint32_t in, uint32_t filter, uint32_t dilation, uint32_t stride,
                        int32_t pad_head, int32_t pad_tail) {
    int64_t eff = (int64_t)(filter - 1) * dilation + 1;
    int64_t span = (int64_t)in + pad_head + pad_tail - eff;
    if (span < 0 || stride == 0) return 0;
    return (uint32_t)(span / stride + 1);
}

void nnd_image_of(const nnd_tensor *t, bool nchw, nnd_image *im) {
    if (nchw) {
        im->n = t->dims[0], im->c = t->dims[1], im->h = t->dims[2], im->w = t->dims[3];
        im->sw = 1, im->sh = im->w, im->sc = (size_t)im->h * im->w, im->sn = im->sc * im->c;
    } else {
        im->n = t->dims[0], im->h = t->dims[1], im->w = t->dims[2], im->c = t->dims[3];
        im->sc = 1, im->sw = im->c, im->sh = (size_t)im->w * im->c, im->sn = im->sh * im->h;
    }
}

void nnd_set_image_shape(nnd_tensor *t, bool nchw, uint32_t n, uint32_t h, uint32_t w,
                         uint32_t c) {
    uint32_t d[4] = {n, h, w, c};
    if (nchw) d[1] = c, d[2] = h, d[3] = w;
    nnd_set_shape(t, 4, d);
}

/* ---- type bridges ------------------------------------------------------------------- */

typedef struct bridge {
    nnd_tensor in[64], out[16];
    nnd_tensor *inp[64], *outp[16];
    nnd_op_ctx ctx;
} bridge;

static bool bridge_open(nnd_op_ctx *c, bridge *b) {
    if (c->n_in > 64 || c->n_out > 16) return false;
    b->ctx = *c;
    b->ctx.in = b->inp;
    b->ctx.out = b->outp;
    for (uint32_t i = 0; i < c->n_in; i++) b->in[i] = *c->in[i], b->inp[i] = &b->in[i];
    for (uint32_t i = 0; i < c->n_out; i++) b->out[i] = *c->out[i], b->outp[i] = &b->out[i];
    return true;
}

/* Gives t a float32 copy of its elements in scratch; conv(t, dst) fills it. */
static bool to_f32(nnd_op_ctx *c, nnd_tensor *t, bool fill) {
    size_t n = nnd_elems(t);
    float *f = nnd_scratch(c, n * sizeof(float) + 1);
    if (!f) return false;
    if (fill && t->data) {
        if (t->type == NND_TENSOR_FLOAT16 || t->type == NND_FLOAT16) {
            const nnd_half *h = t->data;
            for (size_t i = 0; i < n; i++) f[i] = (float)h[i];
        } else if (t->type == NND_TENSOR_QUANT8_ASYMM) {
            const uint8_t *q = t->data;
            for (size_t i = 0; i < n; i++) f[i] = nnd_dequantize_value(q[i], t->scale, t->zero_point);
        }
    }
    t->type = t->type == NND_FLOAT16 ? NND_FLOAT32 : NND_TENSOR_FLOAT32;
    t->data = t->data || !fill ? f : NULL;
    t->bytes = n * sizeof(float);
    return true;
}

static nnd_status bridge_run(nnd_op_ctx *c, nnd_op_fn f32, int32_t from_type) {
    bridge *b = nnd_scratch(c, sizeof *b);
    if (!b || !bridge_open(c, b)) return nnd_fail(c, "too many operands for a type bridge");
    for (uint32_t i = 0; i < c->n_in; i++) {
        nnd_tensor *t = &b->in[i];
        bool match = t->type == from_type || (from_type == NND_TENSOR_FLOAT16 && t->type == NND_FLOAT16);
        if (match && nnd_present(t) && !to_f32(c, t, true)) return NND_GENERAL_FAILURE;
    }
    for (uint32_t i = 0; i < c->n_out; i++) {
        nnd_tensor *t = &b->out[i];
        if (t->type == from_type && !to_f32(c, t, false)) return NND_GENERAL_FAILURE;
    }
    nnd_status s = f32(&b->ctx);
    if (s) return s;
    for (uint32_t i = 0; i < c->n_out; i++) {
        nnd_tensor *o = c->out[i];
        if (o->type != from_type) continue;
        const float *f = b->out[i].data;
        size_t n = nnd_elems(o);
        if (from_type == NND_TENSOR_FLOAT16) {
            nnd_half *h = o->data;
            for (size_t k = 0; k < n; k++) h[k] = (nnd_half)f[k];
        } else {
            uint8_t *q = o->data;
            for (size_t k = 0; k < n; k++)
                q[k] = (uint8_t)nnd_quantize_value(f[k], o->scale, o->zero_point, 0, 255);
        }
    }
    return NND_OK;
}

nnd_status nnd_run_f16_as_f32(nnd_op_ctx *c, nnd_op_fn f32) {
    return bridge_run(c, f32, NND_TENSOR_FLOAT16);
}

nnd_status nnd_run_quant8_as_f32(nnd_op_ctx *c, nnd_op_fn f32) {
    return bridge_run(c, f32, NND_TENSOR_QUANT8_ASYMM);
}

/* ---- convolution -------------------------------------------------------------------- */

/* Where the scalars of a windowed convolution sit, from the input count and the type of
 * the operand that is the layout flag under implicit padding (INT32 there means the
 * explicit form). */
typedef struct conv_slots {
    bool explicit_pad;
    uint32_t stride, extra, act, layout; /* input indices */
} conv_slots;

static void conv_slots_of(const nnd_op_ctx *c, uint32_t n_extra, conv_slots *s) {
    uint32_t implicit_n = 7 + n_extra;
    s->explicit_pad = c->n_in > implicit_n && c->in[implicit_n]->type == NND_INT32;
    s->stride = s->explicit_pad ? 7 : 4;
    s->extra = s->stride + 2;
    s->act = s->extra + n_extra;
    s->layout = s->act + 1;
}

nnd_status nnd_conv_check_params(nnd_op_ctx *c, uint32_t n_extra, unsigned flags) {
    nnd_status s = nnd_check_count(c, 7 + n_extra, 13 + n_extra, 1, 1);
    if (s) return s;
    conv_slots sl;
    conv_slots_of(c, n_extra, &sl);
    uint32_t n = c->n_in, base = sl.layout;
    bool ok = n == base + 1 || (!(flags & NND_CONV_LAYOUT_REQUIRED) && n == base) ||
              ((flags & NND_CONV_DILATION) && n == base + 3);
    if (!ok)
        return nnd_fail(c, "%u inputs do not form the %s padding signature", n,
                        sl.explicit_pad ? "explicit" : "implicit");
    for (uint32_t i = 3; i < n; i++)
        if ((s = nnd_check_scalar(c, i, i == base ? NND_BOOL : NND_INT32))) return s;
    for (uint32_t i = 3; i < n; i++) {
        const nnd_tensor *t = c->in[i];
        if (!t->data || i == base) continue;
        int32_t v = nnd_i32(t);
        if (i < sl.stride && sl.explicit_pad && v < 0)
            return nnd_fail(c, "padding (input %u) is %d, must not be negative", i, v);
        if (i < sl.stride && !sl.explicit_pad && v != NND_PADDING_SAME && v != NND_PADDING_VALID)
            return nnd_fail(c, "padding scheme (input %u) is %d, not 1 (SAME) or 2 (VALID)", i, v);
        if (i >= sl.stride && i != sl.act && v <= 0)
            return nnd_fail(c, "%s (input %u) is %d, must be positive",
                            i < sl.extra ? "stride" : (i < sl.act ? "parameter" : "dilation"), i,
                            v);
    }
    return nnd_check_activation(c, sl.act);
}

nnd_status nnd_conv_read_params(const nnd_op_ctx *c, uint32_t n_extra, nnd_conv_params *p) {
    conv_slots sl;
    conv_slots_of(c, n_extra, &sl);
    for (uint32_t i = 3; i < c->n_in; i++)
        if (!c->in[i]->data) return NND_DEFER;
    *p = (nnd_conv_params){.dil_w = 1, .dil_h = 1};
    if (sl.explicit_pad) {
        p->pad_left = nnd_i32(c->in[3]);
        p->pad_right = nnd_i32(c->in[4]);
        p->pad_top = nnd_i32(c->in[5]);
        p->pad_bottom = nnd_i32(c->in[6]);
    } else {
        p->scheme = nnd_i32(c->in[3]);
    }
    p->stride_w = nnd_i32(c->in[sl.stride]);
    p->stride_h = nnd_i32(c->in[sl.stride + 1]);
    if (n_extra) p->extra = nnd_i32(c->in[sl.extra]);
    p->act = nnd_i32(c->in[sl.act]);
    if (c->n_in > sl.layout) p->nchw = nnd_bool(c->in[sl.layout]);
    if (c->n_in > sl.layout + 2) {
        p->dil_w = nnd_i32(c->in[sl.layout + 1]);
        p->dil_h = nnd_i32(c->in[sl.layout + 2]);
    }
    return NND_OK;
}

nnd_status nnd_conv_check_tensors(nnd_op_ctx *c, int channel_dim) {
    const nnd_tensor *in = c->in[0], *f = c->in[1], *b = c->in[2];
    nnd_status s = nnd_check_type(c, in, "input 0", 3, NND_TENSOR_FLOAT32, NND_TENSOR_FLOAT16,
                                  NND_TENSOR_QUANT8_ASYMM);
    if (s || (s = nnd_check_same_type(c, 0, 0))) return s;
    if (in->type != NND_TENSOR_QUANT8_ASYMM) {
        if (f->type != in->type || b->type != in->type)
            return nnd_fail(c, "filter (input 1) and bias (input 2) must be %s like the input",
                            nnd_type_name(in->type));
        return NND_OK;
    }
    if (b->type != NND_TENSOR_INT32)
        return nnd_fail(c, "bias (input 2) must be TENSOR_INT32 for a quantized input, is %s",
                        nnd_type_name(b->type));
    if (f->type == NND_TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        if (channel_dim < 0)
            return nnd_fail(c, "filter (input 1) cannot be TENSOR_QUANT8_SYMM_PER_CHANNEL here");
        if (!f->channel_quant || f->channel_quant->channel_dim != (uint32_t)channel_dim)
            return nnd_fail(c, "filter (input 1) must be quantized per channel along dimension %d",
                            channel_dim);
        return NND_OK;
    }
    if (f->type != NND_TENSOR_QUANT8_ASYMM)
        return nnd_fail(c, "filter (input 1) has type %s, not TENSOR_QUANT8_ASYMM",
                        nnd_type_name(f->type));
    /* As the reference: the product is formed in float, then compared in double. */
    double product = in->scale * f->scale, bias = b->scale;
    if (fabs(product - bias) > 1e-6 * fmin(product, bias))
        return nnd_fail(c, "bias (input 2) scale %g is not input scale * filter scale (%g)",
                        b->scale, product);
    return NND_OK;
}

nnd_status nnd_conv_geometry(nnd_op_ctx *c, const nnd_conv_params *p, const nnd_tensor *in,
                             uint32_t filter_h, uint32_t filter_w, nnd_conv_geom *g) {
    nnd_image im;
    nnd_image_of(in, p->nchw, &im);
    *g = (nnd_conv_geom){.batches = im.n,
                         .in_h = im.h,
                         .in_w = im.w,
                         .in_c = im.c,
                         .filter_h = filter_h,
                         .filter_w = filter_w,
                         .stride_h = p->stride_h,
                         .stride_w = p->stride_w,
                         .dil_h = p->dil_h,
                         .dil_w = p->dil_w,
                         .nchw = p->nchw};
    if (!im.h || !im.w || !im.c)
        return nnd_fail(c, "input 0 has an empty image (height %u, width %u, depth %u)", im.h, im.w,
                        im.c);
    if (!filter_h || !filter_w) return nnd_fail(c, "filter (input 1) has an empty window");
    int64_t eff_w = (int64_t)(filter_w - 1) * p->dil_w + 1;
    int64_t eff_h = (int64_t)(filter_h - 1) * p->dil_h + 1;
    if (eff_w > INT32_MAX || eff_h > INT32_MAX) return nnd_fail(c, "dilated filter is too large");
    int32_t left = p->pad_left, right = p->pad_right, top = p->pad_top, bottom = p->pad_bottom;
    uint32_t unused;
    if (p->scheme) {
        nnd_implicit_padding(p->scheme, im.w, (uint32_t)p->stride_w, filter_w, (uint32_t)p->dil_w,
                             &unused, &left, &right);
        nnd_implicit_padding(p->scheme, im.h, (uint32_t)p->stride_h, filter_h, (uint32_t)p->dil_h,
                             &unused, &top, &bottom);
    }
    if (left >= eff_w || right >= eff_w || top >= eff_h || bottom >= eff_h)
        return nnd_fail(c, "padding (%d, %d, %d, %d) must be smaller than the %lldx%lld filter",
                        left, right, top, bottom, (long long)eff_h, (long long)eff_w);
    g->pad_left = left;
    g->pad_top = top;
    g->out_w =
        nnd_window_out(im.w, filter_w, (uint32_t)p->dil_w, (uint32_t)p->stride_w, left, right);
    g->out_h =
        nnd_window_out(im.h, filter_h, (uint32_t)p->dil_h, (uint32_t)p->stride_h, top, bottom);
    return NND_OK;
}

void nnd_conv_requant(const nnd_tensor *in, const nnd_tensor *filter, const nnd_tensor *out,
                      uint32_t n, int32_t *mult, int *shift) {
    bool per_channel = filter->type == NND_TENSOR_QUANT8_SYMM_PER_CHANNEL && filter->channel_quant;
    for (uint32_t i = 0; i < n; i++) {
        float fs = per_channel ? filter->channel_quant->scales[i] : filter->scale;
        float product = in->scale * fs; /* in float, as the reference */
        nnd_quantize_multiplier((double)product / (double)out->scale, &mult[i], &shift[i]);
    }
}

typedef struct conv_job conv_job;
struct conv_job {
    const nnd_conv_geom *g;
    const void *in;     /* NHWC; float, or int16 without the zero point */
    const void *filter; /* float, or int16 without the zero point */
    void *acc;          /* out_c accumulators, float or int32 */
    uint32_t icg, ocg;  /* input and output channels per group */
    /* acc += the products of one input pixel with one filter tap */
    void (*tap)(const conv_job *j, size_t in_off, size_t filter_off);
    /* writes acc + bias to the output pixel at out_off */
    void (*emit)(const conv_job *j, size_t out_off);
    nnd_image out_im;
    const void *bias;
    void *out;
    float lo, hi;         /* float activation range */
    int32_t qlo, qhi, zo; /* quantized activation range, output zero point */
    const int32_t *mult;  /* per output channel */
    const int *shift;
};

/* Each output channel takes the dot product of its group's input channels with its filter
 * tap; channels within a group are contiguous in both, so the inner loop is too. */
#define CONV_TAP(name, T, ACC)                                                                     \
    static void name(const conv_job *j, size_t in_off, size_t filter_off) {                        \
        const T *x = (const T *)j->in + in_off, *w = (const T *)j->filter + filter_off;            \
        ACC *acc = j->acc;                                                                         \
        size_t so = j->g->filter_oc_stride;                                                        \
        for (uint32_t grp = 0, oc = 0; grp < j->g->groups; grp++, x += j->icg)                     \
            for (uint32_t m = 0; m < j->ocg; m++, oc++) {                                          \
                const T *wo = w + oc * so;                                                         \
                ACC s = 0;                                                                         \
                for (uint32_t k = 0; k < j->icg; k++)                                              \
                    s += (ACC)x[k] * (ACC)wo[k];                                                   \
                acc[oc] += s;                                                                      \
            }                                                                                      \
    }
CONV_TAP(conv_tap_f32, float, float)
CONV_TAP(conv_tap_q, int16_t, int32_t)
#undef CONV_TAP

static void conv_emit_f32(const conv_job *j, size_t o) {
    const float *acc = j->acc, *bias = j->bias;
    float *out = j->out;
    for (uint32_t oc = 0; oc < j->g->out_c; oc++)
        out[o + oc * j->out_im.sc] = nnd_clampf(acc[oc] + bias[oc], j->lo, j->hi);
}

static void conv_emit_q8(const conv_job *j, size_t o) {
    const int32_t *acc = j->acc, *bias = j->bias;
    uint8_t *out = j->out;
    for (uint32_t oc = 0; oc < j->g->out_c; oc++) {
        int32_t v = nnd_mul_by_quantized(acc[oc] + bias[oc], j->mult[oc], j->shift[oc]) + j->zo;
        out[o + oc * j->out_im.sc] = (uint8_t)nnd_clampi(v, j->qlo, j->qhi);
    }
}

/* [*lo, *hi): the taps k of a window at origin whose origin + k * dilation lies in
 * [0, size). Padding contributes nothing, so it is simply skipped. */
static void conv_tap_span(int64_t origin, int32_t dilation, uint32_t filter, uint32_t size,
                          uint32_t *lo, uint32_t *hi) {
    int64_t a = origin < 0 ? (-origin + dilation - 1) / dilation : 0;
    int64_t b = origin < (int64_t)size ? ((int64_t)size - origin + dilation - 1) / dilation : 0;
    if (b > filter) b = filter;
    if (a > b) a = b;
    *lo = (uint32_t)a;
    *hi = (uint32_t)b;
}

static void conv_walk(const conv_job *j) {
    const nnd_conv_geom *g = j->g;
    size_t row = (size_t)g->in_w * g->in_c, image = row * g->in_h;
    for (uint32_t n = 0; n < g->batches; n++)
        for (uint32_t oy = 0; oy < g->out_h; oy++) {
            int64_t iy0 = (int64_t)oy * g->stride_h - g->pad_top;
            uint32_t ky0, ky1;
            conv_tap_span(iy0, g->dil_h, g->filter_h, g->in_h, &ky0, &ky1);
            for (uint32_t ox = 0; ox < g->out_w; ox++) {
                int64_t ix0 = (int64_t)ox * g->stride_w - g->pad_left;
                uint32_t kx0, kx1;
                conv_tap_span(ix0, g->dil_w, g->filter_w, g->in_w, &kx0, &kx1);
                memset(j->acc, 0, sizeof(int32_t) * g->out_c); /* all-zero bits: 0.0f too */
                for (uint32_t ky = ky0; ky < ky1; ky++) {
                    size_t y = (size_t)(iy0 + (int64_t)ky * g->dil_h);
                    for (uint32_t kx = kx0; kx < kx1; kx++) {
                        size_t x = (size_t)(ix0 + (int64_t)kx * g->dil_w);
                        j->tap(j, n * image + y * row + x * g->in_c,
                               ((size_t)ky * g->filter_w + kx) * g->filter_tap_stride);
                    }
                }
                j->emit(j, nnd_image_at(&j->out_im, n, oy, ox, 0));
            }
        }
}

/* n elements of t from index i with stride s into dst[o...]: floats as they are,
 * quantized values widened to int16 without their zero point. */
static void conv_widen(const nnd_tensor *t, size_t i, size_t s, size_t n, void *dst, size_t o) {
    if (t->type == NND_TENSOR_FLOAT32) {
        const float *src = t->data;
        float *d = dst;
        for (size_t k = 0; k < n; k++)
            d[o + k] = src[i + k * s];
    } else if (t->type == NND_TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        const int8_t *src = t->data;
        int16_t *d = dst;
        for (size_t k = 0; k < n; k++)
            d[o + k] = src[i + k * s];
    } else {
        const uint8_t *src = t->data;
        int16_t *d = dst;
        for (size_t k = 0; k < n; k++)
            d[o + k] = (int16_t)(src[i + k * s] - t->zero_point);
    }
}

static void conv_image(uint32_t n, uint32_t h, uint32_t w, uint32_t ch, bool nchw, nnd_image *im) {
    nnd_tensor t = {.rank = 4};
    nnd_set_image_shape(&t, nchw, n, h, w, ch);
    nnd_image_of(&t, nchw, im);
}

/* The input as NHWC elements of the kernel's type, in scratch unless usable in place. */
static const void *conv_input(nnd_op_ctx *c, const nnd_conv_geom *g, const nnd_tensor *in) {
    if (in->type == NND_TENSOR_FLOAT32 && !g->nchw) return in->data;
    size_t elem = in->type == NND_TENSOR_FLOAT32 ? sizeof(float) : sizeof(int16_t);
    size_t pixels = (size_t)g->batches * g->in_h * g->in_w;
    void *dst = nnd_scratch(c, pixels * g->in_c * elem);
    if (!dst) return NULL;
    nnd_image im;
    conv_image(g->batches, g->in_h, g->in_w, g->in_c, g->nchw, &im);
    size_t o = 0;
    for (uint32_t n = 0; n < im.n; n++)
        for (uint32_t y = 0; y < im.h; y++)
            for (uint32_t x = 0; x < im.w; x++, o += im.c)
                conv_widen(in, nnd_image_at(&im, n, y, x, 0), im.sc, im.c, dst, o);
    return dst;
}

const void *nnd_aligned_data(nnd_op_ctx *c, const nnd_tensor *t) {
    size_t size = nnd_type_size(t->type);
    if (!t->data || size <= 1 || (uintptr_t)t->data % size == 0) return t->data;
    size_t bytes = nnd_elems(t) * size;
    void *copy = nnd_scratch(c, bytes);
    if (copy) memcpy(copy, t->data, bytes);
    return copy;
}

/* The transpose of conv_walk: input pixel i scatters into output pixels i * stride - pad +
 * k, so output pixel o gathers the taps k with o + pad - k a non-negative multiple of the
 * stride, from input pixel (o + pad - k) / stride when that is inside the image. */
static void conv_walk_transposed(const conv_job *j) {
    const nnd_conv_geom *g = j->g;
    size_t row = (size_t)g->in_w * g->in_c, image = row * g->in_h;
    for (uint32_t n = 0; n < g->batches; n++)
        for (uint32_t oy = 0; oy < g->out_h; oy++) {
            int64_t ty = (int64_t)oy + g->pad_top;
            for (uint32_t ox = 0; ox < g->out_w; ox++) {
                int64_t tx = (int64_t)ox + g->pad_left;
                memset(j->acc, 0, sizeof(int32_t) * g->out_c);
                for (int64_t ky = ty % g->stride_h; ky < g->filter_h && ky <= ty;
                     ky += g->stride_h) {
                    int64_t y = (ty - ky) / g->stride_h;
                    if (y >= g->in_h) continue;
                    for (int64_t kx = tx % g->stride_w; kx < g->filter_w && kx <= tx;
                         kx += g->stride_w) {
                        int64_t x = (tx - kx) / g->stride_w;
                        if (x >= g->in_w) continue;
                        j->tap(j, n * image + (size_t)y * row + (size_t)x * g->in_c,
                               ((size_t)ky * g->filter_w + (size_t)kx) * g->filter_tap_stride);
                    }
                }
                j->emit(j, nnd_image_at(&j->out_im, n, oy, ox, 0));
            }
        }
}

static nnd_status conv_run_with(nnd_op_ctx *c, const nnd_conv_geom *g, const nnd_tensor *in,
                                const nnd_tensor *filter, const nnd_tensor *bias, nnd_tensor *out,
                                int32_t act, void (*walk)(const conv_job *)) {
    if (!g->batches || !g->out_h || !g->out_w || !g->out_c) return NND_OK;
    /* Aligned views of the operands: constants may sit at any offset. */
    nnd_tensor x = *in, w = *filter;
    x.data = (void *)nnd_aligned_data(c, in);
    w.data = (void *)nnd_aligned_data(c, filter);
    conv_job j = {.g = g,
                  .icg = g->in_c / g->groups,
                  .ocg = g->out_c / g->groups,
                  .bias = nnd_aligned_data(c, bias),
                  .out = out->data,
                  .acc = nnd_scratch(c, sizeof(int32_t) * g->out_c)};
    if (!x.data || !w.data || !j.bias || !j.acc) return NND_GENERAL_FAILURE;
    conv_image(g->batches, g->out_h, g->out_w, g->out_c, g->nchw, &j.out_im);
    if (in->type == NND_TENSOR_FLOAT32) {
        j.tap = conv_tap_f32;
        j.emit = conv_emit_f32;
        j.filter = w.data;
        nnd_act_range_f32(act, &j.lo, &j.hi);
    } else if (in->type == NND_TENSOR_QUANT8_ASYMM) {
        size_t nf = nnd_elems(filter);
        int16_t *wq = nnd_scratch(c, nf * sizeof(int16_t));
        int32_t *mult = nnd_scratch(c, sizeof(int32_t) * g->out_c);
        int *shift = nnd_scratch(c, sizeof(int) * g->out_c);
        if (!wq || !mult || !shift) return NND_GENERAL_FAILURE;
        conv_widen(&w, 0, 1, nf, wq, 0);
        nnd_conv_requant(in, filter, out, g->out_c, mult, shift);
        nnd_act_range_quant(act, out->scale, out->zero_point, 0, 255, &j.qlo, &j.qhi);
        j.tap = conv_tap_q;
        j.emit = conv_emit_q8;
        j.filter = wq;
        j.mult = mult;
        j.shift = shift;
        j.zo = out->zero_point;
    } else {
        return nnd_unsupported(c, "no convolution kernel for %s", nnd_type_name(in->type));
    }
    j.in = conv_input(c, g, &x);
    if (!j.in) return NND_GENERAL_FAILURE;
    walk(&j);
    return NND_OK;
}

nnd_status nnd_conv_run(nnd_op_ctx *c, const nnd_conv_geom *g, const nnd_tensor *in,
                        const nnd_tensor *filter, const nnd_tensor *bias, nnd_tensor *out,
                        int32_t act) {
    return conv_run_with(c, g, in, filter, bias, out, act, conv_walk);
}

nnd_status nnd_conv_transpose_run(nnd_op_ctx *c, const nnd_conv_geom *g, const nnd_tensor *in,
                                  const nnd_tensor *filter, const nnd_tensor *bias, nnd_tensor *out,
                                  int32_t act) {
    return conv_run_with(c, g, in, filter, bias, out, act, conv_walk_transposed);
}

/* ---- recurrent layers --------------------------------------------------------------- */

float nnd_recurrent_act(int32_t act, float x) {
    switch (act) {
    case NND_FUSED_RELU: return x > 0.f ? x : 0.f;
    case NND_FUSED_RELU1: return nnd_clampf(x, -1.f, 1.f);
    case NND_FUSED_RELU6: return nnd_clampf(x, 0.f, 6.f);
    case NND_ACT_TANH: return tanhf(x);
    case NND_ACT_SIGN_BIT: return signbit(x) ? 1.f : 0.f;
    case NND_ACT_SIGMOID: return 1.f / (1.f + expf(-x));
    default: return x;
    }
}

void nnd_recurrent_act_vec(int32_t act, float *x, size_t n) {
    if (act == NND_FUSED_NONE) return;
    for (size_t i = 0; i < n; i++)
        x[i] = nnd_recurrent_act(act, x[i]);
}

void nnd_matvec_acc(const float *w, uint32_t rows, uint32_t cols, const float *x, size_t x_stride,
                    uint32_t batch, float *out, size_t out_bstride, size_t out_rstride) {
    for (uint32_t b = 0; b < batch; b++) {
        const float *xb = x + b * x_stride;
        for (uint32_t r = 0; r < rows; r++) {
            const float *wr = w + (size_t)r * cols;
            float dot = 0.f;
            for (uint32_t k = 0; k < cols; k++)
                dot += wr[k] * xb[k];
            out[b * out_bstride + r * out_rstride] += dot;
        }
    }
}

/* ---- gemmlowp fixed-point functions ------------------------------------------------- */

/* gemmlowp runs the same algorithms on int32 and int16 raw values; `bits` (32 or 16) is
 * the raw width, and every value is a raw value of that width held in an int32_t. Plain
 * adds wrap at that width, as the reference's two's complement arithmetic does. */
static int32_t fxw_wrap(int64_t x, int bits) {
    if (bits == 32) return (int32_t)(uint32_t)x;
    int32_t v = (int32_t)(x & 0xffff);
    return v >= 0x8000 ? v - 0x10000 : v;
}
static int32_t fxw_add(int32_t a, int32_t b, int bits) {
    return fxw_wrap((int64_t)a + b, bits);
}
static int32_t fxw_sub(int32_t a, int32_t b, int bits) {
    return fxw_wrap((int64_t)a - b, bits);
}
static int32_t fxw_max(int bits) {
    return bits == 32 ? INT32_MAX : INT16_MAX;
}
/* A 32-bit constant as the reference narrows it: rounded to the raw width. */
static int32_t fxw_const(int32_t c, int bits) {
    return bits == 32 ? c : nnd_rounding_shift_right(c, 32 - bits);
}

static int32_t fxw_srdhm(int32_t a, int32_t b, int bits) {
    if (bits == 32) return nnd_srdhm(a, b);
    if (a == b && a == INT16_MIN) return INT16_MAX;
    int32_t ab = a * b;
    return (ab + (ab >= 0 ? (1 << 14) : (1 - (1 << 14)))) / (1 << 15);
}

static int32_t fxw_mul_pot(int32_t x, int e, int bits) {
    if (e < 0) return nnd_rounding_shift_right(x, -e);
    if (e == 0) return x;
    int32_t limit = (int32_t)((1ll << (bits - 1 - e)) - 1);
    if (x > limit) return fxw_max(bits);
    if (x < -limit) return -fxw_max(bits) - 1;
    return (int32_t)((uint32_t)x << e);
}

/* exp(a) for a in [-1/4, 0), Q0: a fourth-order Taylor expansion around -1/8. */
static int32_t fxw_exp_quarter(int32_t a, int bits) {
    const int32_t exp_minus_eighth = fxw_const(1895147668, bits);
    const int32_t one_third = fxw_const(715827883, bits);
    int32_t x = fxw_add(a, 1 << (bits - 4), bits);
    int32_t x2 = fxw_srdhm(x, x, bits), x3 = fxw_srdhm(x2, x, bits), x4 = fxw_srdhm(x2, x2, bits);
    int32_t x4_over_4 = fxw_mul_pot(x4, -2, bits);
    int32_t poly = fxw_mul_pot(
        fxw_add(fxw_srdhm(fxw_add(x4_over_4, x3, bits), one_third, bits), x2, bits), -1, bits);
    int32_t tail = fxw_srdhm(exp_minus_eighth, fxw_add(x, poly, bits), bits);
    /* The 16-bit variant saturates this last add (the result can reach 1). */
    if (bits == 16) return nnd_clampi(exp_minus_eighth + tail, INT16_MIN, INT16_MAX);
    return fxw_add(exp_minus_eighth, tail, bits);
}

static int32_t fxw_exp_neg(int32_t a, int integer_bits, int bits) {
    /* exp(-2^k) in Q0.31 for k = -2..4: multiplied in for each bit of the whole part. */
    static const int32_t exp_pow2[7] = {1672461947, 1302514674, 790015084, 290630308,
                                        39332535,   720401,     242};
    int frac = bits - 1 - integer_bits;
    int32_t quarter = (int32_t)1 << (frac - 2);
    int32_t a_mod = fxw_sub(a & (quarter - 1), quarter, bits);
    int32_t result = fxw_exp_quarter(fxw_mul_pot(a_mod, integer_bits, bits), bits);
    int32_t remainder = fxw_sub(a_mod, a, bits);
    for (int k = -2; k <= 4; k++)
        if (integer_bits > k && (remainder & ((int32_t)1 << (frac + k))))
            result = fxw_srdhm(result, fxw_const(exp_pow2[k + 2], bits), bits);
    if (integer_bits > 5 && a < -((int32_t)1 << (frac + 5))) result = 0; /* below -32 */
    return a == 0 ? fxw_max(bits) : result;
}

/* Newton-Raphson reciprocal of (1 + a) / 2, a in Q0; the result is in Q2. */
static int32_t fxw_half_reciprocal(int32_t a, int bits) {
    int64_t sum = (int64_t)a + fxw_max(bits);
    int32_t hd = (int32_t)((sum + (sum >= 0 ? 1 : -1)) / 2);
    /* 48/17 - 32/17 * hd */
    int32_t x = fxw_add(fxw_const(1515870810, bits),
                        fxw_srdhm(hd, fxw_const(-1010580540, bits), bits), bits);
    for (int i = 0; i < 3; i++) {
        int32_t residual = fxw_sub(1 << (bits - 3), fxw_srdhm(hd, x, bits), bits);
        x = fxw_add(x, fxw_mul_pot(fxw_srdhm(x, residual, bits), 2, bits), bits);
    }
    return x;
}

static int32_t fxw_logistic(int32_t a, int integer_bits, int bits) {
    if (a == 0) return 1 << (bits - 2);
    int32_t magnitude = a > 0 ? a : fxw_sub(0, a, bits);
    int32_t e = fxw_exp_neg(fxw_sub(0, magnitude, bits), integer_bits, bits);
    int32_t pos = fxw_mul_pot(fxw_half_reciprocal(e, bits), 1, bits);
    return a > 0 ? pos : fxw_sub(fxw_max(bits), pos, bits);
}

static int32_t fxw_tanh(int32_t a, int integer_bits, int bits) {
    if (a == 0) return 0;
    int32_t neg = a < 0 ? a : fxw_sub(0, a, bits);
    /* tanh(|a|) = (1 - e) / (1 + e) with e = exp(-2|a|): the doubling is a change of
     * integer bits, not of the raw value. */
    int32_t e = fxw_exp_neg(neg, integer_bits + 1, bits);
    int32_t t = fxw_mul_pot(fxw_sub(fxw_half_reciprocal(e, bits), 1 << (bits - 3), bits), 2, bits);
    return a < 0 ? fxw_sub(0, t, bits) : t;
}

int32_t nnd_fx_mul_pot(int32_t x, int e) {
    return fxw_mul_pot(x, e, 32);
}
int32_t nnd_fx_exp_neg(int32_t a, int integer_bits) {
    return fxw_exp_neg(a, integer_bits, 32);
}
int32_t nnd_fx_one_over_one_plus(int32_t a) {
    return fxw_mul_pot(fxw_half_reciprocal(a, 32), 1, 32);
}
int32_t nnd_fx_logistic(int32_t a, int integer_bits) {
    return fxw_logistic(a, integer_bits, 32);
}
int32_t nnd_fx_tanh(int32_t a, int integer_bits) {
    return fxw_tanh(a, integer_bits, 32);
}

int16_t nnd_fx16_srdhm(int16_t a, int16_t b) {
    return (int16_t)fxw_srdhm(a, b, 16);
}
int16_t nnd_fx16_mul_pot(int16_t x, int e) {
    return (int16_t)fxw_mul_pot(x, e, 16);
}
int16_t nnd_fx16_logistic(int16_t a, int integer_bits) {
    return (int16_t)fxw_logistic(a, integer_bits, 16);
}
int16_t nnd_fx16_tanh(int16_t a, int integer_bits) {
    return (int16_t)fxw_tanh(a, integer_bits, 16);
}

int32_t nnd_input_radius(int integer_bits, int left_shift) {
    double max_rescaled = ldexp((double)((1 << integer_bits) - 1), 31 - integer_bits - left_shift);
    return max_rescaled >= (double)INT32_MAX ? INT32_MAX : (int32_t)floor(max_rescaled);
}

/* ---- byte moving -------------------------------------------------------------------- */

void nnd_copy_elems(void *dst, size_t dst_step, const void *src, size_t src_step, size_t n,
                    size_t esize) {
    if (n == 0) return;
    if (dst_step == 1 && src_step == 1) {
        memcpy(dst, src, n * esize);
        return;
    }
    uint8_t *d = dst;
    const uint8_t *s = src;
    size_t ds = dst_step * esize, ss = src_step * esize;
    for (size_t i = 0; i < n; i++, d += ds, s += ss)
        memcpy(d, s, esize);
}

void nnd_copy_nd(void *dst, const ptrdiff_t *dst_step, const void *src, const ptrdiff_t *src_step,
                 const uint32_t *count, uint32_t rank, size_t esize) {
    /* Normalize: drop size-1 dimensions and merge a dimension into the next inner one when
     * both sides are contiguous across it, so common cases become a few long memcpys. */
    uint32_t n[NND_COPY_MAX_RANK];
    ptrdiff_t ds[NND_COPY_MAX_RANK], ss[NND_COPY_MAX_RANK];
    uint32_t r = 0;
    if (rank > NND_COPY_MAX_RANK) return;
    for (uint32_t d = 0; d < rank; d++) {
        if (count[d] == 0) return;
        if (count[d] == 1) continue;
        n[r] = count[d], ds[r] = dst_step[d], ss[r] = src_step[d];
        r++;
    }
    for (uint32_t d = r; d-- > 1;) {
        if (ds[d - 1] == ds[d] * (ptrdiff_t)n[d] && ss[d - 1] == ss[d] * (ptrdiff_t)n[d]) {
            n[d - 1] *= n[d];
            ds[d - 1] = ds[d], ss[d - 1] = ss[d];
            for (uint32_t k = d; k + 1 < r; k++)
                n[k] = n[k + 1], ds[k] = ds[k + 1], ss[k] = ss[k + 1];
            r--;
        }
    }
    uint8_t *out = dst;
    const uint8_t *in = src;
    if (r == 0) {
        memcpy(out, in, esize);
        return;
    }
    /* The innermost dimension is one row; an odometer walks the outer ones. */
    uint32_t inner = n[r - 1], idx[NND_COPY_MAX_RANK] = {0};
    ptrdiff_t di = ds[r - 1] * (ptrdiff_t)esize, si = ss[r - 1] * (ptrdiff_t)esize;
    bool dense = ds[r - 1] == 1 && ss[r - 1] == 1;
    ptrdiff_t doff = 0, soff = 0;
    for (;;) {
        if (dense) {
            memcpy(out + doff, in + soff, (size_t)inner * esize);
        } else {
            for (uint32_t k = 0; k < inner; k++)
                memcpy(out + doff + (ptrdiff_t)k * di, in + soff + (ptrdiff_t)k * si, esize);
        }
        int d = (int)r - 2;
        for (; d >= 0; d--) {
            doff += ds[d] * (ptrdiff_t)esize;
            soff += ss[d] * (ptrdiff_t)esize;
            if (++idx[d] < n[d]) break;
            doff -= ds[d] * (ptrdiff_t)esize * (ptrdiff_t)n[d];
            soff -= ss[d] * (ptrdiff_t)esize * (ptrdiff_t)n[d];
            idx[d] = 0;
        }
        if (d < 0) return;
    }
}

void nnd_dense_steps(uint32_t rank, const uint32_t *dims, ptrdiff_t *steps) {
    ptrdiff_t acc = 1;
    for (uint32_t d = rank; d-- > 0;) {
        steps[d] = acc;
        acc *= (ptrdiff_t)dims[d];
    }
}

void nnd_fill_elems(void *dst, const void *value, size_t n, size_t esize) {
    uint8_t *d = dst;
    if (n == 0) return;
    memcpy(d, value, esize);
    /* Doubling copies: each memcpy duplicates what is already filled. */
    for (size_t done = 1; done < n;) {
        size_t k = done < n - done ? done : n - done;
        memcpy(d + done * esize, d, k * esize);
        done += k;
    }
}

bool nnd_resolve_axis(int32_t axis, uint32_t rank, uint32_t *out) {
    int64_t a = axis, r = rank;
    if (a < -r || a >= r) return false;
    *out = (uint32_t)(a < 0 ? a + r : a);
    return true;
}

void nnd_seq_io_init(nnd_seq_io *io, bool time_major, const nnd_tensor *x, const nnd_tensor *aux,
                     float *out, size_t out_width) {
    bool seq = x->rank == 3;
    if (!seq) time_major = true; /* one step: [batch, input] */
    io->n_time = seq ? x->dims[time_major ? 0 : 1] : 1;
    io->n_batch = seq ? x->dims[time_major ? 1 : 0] : x->dims[0];
    io->n_input = x->dims[x->rank - 1];
    io->n_aux = aux ? aux->dims[aux->rank - 1] : 0;
    io->x = x->data, io->aux = aux ? aux->data : NULL, io->out = out;
    /* time major: row (t, b) is at (t * n_batch + b) * width; else (b * n_time + t) * width */
    size_t per_t = time_major ? io->n_batch : 1, per_b = time_major ? 1 : io->n_time;
    io->x_t = per_t * io->n_input, io->x_b = per_b * io->n_input;
    io->aux_t = per_t * io->n_aux, io->aux_b = per_b * io->n_aux;
    io->out_t = per_t * out_width, io->out_b = per_b * out_width;
}

void nnd_seq_store(const nnd_seq_io *io, uint32_t t, const float *rows, size_t width) {
    float *o = io->out + t * io->out_t;
    for (uint32_t b = 0; b < io->n_batch; b++)
        memmove(o + b * io->out_b, rows + b * width, width * sizeof(float));
}

nnd_status nnd_seq_dims(nnd_op_ctx *c, bool time_major, uint32_t *n_time, uint32_t *n_batch) {
    const nnd_tensor *x = c->in[0];
    if (x->rank != 3) return nnd_fail(c, "input 0 must be 3-D, has rank %u", x->rank);
    *n_time = x->dims[time_major ? 0 : 1];
    *n_batch = x->dims[time_major ? 1 : 0];
    return NND_OK;
}

nnd_status nnd_seq_bidi_check(nnd_op_ctx *c, bool merge, bool time_major, uint32_t aux_i,
                              uint32_t *n_batch, uint32_t *n_aux) {
    if (c->n_out != (merge ? 1u : 2u))
        return nnd_fail(c, "has %u outputs; %s outputs need %u", c->n_out,
                        merge ? "merged" : "separate", merge ? 1 : 2);
    uint32_t n_time;
    nnd_status s = nnd_seq_dims(c, time_major, &n_time, n_batch);
    if (s) return s;
    *n_aux = 0;
    if (!nnd_has_input(c, aux_i)) return NND_OK;
    const nnd_tensor *x = c->in[0], *a = c->in[aux_i];
    if (a->rank != 3 || a->dims[0] != x->dims[0] || a->dims[1] != x->dims[1] || !a->dims[2])
        return nnd_fail(c,
                        "auxiliary input (input %u) must be 3-D with the input's first two "
                        "dimensions",
                        aux_i);
    *n_aux = a->dims[2];
    return NND_OK;
}

void nnd_seq_bidi_set_shapes(nnd_op_ctx *c, bool merge, uint32_t fw_width, uint32_t bw_width) {
    const nnd_tensor *x = c->in[0];
    uint32_t d[3] = {x->dims[0], x->dims[1], merge ? fw_width + bw_width : fw_width};
    nnd_set_shape(c->out[0], 3, d);
    d[2] = bw_width;
    if (!merge) nnd_set_shape(c->out[1], 3, d);
}

void nnd_seq_bidi_io(const nnd_op_ctx *c, bool merge, bool time_major, uint32_t aux_i,
                     uint32_t fw_width, nnd_seq_io *fw, nnd_seq_io *bw) {
    const nnd_tensor *aux = nnd_has_input(c, aux_i) ? c->in[aux_i] : NULL;
    const nnd_tensor *out_fw = c->out[0], *out_bw = c->out[merge ? 0 : 1];
    float *bw_base = (float *)out_bw->data + (merge ? fw_width : 0);
    nnd_seq_io_init(fw, time_major, c->in[0], aux, out_fw->data, out_fw->dims[2]);
    nnd_seq_io_init(bw, time_major, c->in[0], aux, bw_base, out_bw->dims[2]);
}

static int32_t kind_type(char k, int32_t t0) {
    switch (k) {
    case 'T': return t0;
    case 'f': return t0 == NND_TENSOR_FLOAT16 ? NND_FLOAT16 : NND_FLOAT32;
    case 'i': return NND_INT32;
    case 'b': return NND_BOOL;
    case 'I': return NND_TENSOR_INT32;
    default: return -1;
    }
}

nnd_status nnd_check_signature(nnd_op_ctx *c, const char *in_kinds, const char *out_kinds) {
    int32_t t0 = c->in[0]->type;
    for (uint32_t i = 0; i < c->n_in && in_kinds[i]; i++) {
        int32_t want = kind_type(in_kinds[i], t0);
        if (want >= 0 && c->in[i]->type != want)
            return nnd_fail(c, "input %u must be %s, is %s", i, nnd_type_name(want),
                            nnd_type_name(c->in[i]->type));
    }
    for (uint32_t i = 0; i < c->n_out && out_kinds[i]; i++) {
        int32_t want = kind_type(out_kinds[i], t0);
        if (want >= 0 && c->out[i]->type != want)
            return nnd_fail(c, "output %u must be %s, is %s", i, nnd_type_name(want),
                            nnd_type_name(c->out[i]->type));
    }
    return NND_OK;
}

nnd_status nnd_check_float_signature(nnd_op_ctx *c, const char *in_kinds, const char *out_kinds) {
    nnd_status s =
        nnd_check_type(c, c->in[0], "input 0", 2, NND_TENSOR_FLOAT32, NND_TENSOR_FLOAT16);
    return s ? s : nnd_check_signature(c, in_kinds, out_kinds);
}

/* "[a, b, c]" into buf. */
static const char *dims_str(char *buf, size_t len, uint32_t rank, const uint32_t *dims) {
    size_t at = 0;
    at += (size_t)snprintf(buf, len, "[");
    for (uint32_t k = 0; k < rank && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, k ? ", %u" : "%u", dims[k]);
    if (at < len) snprintf(buf + at, len - at, "]");
    return buf;
}

nnd_status nnd_expect_dims(nnd_op_ctx *c, uint32_t i, const char *what, uint32_t rank,
                           const uint32_t *dims) {
    const nnd_tensor *t = c->in[i];
    bool ok = t->rank == rank;
    for (uint32_t k = 0; ok && k < rank; k++)
        ok = t->dims[k] == dims[k];
    if (ok) return NND_OK;
    char want[96], have[96];
    return nnd_fail(c, "%s (input %u) must have shape %s, has %s", what, i,
                    dims_str(want, sizeof want, rank, dims),
                    dims_str(have, sizeof have, t->rank, t->dims));
}

nnd_status nnd_check_same_quant(nnd_op_ctx *c, uint32_t i, uint32_t o) {
    const nnd_tensor *in = c->in[i], *out = c->out[o];
    bool quant = nnd_is_quant8(in->type) || in->type == NND_TENSOR_QUANT8_SYMM ||
                 in->type == NND_TENSOR_QUANT16_ASYMM || in->type == NND_TENSOR_QUANT16_SYMM;
    if (quant && (in->scale != out->scale || in->zero_point != out->zero_point))
        return nnd_fail(c, "output %u must have the scale and zero point of input %u (%g, %d), has (%g, %d)",
                        o, i, in->scale, in->zero_point, out->scale, out->zero_point);
    return NND_OK;
}

/* ---- real values of any numeric tensor ------------------------------------------------ */

float nnd_real_at(const nnd_tensor *t, size_t i) {
    switch (t->type) {
    case NND_TENSOR_FLOAT16:
    case NND_FLOAT16: return (float)((const nnd_half *)t->data)[i];
    case NND_TENSOR_INT32:
    case NND_INT32: return (float)((const int32_t *)t->data)[i];
    case NND_TENSOR_QUANT8_ASYMM:
        return nnd_dequantize_value(((const uint8_t *)t->data)[i], t->scale, t->zero_point);
    case NND_TENSOR_QUANT16_ASYMM:
        return nnd_dequantize_value(((const uint16_t *)t->data)[i], t->scale, t->zero_point);
    case NND_TENSOR_QUANT16_SYMM:
        return nnd_dequantize_value(((const int16_t *)t->data)[i], t->scale, t->zero_point);
    default: return ((const float *)t->data)[i];
    }
}

/* round(x / scale + zero_point), saturated; NaN goes to lo. */
static int32_t quantize_sat(float x, const nnd_tensor *t, int32_t lo, int32_t hi) {
    float v = roundf(x / t->scale + (float)t->zero_point);
    if (!(v > (float)lo)) return lo;
    return v > (float)hi ? hi : (int32_t)v;
}

void nnd_set_real_at(nnd_tensor *t, size_t i, float x) {
    switch (t->type) {
    case NND_TENSOR_FLOAT16: ((nnd_half *)t->data)[i] = (nnd_half)x; break;
    case NND_TENSOR_QUANT8_ASYMM:
        ((uint8_t *)t->data)[i] = (uint8_t)quantize_sat(x, t, 0, UINT8_MAX);
        break;
    case NND_TENSOR_QUANT16_ASYMM:
        ((uint16_t *)t->data)[i] = (uint16_t)quantize_sat(x, t, 0, UINT16_MAX);
        break;
    case NND_TENSOR_QUANT16_SYMM:
        ((int16_t *)t->data)[i] = (int16_t)quantize_sat(x, t, INT16_MIN, INT16_MAX);
        break;
    default: ((float *)t->data)[i] = x; break;
    }
}

/* ---- ordering ------------------------------------------------------------------------- */

void nnd_stable_sort(uint32_t *idx, size_t n, uint32_t *tmp, nnd_before_fn before,
                     const void *ctx) {
    /* Bottom-up merge sort, ping-ponging between idx and tmp. */
    uint32_t *src = idx, *dst = tmp;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) dst[o++] = before(ctx, src[b], src[a]) ? src[b++] : src[a++];
            while (a < mid) dst[o++] = src[a++];
            while (b < hi) dst[o++] = src[b++];
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != idx) memcpy(idx, src, n * sizeof *idx);
}

static bool higher_score(const void *ctx, uint32_t a, uint32_t b) {
    const float *key = ctx;
    return key[a] > key[b];
}

void nnd_sort_by_score(uint32_t *idx, size_t n, const float *key, uint32_t *tmp) {
    nnd_stable_sort(idx, n, tmp, higher_score, key);
}

/* ---- axis-aligned boxes --------------------------------------------------------------- */

void nnd_box_from_center(float cx, float cy, float w, float h, float *box) {
    box[0] = cx - w / 2;
    box[1] = cy - h / 2;
    box[2] = cx + w / 2;
    box[3] = cy + h / 2;
}

void nnd_box_apply_delta(const float *box, const float *delta, float *out) {
    float w = box[2] - box[0], h = box[3] - box[1];
    float cx = (box[0] + box[2]) / 2, cy = (box[1] + box[3]) / 2;
    nnd_box_from_center(cx + delta[0] * w, cy + delta[1] * h, expf(delta[2]) * w,
                        expf(delta[3]) * h, out);
}

void nnd_box_clip(float *box, float height, float width) {
    for (int k = 0; k < 4; k++) box[k] = fminf(fmaxf(box[k], 0.f), k % 2 ? height : width);
}

float nnd_box_iou(const float *a, const float *b) {
    float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
    float w = fmaxf(fminf(a[2], b[2]) - fmaxf(a[0], b[0]), 0.f);
    float h = fmaxf(fminf(a[3], b[3]) - fmaxf(a[1], b[1]), 0.f);
    float inter = w * h;
    return inter / (area_a + area_b - inter);
}

nnd_status nnd_check_box_quant(nnd_op_ctx *c, const nnd_tensor *t, const char *what) {
    if (t->type == NND_TENSOR_QUANT16_ASYMM && (t->scale != 0.125f || t->zero_point != 0))
        return nnd_fail(c, "%s must have scale 0.125 and zero point 0, has (%g, %d)", what,
                        t->scale, t->zero_point);
    return NND_OK;
}

static nnd_status check_box_operand(nnd_op_ctx *c, const nnd_tensor *t, bool input, uint32_t i) {
    bool quant = c->in[0]->type == NND_TENSOR_QUANT8_ASYMM;
    int32_t want = quant ? NND_TENSOR_QUANT16_ASYMM : c->in[0]->type;
    char what[16];
    snprintf(what, sizeof what, "%s %u", input ? "input" : "output", i);
    if (t->type != want)
        return nnd_fail(c, "%s must be %s, is %s", what, nnd_type_name(want),
                        nnd_type_name(t->type));
    return nnd_check_box_quant(c, t, what);
}

nnd_status nnd_check_box_signature(nnd_op_ctx *c, const char *in_kinds, const char *out_kinds) {
    nnd_status s = nnd_check_type(c, c->in[0], "input 0", 3, NND_TENSOR_FLOAT32,
                                  NND_TENSOR_FLOAT16, NND_TENSOR_QUANT8_ASYMM);
    if (s || (s = nnd_check_signature(c, in_kinds, out_kinds))) return s;
    for (uint32_t i = 0; i < c->n_in && in_kinds[i]; i++)
        if (in_kinds[i] == 'B' && (s = check_box_operand(c, c->in[i], true, i))) return s;
    for (uint32_t i = 0; i < c->n_out && out_kinds[i]; i++)
        if (out_kinds[i] == 'B' && (s = check_box_operand(c, c->out[i], false, i))) return s;
    return NND_OK;
}

nnd_status nnd_check_input_ranks(nnd_op_ctx *c, const char *ranks) {
    for (uint32_t i = 0; i < c->n_in && ranks[i]; i++) {
        if (ranks[i] < '0' || ranks[i] > '9') continue;
        char what[24];
        snprintf(what, sizeof what, "input %u", i);
        uint32_t r = (uint32_t)(ranks[i] - '0');
        nnd_status s = nnd_check_rank(c, c->in[i], what, r, r);
        if (s) return s;
    }
    return NND_OK;
}
