/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_cases.c: see opencl_cases.h. */
#include "tests/drivers/opencl_cases.h"

#include <string.h>

#define R(lo, hi) om_rand(m, (lo), (hi))

/* Output size along one axis, as NNAPI computes it (scheme 1 SAME, 2 VALID, else the
 * explicit paddings). */
static uint32_t out_size(uint32_t in, uint32_t k, uint32_t s, uint32_t dil, int32_t scheme,
                         uint32_t head, uint32_t tail) {
    uint32_t eff = (k - 1) * dil + 1;
    if (scheme == 1) return (in + s - 1) / s;
    if (scheme == 2) return in >= eff ? (in - eff + s) / s : 0;
    return in + head + tail >= eff ? (in + head + tail - eff) / s + 1 : 0;
}

static void image_dims(bool nchw, uint32_t n, uint32_t h, uint32_t w, uint32_t c, uint32_t *d) {
    d[0] = n;
    if (nchw)
        d[1] = c, d[2] = h, d[3] = w;
    else
        d[1] = h, d[2] = w, d[3] = c;
}

/* The window inputs after the image (and filter, bias) in one of the forms; returns the
 * count added to in[]. mult: DEPTHWISE_CONV_2D's multiplier, 0 for none. */
static uint32_t window(om_model *m, uint32_t *in, uint32_t h, uint32_t w, uint32_t kh, uint32_t kw,
                       bool pool, uint32_t mult, uint32_t *oh, uint32_t *ow, bool *nchw) {
    uint32_t n = 0, sh = R(1, 3), sw = R(1, 3), dh = 1, dw = 1;
    bool dil = !pool && R(0, 2) == 0, expl = R(0, 1), layout = dil || R(0, 1);
    if (dil) dh = R(1, 2), dw = R(1, 2);
    int32_t scheme = 0;
    uint32_t pad[4] = {0, 0, 0, 0};
    if (expl) {
        for (int k = 0; k < 4; k++)
            pad[k] = R(0, (k < 2 ? kw : kh) - 1);
        for (int k = 0; k < 4; k++)
            in[n++] = om_i32(m, (int32_t)pad[k]);
    } else {
        scheme = (int32_t)R(1, 2);
        in[n++] = om_i32(m, scheme);
    }
    in[n++] = om_i32(m, (int32_t)sw), in[n++] = om_i32(m, (int32_t)sh);
    if (pool) in[n++] = om_i32(m, (int32_t)kw), in[n++] = om_i32(m, (int32_t)kh);
    if (mult) in[n++] = om_i32(m, (int32_t)mult);
    in[n++] = om_i32(m, (int32_t)R(0, 3));
    *nchw = layout && R(0, 1);
    if (layout) in[n++] = om_bool(m, *nchw);
    if (dil) in[n++] = om_i32(m, (int32_t)dw), in[n++] = om_i32(m, (int32_t)dh);
    *oh = out_size(h, kh, sh, dh, scheme, pad[2], pad[3]);
    *ow = out_size(w, kw, sw, dw, scheme, pad[0], pad[1]);
    return n;
}

static void conv_like(om_model *m, bool depthwise) {
    uint32_t n, h, w, c, kh, kw, mult = depthwise ? R(1, 3) : 0, oc, oh = 0, ow = 0;
    uint32_t in[16], k;
    bool nchw;
    for (;;) {
        unsigned seed = m->seed;
        om_free(m);
        om_init(m, seed);
        n = R(1, 2), h = R(1, 12), w = R(1, 12), c = R(1, 8), kh = R(1, 3), kw = R(1, 3);
        if (depthwise && R(0, 2) == 0) c = 8 * R(1, 2), mult = 1; /* the 8-channel kernels */
        oc = depthwise ? c * mult : R(0, 2) == 0 ? 8 * R(1, 3) : R(1, 8);
        uint32_t d[4];
        k = 0;
        in[k++] = 0; /* the image, once its layout is known */
        uint32_t fd[4] = {depthwise ? 1 : oc, kh, kw, depthwise ? oc : c};
        in[k++] = om_const_f32(m, 4, fd, NULL, 1.f);
        in[k++] = om_const_f32(m, 1, &oc, NULL, 1.f);
        k += window(m, in + k, h, w, kh, kw, false, mult, &oh, &ow, &nchw);
        if (!oh || !ow) continue;
        image_dims(nchw, n, h, w, c, d);
        in[0] = om_input(m, 4, d);
        image_dims(nchw, n, oh, ow, oc, d);
        uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 4, d);
        om_op(m, depthwise ? SCHEMA_OP_DEPTHWISE_CONV_2D : SCHEMA_OP_CONV_2D, k, in, y);
        om_output(m, y);
        return;
    }
}
static void conv(om_model *m) {
    conv_like(m, false);
}
static void depthwise(om_model *m) {
    conv_like(m, true);
}

