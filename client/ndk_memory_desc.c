/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_memory_desc.c: ANeuralNetworksMemoryDesc and ANeuralNetworksMemory_createFromDesc.
 * A memory from a descriptor is a buffer the daemon allocates for its roles (Allocate;
 * copies go through BufferCopyTo/From), or, when the daemon cannot, a memfd of the
 * library's own as the NNAPI runtime falls back to shared memory; that needs known
 * dimensions. The roles name finished compilations, whose model gives each role's
 * operand. Public API only: nothing else of libnnd calls in here. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "client/ndk_memory.h"
#include "client/ndk_model.h"
#include "client/ndk_types.h"

struct ANeuralNetworksMemoryDesc {
    bool finished;
    bool have_operand; /* set by the first role */
    int32_t type;
    float scale;
    int32_t zero_point;
    /* The first role's extra parameters, which every role must share: per-channel
     * quantization (channel_dim, n_scales scales) or extension data (ext_len bytes). */
    bool has_channel_quant;
    uint32_t channel_dim, n_scales;
    float *scales;
    uint8_t *ext_data;
    size_t ext_len;
    uint32_t rank; /* 0: not known (or a scalar) */
    uint32_t *dims;
    size_t n_roles;
    ndk_role *roles;
};

int ANeuralNetworksMemoryDesc_create(ANeuralNetworksMemoryDesc **desc) {
    if (!desc) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *desc = calloc(1, sizeof **desc);
    return *desc ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUT_OF_MEMORY;
}

void ANeuralNetworksMemoryDesc_free(ANeuralNetworksMemoryDesc *desc) {
    if (!desc) return;
    free(desc->dims);
    free(desc->roles);
    free(desc->scales);
    free(desc->ext_data);
    free(desc);
}

/* Whether operand o has the descriptor's extra parameters (the runtime's extraParams). */
static bool same_extra(const ANeuralNetworksMemoryDesc *desc, const ndk_operand *o) {
    if (o->has_channel_quant != desc->has_channel_quant || o->ext_len != desc->ext_len)
        return false;
    if (o->ext_len && memcmp(o->ext_data, desc->ext_data, o->ext_len)) return false;
    if (!o->has_channel_quant) return true;
    return o->channel_dim == desc->channel_dim && o->n_scales == desc->n_scales &&
           !memcmp(o->scales, desc->scales, sizeof *o->scales * o->n_scales);
}

/* Keeps the first role's extra parameters; false when out of memory. */
static bool keep_extra(ANeuralNetworksMemoryDesc *desc, const ndk_operand *o) {
    free(desc->scales); /* a role refused after this one was kept */
    free(desc->ext_data);
    desc->scales = NULL;
    desc->ext_data = NULL;
    if (o->has_channel_quant && o->n_scales) {
        if (!(desc->scales = malloc(sizeof *desc->scales * o->n_scales))) return false;
        memcpy(desc->scales, o->scales, sizeof *desc->scales * o->n_scales);
    }
    if (o->ext_len) {
        if (!(desc->ext_data = malloc(o->ext_len))) return false;
        memcpy(desc->ext_data, o->ext_data, o->ext_len);
    }
    desc->has_channel_quant = o->has_channel_quant;
    desc->channel_dim = o->channel_dim;
    desc->n_scales = o->n_scales;
    desc->ext_len = o->ext_len;
    return true;
}

/* As the runtime's MemoryBuilder::addRole (Memory.cpp): every role's operand has the same
 * type, quantization and extra parameters; a scalar takes no dimensions; dimensions must
 * agree. */
