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
    /* As the reference: quantize the real bounds with round-to-nearest, then clamp. */
#define Q(x) (zero_point + (int32_t)roundf((x) / scale))
    *lo = qmin;
    *hi = qmax;
    if (act == NND_FUSED_RELU) {
        *lo = nnd_clampi(Q(0.f), qmin, qmax);
    } else if (act == NND_FUSED_RELU6) {
        *lo = nnd_clampi(Q(0.f), qmin, qmax);
        *hi = nnd_clampi(Q(6.f), qmin, qmax);
    } else if (act == NND_FUSED_RELU1) {
        *lo = nnd_clampi(Q(-1.f), qmin, qmax);
        *hi = nnd_clampi(Q(1.f), qmin, qmax);
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
    int32_t mask = (int32_t)((1ll << e) - 1);
    int32_t remainder = x & mask;
    int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> e) + (remainder > threshold ? 1 : 0);
}

int32_t nnd_mul_by_quantized(int32_t x, int32_t q, int shift) {
    int left = shift > 0 ? shift : 0;
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
