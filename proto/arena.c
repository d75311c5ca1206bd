/* SPDX-License-Identifier: Apache-2.0 */
/* arena.c: bump allocation for unpacked messages. See arena.h. */
#include "proto/arena.h"

#include <stdalign.h>
#include <stdlib.h>

struct proto_arena_spill {
    proto_arena_spill *next;
    alignas(max_align_t) unsigned char data[];
};

static void *arena_alloc(void *ctx, size_t size) {
    proto_arena *a = ctx;
    size_t align = alignof(max_align_t);
    size_t at = (a->used + align - 1) & ~(align - 1);
    if (at <= a->cap && size <= a->cap - at) {
        a->used = at + size;
        return a->block + at;
    }
    proto_arena_spill *s = malloc(sizeof *s + size);
    if (!s) return NULL;
    s->next = a->spills;
    a->spills = s;
    return s->data;
}

static void arena_free(void *ctx, void *p) {
    (void)ctx;
    (void)p; /* everything goes at the reset */
}

int proto_arena_init(proto_arena *a, size_t cap) {
    a->block = malloc(cap);
    a->cap = a->block ? cap : 0;
    a->used = 0;
    a->spills = NULL;
    a->pb = (ProtobufCAllocator){.alloc = arena_alloc, .free = arena_free, .allocator_data = a};
    return a->block ? 0 : -1;
}

void proto_arena_reset(proto_arena *a) {
    while (a->spills) {
        proto_arena_spill *next = a->spills->next;
        free(a->spills);
        a->spills = next;
    }
    a->used = 0;
}

void proto_arena_free(proto_arena *a) {
    proto_arena_reset(a);
    free(a->block);
    a->block = NULL;
    a->cap = 0;
}
