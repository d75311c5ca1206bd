/* SPDX-License-Identifier: Apache-2.0 */
/* case_tensor.c: example tensors in their operands' byte formats. See case_tensor.h. */
#include "tools/conformance/case_tensor.h"

#include <stdlib.h>
#include <string.h>

#include "schema/hal_names.h"
#include "tools/conformance/case_read.h"
#include "schema/codes.h"

/* IEEE half precision. Clang before 15 has no _Float16 on x86: __fp16 stores the same bits
 * (the fuzz build links compiler-rt for its conversions). */
#if defined(__clang__) && __clang_major__ < 15 && (defined(__x86_64__) || defined(__i386__))
typedef __fp16 cf_half;
#else
typedef _Float16 cf_half;
#endif

#define MAX_RANK 16

static int encode(int32_t type, const cJSON *v, uint8_t *dst) {
    double d = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : v->valuedouble;
    if (!cJSON_IsNumber(v) && !cJSON_IsBool(v)) return -1;
    switch (type) {
    case SCHEMA_FLOAT32:
    case SCHEMA_TENSOR_FLOAT32: {
        float f = (float)d;
        memcpy(dst, &f, 4);
        return 0;
    }
    case SCHEMA_FLOAT16:
    case SCHEMA_TENSOR_FLOAT16: {
        cf_half h = (cf_half)d;
        memcpy(dst, &h, 2);
        return 0;
    }
    case SCHEMA_INT32:
    case SCHEMA_TENSOR_INT32: {
        int32_t i = (int32_t)d;
        memcpy(dst, &i, 4);
        return 0;
    }
    case SCHEMA_UINT32: {
        uint32_t u = (uint32_t)d;
        memcpy(dst, &u, 4);
        return 0;
    }
    case SCHEMA_TENSOR_QUANT8_ASYMM: *dst = (uint8_t)(int)d; return 0;
    case SCHEMA_BOOL:
    case SCHEMA_TENSOR_BOOL8: *dst = d != 0; return 0;
    case SCHEMA_TENSOR_QUANT8_SYMM:
    case SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED: {
        int8_t i = (int8_t)(int)d;
        memcpy(dst, &i, 1);
        return 0;
    }
    case SCHEMA_TENSOR_QUANT16_SYMM: {
        int16_t i = (int16_t)(int)d;
        memcpy(dst, &i, 2);
        return 0;
    }
    case SCHEMA_TENSOR_QUANT16_ASYMM: {
        uint16_t u = (uint16_t)(int)d;
        memcpy(dst, &u, 2);
        return 0;
    }
    }
    return -1;
}

static int build_tensor(const cJSON *j, const Nnd__Subgraph *g, bool is_input, tool_case_tensor *t,
                        char *err, size_t errlen) {
    double idx = case_json_num(j, "index", -1);
    size_t nio = is_input ? g->n_input_indexes : g->n_output_indexes;
    if (idx < 0 || idx >= (double)nio) {
        case_errf(err, errlen, "%s index %g out of range", is_input ? "input" : "output", idx);
        return -1;
    }
    t->index = (uint32_t)idx;
    const Nnd__Operand *o =
        g->operands[is_input ? g->input_indexes[t->index] : g->output_indexes[t->index]];
    t->type = o->type;
    t->scale = o->scale;
    t->zero_point = o->zero_point;
    const cJSON *dims = cJSON_GetObjectItemCaseSensitive(j, "dimensions");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(j, "data");
    if (!cJSON_IsArray(dims) || cJSON_GetArraySize(dims) > MAX_RANK || !cJSON_IsArray(data)) {
        case_errf(err, errlen, "%s %u: bad dimensions or data", is_input ? "input" : "output",
                  t->index);
        return -1;
    }
    size_t elems = 1;
    const cJSON *e;
    cJSON_ArrayForEach(e, dims) {
        t->dims[t->rank++] = (uint32_t)e->valuedouble;
        elems *= (uint32_t)e->valuedouble;
    }
    size_t n = (size_t)cJSON_GetArraySize(data), esize = schema_hal_element_size(t->type);
    /* Omitted inputs have no data; zero-sized outputs carry one placeholder element. */
    if (n == 0 || elems == 0) return 0;
    if (n != elems) {
        case_errf(err, errlen, "%s %u: %zu values for %zu elements", is_input ? "input" : "output",
                  t->index, n, elems);
        return -1;
    }
    if (!(t->data = malloc(n * esize))) {
        case_errf(err, errlen, "out of memory");
        return -1;
    }
    t->count = n;
    t->bytes = n * esize;
    size_t i = 0;
    cJSON_ArrayForEach(e, data) {
        if (encode(t->type, e, (uint8_t *)t->data + i++ * esize) < 0) {
            case_errf(err, errlen, "%s %u: element %zu is not a number",
                      is_input ? "input" : "output", t->index, i - 1);
            return -1;
        }
    }
    return 0;
}

int case_tensors_from_json(const cJSON *a, const Nnd__Subgraph *g, bool is_input,
                           tool_case_tensor **out, size_t *n, char *err, size_t errlen) {
    if (!cJSON_IsArray(a)) {
        case_errf(err, errlen, "example without %s", is_input ? "inputs" : "outputs");
        return -1;
    }
    size_t k = (size_t)cJSON_GetArraySize(a);
    if (k && !(*out = calloc(k, sizeof **out))) return -1;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (build_tensor(e, g, is_input, &(*out)[*n], err, errlen) < 0) {
            free((*out)[*n].data);
            return -1;
        }
        (*n)++;
    }
    return 0;
}

/* One element as a double, read from its byte format. */
double case_element_value(int32_t type, const void *base, size_t i) {
    const uint8_t *p = (const uint8_t *)base + i * schema_hal_element_size(type);
    switch (type) {
    case SCHEMA_FLOAT32:
    case SCHEMA_TENSOR_FLOAT32: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    case SCHEMA_FLOAT16:
    case SCHEMA_TENSOR_FLOAT16: {
        cf_half h;
        memcpy(&h, p, 2);
        return (double)h;
    }
    case SCHEMA_INT32:
    case SCHEMA_TENSOR_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case SCHEMA_UINT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case SCHEMA_TENSOR_QUANT8_SYMM:
    case SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED: return (int8_t)*p;
    case SCHEMA_TENSOR_QUANT16_SYMM: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case SCHEMA_TENSOR_QUANT16_ASYMM: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    default: return *p; /* QUANT8_ASYMM, BOOL, BOOL8 */
    }
}
