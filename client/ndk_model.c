/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_model.c: ANeuralNetworksModel, built client-side with the NDK's argument checks, and
 * its wire form. Values up to 128 bytes are copied at once (CONSTANT_COPY, inline in the
 * message); larger ones are referenced until finish, which copies them into one memfd
 * pool (CONSTANT_REFERENCE), as the NNAPI runtime does. finish() checks the graph locally
 * and, when the daemon is reachable, has it validate every operation's signature, so a
 * bad model fails at finish as on Android. See ndk_model.h. */
#include "client/ndk_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "client/ndk_memory.h"
#include "client/ndk_signature.h"
#include "client/ndk_types.h"
#include "engine/engine.h"

#define LARGE_ALIGN  64
#define NO_POOL      UINT32_MAX /* a large value not yet copied into the pool */
#define MAX_OPERANDS 0xfffffffeu

/* ---- small helpers ---------------------------------------------------------------------- */

static bool grow(void **p, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap) return true;
    uint32_t n = *cap ? *cap : 8;
    while (n < need)
        n = n > UINT32_MAX / 2 ? need : n * 2;
    void *q = realloc(*p, (size_t)n * elem);
    if (!q) return false;
    memset((char *)q + (size_t)*cap * elem, 0, (size_t)(n - *cap) * elem);
    *p = q;
    *cap = n;
    return true;
}

static uint32_t *dup_u32(const uint32_t *v, uint32_t n) {
    uint32_t *d = malloc(sizeof *d * (n ? n : 1));
    if (d && n) memcpy(d, v, sizeof *d * n);
    return d;
}

static bool is_tensor_type(int32_t type) {
    uint32_t size;
    bool tensor;
    return ndk_type_info(type, &size, &tensor) && tensor;
}

static bool fully_specified(const ndk_operand *o) {
    if (!is_tensor_type(o->type)) return true;
    if (!o->rank) return false;
    for (uint32_t i = 0; i < o->rank; i++)
        if (!o->dims[i]) return false;
    return true;
}

/* BAD_STATE once finished, or once finish found the model invalid. */
static int modifiable(const ANeuralNetworksModel *m) {
    return m->finished || m->invalid ? ANEURALNETWORKS_BAD_STATE : ANEURALNETWORKS_NO_ERROR;
}

static int operand_at(ANeuralNetworksModel *m, int32_t index, ndk_operand **o) {
    if (index < 0 || (uint32_t)index >= m->n_operands) return ANEURALNETWORKS_BAD_DATA;
    *o = &m->operands[index];
    return ANEURALNETWORKS_NO_ERROR;
}

/* Forgets whatever value an operand had. */
static void clear_value(ndk_operand *o) {
    o->lifetime = NDK_TEMPORARY;
    o->pool = 0;
    o->offset = o->length = 0;
    o->large = NULL;
    o->ref_model = NULL;
}

static uint32_t add_memory(ANeuralNetworksModel *m, const ANeuralNetworksMemory *mem) {
    for (uint32_t i = 0; i < m->n_mems; i++)
        if (m->mems[i] == mem) return i;
    if (!grow((void **)&m->mems, &m->cap_mems, m->n_mems + 1, sizeof *m->mems)) return NO_POOL;
    m->mems[m->n_mems] = ndk_memory_ref(mem);
    return m->n_mems++;
}

const ndk_operand *ndk_model_input(const ANeuralNetworksModel *m, uint32_t i) {
    return &m->operands[m->inputs[i]];
}

const ndk_operand *ndk_model_output(const ANeuralNetworksModel *m, uint32_t i) {
    return &m->operands[m->outputs[i]];
}

/* ---- building ---------------------------------------------------------------------------- */

int ANeuralNetworksModel_create(ANeuralNetworksModel **model) {
    if (!model) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *model = calloc(1, sizeof **model);
    return *model ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUT_OF_MEMORY;
}

void ANeuralNetworksModel_free(ANeuralNetworksModel *m) {
    if (!m) return;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        free(m->operands[i].dims);
        free(m->operands[i].scales);
        free(m->operands[i].ext_data);
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        free(m->ops[i].in);
        free(m->ops[i].out);
    }
    for (uint32_t i = 0; i < m->n_mems; i++)
        ndk_memory_unref(m->mems[i]);
    free(m->operands);
    free(m->ops);
    free(m->inputs);
    free(m->outputs);
    free(m->values);
    free(m->mems);
    free(m);
}

