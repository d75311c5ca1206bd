/* SPDX-License-Identifier: Apache-2.0 */
/* case_guard.c: tensors that end at a guard page. See case_guard.h. */
#include "tools/conformance/case_guard.h"

#include <sanitizer/asan_interface.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools/conformance/case_pool.h"

/* Layout: a header page (the mapping's length at its start), the pages holding the bytes
 * (which end at the last one's end), then the PROT_NONE guard page. */
void *tool_guard_alloc(size_t n) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (n > SIZE_MAX - 3 * page) return NULL;
    size_t body = (n + page - 1) / page * page, len = page + body + page;
    uint8_t *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) return NULL;
    if (mprotect(map + page + body, page, PROT_NONE)) {
        munmap(map, len);
        return NULL;
    }
    memcpy(map, &len, sizeof len);
    uint8_t *p = map + page + body - n;
    ASAN_POISON_MEMORY_REGION(map + sizeof len, (size_t)(p - map) - sizeof len);
    return p;
}

void tool_guard_free(void *p) {
    if (!p) return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *map = (uint8_t *)((uintptr_t)p / page * page) - page;
    size_t len;
    memcpy(&len, map, sizeof len);
    ASAN_UNPOISON_MEMORY_REGION(map, len - page);
    munmap(map, len);
}

static Nnd__Subgraph *graph_of(Nnd__Model *m, size_t g) {
    return g == 0 ? m->main : m->referenced[g - 1];
}

static void free_regions(uint8_t **regions, size_t n) {
    for (size_t k = 0; k < n; k++)
        tool_guard_free(regions[k]);
    free(regions);
}

Nnd__Model *tool_case_guarded_model(const tool_case *c, uint8_t ***regions, size_t *n_regions) {
    *regions = NULL;
    *n_regions = 0;
    if (c->model->n_pools || !c->model->main) return NULL;
    Nnd__Model *m = tool_case_model_copy(c->model);
    if (!m) return NULL;
    size_t n = 0;
    for (size_t g = 0; g <= m->n_referenced; g++) {
        const Nnd__Subgraph *w = graph_of(m, g);
        for (size_t i = 0; w && i < w->n_operands; i++) {
            const Nnd__Operand *o = w->operands[i];
            n += o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_COPY && o->location &&
                 o->location->length;
        }
    }
    uint8_t **mem = calloc(n + 1, sizeof *mem);
    Nnd__MemoryPool **pools = calloc(n + 1, sizeof *pools);
    bool ok = mem && pools;
    size_t k = 0;
    for (size_t g = 0; ok && g <= m->n_referenced; g++) {
        Nnd__Subgraph *w = graph_of(m, g);
        for (size_t i = 0; ok && w && i < w->n_operands; i++) {
            Nnd__Operand *o = w->operands[i];
            Nnd__DataLocation *l = o->location;
            if (o->lifetime != NND__OPERAND_LIFE_TIME__CONSTANT_COPY || !l || !l->length) continue;
            mem[k] = tool_guard_alloc(l->length);
            pools[k] = malloc(sizeof *pools[k]);
            ok = mem[k] && pools[k];
            if (!ok) {
                tool_guard_free(mem[k]);
                free(pools[k]);
                mem[k] = NULL;
                break;
            }
            /* Out of range here is the model's fault, for the engine to refuse: zeros. */
            if (l->offset <= m->operand_values.len &&
                l->length <= m->operand_values.len - l->offset)
                memcpy(mem[k], m->operand_values.data + l->offset, l->length);
            nnd__memory_pool__init(pools[k]);
            pools[k]->kind = NND__POOL_KIND__POOL_MEMFD;
            pools[k]->fd_index = (uint32_t)k;
            pools[k]->size = l->length;
            o->lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE;
            l->pool_index = (uint32_t)k;
            l->offset = 0;
            k++;
        }
    }
    m->n_pools = k;
    m->pools = pools; /* freed with the model, and the pools made so far */
    if (!ok) {
        free_regions(mem, k);
        if (!pools) m->n_pools = 0;
        nnd__model__free_unpacked(m, NULL);
        return NULL;
    }
    *regions = mem;
    *n_regions = k;
    return m;
}
