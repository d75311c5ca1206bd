/* SPDX-License-Identifier: Apache-2.0 */
/* lsh.c: LSH_PROJECTION — locality sensitive hashing of an input to a bit vector.
 *
 * Each (hash function, bit) seed s gives one bit: the sign of sum_i w_i * H(s, item_i),
 * where item_i is the i-th slice of the input along dimension 0 (its raw bytes), w_i the
 * optional weight (1 when omitted), and H the 64-bit FarmHash fingerprint (signed) of the
 * key = 4 bytes of the seed as float32, then the item's bytes. The sum is in double, as
 * the reference does. Sparse types pack each function's bits into one int32 (type 3 adds
 * the function index * 2^bits); dense writes one 0/1 per bit. */
#include <string.h>

#include "engine/ops_common/float16.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops/op_def.h"

enum { IN_HASH, IN_X, IN_WEIGHT, IN_TYPE };
enum { LSH_SPARSE_DEPRECATED = 1, LSH_DENSE = 2, LSH_SPARSE = 3 };

/* ---- FarmHash Fingerprint64 (the "na" variant's Hash64), little endian loads ----------- */

static const uint64_t K0 = 0xc3a5c85c97cb3127ull, K1 = 0xb492b66fbe98f273ull,
                      K2 = 0x9ae16a3b2f90404full;

static uint64_t load64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t load32(const uint8_t *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
}

static uint64_t rot(uint64_t v, int s) {
    return s ? v >> s | v << (64 - s) : v;
}
static uint64_t shift_mix(uint64_t v) {
    return v ^ (v >> 47);
}

static uint64_t mix16(uint64_t u, uint64_t v, uint64_t mul) {
    uint64_t a = (u ^ v) * mul;
    a ^= a >> 47;
    uint64_t b = (v ^ a) * mul;
    b ^= b >> 47;
    return b * mul;
}

static uint64_t hash_0_to_16(const uint8_t *s, size_t n) {
    uint64_t mul = K2 + n * 2;
    if (n >= 8) {
        uint64_t a = load64(s) + K2, b = load64(s + n - 8);
        return mix16(rot(b, 37) * mul + a, (rot(a, 25) + b) * mul, mul);
    }
    if (n >= 4) return mix16(n + (load32(s) << 3), load32(s + n - 4), mul);
    if (n == 0) return K2;
    uint32_t y = (uint32_t)s[0] + ((uint32_t)s[n >> 1] << 8);
    uint32_t z = (uint32_t)n + ((uint32_t)s[n - 1] << 2);
    return shift_mix(y * K2 ^ z * K0) * K2;
}

static uint64_t hash_17_to_32(const uint8_t *s, size_t n) {
    uint64_t mul = K2 + n * 2;
    uint64_t a = load64(s) * K1, b = load64(s + 8);
    uint64_t c = load64(s + n - 8) * mul, d = load64(s + n - 16) * K2;
    return mix16(rot(a + b, 43) + rot(c, 30) + d, a + rot(b + K2, 18) + c, mul);
}

static uint64_t hash_33_to_64(const uint8_t *s, size_t n) {
    uint64_t mul = K2 + n * 2;
    uint64_t a = load64(s) * K2, b = load64(s + 8);
    uint64_t c = load64(s + n - 8) * mul, d = load64(s + n - 16) * K2;
    uint64_t y = rot(a + b, 43) + rot(c, 30) + d;
    uint64_t z = mix16(y, a + rot(b + K2, 18) + c, mul);
    uint64_t e = load64(s + 16) * mul, f = load64(s + 24);
    uint64_t g = (y + load64(s + n - 32)) * mul, h = (z + load64(s + n - 24)) * mul;
    return mix16(rot(e + f, 43) + rot(g, 30) + h, e + rot(f + a, 18) + g, mul);
}

/* Mixes 32 bytes w..z into the pair (a, b). */
static void weak32(const uint8_t *s, uint64_t a, uint64_t b, uint64_t out[2]) {
    uint64_t w = load64(s), x = load64(s + 8), y = load64(s + 16), z = load64(s + 24);
    a += w;
    b = rot(b + a + z, 21);
    uint64_t c = a;
    a += x + y;
    b += rot(a, 44);
    out[0] = a + z;
    out[1] = b + c;
}

static uint64_t fingerprint64(const uint8_t *s, size_t n) {
    if (n <= 16) return hash_0_to_16(s, n);
    if (n <= 32) return hash_17_to_32(s, n);
    if (n <= 64) return hash_33_to_64(s, n);
    /* 64-byte blocks with 56 bytes of state, then the last 64 bytes of the input. */
    const uint64_t seed = 81;
    uint64_t x = seed, y = seed * K1 + 113, z = shift_mix(y * K2 + 113) * K2, t;
    uint64_t v[2] = {0, 0}, w[2] = {0, 0};
    x = x * K2 + load64(s);
    const uint8_t *end = s + ((n - 1) / 64) * 64, *last = s + n - 64;
    do {
        x = rot(x + y + v[0] + load64(s + 8), 37) * K1;
        y = rot(y + v[1] + load64(s + 48), 42) * K1;
        x ^= w[1];
        y += v[0] + load64(s + 40);
        z = rot(z + w[0], 33) * K1;
        weak32(s, v[1] * K1, x + w[0], v);
        weak32(s + 32, z + w[1], y + load64(s + 16), w);
        t = z, z = x, x = t;
        s += 64;
    } while (s != end);
    uint64_t mul = K1 + ((z & 0xff) << 1);
    s = last;
    w[0] += (n - 1) & 63;
    v[0] += w[0];
    w[0] += v[0];
    x = rot(x + y + v[0] + load64(s + 8), 37) * mul;
    y = rot(y + v[1] + load64(s + 48), 42) * mul;
    x ^= w[1] * 9;
    y += v[0] * 9 + load64(s + 40);
    z = rot(z + w[0], 33) * mul;
    weak32(s, v[1] * mul, x + w[0], v);
    weak32(s + 32, z + w[1], y + load64(s + 16), w);
    t = z, z = x, x = t;
    return mix16(mix16(v[0], w[0], mul) + shift_mix(y) * K0 + z, mix16(v[1], w[1], mul) + x, mul);
}

