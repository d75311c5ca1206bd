/* SPDX-License-Identifier: Apache-2.0 */
/* record_json.c: wire models and tensors in the conformance vectors' JSON. See
 * record_json.h. */
#include "client/record_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "schema/hal_names.h"
#include "schema/codes.h"

#define VALUE_ALIGN 8

int rec_read(int fd, uint64_t off, size_t len, void *dst) {
    size_t done = 0;
    ssize_t n = 0;
    while (done < len) {
        n = pread(fd, (uint8_t *)dst + done, len - done, (off_t)(off + done));
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        break;
    }
    if (done == len) return 0;
    /* The file ends before the range: a mapping would fault there. */
    if (n == 0) return -1;
    /* Not readable with pread (a dma-buf): map the page-aligned range around it. */
    uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), base = off & ~(page - 1);
    size_t map_len = (size_t)(off - base) + len;
    void *p = mmap(NULL, map_len, PROT_READ, MAP_SHARED, fd, (off_t)base);
    if (p == MAP_FAILED) return -1;
    memcpy(dst, (uint8_t *)p + (off - base), len);
    munmap(p, map_len);
    return 0;
}

/* ---- the model ------------------------------------------------------------------------ */

typedef struct values {
    uint8_t *bytes;
    size_t len, cap;
} values;

static int values_grow(values *v, size_t need) {
    if (need <= v->cap) return 0;
    size_t cap = v->cap ? v->cap : 256;
    while (cap < need)
        cap *= 2;
    uint8_t *b = realloc(v->bytes, cap);
    if (!b) return -1;
    v->bytes = b;
    v->cap = cap;
    return 0;
}

static const char *lifetime_name(Nnd__OperandLifeTime l) {
    switch (l) {
    case NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE: return "TEMPORARY_VARIABLE";
    case NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT: return "MODEL_INPUT";
    case NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT: return "MODEL_OUTPUT";
    case NND__OPERAND_LIFE_TIME__CONSTANT_COPY: return "CONSTANT_COPY";
    case NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE: return "CONSTANT_REFERENCE";
    case NND__OPERAND_LIFE_TIME__NO_VALUE: return "NO_VALUE";
    case NND__OPERAND_LIFE_TIME__SUBGRAPH: return "SUBGRAPH";
    default: return NULL;
    }
}

typedef struct model_ctx {
    const Nnd__Model *m;
    const int *fds;
    size_t n_fds;
    values v; /* operandValues: the model's own, then every pooled constant */
    char *why;
    size_t whylen;
} model_ctx;

/* A CONSTANT_REFERENCE's bytes, appended to the values; *at is where. */
static int pooled_value(model_ctx *x, const Nnd__DataLocation *loc, uint64_t *at) {
    const Nnd__Model *m = x->m;
    if (loc->pool_index >= m->n_pools) {
        snprintf(x->why, x->whylen, "a constant names pool %u of %zu", loc->pool_index, m->n_pools);
        return -1;
    }
    const Nnd__MemoryPool *p = m->pools[loc->pool_index];
    bool has_fd = p->kind == NND__POOL_KIND__POOL_MEMFD ||
                  p->kind == NND__POOL_KIND__POOL_MMAP_FD || p->kind == NND__POOL_KIND__POOL_DMABUF;
    if (!has_fd || p->fd_index >= x->n_fds || loc->offset > p->size ||
        loc->length > p->size - loc->offset) {
        snprintf(x->why, x->whylen, "a constant of pool %u cannot be read", loc->pool_index);
        return -1;
    }
    size_t start = (x->v.len + VALUE_ALIGN - 1) & ~(size_t)(VALUE_ALIGN - 1);
    if (values_grow(&x->v, start + loc->length) < 0) {
        snprintf(x->why, x->whylen, "out of memory");
        return -1;
    }
    memset(x->v.bytes + x->v.len, 0, start - x->v.len);
    if (loc->length && rec_read(x->fds[p->fd_index], p->offset + loc->offset, loc->length,
                                x->v.bytes + start) < 0) {
        snprintf(x->why, x->whylen, "a constant of pool %u cannot be read", loc->pool_index);
        return -1;
    }
    x->v.len = start + loc->length;
    *at = start;
    return 0;
}