int ANeuralNetworksModel_addOperand(ANeuralNetworksModel *m, const ANeuralNetworksOperandType *t) {
    if (!m || !t) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    if (rc) return rc;
    if (t->dimensionCount > ENG_MAX_RANK) { /* refused now rather than at finish */
        ndk_debug("addOperand: operand %u has rank %u, over the limit of %u", m->n_operands,
                  t->dimensionCount, ENG_MAX_RANK);
        return ANEURALNETWORKS_BAD_DATA;
    }
    if ((rc = ndk_check_operand_type(t, true))) return rc;
    if (m->n_operands >= MAX_OPERANDS) return ANEURALNETWORKS_BAD_DATA;
    if (!grow((void **)&m->operands, &m->cap_operands, m->n_operands + 1, sizeof *m->operands))
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    ndk_operand *o = &m->operands[m->n_operands];
    memset(o, 0, sizeof *o);
    if (!(o->dims = dup_u32(t->dimensions, t->dimensionCount)))
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    o->type = t->type;
    o->rank = t->dimensionCount;
    o->scale = t->scale;
    o->zero_point = t->zeroPoint;
    o->lifetime = NDK_TEMPORARY;
    m->n_operands++;
    return ANEURALNETWORKS_NO_ERROR;
}

/* Aligns the next small value to its natural boundary (up to 8 bytes). */
static size_t small_align(size_t at, size_t length) {
    size_t a = length >= 8 ? 8 : length >= 4 ? 4 : length >= 2 ? 2 : 1;
    return (at + a - 1) & ~(a - 1);
}