static void pool_like(om_model *m, bool max) {
    for (;;) {
        unsigned seed = m->seed;
        om_free(m);
        om_init(m, seed);
        uint32_t n = R(1, 2), h = R(1, 10), w = R(1, 10), c = R(1, 12), kh = R(1, 4), kw = R(1, 4),
                 oh, ow, in[12], d[4];
        if (R(0, 2) == 0) kh = h, kw = w;
        bool nchw;
        uint32_t k = 1 + window(m, in + 1, h, w, kh, kw, true, 0, &oh, &ow, &nchw);
        if (!oh || !ow) continue;
        image_dims(nchw, n, h, w, c, d);
        in[0] = om_input(m, 4, d);
        image_dims(nchw, n, oh, ow, c, d);
        uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 4, d);
        om_op(m, max ? SCHEMA_OP_MAX_POOL_2D : SCHEMA_OP_AVERAGE_POOL_2D, k, in, y);
        om_output(m, y);
        return;
    }
}
static void avg_pool(om_model *m) {
    pool_like(m, false);
}
static void max_pool(om_model *m) {
    pool_like(m, true);
}

static void fully_connected(om_model *m) {
    uint32_t b = R(1, 5), k = R(1, 40), units = R(1, 24), in[4];
    in[0] = R(0, 1) ? om_input(m, 2, (uint32_t[]){b, k}) : om_input(m, 4, (uint32_t[]){b, 1, 1, k});
    in[1] = om_const_f32(m, 2, (uint32_t[]){units, k}, NULL, 1.f);
    in[2] = om_const_f32(m, 1, &units, NULL, 1.f);
    in[3] = om_i32(m, (int32_t)R(0, 3));
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){b, units});
    om_op(m, SCHEMA_OP_FULLY_CONNECTED, 4, in, y);
    om_output(m, y);
}

static void batch_matmul(om_model *m) {
    uint32_t r = R(2, 4), da[4], db[4], dy[4], mm = R(1, 9), k = R(1, 9), n = R(1, 9);
    bool ax = R(0, 1), ay = R(0, 1);
    for (uint32_t i = 0; i + 2 < r; i++)
        da[i] = db[i] = dy[i] = R(1, 3);
    da[r - 2] = ax ? k : mm, da[r - 1] = ax ? mm : k;
    db[r - 2] = ay ? n : k, db[r - 1] = ay ? k : n;
    dy[r - 2] = mm, dy[r - 1] = n;
    uint32_t in[4] = {om_input(m, r, da), om_input(m, r, db), om_bool(m, ax), om_bool(m, ay)};
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, r, dy);
    om_op(m, SCHEMA_OP_BATCH_MATMUL, 4, in, y);
    om_output(m, y);
}

static void binary(om_model *m) {
    static const int32_t codes[] = {SCHEMA_OP_ADD, SCHEMA_OP_SUB, SCHEMA_OP_MUL, SCHEMA_OP_DIV};
    uint32_t rank = R(1, 4), full[4], da[4], db[4], ra = rank, rb = R(1, rank), out[4];
    for (uint32_t i = 0; i < rank; i++)
        full[i] = R(1, 6);
    for (uint32_t i = 0; i < ra; i++)
        da[i] = R(0, 3) ? full[i] : 1;
    for (uint32_t i = 0; i < rb; i++)
        db[i] = R(0, 3) ? full[rank - rb + i] : 1;
    for (uint32_t i = 0; i < rank; i++) {
        uint32_t a = da[i], c = i + rb >= rank ? db[i + rb - rank] : 1;
        out[i] = a > c ? a : c;
    }
    bool swap = R(0, 1);
    uint32_t a = om_input(m, ra, da),
             b = R(0, 3) ? om_input(m, rb, db) : om_const_f32(m, rb, db, NULL, 2.f);
    uint32_t in[3] = {swap ? b : a, swap ? a : b, om_i32(m, (int32_t)R(0, 3))};
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, rank, out);
    om_op(m, codes[R(0, 3)], 3, in, y);
    om_output(m, y);
}