static int add_role(ANeuralNetworksMemoryDesc *desc, const ANeuralNetworksCompilation *c,
                    bool output, uint32_t index, float frequency) {
    if (!desc || !c) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (desc->finished) return ANEURALNETWORKS_BAD_STATE;
    if (!c->finished || !c->valid) return ANEURALNETWORKS_BAD_DATA;
    const ANeuralNetworksModel *m = c->model;
    if (index >= (output ? m->n_outputs : m->n_inputs)) return ANEURALNETWORKS_BAD_DATA;
    for (size_t i = 0; i < desc->n_roles; i++)
        if (desc->roles[i].compilation == c && desc->roles[i].output == output &&
            desc->roles[i].index == index)
            return ANEURALNETWORKS_BAD_DATA;
    if (!(frequency > 0.f && frequency <= 1.f)) return ANEURALNETWORKS_BAD_DATA;
    const ndk_operand *o = output ? ndk_model_output(m, index) : ndk_model_input(m, index);
    if (desc->have_operand && (o->type != desc->type || o->scale != desc->scale ||
                               o->zero_point != desc->zero_point || !same_extra(desc, o)))
        return ANEURALNETWORKS_BAD_DATA;
    uint32_t size;
    bool tensor;
    if (ndk_type_info(o->type, &size, &tensor) && !tensor && desc->rank)
        return ANEURALNETWORKS_BAD_DATA;
    if (!desc->have_operand && !keep_extra(desc, o)) return ANEURALNETWORKS_OUT_OF_MEMORY;
    uint32_t rank = desc->rank, *dims = NULL;
    if (rank) {
        if (!(dims = malloc(sizeof *dims * rank))) return ANEURALNETWORKS_OUT_OF_MEMORY;
        memcpy(dims, desc->dims, sizeof *dims * rank);
    }
    if (!ndk_dims_combine(&rank, &dims, o->rank, o->dims)) {
        free(dims);
        return ANEURALNETWORKS_BAD_DATA;
    }
    ndk_role *roles = realloc(desc->roles, sizeof *roles * (desc->n_roles + 1));
    if (!roles) {
        free(dims);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    desc->roles = roles;
    roles[desc->n_roles++] = (ndk_role){c, output, index, frequency};
    free(desc->dims);
    desc->dims = dims;
    desc->rank = rank;
    desc->have_operand = true;
    desc->type = o->type;
    desc->scale = o->scale;
    desc->zero_point = o->zero_point;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksMemoryDesc_addInputRole(ANeuralNetworksMemoryDesc *desc,
                                           const ANeuralNetworksCompilation *compilation,
                                           uint32_t index, float frequency) {
    return add_role(desc, compilation, false, index, frequency);
}

int ANeuralNetworksMemoryDesc_addOutputRole(ANeuralNetworksMemoryDesc *desc,
                                            const ANeuralNetworksCompilation *compilation,
                                            uint32_t index, float frequency) {
    return add_role(desc, compilation, true, index, frequency);
}

int ANeuralNetworksMemoryDesc_setDimensions(ANeuralNetworksMemoryDesc *desc, uint32_t rank,
                                            const uint32_t *dimensions) {
    if (!desc || (!dimensions && rank > 0)) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (desc->finished) return ANEURALNETWORKS_BAD_STATE;
    uint32_t size;
    bool tensor;
    if (desc->have_operand && ndk_type_info(desc->type, &size, &tensor) && !tensor && rank)
        return ANEURALNETWORKS_BAD_DATA;
    uint32_t r = desc->rank, *dims = NULL;
    if (r) {
        if (!(dims = malloc(sizeof *dims * r))) return ANEURALNETWORKS_OUT_OF_MEMORY;
        memcpy(dims, desc->dims, sizeof *dims * r);
    }
    if (!ndk_dims_combine(&r, &dims, rank, dimensions)) {
        free(dims);
        return ANEURALNETWORKS_BAD_DATA;
    }
    free(desc->dims);
    desc->dims = dims;
    desc->rank = r;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksMemoryDesc_finish(ANeuralNetworksMemoryDesc *desc) {
    if (!desc) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (desc->finished) return ANEURALNETWORKS_BAD_STATE;
    if (!desc->n_roles) return ANEURALNETWORKS_BAD_DATA;
    desc->finished = true;
    return ANEURALNETWORKS_NO_ERROR;
}

/* Asks the daemon for a buffer in the descriptor's roles: all their compilations must be
 * prepared on the current connection. Returns NO_ERROR with m->driver set, or a code. */
static int allocate_buffer(const ANeuralNetworksMemoryDesc *desc, ANeuralNetworksMemory *m) {
    ndk_session *s = desc->roles[0].compilation->session;
    if (!s || atomic_load(&s->dead)) return ANEURALNETWORKS_DEAD_OBJECT;
    size_t n = desc->n_roles, n_models = 0, n_in = 0, n_out = 0;
    uint64_t *models = calloc(n, sizeof *models);
    nnd_buffer_role *in = calloc(n, sizeof *in), *out = calloc(n, sizeof *out);
    int rc = models && in && out ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUT_OF_MEMORY;
    for (size_t i = 0; i < n && !rc; i++) {
        const ndk_role *r = &desc->roles[i];
        if (r->compilation->session != s) rc = ANEURALNETWORKS_OP_FAILED;
        size_t k = 0;
        while (k < n_models && models[k] != r->compilation->handle)
            k++;
        if (k == n_models) models[n_models++] = r->compilation->handle;
        nnd_buffer_role b = {
            .model_index = (uint32_t)k, .io_index = r->index, .probability = r->frequency};
        if (r->output)
            out[n_out++] = b;
        else
            in[n_in++] = b;
    }
    if (!rc)
        rc = ndk_session_code(s, nnd_client_allocate(s->client, desc->dims, desc->rank, models,
                                                     n_models, in, n_in, out, n_out, &m->buffer,
                                                     &m->token, NULL, 0));
    if (!rc) {
        atomic_fetch_add(&s->refs, 1);
        m->session = s;
        m->driver = true;
    }
    free(models);
    free(in);
    free(out);
    return rc;
}

int ANeuralNetworksMemory_createFromDesc(const ANeuralNetworksMemoryDesc *desc,
                                         ANeuralNetworksMemory **memory) {
    if (!desc || !memory) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *memory = NULL;
    if (!desc->finished) return ANEURALNETWORKS_BAD_STATE;
    uint64_t size = ndk_type_bytes(desc->type, desc->rank, desc->dims);
    if (size == UINT64_MAX || size > SIZE_MAX) return ANEURALNETWORKS_OP_FAILED;
    ANeuralNetworksMemory *m = ndk_memory_new();
    if (!m) return ANEURALNETWORKS_OUT_OF_MEMORY;
    m->from_desc = true;
    m->type = desc->type;
    m->rank = desc->rank;
    m->dims = desc->rank ? malloc(sizeof *m->dims * desc->rank) : NULL;
    m->roles = malloc(sizeof *m->roles * desc->n_roles);
    if ((desc->rank && !m->dims) || !m->roles) {
        ndk_memory_unref(m);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    if (desc->rank) memcpy(m->dims, desc->dims, sizeof *m->dims * desc->rank);
    memcpy(m->roles, desc->roles, sizeof *m->roles * desc->n_roles);
    m->n_roles = desc->n_roles;
    m->prot = PROT_READ | PROT_WRITE;
    m->size = (size_t)size; /* 0 while the shape is not known */
    /* The daemon's buffer first; failing that, as the NNAPI runtime does, shared memory,
     * which needs a known size. */
    int rc = allocate_buffer(desc, m);
    if (rc != ANEURALNETWORKS_NO_ERROR && size) {
        void *p;
        int fd = nnd_memfd_create("nnd-ndk", (size_t)size, &p);
        if (fd < 0) {
            ndk_memory_unref(m);
            return ANEURALNETWORKS_OUT_OF_MEMORY;
        }
        m->fd = fd;
        m->memfd = true;
        m->map = m->map_base = p;
        m->map_len = (size_t)size;
        rc = ANEURALNETWORKS_NO_ERROR;
    }
    if (rc != ANEURALNETWORKS_NO_ERROR) {
        ndk_memory_unref(m);
        return rc == ANEURALNETWORKS_DEAD_OBJECT ? rc : ANEURALNETWORKS_OP_FAILED;
    }
    *memory = m;
    return ANEURALNETWORKS_NO_ERROR;
}