int ANeuralNetworksModel_setOperandValue(ANeuralNetworksModel *m, int32_t index, const void *buffer,
                                         size_t length) {
    if (!m || (!buffer && length)) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    ndk_operand *o;
    if (rc || (rc = operand_at(m, index, &o))) return rc;
    if (!buffer) { /* an omitted optional operand */
        clear_value(o);
        o->lifetime = NDK_NO_VALUE;
        return ANEURALNETWORKS_NO_ERROR;
    }
    if (!fully_specified(o)) return ANEURALNETWORKS_BAD_DATA;
    if (length > UINT32_MAX) return ANEURALNETWORKS_BAD_DATA;
    if (o->type != NDK_OEM_SCALAR && ndk_type_bytes(o->type, o->rank, o->dims) != length)
        return ANEURALNETWORKS_BAD_DATA;
    if (length <= ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES) {
        size_t at = small_align(m->values_len, length);
        if (at + length > m->values_cap) {
            size_t cap = m->values_cap ? m->values_cap * 2 : 256;
            while (cap < at + length)
                cap *= 2;
            uint8_t *v = realloc(m->values, cap);
            if (!v) return ANEURALNETWORKS_OUT_OF_MEMORY;
            m->values = v;
            m->values_cap = cap;
        }
        memset(m->values + m->values_len, 0, at - m->values_len);
        memcpy(m->values + at, buffer, length);
        m->values_len = at + length;
        clear_value(o);
        o->lifetime = NDK_CONSTANT_COPY;
        o->offset = at;
        o->length = length;
    } else { /* the caller keeps the buffer alive until finish copies it */
        clear_value(o);
        o->lifetime = NDK_CONSTANT_REFERENCE;
        o->pool = NO_POOL;
        o->length = length;
        o->large = buffer;
    }
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_setOperandValueFromMemory(ANeuralNetworksModel *m, int32_t index,
                                                   const ANeuralNetworksMemory *memory,
                                                   size_t offset, size_t length) {
    if (!m || !memory) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    ndk_operand *o;
    if (rc || (rc = operand_at(m, index, &o))) return rc;
    if (!fully_specified(o)) return ANEURALNETWORKS_BAD_DATA;
    if (memory->from_desc) return ANEURALNETWORKS_BAD_DATA; /* the NDK disallows it */
    if (o->type != NDK_OEM_SCALAR && ndk_type_bytes(o->type, o->rank, o->dims) != length)
        return ANEURALNETWORKS_BAD_DATA;
    if (offset > memory->size || length > memory->size - offset) return ANEURALNETWORKS_BAD_DATA;
    if (!(memory->prot & PROT_READ)) return ANEURALNETWORKS_UNMAPPABLE;
    uint32_t pool = add_memory(m, memory);
    if (pool == NO_POOL) return ANEURALNETWORKS_OUT_OF_MEMORY;
    clear_value(o);
    o->lifetime = NDK_CONSTANT_REFERENCE;
    o->pool = pool;
    o->offset = offset;
    o->length = length;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_setOperandValueFromModel(ANeuralNetworksModel *m, int32_t index,
                                                  const ANeuralNetworksModel *value) {
    if (!m || !value) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    ndk_operand *o;
    if (rc) return rc;
    /* As the NNAPI runtime: a model not finished (m itself among them: it is still being
     * built) or finished invalid is in the wrong state to be referenced. */
    if (!value->finished || value->invalid) return ANEURALNETWORKS_BAD_STATE;
    if ((rc = operand_at(m, index, &o))) return rc;
    if (o->type != ANEURALNETWORKS_MODEL) return ANEURALNETWORKS_BAD_DATA;
    clear_value(o);
    o->lifetime = NDK_SUBGRAPH;
    o->ref_model = (ANeuralNetworksModel *)value; /* the caller keeps it alive */
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(
    ANeuralNetworksModel *m, int32_t index, const ANeuralNetworksSymmPerChannelQuantParams *q) {
    if (!m || !q) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    ndk_operand *o;
    if (rc || (rc = operand_at(m, index, &o))) return rc;
    if (o->type != ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL) return ANEURALNETWORKS_BAD_DATA;
    if (q->channelDim >= o->rank || !q->scales) return ANEURALNETWORKS_BAD_DATA;
    uint32_t n = o->dims[q->channelDim];
    if (!n || q->scaleCount != n) return ANEURALNETWORKS_BAD_DATA;
    for (uint32_t i = 0; i < n; i++)
        if (!(q->scales[i] > 0.f)) return ANEURALNETWORKS_BAD_DATA;
    float *s = malloc(sizeof *s * n);
    if (!s) return ANEURALNETWORKS_OUT_OF_MEMORY;
    memcpy(s, q->scales, sizeof *s * n);
    free(o->scales);
    o->scales = s;
    o->n_scales = n;
    o->channel_dim = q->channelDim;
    o->has_channel_quant = true;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_setOperandExtensionData(ANeuralNetworksModel *m, int32_t index,
                                                 const void *data, size_t length) {
    if (!m || (!data && length)) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    ndk_operand *o;
    if (rc || (rc = operand_at(m, index, &o))) return rc;
    if (data && !length) return ANEURALNETWORKS_BAD_DATA;
    if (!((uint32_t)o->type >> 16)) return ANEURALNETWORKS_BAD_DATA; /* base types have none */
    uint8_t *d = NULL;
    if (data && !(d = malloc(length))) return ANEURALNETWORKS_OUT_OF_MEMORY;
    if (d) memcpy(d, data, length);
    free(o->ext_data);
    o->ext_data = d;
    o->ext_len = d ? length : 0;
    o->has_ext = d != NULL;
    return ANEURALNETWORKS_NO_ERROR;
}

static int check_list(const ANeuralNetworksModel *m, uint32_t n, const uint32_t *list) {
    for (uint32_t i = 0; i < n; i++)
        if (list[i] >= m->n_operands) return ANEURALNETWORKS_BAD_DATA;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_addOperation(ANeuralNetworksModel *m, ANeuralNetworksOperationType type,
                                      uint32_t inputCount, const uint32_t *inputs,
                                      uint32_t outputCount, const uint32_t *outputs) {
    if (!m || !inputs || !outputs) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    if (rc) return rc;
    if ((uint32_t)type >> 16) { /* an extension operation: its extension must be known */
        if (!ndk_extension_name((uint16_t)((uint32_t)type >> 16))) return ANEURALNETWORKS_BAD_DATA;
    } else if (!ndk_valid_operation_type(type)) {
        return ANEURALNETWORKS_BAD_DATA;
    }
    if ((rc = check_list(m, inputCount, inputs)) || (rc = check_list(m, outputCount, outputs)))
        return rc;
    char why[256];
    if ((rc = ndk_signature_check(m, type, inputCount, inputs, outputCount, outputs, why,
                                  sizeof why))) {
        if (rc == ANEURALNETWORKS_BAD_DATA) ndk_debug("ANeuralNetworksModel_addOperation: %s", why);
        return rc;
    }
    if (m->n_ops >= MAX_OPERANDS) return ANEURALNETWORKS_BAD_DATA;
    if (!grow((void **)&m->ops, &m->cap_ops, m->n_ops + 1, sizeof *m->ops))
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    ndk_operation *op = &m->ops[m->n_ops];
    op->in = dup_u32(inputs, inputCount);
    op->out = dup_u32(outputs, outputCount);
    if (!op->in || !op->out) {
        free(op->in);
        free(op->out);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    op->type = type;
    op->n_in = inputCount;
    op->n_out = outputCount;
    m->n_ops++;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_identifyInputsAndOutputs(ANeuralNetworksModel *m, uint32_t inputCount,
                                                  const uint32_t *inputs, uint32_t outputCount,
                                                  const uint32_t *outputs) {
    if (!m || !inputs || !outputs) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    if (rc || (rc = check_list(m, inputCount, inputs)) ||
        (rc = check_list(m, outputCount, outputs)))
        return rc;
    /* Each operand once, and only one still without a role: not a constant, nor already an
     * input or output (of this call or an earlier one). Checked before anything changes. */
    uint8_t *seen = calloc(m->n_operands ? m->n_operands : 1, 1);
    uint32_t *in = dup_u32(inputs, inputCount), *out = dup_u32(outputs, outputCount);
    if (!seen || !in || !out) {
        rc = ANEURALNETWORKS_OUT_OF_MEMORY;
        goto out;
    }
    for (uint32_t k = 0; k < inputCount + outputCount && !rc; k++) {
        uint32_t i = k < inputCount ? inputs[k] : outputs[k - inputCount];
        if (seen[i]++ || m->operands[i].lifetime != NDK_TEMPORARY) rc = ANEURALNETWORKS_BAD_DATA;
    }
    if (rc) goto out;
    for (uint32_t k = 0; k < inputCount; k++)
        m->operands[inputs[k]].lifetime = NDK_MODEL_INPUT;
    for (uint32_t k = 0; k < outputCount; k++)
        m->operands[outputs[k]].lifetime = NDK_MODEL_OUTPUT;
    free(m->inputs);
    free(m->outputs);
    m->inputs = in;
    m->outputs = out;
    in = out = NULL;
    m->n_inputs = inputCount;
    m->n_outputs = outputCount;
out:
    free(seen);
    free(in);
    free(out);
    return rc;
}

int ANeuralNetworksModel_relaxComputationFloat32toFloat16(ANeuralNetworksModel *m, bool allow) {
    if (!m) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    if (rc) return rc;
    m->relaxed = allow;
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- finish ------------------------------------------------------------------------------- */

/* Copies the values over 128 bytes into one fresh memfd pool. */
static int copy_large_values(ANeuralNetworksModel *m) {
    size_t total = 0;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        ndk_operand *o = &m->operands[i];
        if (o->lifetime != NDK_CONSTANT_REFERENCE || o->pool != NO_POOL) continue;
        total = (total + LARGE_ALIGN - 1) & ~(size_t)(LARGE_ALIGN - 1);
        o->offset = total;
        total += o->length;
    }
    if (!total) return ANEURALNETWORKS_NO_ERROR;
    ANeuralNetworksMemory *mem;
    void *map;
    int rc = ndk_memory_create_memfd(total, &mem, &map);
    if (rc) return rc;
    uint32_t pool = add_memory(m, mem);
    ndk_memory_unref(mem); /* the model holds it now */
    if (pool == NO_POOL) return ANEURALNETWORKS_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        ndk_operand *o = &m->operands[i];
        if (o->lifetime != NDK_CONSTANT_REFERENCE || o->pool != NO_POOL) continue;
        memcpy((uint8_t *)map + o->offset, o->large, o->length);
        o->pool = pool;
        o->large = NULL;
    }
    return ANEURALNETWORKS_NO_ERROR;
}

/* What the NDK checks without a driver: inputs and outputs named, per-channel parameters
 * given, every operation's outputs writable and written once, every temporary and output
 * written, and no cycles. */
static int check_graph(const ANeuralNetworksModel *m) {
    if (!m->n_inputs || !m->n_outputs) return ANEURALNETWORKS_BAD_DATA;
    for (uint32_t k = 0; k < m->n_inputs; k++)
        if (m->operands[m->inputs[k]].lifetime != NDK_MODEL_INPUT) return ANEURALNETWORKS_BAD_DATA;
    for (uint32_t k = 0; k < m->n_outputs; k++)
        if (m->operands[m->outputs[k]].lifetime != NDK_MODEL_OUTPUT)
            return ANEURALNETWORKS_BAD_DATA;
    for (uint32_t i = 0; i < m->n_operands; i++) {
        const ndk_operand *o = &m->operands[i];
        if (o->type == ANEURALNETWORKS_TENSOR_QUANT8_SYMM_PER_CHANNEL && !o->has_channel_quant)
            return ANEURALNETWORKS_BAD_DATA;
        if (o->type == ANEURALNETWORKS_MODEL && o->lifetime != NDK_SUBGRAPH)
            return ANEURALNETWORKS_BAD_DATA;
    }
    uint32_t n = m->n_operands ? m->n_operands : 1;
    uint32_t *writer = malloc(sizeof *writer * n);
    uint32_t *pending = calloc(m->n_ops ? m->n_ops : 1, sizeof *pending);
    uint32_t *queue = malloc(sizeof *queue * (m->n_ops ? m->n_ops : 1));
    size_t *first_read = NULL; /* operand i's readers: readers[first_read[i] .. [i + 1]) */
    uint32_t *readers = NULL;
    int rc = ANEURALNETWORKS_NO_ERROR;
    if (!writer || !pending || !queue) {
        rc = ANEURALNETWORKS_OUT_OF_MEMORY;
        goto out;
    }
    memset(writer, 0xff, sizeof *writer * n);
    for (uint32_t k = 0; k < m->n_ops && !rc; k++)
        for (uint32_t j = 0; j < m->ops[k].n_out && !rc; j++) {
            uint32_t o = m->ops[k].out[j];
            int lt = m->operands[o].lifetime;
            if ((lt != NDK_TEMPORARY && lt != NDK_MODEL_OUTPUT) || writer[o] != UINT32_MAX)
                rc = ANEURALNETWORKS_BAD_DATA;
            writer[o] = k;
        }
    for (uint32_t i = 0; i < m->n_operands && !rc; i++) {
        int lt = m->operands[i].lifetime;
        if ((lt == NDK_TEMPORARY || lt == NDK_MODEL_OUTPUT) && writer[i] == UINT32_MAX)
            rc = ANEURALNETWORKS_BAD_DATA;
    }
    if (rc) goto out;
    /* Kahn: an operation is ready once every operation writing its inputs has run. Each
     * operand's readers (one entry per input that names it) in one array, so that the
     * sort is linear in the operations' inputs. */
    size_t n_reads = 0;
    for (uint32_t k = 0; k < m->n_ops; k++)
        n_reads += m->ops[k].n_in;
    first_read = calloc((size_t)n + 1, sizeof *first_read);
    readers = malloc(sizeof *readers * (n_reads ? n_reads : 1));
    if (!first_read || !readers) {
        rc = ANEURALNETWORKS_OUT_OF_MEMORY;
        goto out;
    }
    for (uint32_t k = 0; k < m->n_ops; k++)
        for (uint32_t j = 0; j < m->ops[k].n_in; j++)
            first_read[m->ops[k].in[j] + 1]++;
    for (uint32_t i = 0; i < n; i++)
        first_read[i + 1] += first_read[i];
    for (uint32_t k = 0; k < m->n_ops; k++)
        for (uint32_t j = 0; j < m->ops[k].n_in; j++)
            readers[first_read[m->ops[k].in[j]]++] = k;
    for (uint32_t i = n; i > 0; i--) /* the fill moved each start to the next one's */
        first_read[i] = first_read[i - 1];
    first_read[0] = 0;
    uint32_t head = 0, tail = 0;
    for (uint32_t k = 0; k < m->n_ops; k++) {
        for (uint32_t j = 0; j < m->ops[k].n_in; j++)
            if (writer[m->ops[k].in[j]] != UINT32_MAX) pending[k]++;
        if (!pending[k]) queue[tail++] = k;
    }
    while (head < tail) {
        uint32_t k = queue[head++];
        for (uint32_t j = 0; j < m->ops[k].n_out; j++) {
            uint32_t o = m->ops[k].out[j];
            for (size_t r = first_read[o]; r < first_read[o + 1]; r++)
                if (--pending[readers[r]] == 0) queue[tail++] = readers[r];
        }
    }
    if (tail != m->n_ops) rc = ANEURALNETWORKS_BAD_DATA;
out:
    free(first_read);
    free(readers);
    free(writer);
    free(pending);
    free(queue);
    return rc;
}

/* The daemon's verdict on the model's signatures; NO_ERROR when it cannot be asked, or for
 * models referencing others (control flow), which it does not take yet. m->supported tells
 * whether it runs every operation. */
static int daemon_validates(ANeuralNetworksModel *m) {
    ndk_session *s;
    if (ndk_session_get(&s) != ANEURALNETWORKS_NO_ERROR) return ANEURALNETWORKS_NO_ERROR;
    ndk_wire w;
    int rc = ndk_model_wire(m, &w);
    bool *sup = calloc(m->n_ops + 1, sizeof *sup);
    if (rc == ANEURALNETWORKS_NO_ERROR && sup) {
        int st = nnd_client_supported_operations(s->client, w.model, w.fds, w.n_fds, sup, m->n_ops,
                                                 NULL, 0);
        if (st < 0) ndk_session_code(s, st); /* notes a dead connection; finish goes on */
        rc = st == NND__ERROR_STATUS__INVALID_ARGUMENT ? ANEURALNETWORKS_BAD_DATA
                                                       : ANEURALNETWORKS_NO_ERROR;
        m->supported = st == NND__ERROR_STATUS__NONE;
        for (uint32_t k = 0; k < m->n_ops; k++)
            m->supported = m->supported && sup[k];
    } else {
        rc = ANEURALNETWORKS_NO_ERROR; /* out of memory here is not the model's fault */
    }
    free(sup);
    ndk_wire_free(&w);
    ndk_session_put(s);
    return rc;
}

int ANeuralNetworksModel_finish(ANeuralNetworksModel *m) {
    if (!m) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = modifiable(m);
    if (rc || (rc = copy_large_values(m))) return rc;
    rc = check_graph(m);
    if (rc == ANEURALNETWORKS_NO_ERROR) rc = daemon_validates(m);
    if (rc == ANEURALNETWORKS_BAD_DATA) m->invalid = true;
    if (rc == ANEURALNETWORKS_NO_ERROR) m->finished = true;
    return rc;
}

int ANeuralNetworksModel_getSupportedOperationsForDevices(
    const ANeuralNetworksModel *m, const ANeuralNetworksDevice *const *devices, uint32_t numDevices,
    bool *supportedOps) {
    if (!m || !devices || !supportedOps) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!numDevices) return ANEURALNETWORKS_BAD_DATA;
    if (!m->finished || m->invalid) return ANEURALNETWORKS_BAD_STATE;
    for (uint32_t i = 0; i < numDevices; i++) {
        if (!devices[i]) return ANEURALNETWORKS_UNEXPECTED_NULL;
        if (!ndk_is_device(devices[i])) return ANEURALNETWORKS_BAD_DATA;
        for (uint32_t j = i + 1; j < numDevices; j++)
            if (devices[i] == devices[j]) return ANEURALNETWORKS_BAD_DATA;
    }
    memset(supportedOps, 0, sizeof *supportedOps * m->n_ops);
    ndk_session *s;
    int rc = ndk_session_get(&s);
    if (rc) return rc;
    ndk_wire w;
    rc = ndk_model_wire(m, &w);
    const char *names[NDK_MAX_DEVICES];
    for (uint32_t i = 0; i < numDevices && i < NDK_MAX_DEVICES; i++)
        names[i] = ndk_device_name(devices[i]);
    if (rc == ANEURALNETWORKS_NO_ERROR) {
        /* The daemon answers for exactly these devices. */
        int st = nnd_client_supported_operations_on(
            s->client, names, numDevices < NDK_MAX_DEVICES ? numDevices : NDK_MAX_DEVICES, w.model,
            w.fds, w.n_fds, supportedOps, m->n_ops, NULL, 0);
        /* A finished model the daemon calls invalid uses what it does not support. */
        if (st == NND__ERROR_STATUS__INVALID_ARGUMENT)
            memset(supportedOps, 0, m->n_ops);
        else
            rc = ndk_session_code(s, st);
    }
    ndk_wire_free(&w);
    ndk_session_put(s);
    return rc;
}

/* ---- wire form --------------------------------------------------------------------------- */

static void *walloc(ndk_wire *w, size_t size) {
    if (w->n_allocs == w->cap_allocs) {
        size_t cap = w->cap_allocs ? w->cap_allocs * 2 : 32;
        void **a = realloc(w->allocs, sizeof *a * cap);
        if (!a) return NULL;
        w->allocs = a;
        w->cap_allocs = cap;
    }
    void *p = calloc(1, size ? size : 1);
    if (p) w->allocs[w->n_allocs++] = p;
    return p;
}

void ndk_wire_free(ndk_wire *w) {
    for (size_t i = 0; i < w->n_allocs; i++)
        free(w->allocs[i]);
    free(w->allocs);
    memset(w, 0, sizeof *w);
}

/* The models of one wire Model: the main model, then every model it references,
 * transitively, each once; plus every memory they use, each once. */
typedef struct wire_ctx {
    ndk_wire *w;
    const ANeuralNetworksModel **models;
    size_t n_models;
    size_t *value_base; /* where each model's small values start in operand_values */
    ANeuralNetworksMemory **mems;
    size_t n_mems;
} wire_ctx;

static size_t model_index(const wire_ctx *c, const ANeuralNetworksModel *m) {
    for (size_t i = 0; i < c->n_models; i++)
        if (c->models[i] == m) return i;
    return SIZE_MAX;
}

static size_t mem_index(const wire_ctx *c, const ANeuralNetworksMemory *m) {
    for (size_t i = 0; i < c->n_mems; i++)
        if (c->mems[i] == m) return i;
    return SIZE_MAX;
}

static Nnd__Subgraph *wire_subgraph(wire_ctx *c, size_t mi) {
    ndk_wire *w = c->w;
    const ANeuralNetworksModel *m = c->models[mi];
    /* One block per kind of message: not hundreds of thousands of allocations per send. */
    Nnd__Subgraph *g = walloc(w, sizeof *g);
    Nnd__Operand **ops = walloc(w, sizeof *ops * m->n_operands);
    Nnd__Operation **opr = walloc(w, sizeof *opr * m->n_ops);
    Nnd__Operand *operand_block = walloc(w, sizeof *operand_block * m->n_operands);
    Nnd__Operation *operation_block = walloc(w, sizeof *operation_block * m->n_ops);
    Nnd__DataLocation *location_block = walloc(w, sizeof *location_block * m->n_operands);
    if (!g || !ops || !opr || !operand_block || !operation_block || !location_block) return NULL;
    nnd__subgraph__init(g);
    for (uint32_t i = 0; i < m->n_operands; i++) {
        const ndk_operand *o = &m->operands[i];
        Nnd__Operand *x = ops[i] = &operand_block[i];
        nnd__operand__init(x);
        x->type = o->type;
        x->n_dimensions = o->rank;
        x->dimensions = o->dims;
        x->scale = o->scale;
        x->zero_point = o->zero_point;
        x->lifetime = (Nnd__OperandLifeTime)o->lifetime;
        if ((uint32_t)o->type >> 16) w->has_extensions = true;
        if (o->lifetime == NDK_CONSTANT_COPY || o->lifetime == NDK_CONSTANT_REFERENCE ||
            o->lifetime == NDK_SUBGRAPH) {
            Nnd__DataLocation *l = x->location = &location_block[i];
            nnd__data_location__init(l);
            if (o->lifetime == NDK_CONSTANT_COPY) {
                l->offset = c->value_base[mi] + o->offset;
                l->length = o->length;
            } else if (o->lifetime == NDK_CONSTANT_REFERENCE) {
                l->pool_index = (uint32_t)mem_index(c, m->mems[o->pool]);
                l->offset = o->offset;
                l->length = o->length;
            } else { /* position in Model.referenced, which leaves out the main model */
                l->offset = model_index(c, o->ref_model) - 1;
            }
        }
        if (o->has_channel_quant) {
            Nnd__SymmPerChannelQuantParams *q = x->channel_quant = walloc(w, sizeof *q);
            if (!q) return NULL;
            nnd__symm_per_channel_quant_params__init(q);
            q->n_scales = o->n_scales;
            q->scales = o->scales;
            q->channel_dim = o->channel_dim;
            x->extra_params_case = NND__OPERAND__EXTRA_PARAMS_CHANNEL_QUANT;
        } else if (o->has_ext) {
            x->extension.data = o->ext_data;
            x->extension.len = o->ext_len;
            x->extra_params_case = NND__OPERAND__EXTRA_PARAMS_EXTENSION;
        }
    }
    for (uint32_t k = 0; k < m->n_ops; k++) {
        Nnd__Operation *x = opr[k] = &operation_block[k];
        nnd__operation__init(x);
        x->type = m->ops[k].type;
        x->n_inputs = m->ops[k].n_in;
        x->inputs = m->ops[k].in;
        x->n_outputs = m->ops[k].n_out;
        x->outputs = m->ops[k].out;
        if ((uint32_t)x->type >> 16) w->has_extensions = true;
    }
    g->n_operands = m->n_operands;
    g->operands = ops;
    g->n_operations = m->n_ops;
    g->operations = opr;
    g->n_input_indexes = m->n_inputs;
    g->input_indexes = m->inputs;
    g->n_output_indexes = m->n_outputs;
    g->output_indexes = m->outputs;
    return g;
}

/* Adds the extension prefixes a type code uses to the model's name map, each once. */
static int add_prefix(int32_t type, uint16_t *seen, size_t *n_seen) {
    uint16_t p = (uint16_t)((uint32_t)type >> 16);
    if (!p) return ANEURALNETWORKS_NO_ERROR;
    for (size_t i = 0; i < *n_seen; i++)
        if (seen[i] == p) return ANEURALNETWORKS_NO_ERROR;
    if (*n_seen == 256) return ANEURALNETWORKS_BAD_DATA;
    seen[(*n_seen)++] = p;
    return ANEURALNETWORKS_NO_ERROR;
}

int ndk_model_wire(const ANeuralNetworksModel *main, ndk_wire *w) {
    memset(w, 0, sizeof *w);
    wire_ctx c = {.w = w};
    int rc = ANEURALNETWORKS_OUT_OF_MEMORY;
    size_t cap = 8, mcap = 8;
    c.models = walloc(w, sizeof *c.models * cap);
    c.mems = walloc(w, sizeof *c.mems * mcap);
    if (!c.models || !c.mems) goto fail;
    c.models[c.n_models++] = main;
    /* Breadth first over SUBGRAPH operands; walloc'd arrays grow by copying. */
    for (size_t i = 0; i < c.n_models; i++) {
        const ANeuralNetworksModel *m = c.models[i];
        for (uint32_t k = 0; k < m->n_operands; k++) {
            const ANeuralNetworksModel *r = m->operands[k].ref_model;
            if (!r || m->operands[k].lifetime != NDK_SUBGRAPH || model_index(&c, r) != SIZE_MAX)
                continue;
            if (c.n_models == cap) {
                const ANeuralNetworksModel **n = walloc(w, sizeof *n * cap * 2);
                if (!n) goto fail;
                memcpy(n, c.models, sizeof *n * cap);
                c.models = n;
                cap *= 2;
            }
            c.models[c.n_models++] = r;
        }
        for (uint32_t k = 0; k < m->n_mems; k++) {
            if (mem_index(&c, m->mems[k]) != SIZE_MAX) continue;
            if (c.n_mems == mcap) {
                ANeuralNetworksMemory **n = walloc(w, sizeof *n * mcap * 2);
                if (!n) goto fail;
                memcpy(n, c.mems, sizeof *n * mcap);
                c.mems = n;
                mcap *= 2;
            }
            c.mems[c.n_mems++] = m->mems[k];
        }
    }
    /* One operand_values buffer: each model's small values, 8-byte aligned. */
    size_t total = 0;
    if (!(c.value_base = walloc(w, sizeof *c.value_base * c.n_models))) goto fail;
    for (size_t i = 0; i < c.n_models; i++) {
        total = (total + 7) & ~(size_t)7;
        c.value_base[i] = total;
        total += c.models[i]->values_len;
    }
    Nnd__Model *x = w->model = walloc(w, sizeof *x);
    uint8_t *values = walloc(w, total);
    Nnd__Subgraph **refs = walloc(w, sizeof *refs * c.n_models);
    Nnd__MemoryPool **pools = walloc(w, sizeof *pools * c.n_mems);
    if (!x || !values || !refs || !pools || !(w->fds = walloc(w, sizeof *w->fds * c.n_mems)))
        goto fail;
    nnd__model__init(x);
    for (size_t i = 0; i < c.n_models; i++)
        if (c.models[i]->values_len)
            memcpy(values + c.value_base[i], c.models[i]->values, c.models[i]->values_len);
    x->operand_values.data = values;
    x->operand_values.len = total;
    for (size_t i = 0; i < c.n_models; i++)
        if (!(refs[i] = wire_subgraph(&c, i))) goto fail;
    x->main = refs[0];
    x->n_referenced = c.n_models - 1;
    x->referenced = refs + 1;
    for (size_t i = 0; i < c.n_mems; i++) {
        Nnd__MemoryPool *p = pools[i] = walloc(w, sizeof *p);
        if (!p) goto fail;
        nnd__memory_pool__init(p);
        p->kind = c.mems[i]->memfd ? NND__POOL_KIND__POOL_MEMFD : NND__POOL_KIND__POOL_MMAP_FD;
        p->fd_index = (uint32_t)i;
        p->offset = c.mems[i]->offset;
        p->size = c.mems[i]->size;
        w->fds[i] = c.mems[i]->fd;
    }
    x->n_pools = w->n_fds = c.n_mems;
    x->pools = pools;
    x->relax_computation_float32_to_float16 = main->relaxed;
    if (w->has_extensions) {
        uint16_t seen[256];
        size_t n_seen = 0;
        for (size_t i = 0; i < c.n_models; i++) {
            const ANeuralNetworksModel *m = c.models[i];
            for (uint32_t k = 0; k < m->n_operands; k++)
                if ((rc = add_prefix(m->operands[k].type, seen, &n_seen))) goto fail;
            for (uint32_t k = 0; k < m->n_ops; k++)
                if ((rc = add_prefix(m->ops[k].type, seen, &n_seen))) goto fail;
        }
        rc = ANEURALNETWORKS_OUT_OF_MEMORY;
        Nnd__ExtensionNameAndPrefix **e = walloc(w, sizeof *e * n_seen);
        if (!e) goto fail;
        for (size_t i = 0; i < n_seen; i++) {
            if (!(e[i] = walloc(w, sizeof *e[i]))) goto fail;
            nnd__extension_name_and_prefix__init(e[i]);
            e[i]->name = (char *)ndk_extension_name(seen[i]);
            e[i]->prefix = seen[i];
            if (!e[i]->name) {
                rc = ANEURALNETWORKS_BAD_DATA;
                goto fail;
            }
        }
        x->n_extension_name_to_prefix = n_seen;
        x->extension_name_to_prefix = e;
    }
    return ANEURALNETWORKS_NO_ERROR;
fail:
    ndk_wire_free(w);
    return rc;
}
