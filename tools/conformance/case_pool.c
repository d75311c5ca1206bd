/* SPDX-License-Identifier: Apache-2.0 */
/* case_pool.c: marked constants into one memory pool. See case_pool.h. */
#include "tools/conformance/case_pool.h"

#include <stdlib.h>
#include <string.h>

#include "tools/conformance/case_read.h"

#define POOL_ALIGN 64

/* Graph g of the wire model: 0 the main graph, r + 1 referenced subgraph r. */
static const Nnd__Subgraph *graph_of(const Nnd__Model *m, uint32_t g) {
    return g == 0 ? m->main : g <= m->n_referenced ? m->referenced[g - 1] : NULL;
}

static int mark_graph(const cJSON *graph, uint32_t g, tool_case *c, char *err, size_t errlen) {
    const Nnd__Subgraph *w = graph_of(c->model, g);
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(graph, "operands"), *o;
    uint32_t i = 0;
    cJSON_ArrayForEach(o, ops) {
        uint32_t at = i++;
        if (!case_json_flag(o, "wasConstantReference") || !w || at >= w->n_operands ||
            w->operands[at]->lifetime != NND__OPERAND_LIFE_TIME__CONSTANT_COPY)
            continue;
        tool_case_ref *grown = realloc(c->pooled, (c->n_pooled + 1) * sizeof *grown);
        if (!grown) {
            case_errf(err, errlen, "out of memory");
            return -1;
        }
        c->pooled = grown;
        c->pooled[c->n_pooled++] = (tool_case_ref){.graph = g, .operand = at};
    }
    return 0;
}

int case_pool_marks_from_json(const cJSON *model, tool_case *c, char *err, size_t errlen) {
    if (mark_graph(model, 0, c, err, errlen) < 0) return -1;
    const cJSON *refs = cJSON_GetObjectItemCaseSensitive(model, "referenced"), *r;
    uint32_t g = 1;
    cJSON_ArrayForEach(r, refs) {
        if (mark_graph(r, g++, c, err, errlen) < 0) return -1;
    }
    return 0;
}

Nnd__Model *tool_case_model_copy(const Nnd__Model *m) {
    size_t n = nnd__model__get_packed_size(m);
    uint8_t *buf = malloc(n + 1);
    if (!buf) return NULL;
    nnd__model__pack(m, buf);
    Nnd__Model *copy = nnd__model__unpack(NULL, n, buf);
    free(buf);
    return copy;
}

Nnd__Model *tool_case_pooled_model(const tool_case *c, uint8_t **pool, size_t *pool_len) {
    *pool = NULL;
    *pool_len = 0;
    if (!c->n_pooled) return NULL;
    Nnd__Model *m = tool_case_model_copy(c->model);
    size_t len = 0;
    for (size_t k = 0; m && k < c->n_pooled; k++) {
        const Nnd__Operand *o = graph_of(m, c->pooled[k].graph)->operands[c->pooled[k].operand];
        len = (len + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
        len += o->location->length;
    }
    uint8_t *bytes = m ? calloc(1, len + 1) : NULL;
    Nnd__MemoryPool **pools = bytes ? malloc(sizeof *pools) : NULL;
    Nnd__MemoryPool *p = pools ? malloc(sizeof *p) : NULL;
    if (!p) {
        free(pools);
        free(bytes);
        if (m) nnd__model__free_unpacked(m, NULL);
        return NULL;
    }
    size_t at = 0;
    for (size_t k = 0; k < c->n_pooled; k++) {
        Nnd__Operand *o = graph_of(m, c->pooled[k].graph)->operands[c->pooled[k].operand];
        Nnd__DataLocation *l = o->location;
        at = (at + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
        memcpy(bytes + at, m->operand_values.data + l->offset, l->length);
        o->lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE;
        l->pool_index = 0;
        l->offset = at;
        at += l->length;
    }
    nnd__memory_pool__init(p);
    p->kind = NND__POOL_KIND__POOL_MEMFD;
    p->fd_index = 0;
    p->size = len;
    pools[0] = p;
    m->n_pools = 1;
    m->pools = pools;
    *pool = bytes;
    *pool_len = len;
    return m;
}
