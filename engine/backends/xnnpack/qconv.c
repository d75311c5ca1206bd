/* SPDX-License-Identifier: Apache-2.0 */
/* qconv.c: exact 8-bit convolutions (qconv.h): the filter packed once, the rows of each
 * tile (the input's pixels, or im2col rows in scratch), the work spread on the pool. The
 * arithmetic is qconv_kernels.h's. */
#include <stdlib.h>
#include <string.h>

#include "engine/backends/xnnpack/qconv.h"
#include "engine/backends/xnnpack/qconv_kernels.h"

#define QCONV_KP_MAX   65536u /* longest dot product taken (a row of scratch per pixel) */
#define QCONV_TAPS_MAX 256u   /* depthwise window taps, pointers on the stack */
#define QCONV_NT       256u   /* channels of one GEMM task where rows need no im2col */

static size_t round_up(size_t v, size_t m) {
    return (v + m - 1) / m * m;
}

/* The filter's stored value i as a number (unsigned or signed storage). */
static int32_t filter_value(const eng_qconv_desc *d, size_t i) {
    return d->is_signed ? ((const int8_t *)d->filter)[i] : ((const uint8_t *)d->filter)[i];
}

/* The two roundings' constants of one channel, at its even/odd place (qconv_kernels.h). */
static void set_requant(eng_qconv *q, uint32_t n, int32_t mult, int shift) {
    uint32_t r = (uint32_t)-shift, at = n - n % 16 + (n % 2) * 8 + (n % 16) / 2;
    q->mult[n] = mult;
    q->nudge[at] = (1ll << 30) + (r ? (1ll << (31 + r - 1)) : 0);
    q->neg_fix[at] = r ? (1ll << 31) : 0;
    q->total_shift[at] = 31 + r;
}

static bool describable(const eng_qconv_desc *d) {
    if (!d->out_c || !d->in_c || !d->fh || !d->fw || !d->sh || !d->sw || !d->dh || !d->dw)
        return false;
    if (d->is_signed && !d->depthwise && d->filter_zero != 0) return false;
    if (d->depthwise && d->in_c != d->out_c) return false;
    for (uint32_t n = 0; n < d->out_c; n++)
        if (d->shift[n] > 0 || d->shift[n] < -31) return false; /* a left shift: XNNPACK's */
    return true;
}

static void pack_gemm(eng_qconv *q, const eng_qconv_desc *d) {
    for (uint32_t n = 0; n < d->out_c; n++) {
        int64_t sum_w = 0; /* of w - zw over the real taps */
        uint8_t *blk = q->w + (size_t)(n / 16) * q->kp * 16 + (n % 16) * 4;
        for (uint32_t k = 0; k < q->k; k++) {
            int32_t w = filter_value(d, (size_t)n * q->k + k);
            sum_w += w - d->filter_zero;
            /* unsigned w - 128 as a signed byte, signed w + 128 as an unsigned one: w ^ 0x80 */
            blk[(size_t)(k / 4) * 64 + k % 4] = (uint8_t)((uint8_t)w ^ 0x80);
        }
        /* signed: the row term takes 128 * (sum x + 128 k) off where 128 * sum x was added */
        int64_t c = -(int64_t)d->in_zero * sum_w + (d->is_signed ? 128 * 128 * (int64_t)q->k : 0);
        q->colconst[n] = (int32_t)(uint32_t)((uint64_t)(uint32_t)d->bias[n] + (uint64_t)c);
    }
}

static void pack_depthwise(eng_qconv *q, const eng_qconv_desc *d) {
    for (uint32_t n = 0; n < d->out_c; n++) {
        int64_t sum_w = 0;
        for (uint32_t t = 0; t < q->taps; t++) {
            int32_t w = filter_value(d, (size_t)t * d->out_c + n) - d->filter_zero;
            q->w32[(size_t)t * q->np + n] = w;
            sum_w += w;
        }
        q->colconst[n] = (int32_t)(uint32_t)((uint64_t)(uint32_t)d->bias[n] -
                                             (uint64_t)((int64_t)d->in_zero * sum_w));
    }
}

