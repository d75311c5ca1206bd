/* conformance.c: conformance vector loader and judge. See conformance.h. */
#include "conformance.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "codes.h"

/* IEEE half precision. Clang before 15 has no _Float16 on x86: __fp16 stores the same bits
 * (the fuzz build links compiler-rt for its conversions). */
#if defined(__clang__) && __clang_major__ < 15 && (defined(__x86_64__) || defined(__i386__))
typedef __fp16 cf_half;
#else
typedef _Float16 cf_half;
#endif

#define MAX_RANK 8

/* ---- names ---------------------------------------------------------------------------- */

static const struct {
    const char *name;
    int32_t code;
} operations[] = {
#define OP_ROW(n, c) {#n, c},
    NND_OPERATIONS(OP_ROW)
#undef OP_ROW
};

static const struct {
    const char *name;
    int32_t code;
    size_t size;
} operand_types[] = {
    {"FLOAT32", NND_FLOAT32, 4},
    {"INT32", NND_INT32, 4},
    {"UINT32", NND_UINT32, 4},
    {"TENSOR_FLOAT32", NND_TENSOR_FLOAT32, 4},
    {"TENSOR_INT32", NND_TENSOR_INT32, 4},
    {"TENSOR_QUANT8_ASYMM", NND_TENSOR_QUANT8_ASYMM, 1},
    {"BOOL", NND_BOOL, 1},
    {"TENSOR_QUANT16_SYMM", NND_TENSOR_QUANT16_SYMM, 2},
    {"TENSOR_FLOAT16", NND_TENSOR_FLOAT16, 2},
    {"TENSOR_BOOL8", NND_TENSOR_BOOL8, 1},
    {"FLOAT16", NND_FLOAT16, 2},
    {"TENSOR_QUANT8_SYMM_PER_CHANNEL", NND_TENSOR_QUANT8_SYMM_PER_CHANNEL, 1},
    {"TENSOR_QUANT16_ASYMM", NND_TENSOR_QUANT16_ASYMM, 2},
    {"TENSOR_QUANT8_SYMM", NND_TENSOR_QUANT8_SYMM, 1},
    {"TENSOR_QUANT8_ASYMM_SIGNED", NND_TENSOR_QUANT8_ASYMM_SIGNED, 1},
};

static const struct {
    const char *name;
    Nnd__OperandLifeTime lifetime;
} lifetimes[] = {
    {"TEMPORARY_VARIABLE", NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE},
    {"MODEL_INPUT", NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT},
    {"SUBGRAPH_INPUT", NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT},
    {"MODEL_OUTPUT", NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT},
    {"SUBGRAPH_OUTPUT", NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT},
    {"CONSTANT_COPY", NND__OPERAND_LIFE_TIME__CONSTANT_COPY},
    {"CONSTANT_REFERENCE", NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE},
    {"NO_VALUE", NND__OPERAND_LIFE_TIME__NO_VALUE},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *nnd_case_operation_name(int32_t code) {
    for (size_t i = 0; i < COUNT(operations); i++)
        if (operations[i].code == code) return operations[i].name;
    return NULL;
}

int32_t nnd_case_operation_code(const char *name) {
    for (size_t i = 0; i < COUNT(operations); i++)
        if (!strcmp(operations[i].name, name)) return operations[i].code;
    return -1;
}

const char *nnd_case_operand_type_name(int32_t code) {
    for (size_t i = 0; i < COUNT(operand_types); i++)
        if (operand_types[i].code == code) return operand_types[i].name;
    return NULL;
}

int32_t nnd_case_operand_type_code(const char *name) {
    for (size_t i = 0; i < COUNT(operand_types); i++)
        if (!strcmp(operand_types[i].name, name)) return operand_types[i].code;
    return -1;
}

size_t nnd_case_element_size(int32_t type) {
    for (size_t i = 0; i < COUNT(operand_types); i++)
        if (operand_types[i].code == type) return operand_types[i].size;
    return 0;
}

/* ---- helpers -------------------------------------------------------------------------- */

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static char *dupstr(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int b64_value(unsigned char ch) {
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= '0' && ch <= '9') return ch - '0' + 52;
    if (ch == '+' || ch == '-') return 62;
    if (ch == '/' || ch == '_') return 63;
    return -1;
}

/* Standard or URL-safe base64, padding optional. Returns 0, or -1 on a bad character. */
static int base64_decode(const char *s, uint8_t **out, size_t *outlen) {
    size_t n = strlen(s);
    uint8_t *buf = malloc(n / 4 * 3 + 3);
    if (!buf) return -1;
    size_t len = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '=') break;
        if (ch == '\n' || ch == '\r' || ch == ' ') continue;
        int v = b64_value(ch);
        if (v < 0) {
            free(buf);
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[len++] = (uint8_t)(acc >> bits);
        }
    }
    *out = buf;
    *outlen = len;
    return 0;
}

