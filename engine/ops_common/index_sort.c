/* SPDX-License-Identifier: Apache-2.0 */
/* index_sort.c: stable index sorting. See index_sort.h. */
#include "engine/ops_common/index_sort.h"

#include <string.h>

void eng_stable_sort(uint32_t *idx, size_t n, uint32_t *tmp, eng_before_fn before,
                     const void *ctx) {
    /* Bottom-up merge sort, ping-ponging between idx and tmp. */
    uint32_t *src = idx, *dst = tmp;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi)
                dst[o++] = before(ctx, src[b], src[a]) ? src[b++] : src[a++];
            while (a < mid)
                dst[o++] = src[a++];
            while (b < hi)
                dst[o++] = src[b++];
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

void eng_sort_by_score(uint32_t *idx, size_t n, const float *key, uint32_t *tmp) {
    eng_stable_sort(idx, n, tmp, higher_score, key);
}
