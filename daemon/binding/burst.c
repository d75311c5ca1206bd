/* SPDX-License-Identifier: Apache-2.0 */
/* burst.c: bursts and their slot caches. See burst.h. */
#include "daemon/binding/burst.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/binding/memreg.h"

typedef struct slot {
    uint64_t id;
    srv_pool pool;         /* the slot's own view of the mapping */
    uint64_t offset, size; /* the pool's range in its file, as the client named it */
    bool pending;          /* cached by the request being resolved, not yet committed */
} slot;

struct srv_burst_obj {
    srv_session *s;
    uint64_t model;
    slot *slots;
    size_t n, cap;
    void *attachment; /* its channel, or NULL: over the socket only */
    void (*close_attachment)(void *attachment);
};

static srv_burst_stats stats;

srv_burst_obj *srv_burst_new(srv_session *s, uint64_t model) {
    srv_burst_obj *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->s = s;
    b->model = model;
    stats.bursts++;
    return b;
}

uint64_t srv_burst_model(const srv_burst_obj *b) {
    return b->model;
}

static slot *find(srv_burst_obj *b, uint64_t id) {
    for (size_t i = 0; i < b->n; i++)
        if (b->slots[i].id == id) return &b->slots[i];
    return NULL;
}

static void drop(srv_burst_obj *b, slot *sl) {
    srv_pool_release(&sl->pool);
    *sl = b->slots[--b->n];
    b->s->burst_slots--;
    stats.slots--;
}

void srv_burst_attach(srv_burst_obj *b, void *attachment, void (*close)(void *attachment)) {
    b->attachment = attachment;
    b->close_attachment = close;
}

void srv_burst_free(void *p) {
    srv_burst_obj *b = p;
    if (b->attachment) b->close_attachment(b->attachment);
    while (b->n)
        drop(b, &b->slots[b->n - 1]);
    free(b->slots);
    free(b);
    stats.bursts--;
}

void srv_burst_commit(srv_burst_obj *b) {
    for (size_t i = 0; i < b->n; i++)
        b->slots[i].pending = false;
}

void srv_burst_rollback(srv_burst_obj *b) {
    for (size_t i = b->n; i-- > 0;)
        if (b->slots[i].pending) drop(b, &b->slots[i]);
}

size_t srv_burst_forget(srv_burst_obj *b, const uint64_t *ids, size_t n) {
    size_t dropped = 0;
    for (size_t i = 0; i < n; i++) {
        slot *sl = find(b, ids[i]);
        if (sl) {
            drop(b, sl);
            dropped++;
        }
    }
    return dropped;
}

void srv_burst_stats_get(srv_burst_stats *out) {
    *out = stats;
}

/* A pool that names a cached slot. */
static schema_status use_slot(srv_burst_obj *b, const Nnd__MemoryPool *mp, uint32_t index,
                              srv_pool *out, char *err, size_t errlen) {
    unsigned long long id = (unsigned long long)mp->slot;
    if (!id)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "pool %u names burst slot 0; slots are numbered from 1", index);
    slot *sl = find(b, mp->slot);
    if (!sl)
        return schema_failf(
            err, errlen, SCHEMA_INVALID_ARGUMENT,
            "pool %u names burst slot %llu, which this burst has not cached (send the "
            "memory's fd with slot %llu first)",
            index, id, id);
    if (srv_pool_damaged(&sl->pool))
        return schema_failf(
            err, errlen, SCHEMA_GENERAL_FAILURE,
            "pool %u: the memory of burst slot %llu shrank under an earlier execution; "
            "forget the slot or send its memory again",
            index, id);
    srv_pool_share(&sl->pool, out);
    stats.slot_hits++;
    return SCHEMA_OK;
}