/* ---- the operation ------------------------------------------------------------------- */

static schema_status lsh_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 4, 4, 1, 1);
    if (!s)
        s = eng_check_type(c, c->in[IN_HASH], "hash functions (input 0)", 2, SCHEMA_TENSOR_FLOAT32,
                           SCHEMA_TENSOR_FLOAT16);
    if (!s)
        s = eng_check_type(c, c->in[IN_X], "input 1", 4, SCHEMA_TENSOR_FLOAT32,
                           SCHEMA_TENSOR_FLOAT16, SCHEMA_TENSOR_INT32, SCHEMA_TENSOR_QUANT8_ASYMM);
    if (!s) s = eng_check_signature(c, "T*Ti", "I");
    if (s) return s;
    if (c->in[IN_TYPE]->data) {
        int32_t type = eng_i32(c->in[IN_TYPE]);
        if (type < LSH_SPARSE_DEPRECATED || type > LSH_SPARSE)
            return eng_fail(c, "projection type %d (input 3) is not 1, 2 or 3", type);
    }
    return SCHEMA_OK;
}

static schema_status lsh_shape(eng_op_ctx *c) {
    const eng_tensor *hash = c->in[IN_HASH], *x = c->in[IN_X];
    int32_t type = eng_i32(c->in[IN_TYPE]);
    if (type < LSH_SPARSE_DEPRECATED || type > LSH_SPARSE)
        return eng_fail(c, "projection type %d (input 3) is not 1, 2 or 3", type);
    if (hash->rank != 2) return eng_fail(c, "hash functions (input 0) must be 2-D");
    uint32_t n_hash = hash->dims[0], n_bits = hash->dims[1];
    if (n_bits > 32) return eng_fail(c, "%u bits per hash function; at most 32", n_bits);
    if (type == LSH_SPARSE) { /* signatures plus the function offset must fit in int32 */
        uint32_t index_bits = 0;
        while (index_bits < 32 && (1ull << index_bits) < n_hash)
            index_bits++;
        if (n_bits + index_bits > 32)
            return eng_fail(c, "%u hash functions of %u bits overflow a sparse signature", n_hash,
                            n_bits);
    }
    if (x->rank < 1) return eng_fail(c, "input 1 must have rank 1 or more");
    if (eng_has_input(c, IN_WEIGHT)) {
        schema_status s = eng_expect_dims(c, IN_WEIGHT, "weight", 1, x->dims);
        if (s) return s;
    }
    uint64_t n = type == LSH_DENSE ? (uint64_t)n_hash * n_bits : n_hash; /* 64 bits: no wrap */
    if (n > UINT32_MAX)
        return eng_fail(c, "%u hash functions of %u bits make %llu outputs, past 2^32", n_hash,
                        n_bits, (unsigned long long)n);
    uint32_t n32 = (uint32_t)n;
    eng_set_shape(c->out[0], 1, &n32);
    return SCHEMA_OK;
}

static double element(const eng_tensor *t, size_t i) {
    if (t->type == SCHEMA_TENSOR_FLOAT16) return (double)((const eng_half *)t->data)[i];
    return (double)((const float *)t->data)[i];
}

static schema_status lsh_run(eng_op_ctx *c) {
    const eng_tensor *hash = c->in[IN_HASH], *x = c->in[IN_X];
    const eng_tensor *weight = eng_has_input(c, IN_WEIGHT) ? c->in[IN_WEIGHT] : NULL;
    int32_t type = eng_i32(c->in[IN_TYPE]);
    uint32_t n_hash = hash->dims[0], n_bits = hash->dims[1], n_items = x->dims[0];
    size_t item = n_items ? eng_elems(x) * schema_type_size(x->type) / n_items : 0;
    uint8_t *key = eng_scratch(c, sizeof(float) + item);
    if (!key) return eng_fail(c, "out of scratch memory");
    int32_t *out = c->out[0]->data;
    for (uint32_t i = 0; i < n_hash; i++) {
        uint32_t signature = 0;
        for (uint32_t j = 0; j < n_bits; j++) {
            float seed = (float)element(hash, (size_t)i * n_bits + j);
            memcpy(key, &seed, sizeof seed);
            double score = 0.0;
            for (uint32_t k = 0; k < n_items; k++) {
                memcpy(key + sizeof seed, (const uint8_t *)x->data + k * item, item);
                double h = (double)(int64_t)fingerprint64(key, sizeof seed + item);
                score += weight ? element(weight, k) * h : h;
            }
            uint32_t bit = score > 0.0;
            if (type == LSH_DENSE) out[(size_t)i * n_bits + j] = (int32_t)bit;
            signature = signature << 1 | bit;
        }
        if (type == LSH_SPARSE) signature += (uint32_t)((uint64_t)i << n_bits); /* fits: checked */
        if (type != LSH_DENSE) out[i] = (int32_t)signature;
    }
    return SCHEMA_OK;
}

ENG_OP_DEF(LSH_PROJECTION, lsh_check, lsh_shape, ENG_INPUT(2), 0,
           {{SCHEMA_TENSOR_FLOAT32, lsh_run}, {SCHEMA_TENSOR_FLOAT16, lsh_run}});
