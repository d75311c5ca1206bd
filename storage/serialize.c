/* SPDX-License-Identifier: Apache-2.0 */
/* serialize.c: model and data cache encoding and hostile decoding. See serialize.h.
 *
 * Model cache:  header | graph (the main graph) | graph per referenced subgraph
 *   header      magic "NNDMODL\0", u32 version, u32 flags (bit 0: relaxed, bit 1: reference kernels
 * only), u32 preference, u32 build id length, 64 bytes build id (zero padded), u32 graphs, u64 data
 * payload length graph       u32 operands, u32 operations, u32 inputs, u32 outputs, then the
 * operands, the operations, the input list and the output list operand     i32 type, u32 rank, u32
 * dims[16], f32 scale, i32 zero point, u32 lifetime, u64 offset, u64 length, u32 channel dim, u32
 * scales, u32 extension length, then the scales (f32) and the extension bytes padded to 4; a
 *               SUBGRAPH operand's offset is the index of the subgraph it names
 *   operation   i32 type, u32 inputs, u32 outputs, then both operand lists (u32)
 * Data cache:   magic "NNDDATA\0", u32 version, u32 0, u64 payload length, zeros to 64,
 *               payload */
#include "storage/serialize.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the cache format is written in host order, which must be little-endian"
#endif

static const char MODEL_MAGIC[8] = "NNDMODL";
static const char DATA_MAGIC[8] = "NNDDATA";

#define HEADER_LEN  (8 + 4 * 4 + STORE_SER_BUILD_ID_MAX + 4 + 8)
#define GRAPH_LEN   (4 * 4)
#define OPERAND_LEN (4 * 2 + 4 * ENG_MAX_RANK + 4 * 3 + 8 * 2 + 4 * 3)
#define OP_LEN      12

static size_t pad4(size_t n) {
    return (n + 3) & ~(size_t)3;
}

/* Graph g of m in cache order: 0 the main graph, then the referenced subgraphs. */
static eng_model_desc graph(const eng_model_desc *m, uint32_t g) {
    return g == 0 ? *m : eng_model_referenced(m, g - 1);
}

/* ---- encode ----------------------------------------------------------------------------- */

typedef struct writer {
    uint8_t *p;
    size_t at;
} writer;

static void put(writer *w, const void *v, size_t n) {
    if (n) memcpy(w->p + w->at, v, n);
    w->at += n;
}
static void put_u32(writer *w, uint32_t v) {
    put(w, &v, 4);
}
static void put_u64(writer *w, uint64_t v) {
    put(w, &v, 8);
}

static bool is_constant(const eng_operand_desc *o) {
    return o->lifetime == SCHEMA_CONSTANT_COPY || o->lifetime == SCHEMA_CONSTANT_REFERENCE;
}

/* Where operand i's constant bytes are in the caller's memory, or NULL when its location
 * is outside its source. */
static const uint8_t *constant_src(const eng_model_desc *m, const eng_operand_desc *o) {
    const uint8_t *base;
    size_t size;
    if (o->lifetime == SCHEMA_CONSTANT_COPY) {
        base = m->operand_values, size = m->operand_values_len;
    } else {
        if (o->pool >= m->n_pools) return NULL;
        base = m->pools[o->pool].base, size = m->pools[o->pool].size;
    }
    if (o->offset > size || o->length > size - o->offset) return NULL;
    return o->length ? base + o->offset : base;
}

/* Client pools are fresh mappings: one page-table fill for the whole range costs far less
 * than a fault per page (the copy still works where the kernel declines). */
static void copy_constant(uint8_t *dst, const uint8_t *src, size_t len) {
    if (len >= (64u << 10)) {
        uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
        uintptr_t start = (uintptr_t)src & ~(page - 1);
        madvise((void *)start, (uintptr_t)src + len - start, MADV_POPULATE_READ);
    }
    memcpy(dst, src, len);
}

static size_t const_align(uint64_t len) {
    return len >= 64 ? 64 : 8;
}