static void unary(om_model *m) {
    static const int32_t codes[] = {SCHEMA_OP_RELU,     SCHEMA_OP_RELU1, SCHEMA_OP_RELU6,
                                    SCHEMA_OP_LOGISTIC, SCHEMA_OP_TANH,  SCHEMA_OP_HARD_SWISH};
    uint32_t rank = R(1, 4), d[4];
    for (uint32_t i = 0; i < rank; i++)
        d[i] = R(1, 9);
    uint32_t x = om_input(m, rank, d), y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, rank, d);
    om_op(m, codes[R(0, 5)], 1, &x, y);
    om_output(m, y);
}

static void softmax(om_model *m) {
    uint32_t rank = R(1, 4), d[4], in[3], n = 2;
    for (uint32_t i = 0; i < rank; i++)
        d[i] = R(1, 9);
    in[0] = om_input(m, rank, d);
    in[1] = om_f32(m, 0.1f + (float)R(0, 19) / 10.f);
    if (R(0, 1)) in[n++] = om_i32(m, (int32_t)R(0, 2 * rank - 1) - (int32_t)rank);
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, rank, d);
    om_op(m, SCHEMA_OP_SOFTMAX, n, in, y);
    om_output(m, y);
}

static void concatenation(om_model *m) {
    uint32_t rank = R(1, 4), d[4], n = R(1, 3), in[4], axis = R(0, rank - 1), sum = 0;
    for (uint32_t i = 0; i < rank; i++)
        d[i] = R(1, 5);
    for (uint32_t i = 0; i < n; i++) {
        d[axis] = R(1, 4), sum += d[axis];
        in[i] = i == 0 || R(0, 3) ? om_input(m, rank, d) : om_const_f32(m, rank, d, NULL, 2.f);
    }
    in[n] = om_i32(m, (int32_t)axis);
    d[axis] = sum;
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, rank, d);
    om_op(m, SCHEMA_OP_CONCATENATION, n + 1, in, y);
    om_output(m, y);
}

static void reshape_squeeze(om_model *m) {
    uint32_t a = R(1, 5), b = R(1, 5), c = R(1, 5), y;
    if (R(0, 1)) {
        uint32_t x = om_input(m, 3, (uint32_t[]){a, b, c});
        int32_t shape[2] = {(int32_t)(a * b), -1};
        uint32_t in[2] = {x, om_const_i32s(m, 1, (uint32_t[]){2}, shape)};
        y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){a * b, c});
        om_op(m, SCHEMA_OP_RESHAPE, 2, in, y);
    } else {
        uint32_t x = om_input(m, 4, (uint32_t[]){a, 1, b, 1});
        uint32_t in[2] = {x, R(0, 1) ? om_const_i32s(m, 1, (uint32_t[]){2}, (int32_t[]){1, -1})
                                     : om_omitted(m, SCHEMA_TENSOR_INT32)};
        uint32_t dims[2] = {a, b}, r = 0, out[4];
        for (uint32_t i = 0; i < 2; i++)
            if (dims[i] != 1 || m->operands[in[1]].lifetime != SCHEMA_NO_VALUE) out[r++] = dims[i];
        y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, r, out);
        om_op(m, SCHEMA_OP_SQUEEZE, 2, in, y);
    }
    om_output(m, y);
}

static void transpose(om_model *m) {
    uint32_t rank = R(1, 4), d[4], od[4];
    int32_t perm[4];
    for (uint32_t i = 0; i < rank; i++)
        d[i] = R(1, 5), perm[i] = (int32_t)i;
    for (uint32_t i = rank; i > 1; i--) {
        uint32_t j = R(0, i - 1);
        int32_t t = perm[i - 1];
        perm[i - 1] = perm[j], perm[j] = t;
    }
    bool omit = R(0, 3) == 0;
    for (uint32_t i = 0; i < rank; i++)
        od[i] = omit ? d[rank - 1 - i] : d[perm[i]];
    uint32_t in[2] = {om_input(m, rank, d),
                      omit ? om_omitted(m, SCHEMA_TENSOR_INT32) : om_const_i32s(m, 1, &rank, perm)};
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, rank, od);
    om_op(m, SCHEMA_OP_TRANSPOSE, 2, in, y);
    om_output(m, y);
}

