/* SPDX-License-Identifier: Apache-2.0 */
/* elu.c: ELU (HAL 1.3) — max(0, x) + min(0, alpha * (exp(x) - 1)) per element, computed in
 * float32 as the reference does (FLOAT16 tensors and their FLOAT16 alpha through the type
 * bridge). Any rank. */
#include <math.h>

#include "engine/ops/op_def.h"
#include "engine/ops_common/operand.h"
#include "engine/ops_common/signature.h"
#include "engine/ops_common/type_bridge.h"

static schema_status elu_check(eng_op_ctx *c) {
    schema_status s = eng_check_count(c, 2, 2, 1, 1);
    return s ? s : eng_check_float_signature(c, "Tf", "T");
}

static schema_status elu_f32(eng_op_ctx *c) {
    const float *x = c->in[0]->data;
    float *y = c->out[0]->data, alpha = eng_f32(c->in[1]);
    size_t n = eng_elems(c->out[0]);
    for (size_t i = 0; i < n; i++)
        y[i] = fmaxf(0.f, x[i]) + fminf(0.f, alpha * (expf(x[i]) - 1.f));
    return SCHEMA_OK;
}

ENG_FLOAT_OP(ELU, elu_check, eng_shape_of_input0, 0, elu_f32);
