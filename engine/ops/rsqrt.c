/* rsqrt.c: RSQRT — 1 / sqrt(x) per element, any rank.
 * - Float (HAL 1.2): in float32 (FLOAT16 through the type bridge).
 * - 8-bit quantized, unsigned and signed (NNAPI feature level 7): as the reference, the
 *   stored value is dequantized in float, the function applied in float, and the result
 *   quantized to the output's scale and zero point, rounding half away from zero and
 *   saturating (a negative or zero input gives the top of the range: NaN and +inf
 *   saturate there). The function runs as a lookup table (quant_table.h). */
#include <math.h>

#include "affine_quant.h"
#include "op_def.h"
#include "operand.h"
#include "quant_table.h"
#include "signature.h"
#include "type_bridge.h"

static nnd_status rsqrt_check(nnd_op_ctx *c) {
    nnd_status s = nnd_check_count(c, 1, 1, 1, 1);
    if (s) return s;
    s = nnd_check_type(c, c->in[0], "input 0", 4, NND_TENSOR_FLOAT32, NND_TENSOR_FLOAT16,
                       NND_TENSOR_QUANT8_ASYMM, NND_TENSOR_QUANT8_ASYMM_SIGNED);
    return s ? s : nnd_check_same_type(c, 0, 0);
}

static nnd_status rsqrt_f32(nnd_op_ctx *c) {
    const float *x = c->in[0]->data;
    float *y = c->out[0]->data;
    size_t n = nnd_elems(c->out[0]);
    for (size_t i = 0; i < n; i++)
        y[i] = 1.f / sqrtf(x[i]);
    return NND_OK;
}

static nnd_status rsqrt_f16(nnd_op_ctx *c) {
    return nnd_run_f16_as_f32(c, rsqrt_f32);
}

static void rsqrt_table(const nnd_op_ctx *c, int32_t qmin, int32_t qmax, uint8_t *table) {
    const nnd_tensor *in = c->in[0], *out = c->out[0];
    for (int32_t q = qmin; q <= qmax; q++) {
        float r = 1.f / sqrtf(nnd_dequantize_value(q, in->scale, in->zero_point));
        /* min before max, NaN taking the top, as the reference orders them */
        float v = fminf((float)qmax, (float)out->zero_point + roundf(r / out->scale));
        v = fmaxf((float)qmin, v);
        table[q - qmin] = (uint8_t)(int32_t)v;
    }
}

static nnd_status rsqrt_q8(nnd_op_ctx *c) {
    return nnd_q8_table_run(c, rsqrt_table);
}

NND_OP_DEF(rsqrt, RSQRT, rsqrt_check, nnd_shape_of_input0,
           {{NND_TENSOR_FLOAT32, rsqrt_f32},
            {NND_TENSOR_FLOAT16, rsqrt_f16},
            {NND_TENSOR_QUANT8_ASYMM, rsqrt_q8},
            {NND_TENSOR_QUANT8_ASYMM_SIGNED, rsqrt_q8}});