eng_qconv *eng_qconv_create(const eng_qconv_desc *d) {
    if (!eng_qconv_avx512_usable() || !describable(d)) return NULL;
    uint32_t taps = d->fh * d->fw, k = d->depthwise ? 1 : taps * d->in_c;
    if ((uint64_t)taps * (d->depthwise ? 1 : d->in_c) > QCONV_KP_MAX ||
        (d->depthwise && taps > QCONV_TAPS_MAX))
        return NULL;
    uint32_t kp = (uint32_t)round_up(k, 4), np = (uint32_t)round_up(d->out_c, 32);
    size_t w_bytes = d->depthwise ? (size_t)taps * np * 4 : (size_t)kp * np;
    size_t bytes = round_up(sizeof(eng_qconv), 64) + round_up(w_bytes, 64) + (size_t)np * 4 * 2 +
                   (size_t)np * 8 * 3 + np + 64;
    eng_qconv *q = aligned_alloc(64, round_up(bytes, 64));
    if (!q) return NULL;
    memset(q, 0, bytes);
    q->d = *d;
    q->d.filter = NULL, q->d.bias = NULL, q->d.mult = NULL, q->d.shift = NULL;
    q->k = k, q->kp = kp, q->np = np, q->taps = taps;
    q->direct = !d->depthwise && taps == 1 && d->sh == 1 && d->sw == 1 && !d->pad_top &&
                !d->pad_left && d->out_h == d->in_h && d->out_w == d->in_w && k % 4 == 0;
    q->row_factor = d->is_signed ? -128 : 128 - d->filter_zero;
    uint8_t *p = (uint8_t *)q + round_up(sizeof(eng_qconv), 64);
    if (d->depthwise)
        q->w32 = (int32_t *)p;
    else
        q->w = p;
    p += round_up(w_bytes, 64);
    q->colconst = (int32_t *)p, p += (size_t)np * 4;
    q->mult = (int32_t *)p, p += (size_t)np * 4;
    q->nudge = (int64_t *)p, p += (size_t)np * 8;
    q->neg_fix = (int64_t *)p, p += (size_t)np * 8;
    q->total_shift = (int64_t *)p, p += (size_t)np * 8;
    q->zero_row = p;
    memset(q->zero_row, (uint8_t)d->in_zero, np + 64);
    for (uint32_t n = 0; n < np; n++) /* padding channels: any valid shift */
        set_requant(q, n, n < d->out_c ? d->mult[n] : 0, n < d->out_c ? d->shift[n] : 0);
    if (d->depthwise)
        pack_depthwise(q, d);
    else
        pack_gemm(q, d);
    return q;
}

void eng_qconv_free(eng_qconv *q) {
    free(q);
}

size_t eng_qconv_scratch_bytes(const eng_qconv *q) {
    if (q->direct || q->d.depthwise) return 0;
    return (size_t)q->d.batch * q->d.out_h * q->d.out_w * q->kp;
}

/* ---- runs ------------------------------------------------------------------------------- */

typedef struct qconv_run {
    const eng_qconv *q;
    const uint8_t *x;
    uint8_t *y, *scratch;
} qconv_run;

/* Output pixel m's im2col row: the window's taps in the filter's (ky, kx, channel) order,
 * the input's zero point for padding, zeros up to kp. */
static void im2col_row(const eng_qconv *q, const uint8_t *x, size_t m, uint8_t *row) {
    const eng_qconv_desc *d = &q->d;
    size_t ox = m % d->out_w, oy = m / d->out_w % d->out_h, b = m / d->out_w / d->out_h;
    for (uint32_t ky = 0; ky < d->fh; ky++)
        for (uint32_t kx = 0; kx < d->fw; kx++, row += d->in_c) {
            int64_t iy = (int64_t)oy * d->sh - d->pad_top + (int64_t)ky * d->dh;
            int64_t ix = (int64_t)ox * d->sw - d->pad_left + (int64_t)kx * d->dw;
            const uint8_t *src =
                iy < 0 || ix < 0 || iy >= d->in_h || ix >= d->in_w
                    ? q->zero_row
                    : x + ((b * d->in_h + (size_t)iy) * d->in_w + (size_t)ix) * d->in_c;
            if (d->in_c <= 8) /* a first layer's few channels: no call per tap */
                for (uint32_t k = 0; k < d->in_c; k++)
                    row[k] = src[k];
            else if (src == q->zero_row)
                memset(row, (uint8_t)d->in_zero, d->in_c);
            else
                memcpy(row, src, d->in_c);
        }
    memset(row, 0, q->kp - q->k);
}