static cJSON *u32_array(const uint32_t *v, size_t n) {
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n; i++)
        if (!cJSON_AddItemToArray(a, cJSON_CreateNumber(v[i]))) {
            cJSON_Delete(a);
            return NULL;
        }
    return a;
}

static cJSON *operand_json(model_ctx *x, const Nnd__Operand *o, size_t consumers) {
    const char *type = schema_hal_type_name(o->type), *life = lifetime_name(o->lifetime);
    if (!type || !life || o->extra_params_case == NND__OPERAND__EXTRA_PARAMS_EXTENSION) {
        snprintf(x->why, x->whylen, "operand type %d is an extension's", o->type);
        return NULL;
    }
    uint64_t offset = o->location ? o->location->offset : 0;
    uint64_t length = o->location ? o->location->length : 0;
    bool pooled = o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE;
    if (pooled && (!o->location || pooled_value(x, o->location, &offset) < 0)) {
        if (!o->location) snprintf(x->why, x->whylen, "a constant without a location");
        return NULL;
    }
    if (o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_COPY &&
        (offset > x->m->operand_values.len || length > x->m->operand_values.len - offset)) {
        snprintf(x->why, x->whylen, "a constant outside the model's values");
        return NULL;
    }
    cJSON *j = cJSON_CreateObject(), *loc = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "type", type);
    cJSON_AddItemToObject(j, "dimensions", u32_array(o->dimensions, o->n_dimensions));
    cJSON_AddNumberToObject(j, "numberOfConsumers", (double)consumers);
    cJSON_AddNumberToObject(j, "scale", o->scale);
    cJSON_AddNumberToObject(j, "zeroPoint", o->zero_point);
    cJSON_AddStringToObject(j, "lifetime", pooled ? "CONSTANT_COPY" : life);
    cJSON_AddNumberToObject(loc, "poolIndex",
                            pooled        ? 0
                            : o->location ? o->location->pool_index
                                          : 0);
    cJSON_AddNumberToObject(loc, "offset", (double)offset);
    cJSON_AddNumberToObject(loc, "length", (double)length);
    cJSON_AddItemToObject(j, "location", loc);
    if (pooled) cJSON_AddBoolToObject(j, "wasConstantReference", true);
    if (o->extra_params_case == NND__OPERAND__EXTRA_PARAMS_CHANNEL_QUANT && o->channel_quant) {
        cJSON *q = cJSON_AddObjectToObject(j, "channelQuant"),
              *s = cJSON_AddArrayToObject(q, "scales");
        for (size_t i = 0; s && i < o->channel_quant->n_scales; i++)
            cJSON_AddItemToArray(s, cJSON_CreateNumber(o->channel_quant->scales[i]));
        cJSON_AddNumberToObject(q, "channelDim", o->channel_quant->channel_dim);
    }
    return j;
}

static cJSON *graph_json(model_ctx *x, const Nnd__Subgraph *g) {
    size_t *consumers = calloc(g->n_operands + 1, sizeof *consumers);
    cJSON *j = cJSON_CreateObject();
    cJSON *ops = cJSON_AddArrayToObject(j, "operands");
    cJSON *opns = cJSON_AddArrayToObject(j, "operations");
    if (!consumers || !ops || !opns) {
        snprintf(x->why, x->whylen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < g->n_operations; i++) {
        const Nnd__Operation *op = g->operations[i];
        const char *name = schema_hal_operation_name(op->type);
        if (!name) {
            snprintf(x->why, x->whylen, "operation type %d is an extension's", op->type);
            goto fail;
        }
        for (size_t k = 0; k < op->n_inputs; k++)
            if (op->inputs[k] < g->n_operands) consumers[op->inputs[k]]++;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(opns, o);
        cJSON_AddStringToObject(o, "type", name);
        cJSON_AddItemToObject(o, "inputs", u32_array(op->inputs, op->n_inputs));
        cJSON_AddItemToObject(o, "outputs", u32_array(op->outputs, op->n_outputs));
    }
    for (size_t i = 0; i < g->n_operands; i++) {
        cJSON *o = operand_json(x, g->operands[i], consumers[i]);
        if (!o) goto fail;
        cJSON_AddItemToArray(ops, o);
    }
    cJSON_AddItemToObject(j, "inputIndexes", u32_array(g->input_indexes, g->n_input_indexes));
    cJSON_AddItemToObject(j, "outputIndexes", u32_array(g->output_indexes, g->n_output_indexes));
    free(consumers);
    return j;
fail:
    free(consumers);
    cJSON_Delete(j);
    return NULL;
}

static char *base64(const uint8_t *b, size_t n) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *s = malloc((n + 2) / 3 * 4 + 1), *p = s;
    if (!s) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16;
        if (i + 1 < n) v |= (uint32_t)b[i + 1] << 8;
        if (i + 2 < n) v |= b[i + 2];
        *p++ = abc[v >> 18 & 63];
        *p++ = abc[v >> 12 & 63];
        *p++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
        *p++ = i + 2 < n ? abc[v & 63] : '=';
    }
    *p = 0;
    return s;
}

