/* SPDX-License-Identifier: Apache-2.0 */
/* random.c: RANDOM_MULTINOMIAL — draws class indices from the softmax of each row of
 * logits. The generator is seeded from input 2, so a seed reproduces its draws; only the
 * distribution is specified, not the reference's exact Philox stream. */
#include <float.h>
#include <math.h>

#include "engine/ops_common/kernel_errors.h"
#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/realvalue.h"
#include "engine/ops_common/signature.h"

static schema_status multinomial_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 3, 3, 1, 1);
    if (s || (s = eng_check_float_signature(c, "TiI", "I")) ||
        (s = eng_check_input_ranks(c, "2.1")))
        return s;
    if (c->in[1]->data && eng_i32(c->in[1]) < 0)
        return eng_fail(c, "sample count (input 1) is negative: %d", eng_i32(c->in[1]));
    return SCHEMA_OK;
}

static schema_status multinomial_shape(eng_op_ctx *c) {
    int32_t samples = eng_i32(c->in[1]);
    if (samples < 0) return eng_fail(c, "sample count (input 1) is negative: %d", samples);
    if (c->in[2]->dims[0] != 2) return eng_fail(c, "input 2 must hold 2 seeds");
    uint32_t dims[2] = {c->in[0]->dims[0], (uint32_t)samples};
    eng_set_shape(c->out[0], 2, dims);
    return SCHEMA_OK;
}

/* splitmix64: a small generator with good statistics for sampling. */
static uint64_t next_u64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits. */
static double next_unit(uint64_t *state) {
    return (double)(next_u64(state) >> 11) * 0x1p-53;
}

static schema_status multinomial_run(eng_op_ctx *c) {
    const eng_tensor *logits = c->in[0];
    const int32_t *seeds = c->in[2]->data;
    int32_t *out = c->out[0]->data;
    uint32_t batches = logits->dims[0], classes = logits->dims[1];
    uint32_t samples = c->out[0]->dims[1];
    if (batches == 0) return SCHEMA_OK; /* nothing to draw: classes alone may be anything */
    double *cdf = eng_scratch(c, sizeof(double) * (classes ? classes : 1));
    if (!cdf) return eng_fail(c, "out of memory");
    uint64_t state = (uint64_t)(uint32_t)seeds[0] << 32 | (uint32_t)seeds[1];
    for (uint32_t b = 0; b < batches; b++) {
        /* Shift by the largest finite logit so exp() cannot overflow; non-finite logits
         * get no mass. */
        float top = -FLT_MAX;
        for (uint32_t k = 0; k < classes; k++) {
            float v = eng_real_at(logits, (size_t)b * classes + k);
            if (isfinite(v) && v > top) top = v;
        }
        double total = 0;
        for (uint32_t k = 0; k < classes; k++) {
            float v = eng_real_at(logits, (size_t)b * classes + k);
            if (isfinite(v)) total += exp((double)v - (double)top);
            cdf[k] = total;
        }
        for (uint32_t j = 0; j < samples; j++) {
            double target = next_unit(&state) * total;
            /* First class whose cumulative mass exceeds the target. */
            uint32_t lo = 0, hi = classes;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] > target)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            out[(size_t)b * samples + j] = (int32_t)lo;
        }
    }
    return SCHEMA_OK;
}

ENG_OP_DEF(RANDOM_MULTINOMIAL, multinomial_check, multinomial_shape, 0, 0,
           {{SCHEMA_TENSOR_FLOAT32, multinomial_run}, {SCHEMA_TENSOR_FLOAT16, multinomial_run}});