/* A pool that carries an fd to cache as slot mp->slot. */
static schema_status cache_slot(srv_burst_obj *b, const Nnd__MemoryPool *mp, uint32_t index,
                                proto_frame_in *in, srv_pool *out, char *err, size_t errlen) {
    unsigned long long id = (unsigned long long)mp->slot;
    if (mp->kind != NND__POOL_KIND__POOL_MEMFD && mp->kind != NND__POOL_KIND__POOL_MMAP_FD)
        return schema_failf(
            err, errlen, SCHEMA_INVALID_ARGUMENT,
            "pool %u: only memfd and mmap_fd pools can be cached as burst slots (slot "
            "%llu on a pool of kind %d)",
            index, id, (int)mp->kind);
    slot *sl = find(b, mp->slot);
    if (!sl && b->n >= SRV_BURST_MAX_SLOTS)
        return schema_failf(
            err, errlen, SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT,
            "pool %u: this burst already caches %d slots, the most it may; forget some "
            "before caching slot %llu",
            index, SRV_BURST_MAX_SLOTS, id);
    if (!sl && b->s->burst_slots >= SRV_SESSION_MAX_BURST_SLOTS)
        return schema_failf(
            err, errlen, SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT,
            "pool %u: this connection's bursts already cache %d slots, the most it may; "
            "forget some before caching slot %llu",
            index, SRV_SESSION_MAX_BURST_SLOTS, id);
    srv_pool p;
    /* No LRU cache: a slot's mapping is its own, and forgetting the slot unmaps it. */
    schema_status st = srv_pool_map(mp, index, in, false, NULL, &p, err, errlen);
    if (st != SCHEMA_OK) return st;
    if (sl && !srv_pool_damaged(&sl->pool)) {
        bool same = sl->pool.dev == p.dev && sl->pool.ino == p.ino && sl->offset == mp->offset &&
                    sl->size == mp->size;
        srv_pool_release(&p);
        if (!same)
            return schema_failf(
                err, errlen, SCHEMA_INVALID_ARGUMENT,
                "pool %u: burst slot %llu already caches another memory (a different "
                "file or range); forget the slot before reusing its number",
                index, id);
        srv_pool_share(&sl->pool, out); /* sent again: keep the mapping already made */
        return SCHEMA_OK;
    }
    if (sl) {
        srv_pool_release(&sl->pool); /* damaged: the memory sent now replaces it */
    } else {
        if (b->n == b->cap) {
            size_t cap = b->cap ? b->cap * 2 : 4;
            slot *s = realloc(b->slots, cap * sizeof *s);
            if (!s) {
                srv_pool_release(&p);
                return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                                    "out of memory caching slot %llu", id);
            }
            b->slots = s;
            b->cap = cap;
        }
        sl = &b->slots[b->n++];
        sl->id = mp->slot;
        sl->pending = true;
        b->s->burst_slots++;
        stats.slots++;
    }
    sl->pool = p;
    sl->offset = mp->offset;
    sl->size = mp->size;
    stats.slot_maps++;
    srv_pool_share(&sl->pool, out);
    return SCHEMA_OK;
}

schema_status srv_burst_map_pools(srv_burst_obj *b, const Nnd__ExecutionRequest *r,
                                  proto_frame_in *in, srv_pool *out, char *err, size_t errlen) {
    srv_session *s = b->s;
    for (size_t i = 0; i < r->n_pools; i++) {
        const Nnd__MemoryPool *mp = r->pools[i];
        uint32_t index = (uint32_t)i;
        schema_status st;
        if (!mp) {
            st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "pool %zu is empty", i);
        } else if (mp->kind == NND__POOL_KIND__POOL_BURST_SLOT) {
            st = use_slot(b, mp, index, &out[i], err, errlen);
        } else if (mp->kind == NND__POOL_KIND__POOL_REGISTERED) {
            st = srv_memreg_resolve(s, mp, index, &out[i], err, errlen);
        } else if (mp->slot) {
            st = cache_slot(b, mp, index, in, &out[i], err, errlen);
        } else {
            if (!s->pool_cache) s->pool_cache = srv_pool_cache_create();
            st = srv_pool_map(mp, index, in, false, s->pool_cache, &out[i], err, errlen);
        }
        if (st != SCHEMA_OK) {
            srv_pools_release(out, i);
            srv_burst_rollback(b);
            return st;
        }
    }
    return SCHEMA_OK;
}
