/* SPDX-License-Identifier: Apache-2.0 */
/* tensor_copy.c: element copies. See tensor_copy.h. */
#include "engine/ops_common/tensor_copy.h"

#include <stdbool.h>
#include <string.h>

#include "engine/ops_common/operand.h"

void eng_copy_elems(void *dst, size_t dst_step, const void *src, size_t src_step, size_t n,
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

void eng_copy_nd(void *dst, const ptrdiff_t *dst_step, const void *src, const ptrdiff_t *src_step,
                 const uint32_t *count, uint32_t rank, size_t esize) {
    /* Normalize: drop size-1 dimensions and merge a dimension into the next inner one when
     * both sides are contiguous across it, so common cases become a few long memcpys. */
    uint32_t n[ENG_COPY_MAX_RANK];
    ptrdiff_t ds[ENG_COPY_MAX_RANK], ss[ENG_COPY_MAX_RANK];
    uint32_t r = 0;
    if (rank > ENG_COPY_MAX_RANK) return;
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
    uint32_t inner = n[r - 1], idx[ENG_COPY_MAX_RANK] = {0};
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

void eng_dense_steps(uint32_t rank, const uint32_t *dims, ptrdiff_t *steps) {
    ptrdiff_t acc = 1;
    for (uint32_t d = rank; d-- > 0;) {
        steps[d] = acc;
        acc *= (ptrdiff_t)dims[d];
    }
}

void eng_fill_elems(void *dst, const void *value, size_t n, size_t esize) {
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

const void *eng_aligned_data(eng_op_ctx *c, const eng_tensor *t) {
    size_t size = schema_type_size(t->type);
    if (!t->data || size <= 1 || (uintptr_t)t->data % size == 0) return t->data;
    size_t bytes = eng_elems(t) * size;
    void *copy = eng_scratch(c, bytes);
    if (copy) memcpy(copy, t->data, bytes);
    return copy;
}
