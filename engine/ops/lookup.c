/* SPDX-License-Identifier: Apache-2.0 */
/* lookup.c: EMBEDDING_LOOKUP and HASHTABLE_LOOKUP — gather rows (slices along the first
 * dimension) of a values tensor, by index or through a sorted key table. Rows are moved
 * as bytes, so every value type shares one path. */
#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/tensor_copy.h"
#include "engine/ops/op_def.h"

#include <stdio.h>
#include <string.h>

static schema_status check_values(eng_op_ctx *c, uint32_t i, uint32_t min_rank) {
    char what[32];
    snprintf(what, sizeof what, "input %u (values)", i);
    schema_status s = eng_check_type(c, c->in[i], what, 5, SCHEMA_TENSOR_FLOAT32,
                                     SCHEMA_TENSOR_FLOAT16, SCHEMA_TENSOR_INT32,
                                     SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    if (s || (s = eng_check_rank(c, c->in[i], what, min_rank, ENG_MAX_RANK))) return s;
    if (c->out[0]->type != c->in[i]->type)
        return eng_fail(c, "output 0 has type %s, the values %s", schema_type_name(c->out[0]->type),
                        schema_type_name(c->in[i]->type));
    return eng_check_same_quant(c, i, 0);
}

/* A 1-D TENSOR_INT32 input. */
static schema_status check_index_vector(eng_op_ctx *c, uint32_t i, const char *what) {
    if (c->in[i]->type != SCHEMA_TENSOR_INT32)
        return eng_fail(c, "input %u (%s) must be TENSOR_INT32, is %s", i, what,
                        schema_type_name(c->in[i]->type));
    return eng_check_rank(c, c->in[i], what, 1, 1);
}

/* Output 0: the values' shape with the first dimension replaced by the lookup count. */
static void set_gathered_shape(eng_tensor *out, const eng_tensor *lookups,
                               const eng_tensor *values) {
    uint32_t dims[ENG_MAX_RANK];
    memcpy(dims, values->dims, sizeof(uint32_t) * values->rank);
    dims[0] = lookups->dims[0];
    eng_set_shape(out, values->rank, dims);
}

static size_t row_bytes(const eng_tensor *values) {
    return eng_dims_product(values, 1, values->rank) * schema_type_size(values->type);
}

static int32_t load_i32(const eng_tensor *t, size_t i) {
    int32_t v;
    memcpy(&v, (const int32_t *)t->data + i, sizeof v);
    return v;
}

/* ---- EMBEDDING_LOOKUP: inputs lookups, values -------------------------------------- */

static schema_status embedding_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, 2, 1, 1);
    if (s || (s = check_index_vector(c, 0, "lookups"))) return s;
    return check_values(c, 1, 2);
}

static schema_status embedding_shape(eng_op_ctx *c) {
    set_gathered_shape(c->out[0], c->in[0], c->in[1]);
    return SCHEMA_OK;
}

static schema_status embedding_run(eng_op_ctx *c) {
    const eng_tensor *lookups = c->in[0], *values = c->in[1];
    size_t row = row_bytes(values), rows = values->dims[0];
    uint8_t *dst = c->out[0]->data;
    for (uint32_t i = 0; i < lookups->dims[0]; i++) {
        int32_t idx = load_i32(lookups, i);
        if (idx < 0 || (size_t)idx >= rows)
            return eng_fail(c, "lookup %u is %d, outside the %zu rows", i, idx, rows);
        eng_copy_elems(dst + i * row, 1, (const uint8_t *)values->data + (size_t)idx * row, 1, row,
                       1);
    }
    return SCHEMA_OK;
}

/* ---- HASHTABLE_LOOKUP: inputs lookups, keys, values; outputs values, hits ---------- */

static schema_status hashtable_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 3, 3, 2, 2);
    if (s || (s = check_index_vector(c, 0, "lookups")) || (s = check_index_vector(c, 1, "keys")) ||
        (s = check_values(c, 2, 1)))
        return s;
    /* Unlike EMBEDDING_LOOKUP's, these values are never FLOAT16 or signed 8-bit (HAL 1.3). */
    if ((s = eng_check_type(c, c->in[2], "input 2 (values)", 3, SCHEMA_TENSOR_FLOAT32,
                            SCHEMA_TENSOR_INT32, SCHEMA_TENSOR_QUANT8_ASYMM)))
        return s;
    if (c->out[1]->type != SCHEMA_TENSOR_QUANT8_ASYMM)
        return eng_fail(c, "output 1 (hits) must be TENSOR_QUANT8_ASYMM, is %s",
                        schema_type_name(c->out[1]->type));
    return SCHEMA_OK;
}

static schema_status hashtable_shape(eng_op_ctx *c) {
    const eng_tensor *lookups = c->in[0], *keys = c->in[1], *values = c->in[2];
    if (keys->dims[0] != values->dims[0])
        return eng_fail(c, "%u keys for %u rows of values", keys->dims[0], values->dims[0]);
    set_gathered_shape(c->out[0], lookups, values);
    eng_set_shape(c->out[1], 1, lookups->dims);
    return SCHEMA_OK;
}

/* Index of key in the ascending keys, or -1. */
static int64_t find_key(const eng_tensor *keys, int32_t key) {
    size_t lo = 0, hi = keys->dims[0];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int32_t k = load_i32(keys, mid);
        if (k == key) return (int64_t)mid;
        if (k < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

static schema_status hashtable_run(eng_op_ctx *c) {
    const eng_tensor *lookups = c->in[0], *keys = c->in[1], *values = c->in[2];
    size_t row = row_bytes(values);
    uint8_t *dst = c->out[0]->data, *hits = c->out[1]->data;
    for (uint32_t i = 0; i < lookups->dims[0]; i++) {
        int64_t idx = find_key(keys, load_i32(lookups, i));
        /* A miss gives a row of zero bytes, as the reference writes. */
        if (idx < 0 && row)
            memset(dst + i * row, 0, row);
        else if (idx >= 0)
            eng_copy_elems(dst + i * row, 1, (const uint8_t *)values->data + (size_t)idx * row, 1,
                           row, 1);
        hits[i] = idx >= 0;
    }
    return SCHEMA_OK;
}

/* Rows move as bytes: one kernel for every value type (keyed on the values input). */
#define LOOKUP_KERNELS(run)                                                                        \
    {                                                                                              \
        {SCHEMA_TENSOR_FLOAT32, run}, {SCHEMA_TENSOR_FLOAT16, run}, {SCHEMA_TENSOR_INT32, run},    \
            {SCHEMA_TENSOR_QUANT8_ASYMM, run}, {                                                   \
            SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, run                                                 \
        }                                                                                          \
    }

ENG_OP_DEF(EMBEDDING_LOOKUP, embedding_check, embedding_shape, 0, 1, LOOKUP_KERNELS(embedding_run));
ENG_OP_DEF(HASHTABLE_LOOKUP, hashtable_check, hashtable_shape, 0, 2, LOOKUP_KERNELS(hashtable_run));
