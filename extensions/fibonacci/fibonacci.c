/* SPDX-License-Identifier: Apache-2.0 */
/* fibonacci.c: the plugin of the example extension com.example.fibonacci (fibonacci.h),
 * built as build/extensions/libnnd_fibonacci.so. It shows the whole plugin ABI
 * (nnd/extension.h): own operand types, extension data, and a shape known only once the
 * value of an input is. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fibonacci.h"
#include "nnd/extension.h"

static bool own(const nnd_ext_operand *o, int32_t code) {
    return o->extension && !strcmp(o->extension, TEST_VENDOR_FIBONACCI_EXTENSION_NAME) &&
           o->type == code;
}

static bool float_n(const nnd_ext_operand *o) {
    return !o->extension && o->type == NND_EXT_TENSOR_FLOAT32;
}

static int validate(const nnd_ext_call *c) {
    if (c->n_inputs != 1 || c->n_outputs != 1) {
        snprintf(c->err, c->errlen, "takes 1 input and 1 output, got %u and %u", c->n_inputs,
                 c->n_outputs);
        return NND_EXT_INVALID;
    }
    const nnd_ext_operand *n = &c->inputs[0], *out = &c->outputs[0];
    if (!own(n, TEST_VENDOR_INT64) && !float_n(n)) {
        snprintf(c->err, c->errlen, "n must be TEST_VENDOR_INT64 or TENSOR_FLOAT32");
        return NND_EXT_UNSUPPORTED;
    }
    if (float_n(n) && n->rank) {
        uint64_t elems = 1;
        for (uint32_t r = 0; r < n->rank; r++)
            elems *= n->dims[r];
        if (elems > 1) {
            snprintf(c->err, c->errlen, "a TENSOR_FLOAT32 n must hold exactly one element");
            return NND_EXT_INVALID;
        }
    }
    if (own(out, TEST_VENDOR_TENSOR_QUANT64_ASYMM)) {
        if (out->extension_len != sizeof(TestVendorQuant64AsymmParams) || !out->extension_data) {
            snprintf(c->err, c->errlen,
                     "a TEST_VENDOR_TENSOR_QUANT64_ASYMM output needs %zu bytes of extension "
                     "data (scale, zeroPoint), got %u",
                     sizeof(TestVendorQuant64AsymmParams), out->extension_len);
            return NND_EXT_INVALID;
        }
        TestVendorQuant64AsymmParams q;
        memcpy(&q, out->extension_data, sizeof q); /* the blob need not be aligned */
        if (!(q.scale > 0) || !isfinite(q.scale)) {
            snprintf(c->err, c->errlen, "output scale %g must be positive and finite", q.scale);
            return NND_EXT_INVALID;
        }
    } else if (!float_n(out)) {
        snprintf(c->err, c->errlen,
                 "the output must be TENSOR_FLOAT32 or TEST_VENDOR_TENSOR_QUANT64_ASYMM");
        return NND_EXT_UNSUPPORTED;
    }
    if (out->rank > 1) {
        snprintf(c->err, c->errlen, "the output is 1-D, declared with rank %u", out->rank);
        return NND_EXT_INVALID;
    }
    return NND_EXT_OK;
}

/* n from its operand; NND_EXT_DEFER while unknown. */
static int read_n(const nnd_ext_call *c, long long *n) {
    const nnd_ext_operand *o = &c->inputs[0];
    if (!o->data) return NND_EXT_DEFER;
    double v;
    if (o->length < (float_n(o) ? sizeof(float) : sizeof(int64_t))) {
        snprintf(c->err, c->errlen, "n has only %zu bytes", o->length);
        return NND_EXT_FAILED;
    }
    if (float_n(o)) {
        float f;
        memcpy(&f, o->data, sizeof f);
        v = f;
    } else {
        int64_t i;
        memcpy(&i, o->data, sizeof i);
        v = (double)i;
    }
    if (!(v >= 1 && v < TEST_VENDOR_FIBONACCI_MAX_N + 1.0)) {
        /* A constant is the model's fault; an input's value fails only that execution. */
        snprintf(c->err, c->errlen, "n = %g is outside 1..%d", v, TEST_VENDOR_FIBONACCI_MAX_N);
        return o->is_constant ? NND_EXT_INVALID : NND_EXT_FAILED;
    }
    *n = (long long)v;
    return NND_EXT_OK;
}

static int prepare(nnd_ext_call *c) {
    long long n;
    int rc = read_n(c, &n);
    if (rc) return rc;
    c->outputs[0].rank = 1;
    c->outputs[0].dims[0] = (uint32_t)n;
    return NND_EXT_OK;
}

static int execute(nnd_ext_call *c) {
    long long n;
    int rc = read_n(c, &n);
    if (rc) return rc == NND_EXT_DEFER ? NND_EXT_FAILED : rc;
    nnd_ext_operand *out = &c->outputs[0];
    if (out->length < (size_t)n * out->element_size) {
        snprintf(c->err, c->errlen, "the output holds %zu bytes, n = %lld needs more", out->length,
                 n);
        return NND_EXT_FAILED;
    }
    double scale = 1, zero_point = 0;
    bool quant = own(out, TEST_VENDOR_TENSOR_QUANT64_ASYMM);
    if (quant) {
        TestVendorQuant64AsymmParams q;
        memcpy(&q, out->extension_data, sizeof q);
        scale = q.scale;
        zero_point = (double)q.zeroPoint;
    }
    double a = 1, b = 1; /* F(i) and F(i + 1) */
    for (long long i = 0; i < n; i++) {
        if (quant) {
            double v = nearbyint(a / scale + zero_point);
            uint64_t u = !(v >= 0) ? 0 : v >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)v;
            memcpy((uint8_t *)out->data + 8 * i, &u, sizeof u);
        } else {
            float f = (float)a;
            memcpy((uint8_t *)out->data + 4 * i, &f, sizeof f);
        }
        double next = a + b;
        a = b;
        b = next;
    }
    return NND_EXT_OK;
}

static const nnd_ext_operand_type types[] = {
    {.code = TEST_VENDOR_INT64, .is_tensor = false, .byte_size = 8, .name = "TEST_VENDOR_INT64"},
    {.code = TEST_VENDOR_TENSOR_QUANT64_ASYMM,
     .is_tensor = true,
     .byte_size = 8,
     .name = "TEST_VENDOR_TENSOR_QUANT64_ASYMM"},
};

static const nnd_ext_operation operations[] = {
    {.code = TEST_VENDOR_FIBONACCI,
     .name = "TEST_VENDOR_FIBONACCI",
     .validate = validate,
     .prepare = prepare,
     .execute = execute},
};

NND_EXTENSION_EXPORT = {
    .abi_version = NND_EXTENSION_ABI_VERSION,
    .struct_size = sizeof(nnd_extension),
    .name = TEST_VENDOR_FIBONACCI_EXTENSION_NAME,
    .version = "1.0",
    .n_operand_types = sizeof types / sizeof types[0],
    .operand_types = types,
    .n_operations = sizeof operations / sizeof operations[0],
    .operations = operations,
};