/* Sizes of the model cache and the data payload, with every constant at its new offset. */
static schema_status measure(const eng_model_desc *m, size_t *model_out, size_t *payload_out,
                             char *err, size_t errlen) {
    size_t model_len = HEADER_LEN, payload = 0;
    for (uint32_t g = 0; g <= m->n_referenced; g++) {
        eng_model_desc v = graph(m, g);
        model_len += GRAPH_LEN;
        for (uint32_t i = 0; i < v.n_operands; i++) {
            const eng_operand_desc *o = &v.operands[i];
            model_len +=
                OPERAND_LEN + 4 * (size_t)o->channel_quant.n_scales + pad4(o->extension_len);
            if (!is_constant(o)) continue;
            if (!constant_src(&v, o))
                return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                    "graph %u, operand %u: constant location %llu+%llu is outside "
                                    "its memory",
                                    g, i, (unsigned long long)o->offset,
                                    (unsigned long long)o->length);
            size_t a = const_align(o->length);
            payload = (payload + a - 1) & ~(a - 1);
            if (o->length > SIZE_MAX / 2 - payload)
                return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "constants too large");
            payload += o->length;
        }
        for (uint32_t k = 0; k < v.n_operations; k++)
            model_len +=
                OP_LEN + 4 * ((size_t)v.operations[k].n_inputs + v.operations[k].n_outputs);
        model_len += 4 * ((size_t)v.n_inputs + v.n_outputs);
    }
    *model_out = model_len;
    *payload_out = payload;
    return SCHEMA_OK;
}

uint64_t store_ser_size(const eng_model_desc *m) {
    size_t model_len, payload;
    if (measure(m, &model_len, &payload, NULL, 0) != SCHEMA_OK) return 0;
    return (uint64_t)model_len + STORE_SER_DATA_HEADER + payload;
}

/* One graph: its counts, operands (constants packed into the payload at *at), operations
 * and input and output lists. */
static void put_graph(writer *w, uint8_t *payload, size_t *at, eng_model_desc v) {
    put_u32(w, v.n_operands);
    put_u32(w, v.n_operations);
    put_u32(w, v.n_inputs);
    put_u32(w, v.n_outputs);
    for (uint32_t i = 0; i < v.n_operands; i++) {
        const eng_operand_desc *o = &v.operands[i];
        uint32_t lifetime = o->lifetime;
        uint64_t offset = 0, length = 0; /* non-constants have no location (NO_VALUE's is moot) */
        if (is_constant(o)) {
            /* Alignment gaps are zeroed, so equal models give equal bytes (and hashes). */
            size_t a = const_align(o->length), next = (*at + a - 1) & ~(a - 1);
            memset(payload + *at, 0, next - *at);
            *at = next;
            if (o->length) copy_constant(payload + *at, constant_src(&v, o), o->length);
            lifetime = SCHEMA_CONSTANT_REFERENCE, offset = *at, length = o->length; /* in pool 0 */
            *at += o->length;
        } else if (lifetime == SCHEMA_SUBGRAPH) {
            offset = o->offset; /* the subgraph's index */
        }
        put(w, &o->type, 4);
        put_u32(w, o->rank);
        put(w, o->dims, 4 * ENG_MAX_RANK);
        put(w, &o->scale, 4);
        put(w, &o->zero_point, 4);
        put_u32(w, lifetime);
        put_u64(w, offset);
        put_u64(w, length);
        put_u32(w, o->channel_quant.channel_dim);
        put_u32(w, o->channel_quant.n_scales);
        put_u32(w, o->extension_len);
        put(w, o->channel_quant.scales, 4 * (size_t)o->channel_quant.n_scales);
        put(w, o->extension_data, o->extension_len);
        for (size_t z = o->extension_len; z < pad4(o->extension_len); z++)
            w->p[w->at++] = 0;
    }
    for (uint32_t k = 0; k < v.n_operations; k++) {
        const eng_operation_desc *op = &v.operations[k];
        put(w, &op->type, 4);
        put_u32(w, op->n_inputs);
        put_u32(w, op->n_outputs);
        put(w, op->inputs, 4 * (size_t)op->n_inputs);
        put(w, op->outputs, 4 * (size_t)op->n_outputs);
    }
    put(w, v.inputs, 4 * (size_t)v.n_inputs);
    put(w, v.outputs, 4 * (size_t)v.n_outputs);
}

