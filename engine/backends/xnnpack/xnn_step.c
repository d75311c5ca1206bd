/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_step.c: what the XNNPACK families share beside their step (xnn_step.h): the
 * over-read rule for operator inputs, the 8-bit zero point and activation bounds, the
 * engine's own kernels as composite steps. Apart
 * from xnn.c, which calls the families' claims, so that the families never call xnn.c. */
#include <stdint.h>
#include <string.h>

#include "engine/backends/xnnpack/xnn_step.h"
#include "engine/base/footprint.h"
#include "engine/ops_common/fused_activation.h"

/* XNNPACK may read up to XNN_EXTRA_BYTES past the end of an input. That is harmless where
 * the tensor's memory goes on (the rest of a client's pool, say) or while it stays in the
 * page holding the input's last byte (pages are at least 4 KiB); other inputs, ending
 * closer to a page end of memory that may end there, are copied to scratch with room to
 * spare. NULL when out of scratch memory. */
#define PAGE_MIN 4096u
const void *xnnb_overread_safe(eng_op_ctx *c, const eng_tensor *t, const void *p, size_t n) {
    const uint8_t *end = (const uint8_t *)p + n, *mem_end = (const uint8_t *)t->data + t->bytes;
    if (end <= mem_end && (size_t)(mem_end - end) + t->readable_past >= XNN_EXTRA_BYTES) return p;
    uintptr_t last = (uintptr_t)p + n - 1;
    if ((last & (PAGE_MIN - 1)) + XNN_EXTRA_BYTES < PAGE_MIN) return p;
    void *copy = eng_scratch(c, n + XNN_EXTRA_BYTES);
    if (copy) memcpy(copy, p, n);
    return copy;
}

/* The stored range of an 8-bit type: unsigned [0, 255], signed [-128, 127]. */
static int32_t storage_min(int32_t type) {
    return type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED ? -128 : 0;
}

static bool eight_bit(int32_t type) {
    return type == SCHEMA_TENSOR_QUANT8_ASYMM || type == SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED;
}

bool xnnb_zero_point_fits(const eng_tensor *t) {
    int32_t lo = storage_min(t->type);
    return !eight_bit(t->type) || (t->zero_point >= lo && t->zero_point <= lo + 255);
}

bool xnnb_act_bounds(const eng_tensor *y, int32_t act, float *lo, float *hi, int32_t *qlo,
                     int32_t *qhi) {
    eng_act_range_f32(act, lo, hi);
    int32_t q0 = storage_min(y->type);
    eng_act_range_quant(act, y->scale, y->zero_point, q0, q0 + 255, qlo, qhi);
    return !eight_bit(y->type) || *qlo < *qhi;
}

void xnnb_own_composite(xnnb_step *s, const xnnb_composite *composite, void *extra) {
    eng_footprint_add_block(extra);
    s->kind = NULL;
    s->composite = composite;
    s->extra = extra;
}

uint32_t xnnb_pool_flags(const xnnb_step *s) {
    return (s->flags & XNN_FLAG_YIELD_WORKERS) ? PTHREADPOOL_FLAG_YIELD_WORKERS : 0;
}