static void gemm_task(void *ctx, size_t m0, size_t n0, size_t mt, size_t nt) {
    const qconv_run *r = ctx;
    const eng_qconv *q = r->q;
    const uint8_t *rows[QCONV_MR];
    int32_t terms[QCONV_MR];
    for (size_t i = 0; i < QCONV_MR; i++) {
        size_t m = m0 + (i < mt ? i : mt - 1);
        if (q->direct) {
            rows[i] = r->x + m * q->k;
        } else {
            uint8_t *row = r->scratch + m * q->kp;
            if (i < mt) im2col_row(q, r->x, m, row);
            rows[i] = row;
        }
        uint32_t sum = eng_qconv_sum_avx512(rows[i], q->k, q->d.is_signed);
        terms[i] = (int32_t)((uint32_t)q->row_factor * sum);
    }
    uint8_t *y = r->y + m0 * q->d.out_c;
    for (size_t n = n0; n < n0 + nt; n += 32)
        eng_qconv_gemm_avx512(q, rows, terms, (uint32_t)mt, (uint32_t)n, y, q->d.out_c);
}

#define QCONV_DW_POINTERS 2048 /* tap pointers of one chunk of a row, on the stack */

static void dw_task(void *ctx, size_t row) {
    const qconv_run *r = ctx;
    const eng_qconv *q = r->q;
    const eng_qconv_desc *d = &q->d;
    const uint8_t *taps[QCONV_DW_POINTERS];
    uint32_t chunk = QCONV_DW_POINTERS / q->taps;
    size_t oy = row % d->out_h, b = row / d->out_h;
    uint8_t *y = r->y + row * d->out_w * d->out_c;
    const uint8_t *rows[QCONV_TAPS_MAX]; /* per ky: the input row, NULL in the padding */
    for (uint32_t ky = 0; ky < d->fh; ky++) {
        int64_t iy = (int64_t)oy * d->sh - d->pad_top + (int64_t)ky * d->dh;
        rows[ky] =
            iy < 0 || iy >= d->in_h ? NULL : r->x + (b * d->in_h + (size_t)iy) * d->in_w * d->in_c;
    }
    for (uint32_t ox0 = 0; ox0 < d->out_w; ox0 += chunk) {
        uint32_t pixels = d->out_w - ox0 < chunk ? d->out_w - ox0 : chunk, t = 0;
        for (uint32_t ox = ox0; ox < ox0 + pixels; ox++) {
            int64_t ix0 = (int64_t)ox * d->sw - d->pad_left;
            for (uint32_t ky = 0; ky < d->fh; ky++)
                for (uint32_t kx = 0; kx < d->fw; kx++, t++) {
                    int64_t ix = ix0 + (int64_t)kx * d->dw;
                    taps[t] = !rows[ky] || ix < 0 || ix >= d->in_w
                                  ? q->zero_row
                                  : rows[ky] + (size_t)ix * d->in_c;
                }
        }
        eng_qconv_dw_avx512(q, taps, pixels, y + (size_t)ox0 * d->out_c);
    }
}

void eng_qconv_run(const eng_qconv *q, const void *x, void *y, void *scratch, pthreadpool_t tp,
                   uint32_t flags) {
    qconv_run r = {.q = q, .x = x, .y = y, .scratch = scratch};
    const eng_qconv_desc *d = &q->d;
    size_t m = (size_t)d->batch * d->out_h * d->out_w;
    if (d->depthwise) {
        pthreadpool_parallelize_1d(tp, dw_task, &r, (size_t)d->batch * d->out_h, flags);
        return;
    }
    /* A task builds its rows' im2col once, so it takes every channel; plain rows split the
     * channels too, into 32-channel tasks when there are few rows (a fully connected
     * layer). */
    size_t nt = !q->direct ? q->np : m >= 4 * QCONV_MR ? QCONV_NT : 32;
    pthreadpool_parallelize_2d_tile_2d(tp, gemm_task, &r, m, q->np, QCONV_MR, nt, flags);
}