schema_status store_ser_encode(const eng_model_desc *m, uint32_t preference, const char *build_id,
                               store_buf *model, store_buf *data, char *err, size_t errlen) {
    memset(model, 0, sizeof *model);
    memset(data, 0, sizeof *data);
    size_t id_len = strlen(build_id);
    if (id_len > STORE_SER_BUILD_ID_MAX)
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "driver build id longer than %d bytes", STORE_SER_BUILD_ID_MAX);
    size_t model_len, payload;
    schema_status st = measure(m, &model_len, &payload, err, errlen);
    if (st != SCHEMA_OK) return st;
    if (store_buf_alloc(model, model_len) < 0 ||
        store_buf_alloc(data, STORE_SER_DATA_HEADER + payload) < 0) {
        store_buf_free(model);
        store_buf_free(data);
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "out of memory serializing the model");
    }

    writer d = {.p = data->p};
    put(&d, DATA_MAGIC, 8);
    put_u32(&d, STORE_SER_VERSION);
    put_u32(&d, 0);
    put_u64(&d, payload);
    memset(d.p + d.at, 0, STORE_SER_DATA_HEADER - d.at);
    d.at = STORE_SER_DATA_HEADER;

    writer w = {.p = model->p};
    char id[STORE_SER_BUILD_ID_MAX] = {0};
    memcpy(id, build_id, id_len);
    put(&w, MODEL_MAGIC, 8);
    put_u32(&w, STORE_SER_VERSION);
    put_u32(&w, (m->relaxed ? 1u : 0u) | (m->reference_only ? 2u : 0u));
    put_u32(&w, preference);
    put_u32(&w, (uint32_t)id_len);
    put(&w, id, sizeof id);
    put_u32(&w, m->n_referenced + 1);
    put_u64(&w, payload);
    size_t at = 0; /* payload offset of the next constant */
    for (uint32_t g = 0; g <= m->n_referenced; g++)
        put_graph(&w, data->p + STORE_SER_DATA_HEADER, &at, graph(m, g));
    memset(data->p + STORE_SER_DATA_HEADER + at, 0, payload - at);
    return SCHEMA_OK;
}

/* ---- decode ----------------------------------------------------------------------------- */

typedef struct reader {
    const uint8_t *p;
    size_t len, at;
} reader;

static bool has(const reader *r, size_t n) {
    return n <= r->len - r->at;
}
static void get(reader *r, void *v, size_t n) {
    memcpy(v, r->p + r->at, n);
    r->at += n;
}
static uint32_t get_u32(reader *r) {
    uint32_t v;
    get(r, &v, 4);
    return v;
}
static uint64_t get_u64(reader *r) {
    uint64_t v;
    get(r, &v, 8);
    return v;
}

void store_ser_model_clear(store_ser_model *m) {
    free(m->operands);
    free(m->operations);
    free(m->lists);
    free(m->scales);
    free(m->extension);
    free(m->referenced);
    memset(m, 0, sizeof *m);
}

#define BAD(...)                                                                                   \
    (schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, __VA_ARGS__), store_ser_model_clear(out),   \
     SCHEMA_GENERAL_FAILURE)

/* Where the decoder puts what it reads: each array sized from the cache's length, so that
 * no count in the cache can make it allocate more than a few times its size. */
typedef struct sink {
    size_t n_operands, n_operations, n_lists, n_scales, n_ext;
    size_t cap_operands, cap_operations;
    uint32_t n_graphs;
    uint64_t payload;
} sink;

