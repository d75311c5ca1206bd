/* SPDX-License-Identifier: Apache-2.0 */
/* scratch.c: the per-execution scratch pool kernels draw from (eng_scratch(), op.h). See
 * scratch.h. */
#include <stdlib.h>
#include <string.h>

#include "engine/base/scratch.h"

static size_t align64(size_t n) {
    return (n + 63) & ~(size_t)63;
}

bool eng_alloc_over_limit(size_t bytes) {
    if (bytes <= ((size_t)64 << 20)) return false;
    const char *v = getenv("NND_EXEC_ALLOC_LIMIT_MB");
    unsigned long long mb = v && *v ? strtoull(v, NULL, 10) : 4096;
    return mb < (SIZE_MAX >> 20) && bytes > ((size_t)mb << 20);
}

void *eng_scratch(eng_op_ctx *c, size_t bytes) {
    eng_scratch_pool *s = c->scratch;
    if (!s || eng_alloc_over_limit(bytes)) return NULL;
    bytes = align64(bytes ? bytes : 1);
    if (s->cap - s->used >= bytes) {
        void *p = s->base + s->used;
        s->used += bytes;
        return p;
    }
    /* Overflow: a chunk for this run only; the next run gets one big enough base. */
    void **extra = realloc(s->extra, sizeof(void *) * (s->n_extra + 1));
    if (!extra) return NULL;
    s->extra = extra;
    void *p = aligned_alloc(64, bytes);
    if (!p) return NULL;
    s->extra[s->n_extra++] = p;
    s->extra_bytes += bytes;
    return p;
}

void eng_scratch_reset(eng_scratch_pool *s) {
    s->used = 0;
    if (!s->n_extra) return;
    size_t want = align64(s->cap + s->extra_bytes + s->extra_bytes / 2);
    for (size_t i = 0; i < s->n_extra; i++)
        free(s->extra[i]);
    s->n_extra = 0;
    s->extra_bytes = 0;
    uint8_t *base = aligned_alloc(64, want);
    if (base) {
        free(s->base);
        s->base = base;
        s->cap = want;
    }
}

void eng_scratch_free(eng_scratch_pool *s) {
    eng_scratch_reset(s);
    free(s->base);
    free(s->extra);
    memset(s, 0, sizeof *s);
}