static void pad(om_model *m) {
    uint32_t rank = R(1, 4), d[4], od[4];
    int32_t pads[8];
    for (uint32_t i = 0; i < rank; i++) {
        d[i] = R(1, 5), pads[2 * i] = (int32_t)R(0, 2), pads[2 * i + 1] = (int32_t)R(0, 2);
        od[i] = d[i] + (uint32_t)(pads[2 * i] + pads[2 * i + 1]);
    }
    uint32_t in[2] = {om_input(m, rank, d), om_const_i32s(m, 2, (uint32_t[]){rank, 2}, pads)};
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, rank, od);
    om_op(m, SCHEMA_OP_PAD, 2, in, y);
    om_output(m, y);
}

static void mean(om_model *m) {
    uint32_t rank = R(1, 4), d[4], od[4], n_axes = R(1, rank), r = 0;
    int32_t axes[4];
    bool reduced[4] = {false, false, false, false}, keep = R(0, 1);
    for (uint32_t i = 0; i < rank; i++)
        d[i] = R(1, 6);
    for (uint32_t i = 0; i < n_axes; i++) {
        uint32_t a = R(0, rank - 1);
        reduced[a] = true;
        axes[i] = R(0, 1) ? (int32_t)a : (int32_t)a - (int32_t)rank;
    }
    for (uint32_t i = 0; i < rank; i++)
        if (!reduced[i] || keep) od[r++] = reduced[i] ? 1 : d[i];
    if (r == 0) od[r++] = 1; /* every axis reduced without keep_dims: one value */
    uint32_t in[3] = {om_input(m, rank, d), om_const_i32s(m, 1, &n_axes, axes), om_i32(m, keep)};
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, r, od);
    om_op(m, SCHEMA_OP_MEAN, 3, in, y);
    om_output(m, y);
}

static void resize(om_model *m) {
    uint32_t n = R(1, 2), h = R(1, 6), w = R(1, 6), c = R(1, 4), oh = R(1, 10), ow = R(1, 10);
    uint32_t in[6], k = 1, d[4];
    bool nchw = R(0, 1), flags = R(0, 1);
    if (R(0, 1)) {
        in[k++] = om_i32(m, (int32_t)ow), in[k++] = om_i32(m, (int32_t)oh);
    } else { /* scales whose float product lands clear of an integer */
        float sx = (float)R(2, 7) / 2.f + 0.01f, sy = (float)R(2, 7) / 2.f + 0.01f;
        in[k++] = om_f32(m, sx), in[k++] = om_f32(m, sy);
        ow = (uint32_t)((float)w * sx), oh = (uint32_t)((float)h * sy);
    }
    if (nchw || flags) in[k++] = om_bool(m, nchw);
    if (flags) {
        uint32_t which = R(0, 2); /* neither, align corners, half-pixel centres */
        in[k++] = om_bool(m, which == 1), in[k++] = om_bool(m, which == 2);
    }
    image_dims(nchw, n, h, w, c, d);
    in[0] = om_input(m, 4, d);
    image_dims(nchw, n, oh, ow, c, d);
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 4, d);
    om_op(m, SCHEMA_OP_RESIZE_BILINEAR, k, in, y);
    om_output(m, y);
}

const oc_family oc_families[] = {
    {"CONV_2D", conv},
    {"DEPTHWISE_CONV_2D", depthwise},
    {"AVERAGE_POOL_2D", avg_pool},
    {"MAX_POOL_2D", max_pool},
    {"FULLY_CONNECTED", fully_connected},
    {"BATCH_MATMUL", batch_matmul},
    {"ADD/SUB/MUL/DIV", binary},
    {"activations", unary},
    {"SOFTMAX", softmax},
    {"CONCATENATION", concatenation},
    {"RESHAPE/SQUEEZE", reshape_squeeze},
    {"TRANSPOSE", transpose},
    {"PAD", pad},
    {"MEAN", mean},
    {"RESIZE_BILINEAR", resize},
};
const size_t oc_n_families = sizeof oc_families / sizeof oc_families[0];