/* One graph, into the next entries of out's arrays; *g receives its description. */
static schema_status get_graph(reader *r, sink *k, store_ser_model *out, uint32_t gi,
                               eng_subgraph_desc *g, char *err, size_t errlen) {
    if (!has(r, GRAPH_LEN)) return BAD("model cache: graph %u is cut off", gi);
    uint32_t n_operands = get_u32(r), n_ops = get_u32(r);
    uint32_t n_in = get_u32(r), n_out = get_u32(r);
    /* Every count must fit in the bytes that remain before anything is taken for it. */
    size_t left = r->len - r->at;
    if (n_operands > ENG_MAX_OPERANDS || n_operands > left / OPERAND_LEN ||
        n_operands > k->cap_operands - k->n_operands)
        return BAD("model cache: graph %u: %u operands do not fit", gi, n_operands);
    if (n_ops > ENG_MAX_OPERATIONS || n_ops > (left - (size_t)n_operands * OPERAND_LEN) / OP_LEN ||
        n_ops > k->cap_operations - k->n_operations)
        return BAD("model cache: graph %u: %u operations do not fit", gi, n_ops);
    if (n_in > n_operands || n_out > n_operands)
        return BAD("model cache: graph %u: %u inputs and %u outputs for %u operands", gi, n_in,
                   n_out, n_operands);
    eng_operand_desc *ods = out->operands + k->n_operands;
    eng_operation_desc *ops = out->operations + k->n_operations;
    k->n_operands += n_operands;
    k->n_operations += n_ops;
    for (uint32_t i = 0; i < n_operands; i++) {
        if (!has(r, OPERAND_LEN)) return BAD("model cache: graph %u: operand %u is cut off", gi, i);
        eng_operand_desc *o = &ods[i];
        get(r, &o->type, 4);
        o->rank = get_u32(r);
        get(r, o->dims, 4 * ENG_MAX_RANK);
        get(r, &o->scale, 4);
        get(r, &o->zero_point, 4);
        o->lifetime = get_u32(r);
        o->offset = get_u64(r);
        o->length = get_u64(r);
        o->channel_quant.channel_dim = get_u32(r);
        uint32_t ns = get_u32(r), ext = get_u32(r);
        if (o->rank > ENG_MAX_RANK)
            return BAD("model cache: graph %u: operand %u has rank %u", gi, i, o->rank);
        for (uint32_t d = o->rank; d < ENG_MAX_RANK; d++)
            if (o->dims[d])
                return BAD("model cache: graph %u: operand %u has dimensions past its rank", gi, i);
        switch (o->lifetime) {
        case SCHEMA_TEMPORARY:
        case SCHEMA_MODEL_INPUT:
        case SCHEMA_MODEL_OUTPUT:
        case SCHEMA_NO_VALUE:
            if (o->offset || o->length)
                return BAD("model cache: graph %u: operand %u has a location", gi, i);
            break;
        case SCHEMA_CONSTANT_REFERENCE:
            if (o->offset > k->payload || o->length > k->payload - o->offset)
                return BAD("model cache: graph %u: operand %u: constant %llu+%llu outside the "
                           "%llu data bytes",
                           gi, i, (unsigned long long)o->offset, (unsigned long long)o->length,
                           (unsigned long long)k->payload);
            o->pool = 0;
            break;
        case SCHEMA_SUBGRAPH:
            if (o->length || o->offset >= k->n_graphs - 1)
                return BAD("model cache: graph %u: operand %u names subgraph %llu of %u", gi, i,
                           (unsigned long long)o->offset, k->n_graphs - 1);
            break;
        default:
            return BAD("model cache: graph %u: operand %u has lifetime %u", gi, i, o->lifetime);
        }
        if (!has(r, 4 * (size_t)ns))
            return BAD("model cache: graph %u: operand %u: scales cut off", gi, i);
        if (ns) {
            o->channel_quant.scales = out->scales + k->n_scales;
            get(r, out->scales + k->n_scales, 4 * (size_t)ns);
            o->channel_quant.n_scales = ns;
            k->n_scales += ns;
        }
        if (!has(r, pad4(ext)))
            return BAD("model cache: graph %u: operand %u: extension cut off", gi, i);
        if (ext) {
            o->extension_data = out->extension + k->n_ext;
            get(r, out->extension + k->n_ext, ext);
            o->extension_len = ext;
            k->n_ext += ext;
            for (size_t z = ext; z < pad4(ext); z++)
                if (r->p[r->at++])
                    return BAD("model cache: graph %u: operand %u: padding is not zero", gi, i);
        }
    }
    for (uint32_t q = 0; q < n_ops; q++) {
        if (!has(r, OP_LEN)) return BAD("model cache: graph %u: operation %u is cut off", gi, q);
        eng_operation_desc *op = &ops[q];
        get(r, &op->type, 4);
        uint32_t ni = get_u32(r), no = get_u32(r);
        if (ni > (r->len - r->at) / 4 || no > (r->len - r->at) / 4 - ni)
            return BAD("model cache: graph %u: operation %u: operand lists cut off", gi, q);
        uint32_t *list = out->lists + k->n_lists;
        get(r, list, 4 * ((size_t)ni + no));
        for (size_t j = 0; j < (size_t)ni + no; j++)
            if (list[j] >= n_operands)
                return BAD("model cache: graph %u: operation %u names operand %u of %u", gi, q,
                           list[j], n_operands);
        op->n_inputs = ni;
        op->n_outputs = no;
        op->inputs = list;
        op->outputs = list + ni;
        k->n_lists += (size_t)ni + no;
    }
    if (!has(r, 4 * ((size_t)n_in + n_out)))
        return BAD("model cache: graph %u: inputs and outputs cut off", gi);
    uint32_t *io = out->lists + k->n_lists;
    get(r, io, 4 * ((size_t)n_in + n_out));
    for (size_t j = 0; j < (size_t)n_in + n_out; j++)
        if (io[j] >= n_operands)
            return BAD("model cache: graph %u: an input or output names operand %u of %u", gi,
                       io[j], n_operands);
    k->n_lists += (size_t)n_in + n_out;
    *g = (eng_subgraph_desc){.n_operands = n_operands,
                             .operands = ods,
                             .n_operations = n_ops,
                             .operations = ops,
                             .n_inputs = n_in,
                             .inputs = io,
                             .n_outputs = n_out,
                             .outputs = io + n_in};
    return SCHEMA_OK;
}