cJSON *rec_model_json(const Nnd__Model *m, const int *pool_fds, size_t n_fds, char *why,
                      size_t whylen) {
    if (m->n_extension_name_to_prefix) {
        snprintf(why, whylen, "the model uses extensions");
        return NULL;
    }
    model_ctx x = {.m = m, .fds = pool_fds, .n_fds = n_fds, .why = why, .whylen = whylen};
    snprintf(why, whylen, "out of memory");
    if (values_grow(&x.v, m->operand_values.len + 1) < 0) return NULL;
    if (m->operand_values.len) memcpy(x.v.bytes, m->operand_values.data, m->operand_values.len);
    x.v.len = m->operand_values.len;
    cJSON *j = m->main ? graph_json(&x, m->main) : NULL;
    cJSON *refs = j && m->n_referenced ? cJSON_AddArrayToObject(j, "referenced") : NULL;
    for (size_t i = 0; j && i < m->n_referenced; i++) {
        cJSON *g = graph_json(&x, m->referenced[i]);
        if (!g || !refs) {
            cJSON_Delete(j);
            j = NULL;
        } else {
            cJSON_AddItemToArray(refs, g);
        }
    }
    char *b64 = j ? base64(x.v.bytes, x.v.len) : NULL;
    if (j && b64) {
        cJSON_AddStringToObject(j, "operandValues", b64);
        cJSON_AddBoolToObject(j, "relaxComputationFloat32toFloat16",
                              m->relax_computation_float32_to_float16);
    } else if (j) {
        snprintf(why, whylen, "out of memory");
        cJSON_Delete(j);
        j = NULL;
    }
    free(b64);
    free(x.v.bytes);
    return j;
}

/* ---- the version a model needs ---------------------------------------------------------- */

enum { V1_0, V1_1, V1_2, V1_3, AIDL_V2, AIDL_V3 };
static const char *const version_names[] = {"V1_0", "V1_1", "V1_2", "V1_3", "AIDL_V2", "AIDL_V3"};

/* Operation codes by the version that added them: HAL 1.0 ends at TANH, 1.1 at TRANSPOSE,
 * 1.2 at RESIZE_NEAREST_NEIGHBOR, 1.3 at RANK; feature level 6 adds BATCH_MATMUL and PACK. */
static int operation_version(int32_t code) {
    return code <= SCHEMA_OP_TANH                      ? V1_0
           : code <= SCHEMA_OP_TRANSPOSE               ? V1_1
           : code <= SCHEMA_OP_RESIZE_NEAREST_NEIGHBOR ? V1_2
           : code <= SCHEMA_OP_RANK                    ? V1_3
           : code <= SCHEMA_OP_PACK                    ? AIDL_V2
                                                       : AIDL_V3;
}

static int type_version(int32_t type) {
    return type <= SCHEMA_TENSOR_QUANT8_ASYMM  ? V1_0
           : type <= SCHEMA_TENSOR_QUANT8_SYMM ? V1_2
                                               : V1_3;
}

static int graph_version(const Nnd__Subgraph *g, int v) {
    for (size_t i = 0; i < g->n_operations; i++)
        if (operation_version(g->operations[i]->type) > v)
            v = operation_version(g->operations[i]->type);
    for (size_t i = 0; i < g->n_operands; i++)
        if (type_version(g->operands[i]->type) > v) v = type_version(g->operands[i]->type);
    return v;
}