void oc_chain(om_model *m) {
    uint32_t x = om_input(m, 4, (uint32_t[]){1, 16, 16, 3});
    uint32_t in[10] = {x,
                       om_const_f32(m, 4, (uint32_t[]){8, 3, 3, 3}, NULL, 0.5f),
                       om_const_f32(m, 1, (uint32_t[]){8}, NULL, 0.5f),
                       om_i32(m, 1),
                       om_i32(m, 1),
                       om_i32(m, 1),
                       om_i32(m, 0)};
    uint32_t c = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){1, 16, 16, 8});
    om_op(m, SCHEMA_OP_CONV_2D, 7, in, c);
    uint32_t r = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){1, 16, 16, 8});
    om_op(m, SCHEMA_OP_RELU, 1, &c, r);
    uint32_t pin[7] = {
        r, om_i32(m, 2), om_i32(m, 2), om_i32(m, 2), om_i32(m, 2), om_i32(m, 2), om_i32(m, 0)};
    uint32_t p = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){1, 8, 8, 8});
    om_op(m, SCHEMA_OP_MAX_POOL_2D, 7, pin, p);
    uint32_t rin[2] = {p, om_const_i32s(m, 1, (uint32_t[]){2}, (int32_t[]){1, 512})};
    uint32_t flat = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){1, 512});
    om_op(m, SCHEMA_OP_RESHAPE, 2, rin, flat);
    uint32_t fin[4] = {flat, om_const_f32(m, 2, (uint32_t[]){10, 512}, NULL, 0.1f),
                       om_const_f32(m, 1, (uint32_t[]){10}, NULL, 0.1f), om_i32(m, 0)};
    uint32_t f = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){1, 10});
    om_op(m, SCHEMA_OP_FULLY_CONNECTED, 4, fin, f);
    uint32_t t = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){1, 10});
    om_op(m, SCHEMA_OP_TANH, 1, &f, t);
    uint32_t sin[2] = {t, om_f32(m, 1.f)};
    uint32_t s = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){1, 10});
    om_op(m, SCHEMA_OP_SOFTMAX, 2, sin, s);
    om_output(m, f); /* read inside the partition and outside it */
    om_output(m, s);
}

void oc_feed_forward(om_model *m) {
    uint32_t x = om_input(m, 2, (uint32_t[]){16, 32});
    uint32_t in[4] = {x, om_const_f32(m, 2, (uint32_t[]){64, 32}, NULL, 0.2f),
                      om_const_f32(m, 1, (uint32_t[]){64}, NULL, 0.2f), om_i32(m, 0)};
    uint32_t h = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){16, 64});
    om_op(m, SCHEMA_OP_FULLY_CONNECTED, 4, in, h);
    uint32_t a = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){16, 64});
    om_op(m, SCHEMA_OP_HARD_SWISH, 1, &h, a);
    uint32_t w2 = om_const_f32(m, 2, (uint32_t[]){32, 64}, NULL, 0.2f);
    uint32_t bin[4] = {a, w2, om_bool(m, false), om_bool(m, true)};
    uint32_t o = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){16, 32});
    om_op(m, SCHEMA_OP_BATCH_MATMUL, 4, bin, o);
    uint32_t ain[3] = {o, x, om_i32(m, 0)};
    uint32_t res = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){16, 32});
    om_op(m, SCHEMA_OP_ADD, 3, ain, res);
    uint32_t min[3] = {res, om_const_i32s(m, 1, (uint32_t[]){1}, (int32_t[]){-1}), om_i32(m, 1)};
    uint32_t mu = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){16, 1});
    om_op(m, SCHEMA_OP_MEAN, 3, min, mu);
    uint32_t sin[3] = {res, mu, om_i32(m, 0)};
    uint32_t cen = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){16, 32});
    om_op(m, SCHEMA_OP_SUB, 3, sin, cen);
    uint32_t gin[3] = {cen, om_const_f32(m, 1, (uint32_t[]){32}, NULL, 1.f), om_i32(m, 0)};
    uint32_t sc = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){16, 32});
    om_op(m, SCHEMA_OP_MUL, 3, gin, sc);
    uint32_t tin[2] = {sc, om_const_i32s(m, 1, (uint32_t[]){2}, (int32_t[]){1, 0})};
    uint32_t y = om_tensor(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){32, 16});
    om_op(m, SCHEMA_OP_TRANSPOSE, 2, tin, y);
    om_output(m, y);
}