schema_status store_ser_decode(const uint8_t *model, size_t model_len, const uint8_t *data,
                               size_t data_len, store_ser_model *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    /* Data cache header. */
    if (data_len < STORE_SER_DATA_HEADER || memcmp(data, DATA_MAGIC, 8) != 0)
        return BAD("data cache: not an nnd data cache");
    reader dr = {.p = data, .len = data_len, .at = 8};
    uint32_t dver = get_u32(&dr), dzero = get_u32(&dr);
    uint64_t payload = get_u64(&dr);
    if (dver != STORE_SER_VERSION)
        return BAD("data cache: format version %u, not %u", dver, STORE_SER_VERSION);
    if (dzero != 0 || payload != data_len - STORE_SER_DATA_HEADER)
        return BAD("data cache: header does not match its length");
    for (size_t i = dr.at; i < STORE_SER_DATA_HEADER; i++)
        if (data[i]) return BAD("data cache: header padding is not zero");

    /* Model cache header. */
    reader r = {.p = model, .len = model_len};
    if (!has(&r, HEADER_LEN) || memcmp(model, MODEL_MAGIC, 8) != 0)
        return BAD("model cache: not an nnd model cache");
    r.at = 8;
    uint32_t ver = get_u32(&r), flags = get_u32(&r);
    out->preference = get_u32(&r);
    uint32_t id_len = get_u32(&r);
    char id[STORE_SER_BUILD_ID_MAX];
    get(&r, id, sizeof id);
    if (ver != STORE_SER_VERSION)
        return BAD("model cache: format version %u, not %u", ver, STORE_SER_VERSION);
    if (flags & ~3u) return BAD("model cache: unknown flags 0x%x", flags);
    if (out->preference > 3) return BAD("model cache: preference %u", out->preference);
    if (id_len > STORE_SER_BUILD_ID_MAX) return BAD("model cache: build id length %u", id_len);
    for (size_t i = id_len; i < sizeof id; i++)
        if (id[i]) return BAD("model cache: build id padding is not zero");
    memcpy(out->build_id, id, id_len);
    sink k = {.n_graphs = get_u32(&r), .payload = get_u64(&r)};
    if (k.payload != payload)
        return BAD("model cache expects %llu data bytes, the data cache has %llu",
                   (unsigned long long)k.payload, (unsigned long long)payload);
    size_t left = model_len - r.at;
    if (k.n_graphs == 0 || k.n_graphs > ENG_MAX_SUBGRAPHS + 1 || k.n_graphs > left / GRAPH_LEN)
        return BAD("model cache: %u graphs do not fit", k.n_graphs);

    k.cap_operands = left / OPERAND_LEN;
    k.cap_operations = left / OP_LEN;
    out->operands = calloc(k.cap_operands + 1, sizeof *out->operands);
    out->operations = calloc(k.cap_operations + 1, sizeof *out->operations);
    out->lists = malloc(model_len + 4); /* every u32 list entry came from the model bytes */
    out->scales = malloc(model_len + 4);
    out->extension = malloc(model_len + 1);
    out->referenced = calloc(k.n_graphs, sizeof *out->referenced);
    if (!out->operands || !out->operations || !out->lists || !out->scales || !out->extension ||
        !out->referenced)
        return BAD("out of memory decoding the model cache");
    eng_subgraph_desc main;
    schema_status s = get_graph(&r, &k, out, 0, &main, err, errlen);
    for (uint32_t g = 1; g < k.n_graphs && !s; g++)
        s = get_graph(&r, &k, out, g, &out->referenced[g - 1], err, errlen);
    if (s) return s; /* out was cleared */
    if (r.at != r.len) return BAD("model cache: %zu bytes past the end of the model", r.len - r.at);

    out->pool = (eng_memory_view){.base = data + STORE_SER_DATA_HEADER, .size = payload};
    eng_model_desc *d = &out->desc;
    eng_model_set_graph(d, &main);
    d->n_referenced = k.n_graphs - 1;
    d->referenced = k.n_graphs > 1 ? out->referenced : NULL;
    d->n_pools = 1;
    d->pools = &out->pool;
    d->relaxed = flags & 1u;
    d->reference_only = flags & 2u;
    return SCHEMA_OK;
}