const char *rec_min_version(const Nnd__Model *m) {
    int v = m->relax_computation_float32_to_float16 ? V1_1 : V1_0;
    if (m->main) v = graph_version(m->main, v);
    for (size_t i = 0; i < m->n_referenced; i++)
        v = graph_version(m->referenced[i], v);
    return version_names[v];
}

/* ---- tensors ---------------------------------------------------------------------------- */

/* IEEE half precision bits to float (no compiler half type needed). */
static float half_to_float(uint16_t h) {
    int exp = h >> 10 & 31;
    float mag = exp == 0    ? ldexpf((float)(h & 1023), -24)
                : exp == 31 ? ((h & 1023) ? NAN : INFINITY)
                            : ldexpf((float)((h & 1023) | 1024), exp - 25);
    return (h & 0x8000) ? -mag : mag;
}

/* One float element; digits: 9 round-trips a float, 5 a half. */
static int put_float(char *p, size_t room, float f, int digits, bool *has_nan) {
    if (isnan(f)) {
        *has_nan = true;
        return snprintf(p, room, "0");
    }
    if (isinf(f)) return snprintf(p, room, f > 0 ? "1e999" : "-1e999");
    return snprintf(p, room, "%.*g", digits, (double)f);
}

static int put_element(char *p, size_t room, int32_t type, const uint8_t *e, bool *has_nan) {
    switch (type) {
    case SCHEMA_FLOAT32:
    case SCHEMA_TENSOR_FLOAT32: {
        float f;
        memcpy(&f, e, 4);
        return put_float(p, room, f, 9, has_nan);
    }
    case SCHEMA_FLOAT16:
    case SCHEMA_TENSOR_FLOAT16: {
        uint16_t h;
        memcpy(&h, e, 2);
        return put_float(p, room, half_to_float(h), 5, has_nan);
    }
    case SCHEMA_INT32:
    case SCHEMA_TENSOR_INT32: {
        int32_t i;
        memcpy(&i, e, 4);
        return snprintf(p, room, "%d", i);
    }
    case SCHEMA_UINT32: {
        uint32_t u;
        memcpy(&u, e, 4);
        return snprintf(p, room, "%u", u);
    }
    case SCHEMA_BOOL:
    case SCHEMA_TENSOR_BOOL8: return snprintf(p, room, *e ? "true" : "false");
    case SCHEMA_TENSOR_QUANT8_ASYMM: return snprintf(p, room, "%u", *e);
    case SCHEMA_TENSOR_QUANT16_SYMM: {
        int16_t i;
        memcpy(&i, e, 2);
        return snprintf(p, room, "%d", i);
    }
    case SCHEMA_TENSOR_QUANT16_ASYMM: {
        uint16_t u;
        memcpy(&u, e, 2);
        return snprintf(p, room, "%u", u);
    }
    default: return snprintf(p, room, "%d", (int8_t)*e); /* the signed 8-bit types */
    }
}

#define ELEMENT_CHARS 24 /* the longest element ("-1.17549435e-38") and its comma, with room */

/* The data array as raw JSON text: one cJSON node, not one per element. */
static cJSON *data_json(int32_t type, const void *data, size_t count, bool *has_nan) {
    size_t es = schema_hal_element_size(type);
    char *text = malloc(count * ELEMENT_CHARS + 3);
    if (!text || !es) {
        free(text);
        return NULL;
    }
    size_t at = 0;
    text[at++] = '[';
    for (size_t i = 0; i < count; i++) {
        if (i) text[at++] = ',';
        at += (size_t)put_element(text + at, ELEMENT_CHARS, type, (const uint8_t *)data + i * es,
                                  has_nan);
    }
    text[at++] = ']';
    text[at] = 0;
    cJSON *raw = cJSON_CreateRaw(text);
    free(text);
    return raw;
}

cJSON *rec_tensor_json(uint32_t index, int32_t type, const uint32_t *dims, size_t rank,
                       const void *data, size_t count, bool *has_nan) {
    cJSON *j = cJSON_CreateObject();
    cJSON *d = count ? data_json(type, data, count, has_nan) : cJSON_CreateArray();
    if (!j || !d) {
        cJSON_Delete(j);
        cJSON_Delete(d);
        return NULL;
    }
    cJSON_AddNumberToObject(j, "index", index);
    cJSON_AddItemToObject(j, "dimensions", u32_array(dims, rank));
    cJSON_AddItemToObject(j, "data", d);
    return j;
}
