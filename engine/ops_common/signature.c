/* SPDX-License-Identifier: Apache-2.0 */
/* signature.c: signature checks. See signature.h. */
#include "engine/ops_common/signature.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine/ops_common/affine_quant.h"
#include "engine/ops_common/kernel_errors.h"
#include "engine/ops_common/operand.h"

schema_status eng_check_count(eng_op_ctx *c, uint32_t min_in, uint32_t max_in, uint32_t min_out,
                              uint32_t max_out) {
    if (c->n_in < min_in || c->n_in > max_in) {
        if (min_in == max_in) return eng_fail(c, "takes %u inputs, got %u", min_in, c->n_in);
        return eng_fail(c, "takes %u to %u inputs, got %u", min_in, max_in, c->n_in);
    }
    if (c->n_out < min_out || c->n_out > max_out) {
        if (min_out == max_out) return eng_fail(c, "has %u outputs, got %u", min_out, c->n_out);
        return eng_fail(c, "has %u to %u outputs, got %u", min_out, max_out, c->n_out);
    }
    return SCHEMA_OK;
}

schema_status eng_check_type(eng_op_ctx *c, const eng_tensor *t, const char *what, int n, ...) {
    va_list ap;
    va_start(ap, n);
    bool ok = false;
    for (int i = 0; i < n; i++)
        if (va_arg(ap, int) == t->type) ok = true;
    va_end(ap);
    if (ok) return SCHEMA_OK;
    return eng_fail(c, "%s has type %s, which this operation does not take", what,
                    schema_type_name(t->type));
}

schema_status eng_check_rank(eng_op_ctx *c, const eng_tensor *t, const char *what, uint32_t min,
                             uint32_t max) {
    if (t->rank == 0 && !t->known) return SCHEMA_OK; /* unknown rank: judged at execution */
    if (t->rank < min || t->rank > max) {
        if (min == max) return eng_fail(c, "%s must have rank %u, has %u", what, min, t->rank);
        return eng_fail(c, "%s must have rank %u to %u, has %u", what, min, max, t->rank);
    }
    return SCHEMA_OK;
}

schema_status eng_check_scalar(eng_op_ctx *c, uint32_t i, int32_t type) {
    if (i >= c->n_in) return eng_fail(c, "input %u missing", i);
    if (c->in[i]->type != type)
        return eng_fail(c, "input %u must be %s, is %s", i, schema_type_name(type),
                        schema_type_name(c->in[i]->type));
    return SCHEMA_OK;
}

schema_status eng_check_activation(eng_op_ctx *c, uint32_t i) {
    schema_status s = eng_check_scalar(c, i, SCHEMA_INT32);
    if (s) return s;
    const eng_tensor *t = c->in[i];
    if (t->data && eng_driver_rules(c)) {
        int32_t a = eng_i32(t);
        if (a < SCHEMA_FUSED_NONE || a > SCHEMA_FUSED_RELU6)
            return eng_fail(c, "fused activation %d (input %u) is not 0..3", a, i);
    }
    return SCHEMA_OK;
}

schema_status eng_check_same_type(eng_op_ctx *c, uint32_t i, uint32_t o) {
    if (c->in[i]->type != c->out[o]->type)
        return eng_fail(c, "output %u has type %s, input %u has %s", o,
                        schema_type_name(c->out[o]->type), i, schema_type_name(c->in[i]->type));
    return SCHEMA_OK;
}

schema_status eng_check_moved(eng_op_ctx *c, uint32_t i, uint32_t o) {
    char what[24];
    snprintf(what, sizeof what, "input %u", i);
    schema_status s = eng_check_type(c, c->in[i], what, 5, SCHEMA_TENSOR_FLOAT32,
                                     SCHEMA_TENSOR_FLOAT16, SCHEMA_TENSOR_INT32,
                                     SCHEMA_TENSOR_QUANT8_ASYMM, SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED);
    if (s) return s;
    if (c->in[i]->type != c->out[o]->type)
        return eng_fail(c, "output %u has type %s, input %u has %s", o,
                        schema_type_name(c->out[o]->type), i, schema_type_name(c->in[i]->type));
    return eng_require_same_quant(c, i, o);
}

static int32_t kind_type(char k, int32_t t0) {
    switch (k) {
    case 'T': return t0;
    case 'f': return t0 == SCHEMA_TENSOR_FLOAT16 ? SCHEMA_FLOAT16 : SCHEMA_FLOAT32;
    case 'i': return SCHEMA_INT32;
    case 'b': return SCHEMA_BOOL;
    case 'I': return SCHEMA_TENSOR_INT32;
    default: return -1;
    }
}

schema_status eng_check_signature(eng_op_ctx *c, const char *in_kinds, const char *out_kinds) {
    int32_t t0 = c->in[0]->type;
    for (uint32_t i = 0; i < c->n_in && in_kinds[i]; i++) {
        int32_t want = kind_type(in_kinds[i], t0);
        if (want >= 0 && c->in[i]->type != want)
            return eng_fail(c, "input %u must be %s, is %s", i, schema_type_name(want),
                            schema_type_name(c->in[i]->type));
    }
    for (uint32_t i = 0; i < c->n_out && out_kinds[i]; i++) {
        int32_t want = kind_type(out_kinds[i], t0);
        if (want >= 0 && c->out[i]->type != want)
            return eng_fail(c, "output %u must be %s, is %s", i, schema_type_name(want),
                            schema_type_name(c->out[i]->type));
    }
    return SCHEMA_OK;
}

schema_status eng_check_float_signature(eng_op_ctx *c, const char *in_kinds,
                                        const char *out_kinds) {
    schema_status s =
        eng_check_type(c, c->in[0], "input 0", 2, SCHEMA_TENSOR_FLOAT32, SCHEMA_TENSOR_FLOAT16);
    return s ? s : eng_check_signature(c, in_kinds, out_kinds);
}

/* "[a, b, c]" into buf. */
static const char *dims_str(char *buf, size_t len, uint32_t rank, const uint32_t *dims) {
    size_t at = 0;
    at += (size_t)snprintf(buf, len, "[");
    for (uint32_t k = 0; k < rank && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, k ? ", %u" : "%u", dims[k]);
    if (at < len) snprintf(buf + at, len - at, "]");
    return buf;
}

schema_status eng_expect_dims(eng_op_ctx *c, uint32_t i, const char *what, uint32_t rank,
                              const uint32_t *dims) {
    const eng_tensor *t = c->in[i];
    bool ok = t->rank == rank;
    for (uint32_t k = 0; ok && k < rank; k++)
        ok = t->dims[k] == dims[k];
    if (ok) return SCHEMA_OK;
    char want[96], have[96];
    return eng_fail(c, "%s (input %u) must have shape %s, has %s", what, i,
                    dims_str(want, sizeof want, rank, dims),
                    dims_str(have, sizeof have, t->rank, t->dims));
}

schema_status eng_check_input_ranks(eng_op_ctx *c, const char *ranks) {
    for (uint32_t i = 0; i < c->n_in && ranks[i]; i++) {
        if (ranks[i] < '0' || ranks[i] > '9') continue;
        char what[24];
        snprintf(what, sizeof what, "input %u", i);
        uint32_t r = (uint32_t)(ranks[i] - '0');
        schema_status s = eng_check_rank(c, c->in[i], what, r, r);
        if (s) return s;
    }
    return SCHEMA_OK;
}