static char *read_file(const char *path, size_t *len, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, errlen, "%s", strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        char *nb = realloc(buf, cap *= 2);
        if (!nb) free(buf);
        buf = nb;
    }
    bool bad = ferror(f);
    fclose(f);
    if (!buf || bad) {
        free(buf);
        set_err(err, errlen, "cannot read");
        return NULL;
    }
    *len = n;
    return buf;
}

/* A JSON array of non-negative integers into a fresh uint32 array. */
static int u32_array(const cJSON *a, uint32_t **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (!a) return 0;
    if (!cJSON_IsArray(a)) return -1;
    size_t k = (size_t)cJSON_GetArraySize(a);
    if (!k) return 0;
    uint32_t *v = malloc(k * sizeof *v);
    if (!v) return -1;
    size_t i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > UINT32_MAX) {
            free(v);
            return -1;
        }
        v[i++] = (uint32_t)e->valuedouble;
    }
    *out = v;
    *n = k;
    return 0;
}

static double num(const cJSON *o, const char *key, double def) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : def;
}

static bool flag(const cJSON *o, const char *key) {
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

static const char *str(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- model ---------------------------------------------------------------------------- */

static Nnd__Operand *build_operand(const cJSON *j, char *err, size_t errlen) {
    Nnd__Operand *o = malloc(sizeof *o);
    if (!o) return NULL;
    nnd__operand__init(o);
    const char *type = str(j, "type"), *life = str(j, "lifetime");
    int32_t code = type ? nnd_case_operand_type_code(type) : -1;
    if (code < 0) {
        set_err(err, errlen, "unknown operand type %s", type ? type : "(none)");
        goto fail;
    }
    o->type = code;
    size_t nd;
    if (u32_array(cJSON_GetObjectItemCaseSensitive(j, "dimensions"), &o->dimensions, &nd) < 0) {
        set_err(err, errlen, "bad dimensions");
        goto fail;
    }
    o->n_dimensions = nd;
    o->scale = (float)num(j, "scale", 0);
    o->zero_point = (int32_t)num(j, "zeroPoint", 0);
    size_t li = 0;
    while (life && li < COUNT(lifetimes) && strcmp(lifetimes[li].name, life))
        li++;
    if (!life || li == COUNT(lifetimes)) {
        set_err(err, errlen, "unknown lifetime %s", life ? life : "(none)");
        goto fail;
    }
    o->lifetime = lifetimes[li].lifetime;
    const cJSON *loc = cJSON_GetObjectItemCaseSensitive(j, "location");
    if (loc) {
        o->location = malloc(sizeof *o->location);
        if (!o->location) goto fail;
        nnd__data_location__init(o->location);
        o->location->pool_index = (uint32_t)num(loc, "poolIndex", 0);
        o->location->offset = (uint64_t)num(loc, "offset", 0);
        o->location->length = (uint64_t)num(loc, "length", 0);
    }
    const cJSON *cq = cJSON_GetObjectItemCaseSensitive(j, "channelQuant");
    if (cq) {
        Nnd__SymmPerChannelQuantParams *q = malloc(sizeof *q);
        if (!q) goto fail;
        nnd__symm_per_channel_quant_params__init(q);
        o->extra_params_case = NND__OPERAND__EXTRA_PARAMS_CHANNEL_QUANT;
        o->channel_quant = q;
        q->channel_dim = (uint32_t)num(cq, "channelDim", 0);
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(cq, "scales");
        size_t k = cJSON_IsArray(sc) ? (size_t)cJSON_GetArraySize(sc) : 0;
        if (k) {
            q->scales = malloc(k * sizeof(float));
            if (!q->scales) goto fail;
            const cJSON *e;
            cJSON_ArrayForEach(e, sc) q->scales[q->n_scales++] = (float)e->valuedouble;
        }
    }
    return o;
fail:
    nnd__operand__free_unpacked(o, NULL);
    return NULL;
}

static Nnd__Operation *build_operation(const cJSON *j, char *err, size_t errlen) {
    Nnd__Operation *op = malloc(sizeof *op);
    if (!op) return NULL;
    nnd__operation__init(op);
    const char *type = str(j, "type");
    op->type = type ? nnd_case_operation_code(type) : -1;
    if (op->type < 0) {
        set_err(err, errlen, "unknown operation type %s", type ? type : "(none)");
        goto fail;
    }
    if (u32_array(cJSON_GetObjectItemCaseSensitive(j, "inputs"), &op->inputs, &op->n_inputs) < 0 ||
        u32_array(cJSON_GetObjectItemCaseSensitive(j, "outputs"), &op->outputs, &op->n_outputs) <
            0) {
        set_err(err, errlen, "bad operation inputs or outputs");
        goto fail;
    }
    return op;
fail:
    nnd__operation__free_unpacked(op, NULL);
    return NULL;
}

static Nnd__Model *build_model(const cJSON *j, char *err, size_t errlen) {
    Nnd__Model *m = malloc(sizeof *m);
    if (!m) return NULL;
    nnd__model__init(m);
    Nnd__Subgraph *g = m->main = malloc(sizeof *g);
    if (!g) goto oom;
    nnd__subgraph__init(g);
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(j, "operands");
    const cJSON *opns = cJSON_GetObjectItemCaseSensitive(j, "operations");
    if (!cJSON_IsArray(ops) || !cJSON_IsArray(opns)) {
        set_err(err, errlen, "model without operands or operations");
        goto fail;
    }
    size_t n = (size_t)cJSON_GetArraySize(ops);
    if (n && !(g->operands = calloc(n, sizeof *g->operands))) goto oom;
    const cJSON *e;
    cJSON_ArrayForEach(e, ops) {
        char why[160] = "out of memory";
        Nnd__Operand *o = build_operand(e, why, sizeof why);
        if (!o) {
            set_err(err, errlen, "operand %zu: %s", g->n_operands, why);
            goto fail;
        }
        g->operands[g->n_operands++] = o;
    }
    n = (size_t)cJSON_GetArraySize(opns);
    if (n && !(g->operations = calloc(n, sizeof *g->operations))) goto oom;
    cJSON_ArrayForEach(e, opns) {
        char why[160] = "out of memory";
        Nnd__Operation *op = build_operation(e, why, sizeof why);
        if (!op) {
            set_err(err, errlen, "operation %zu: %s", g->n_operations, why);
            goto fail;
        }
        g->operations[g->n_operations++] = op;
    }
    if (u32_array(cJSON_GetObjectItemCaseSensitive(j, "inputIndexes"), &g->input_indexes,
                  &g->n_input_indexes) < 0 ||
        u32_array(cJSON_GetObjectItemCaseSensitive(j, "outputIndexes"), &g->output_indexes,
                  &g->n_output_indexes) < 0) {
        set_err(err, errlen, "bad inputIndexes or outputIndexes");
        goto fail;
    }
    for (size_t i = 0; i < g->n_input_indexes; i++)
        if (g->input_indexes[i] >= g->n_operands) {
            set_err(err, errlen, "inputIndexes[%zu] out of range", i);
            goto fail;
        }
    for (size_t i = 0; i < g->n_output_indexes; i++)
        if (g->output_indexes[i] >= g->n_operands) {
            set_err(err, errlen, "outputIndexes[%zu] out of range", i);
            goto fail;
        }
    const char *values = str(j, "operandValues");
    if (values && *values &&
        base64_decode(values, &m->operand_values.data, &m->operand_values.len) < 0) {
        set_err(err, errlen, "operandValues is not base64");
        goto fail;
    }
    m->relax_computation_float32_to_float16 = flag(j, "relaxComputationFloat32toFloat16");
    return m;
oom:
    set_err(err, errlen, "out of memory");
fail:
    nnd__model__free_unpacked(m, NULL);
    return NULL;
}

/* ---- examples ------------------------------------------------------------------------- */

static int encode(int32_t type, const cJSON *v, uint8_t *dst) {
    double d = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? 1 : 0) : v->valuedouble;
    if (!cJSON_IsNumber(v) && !cJSON_IsBool(v)) return -1;
    switch (type) {
    case NND_FLOAT32:
    case NND_TENSOR_FLOAT32: {
        float f = (float)d;
        memcpy(dst, &f, 4);
        return 0;
    }
    case NND_FLOAT16:
    case NND_TENSOR_FLOAT16: {
        cf_half h = (cf_half)d;
        memcpy(dst, &h, 2);
        return 0;
    }
    case NND_INT32:
    case NND_TENSOR_INT32: {
        int32_t i = (int32_t)d;
        memcpy(dst, &i, 4);
        return 0;
    }
    case NND_UINT32: {
        uint32_t u = (uint32_t)d;
        memcpy(dst, &u, 4);
        return 0;
    }
    case NND_TENSOR_QUANT8_ASYMM: *dst = (uint8_t)(int)d; return 0;
    case NND_BOOL:
    case NND_TENSOR_BOOL8: *dst = d != 0; return 0;
    case NND_TENSOR_QUANT8_SYMM:
    case NND_TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case NND_TENSOR_QUANT8_ASYMM_SIGNED: {
        int8_t i = (int8_t)(int)d;
        memcpy(dst, &i, 1);
        return 0;
    }
    case NND_TENSOR_QUANT16_SYMM: {
        int16_t i = (int16_t)(int)d;
        memcpy(dst, &i, 2);
        return 0;
    }
    case NND_TENSOR_QUANT16_ASYMM: {
        uint16_t u = (uint16_t)(int)d;
        memcpy(dst, &u, 2);
        return 0;
    }
    }
    return -1;
}

static int build_tensor(const cJSON *j, const Nnd__Subgraph *g, bool is_input, nnd_case_tensor *t,
                        char *err, size_t errlen) {
    double idx = num(j, "index", -1);
    size_t nio = is_input ? g->n_input_indexes : g->n_output_indexes;
    if (idx < 0 || idx >= (double)nio) {
        set_err(err, errlen, "%s index %g out of range", is_input ? "input" : "output", idx);
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
        set_err(err, errlen, "%s %u: bad dimensions or data", is_input ? "input" : "output",
                t->index);
        return -1;
    }
    size_t elems = 1;
    const cJSON *e;
    cJSON_ArrayForEach(e, dims) {
        t->dims[t->rank++] = (uint32_t)e->valuedouble;
        elems *= (uint32_t)e->valuedouble;
    }
    size_t n = (size_t)cJSON_GetArraySize(data), esize = nnd_case_element_size(t->type);
    /* Omitted inputs have no data; zero-sized outputs carry one placeholder element. */
    if (n == 0 || elems == 0) return 0;
    if (n != elems) {
        set_err(err, errlen, "%s %u: %zu values for %zu elements", is_input ? "input" : "output",
                t->index, n, elems);
        return -1;
    }
    if (!(t->data = malloc(n * esize))) {
        set_err(err, errlen, "out of memory");
        return -1;
    }
    t->count = n;
    t->bytes = n * esize;
    size_t i = 0;
    cJSON_ArrayForEach(e, data) {
        if (encode(t->type, e, (uint8_t *)t->data + i++ * esize) < 0) {
            set_err(err, errlen, "%s %u: element %zu is not a number",
                    is_input ? "input" : "output", t->index, i - 1);
            return -1;
        }
    }
    return 0;
}

static int build_tensors(const cJSON *a, const Nnd__Subgraph *g, bool is_input,
                         nnd_case_tensor **out, size_t *n, char *err, size_t errlen) {
    if (!cJSON_IsArray(a)) {
        set_err(err, errlen, "example without %s", is_input ? "inputs" : "outputs");
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

static void free_example(nnd_case_example *ex) {
    for (size_t i = 0; i < ex->n_inputs; i++)
        free(ex->inputs[i].data);
    for (size_t i = 0; i < ex->n_outputs; i++)
        free(ex->outputs[i].data);
    free(ex->inputs);
    free(ex->outputs);
}

static void free_case(nnd_case *c) {
    free(c->name);
    free(c->file);
    if (c->model) nnd__model__free_unpacked(c->model, NULL);
    free(c->ignored_outputs);
    for (size_t i = 0; i < c->n_examples; i++)
        free_example(&c->examples[i]);
    free(c->examples);
}

void nnd_cases_free(nnd_case *cases, size_t n_cases) {
    for (size_t i = 0; i < n_cases; i++)
        free_case(&cases[i]);
    free(cases);
}

static int build_case(const cJSON *j, const char *file, nnd_case *c, char *err, size_t errlen) {
    memset(c, 0, sizeof *c);
    const char *name = str(j, "name");
    if (!name) {
        set_err(err, errlen, "case without a name");
        return -1;
    }
    char why[200] = "out of memory";
    if (!(c->name = dupstr(name)) || !(c->file = dupstr(file))) goto fail;
    c->dynamic_output_shape = flag(j, "dynamic_output_shape");
    if (u32_array(cJSON_GetObjectItemCaseSensitive(j, "ignored_outputs"), &c->ignored_outputs,
                  &c->n_ignored) < 0) {
        snprintf(why, sizeof why, "bad ignored_outputs");
        goto fail;
    }
    if (!(c->model = build_model(cJSON_GetObjectItemCaseSensitive(j, "model"), why, sizeof why)))
        goto fail;
    c->relaxed = c->model->relax_computation_float32_to_float16;
    const cJSON *exs = cJSON_GetObjectItemCaseSensitive(j, "examples");
    size_t k = cJSON_IsArray(exs) ? (size_t)cJSON_GetArraySize(exs) : 0;
    if (k && !(c->examples = calloc(k, sizeof *c->examples))) goto fail;
    const cJSON *e;
    cJSON_ArrayForEach(e, exs) {
        nnd_case_example *ex = &c->examples[c->n_examples++];
        ex->multinomial_tolerance = num(e, "multinomial_tolerance", 0);
        char twhy[160] = "out of memory";
        if (build_tensors(cJSON_GetObjectItemCaseSensitive(e, "inputs"), c->model->main, true,
                          &ex->inputs, &ex->n_inputs, twhy, sizeof twhy) < 0 ||
            build_tensors(cJSON_GetObjectItemCaseSensitive(e, "outputs"), c->model->main, false,
                          &ex->outputs, &ex->n_outputs, twhy, sizeof twhy) < 0) {
            snprintf(why, sizeof why, "example %zu: %s", c->n_examples - 1, twhy);
            goto fail;
        }
    }
    return 0;
fail:
    set_err(err, errlen, "%s", why);
    free_case(c);
    return -1;
}

typedef struct loader {
    nnd_case **cases;
    size_t *n_cases;
    nnd_case_skip_fn on_skip; /* NULL: strict */
    void *ctx;
    char *err;
    size_t errlen;
} loader;

/* A case or file that cannot be read: reported and passed over, or (strict) the error. */
static int skip(loader *l, const char *file, const char *case_name, const char *reason) {
    if (l->on_skip) {
        l->on_skip(l->ctx, file, case_name, reason);
        return 0;
    }
    if (case_name)
        set_err(l->err, l->errlen, "%s: case %s: %s", file, case_name, reason);
    else
        set_err(l->err, l->errlen, "%s: %s", file, reason);
    return -1;
}

static int load_file(loader *l, const char *path) {
    size_t len;
    char why[512] = "out of memory";
    char *text = read_file(path, &len, why, sizeof why);
    if (!text) return skip(l, path, NULL, why);
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "cases");
    if (!cJSON_IsArray(arr)) {
        cJSON_Delete(root);
        return skip(l, path, NULL, root ? "no \"cases\" array" : "not valid JSON");
    }
    size_t k = (size_t)cJSON_GetArraySize(arr);
    nnd_case *grown = realloc(*l->cases, (*l->n_cases + k + 1) * sizeof **l->cases);
    if (!grown) {
        set_err(l->err, l->errlen, "out of memory");
        cJSON_Delete(root);
        return -1;
    }
    *l->cases = grown;
    int rc = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr) {
        if (build_case(e, path, &grown[*l->n_cases], why, sizeof why) == 0) {
            (*l->n_cases)++;
        } else {
            const char *name = str(e, "name");
            if ((rc = skip(l, path, name ? name : "(unnamed)", why)) < 0) break;
        }
    }
    cJSON_Delete(root);
    return rc;
}

typedef struct path_list {
    char **v;
    size_t n, cap;
} path_list;

static int cmp_path(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* Collects every *.json below dir; hidden entries are skipped. */
static int walk(const char *dir, path_list *pl, char *err, size_t errlen) {
    DIR *d = opendir(dir);
    if (!d) {
        set_err(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    int rc = 0;
    while (rc == 0 && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        size_t n = strlen(dir) + strlen(de->d_name) + 2;
        char *p = malloc(n);
        if (!p) {
            rc = -1;
            break;
        }
        snprintf(p, n, "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = walk(p, pl, err, errlen);
            free(p);
        } else if (ends_with(p, ".json")) {
            if (pl->n == pl->cap) {
                size_t cap = pl->cap ? pl->cap * 2 : 64;
                char **v = realloc(pl->v, cap * sizeof *v);
                if (!v) {
                    free(p);
                    rc = -1;
                    break;
                }
                pl->v = v;
                pl->cap = cap;
            }
            pl->v[pl->n++] = p;
        } else {
            free(p);
        }
    }
    closedir(d);
    return rc;
}

int nnd_cases_load(const char *path, nnd_case **cases, size_t *n_cases, nnd_case_skip_fn on_skip,
                   void *ctx, char *err, size_t errlen) {
    loader l = {cases, n_cases, on_skip, ctx, err, errlen};
    struct stat st;
    if (stat(path, &st) < 0) {
        set_err(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) return load_file(&l, path);
    path_list pl = {0};
    set_err(err, errlen, "out of memory");
    int rc = walk(path, &pl, err, errlen);
    if (rc == 0 && pl.n == 0) {
        set_err(err, errlen, "%s: no .json files", path);
        rc = -1;
    }
    if (pl.n) qsort(pl.v, pl.n, sizeof *pl.v, cmp_path);
    for (size_t i = 0; i < pl.n; i++) {
        if (rc == 0) rc = load_file(&l, pl.v[i]);
        free(pl.v[i]);
    }
    free(pl.v);
    return rc;
}

/* ---- judge ---------------------------------------------------------------------------- */

static void dims_str(char *buf, size_t len, const uint32_t *d, uint32_t rank) {
    size_t off = (size_t)snprintf(buf, len, "[");
    for (uint32_t i = 0; i < rank && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, i ? ", %u" : "%u", d[i]);
    if (off < len) snprintf(buf + off, len - off, "]");
}

/* One element as a double, read from its byte format. */
static double element(int32_t type, const void *base, size_t i) {
    const uint8_t *p = (const uint8_t *)base + i * nnd_case_element_size(type);
    switch (type) {
    case NND_FLOAT32:
    case NND_TENSOR_FLOAT32: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    case NND_FLOAT16:
    case NND_TENSOR_FLOAT16: {
        cf_half h;
        memcpy(&h, p, 2);
        return (double)h;
    }
    case NND_INT32:
    case NND_TENSOR_INT32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case NND_UINT32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case NND_TENSOR_QUANT8_SYMM:
    case NND_TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case NND_TENSOR_QUANT8_ASYMM_SIGNED: return (int8_t)*p;
    case NND_TENSOR_QUANT16_SYMM: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case NND_TENSOR_QUANT16_ASYMM: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    default: return *p; /* QUANT8_ASYMM, BOOL, BOOL8 */
    }
}

static const nnd_case_example *example_of(const nnd_case *c, const nnd_case_tensor *t) {
    for (size_t i = 0; i < c->n_examples; i++) {
        const nnd_case_example *ex = &c->examples[i];
        if (t >= ex->outputs && t < ex->outputs + ex->n_outputs) return ex;
    }
    return NULL;
}

static bool has_operation(const nnd_case *c, int32_t code) {
    const Nnd__Subgraph *g = c->model->main;
    for (size_t i = 0; i < g->n_operations; i++)
        if (g->operations[i]->type == code) return true;
    return false;
}

/* RANDOM_MULTINOMIAL: each class's share of the samples must be within tol of its
 * probability, the softmax of the logits in the example's input 0. */
static bool judge_multinomial(const nnd_case_example *ex, const nnd_case_tensor *e,
                              const void *actual, char *why, size_t whylen) {
    const nnd_case_tensor *in = NULL;
    for (size_t i = 0; i < ex->n_inputs; i++)
        if (ex->inputs[i].index == 0) in = &ex->inputs[i];
    if (!in || in->rank != 2 || e->rank != 2 || in->dims[0] != e->dims[0] || !in->count) {
        set_err(why, whylen, "multinomial example without [batches, classes] logits");
        return false;
    }
    size_t batches = in->dims[0], classes = in->dims[1], samples = e->dims[1];
    double *prob = malloc(classes * sizeof *prob);
    size_t *hits = malloc(classes * sizeof *hits);
    bool ok = prob && hits;
    if (!ok) set_err(why, whylen, "out of memory");
    for (size_t b = 0; ok && b < batches; b++) {
        double max = -INFINITY, sum = 0;
        for (size_t k = 0; k < classes; k++) {
            prob[k] = element(in->type, in->data, b * classes + k);
            if (prob[k] > max) max = prob[k];
            hits[k] = 0;
        }
        for (size_t k = 0; k < classes; k++)
            sum += prob[k] = exp(prob[k] - max);
        for (size_t s = 0; ok && s < samples; s++) {
            double v = element(e->type, actual, b * samples + s);
            if (v < 0 || v >= (double)classes) {
                set_err(why, whylen, "element %zu: class %g out of range [0, %zu)", b * samples + s,
                        v, classes);
                ok = false;
            } else {
                hits[(size_t)v]++;
            }
        }
        for (size_t k = 0; ok && k < classes; k++) {
            double share = samples ? (double)hits[k] / (double)samples : 0;
            if (fabs(share - prob[k] / sum) > ex->multinomial_tolerance) {
                set_err(why, whylen,
                        "batch %zu class %zu: share %.4f, expected probability %.4f (tolerance "
                        "%g)",
                        b, k, share, prob[k] / sum, ex->multinomial_tolerance);
                ok = false;
            }
        }
    }
    free(prob);
    free(hits);
    return ok;
}

bool nnd_case_judge(const nnd_case *c, const nnd_case_tensor *e, const void *actual,
                    size_t actual_bytes, const uint32_t *actual_dims, uint32_t actual_rank,
                    char *why, size_t whylen) {
    if (actual_rank != e->rank ||
        (e->rank && memcmp(actual_dims, e->dims, e->rank * sizeof *e->dims))) {
        char want[96], got[96];
        dims_str(want, sizeof want, e->dims, e->rank);
        dims_str(got, sizeof got, actual_dims, actual_rank);
        set_err(why, whylen, "output %u: dimensions %s, expected %s", e->index, got, want);
        return false;
    }
    const nnd_case_example *ex = example_of(c, e);
    bool multinomial = ex && ex->multinomial_tolerance > 0 &&
                       has_operation(c, NND_OP_RANDOM_MULTINOMIAL) && e->count;
    if (multinomial && actual_bytes < e->bytes) {
        set_err(why, whylen, "output %u: %zu bytes, expected %zu", e->index, actual_bytes,
                e->bytes);
        return false;
    }
    if (multinomial) {
        char reason[200];
        if (judge_multinomial(ex, e, actual, reason, sizeof reason)) return true;
        set_err(why, whylen, "output %u: %s", e->index, reason);
        return false;
    }
    for (size_t i = 0; i < c->n_ignored; i++)
        if (c->ignored_outputs[i] == e->index) return true;
    if (actual_bytes < e->bytes) {
        set_err(why, whylen, "output %u: %zu bytes, expected %zu", e->index, actual_bytes,
                e->bytes);
        return false;
    }
    double atol = 0, rtol = 0;
    bool is_float = false;
    switch (e->type) {
    case NND_FLOAT32:
    case NND_TENSOR_FLOAT32:
        is_float = true;
        atol = c->relaxed ? 0.0048828125 : 1e-5;
        rtol = c->relaxed ? 0.0048828125 : 5.96e-7;
        break;
    case NND_FLOAT16:
    case NND_TENSOR_FLOAT16:
        is_float = true;
        atol = rtol = 0.0048828125;
        break;
    case NND_TENSOR_QUANT8_ASYMM:
    case NND_TENSOR_QUANT8_SYMM:
    case NND_TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case NND_TENSOR_QUANT8_ASYMM_SIGNED:
    case NND_TENSOR_QUANT16_SYMM:
    case NND_TENSOR_QUANT16_ASYMM: atol = 1; break;
    default: break; /* INT32, BOOL8: exact */
    }
    for (size_t i = 0; i < e->count; i++) {
        double want = element(e->type, e->data, i), got = element(e->type, actual, i);
        bool ok;
        if (is_float && isnan(want))
            ok = isnan(got);
        else if (is_float && isinf(want))
            ok = want == got;
        else
            ok = fabs(want - got) <= atol + rtol * fabs(want); /* false for NaN got */
        if (!ok) {
            set_err(why, whylen, "output %u element %zu: expected %.9g, got %.9g", e->index, i,
                    want, got);
            return false;
        }
    }
    return true;
}
