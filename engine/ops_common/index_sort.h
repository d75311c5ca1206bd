/* SPDX-License-Identifier: Apache-2.0 */
/* index_sort: stable sorting of element indices, for the detection operations, whose
 * result order (by score, by class) the reference fixes.
 *
 * Contract: sorts an array of indices, not the data; the caller's comparison sees the
 * indices. Stable: indices that compare equal keep their order, as the reference's
 * std::stable_sort does. The caller provides the temporary array; nothing allocates.
 */
#ifndef ENG_OPS_COMMON_INDEX_SORT_H
#define ENG_OPS_COMMON_INDEX_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* true when index a must come before index b. */
typedef bool (*eng_before_fn)(const void *ctx, uint32_t a, uint32_t b);
/* Stable merge sort of n indices; tmp has room for n. */
void eng_stable_sort(uint32_t *idx, size_t n, uint32_t *tmp, eng_before_fn before, const void *ctx);
/* Stable sort by descending key[idx[i]]. */
void eng_sort_by_score(uint32_t *idx, size_t n, const float *key, uint32_t *tmp);

#endif
