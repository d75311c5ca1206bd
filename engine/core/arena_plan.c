/* SPDX-License-Identifier: Apache-2.0 */
/* arena_plan.c: the temporaries' arena, laid out by liveness. See arena_plan.h.
 *
 * Greedy by size, largest first: each temporary takes the lowest offset that no placed
 * temporary living at the same time covers. The placed temporaries whose [first, last]
 * step intervals overlap a new one are found through a segment tree over the steps (each
 * interval stored at the O(log n) nodes that cover it exactly), which reports only
 * overlapping intervals: a chain of 100,000 operations places each temporary against its
 * two neighbours instead of against every temporary placed before it. */
#include "engine/core/arena_plan.h"

#include <stdlib.h>
#include <string.h>

#include "engine/core/internal.h"

#define FAIL(...) (schema_errf(err, errlen, __VA_ARGS__), SCHEMA_INVALID_ARGUMENT)

/* Past this many overlaps reported in all (a graph where most temporaries live at once),
 * the rest is laid out one after another: the arena is then about the temporaries' sum,
 * which such a graph nearly needs anyway, and the planning stays linear. */
#define OVERLAP_BUDGET(n) (64ull * (n) + (1u << 20))

typedef struct node_list {
    uint32_t *v;
    uint32_t n, cap;
} node_list;

typedef struct tree {
    uint32_t leaves;  /* a power of two at least the number of steps */
    node_list *at;    /* 2 * leaves nodes, 1 the root */
    uint32_t *stored; /* intervals stored in each node's subtree, itself included */
} tree;

typedef struct planner {
    const uint32_t *first, *last;
    const size_t *size;
    const size_t *slot;
    tree t;
    uint32_t *stamp; /* per operand: the temporary whose query saw it last, plus one */
    uint32_t *found;
    uint32_t n_found, cap_found;
    uint64_t reported;
} planner;

static bool node_push(tree *t, uint32_t v, uint32_t i) {
    node_list *l = &t->at[v];
    if (l->n == l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 4;
        uint32_t *p = realloc(l->v, sizeof *p * cap);
        if (!p) return false;
        l->v = p;
        l->cap = cap;
    }
    l->v[l->n++] = i;
    for (uint32_t u = v; u; u >>= 1)
        t->stored[u]++;
    return true;
}

static bool tree_insert(tree *t, uint32_t a, uint32_t b, uint32_t i) {
    for (uint32_t l = a + t->leaves, r = b + t->leaves + 1; l < r; l >>= 1, r >>= 1) {
        if ((l & 1) && !node_push(t, l++, i)) return false;
        if ((r & 1) && !node_push(t, --r, i)) return false;
    }
    return true;
}

static bool found_add(planner *pl, uint32_t j, uint32_t query) {
    if (pl->stamp[j] == query + 1) return true;
    pl->stamp[j] = query + 1;
    if (pl->n_found == pl->cap_found) {
        uint32_t cap = pl->cap_found ? 2 * pl->cap_found : 64;
        uint32_t *p = realloc(pl->found, sizeof *p * cap);
        if (!p) return false;
        pl->found = p;
        pl->cap_found = cap;
    }
    pl->found[pl->n_found++] = j;
    return true;
}

static bool take_node(planner *pl, uint32_t v, uint32_t query) {
    const node_list *l = &pl->t.at[v];
    pl->reported += l->n;
    for (uint32_t k = 0; k < l->n; k++)
        if (!found_add(pl, l->v[k], query)) return false;
    return true;
}

/* Every interval stored in v's subtree (all of them overlap a query v lies within). */
static bool take_subtree(planner *pl, uint32_t v, uint32_t query) {
    if (!pl->t.stored[v]) return true;
    if (!take_node(pl, v, query)) return false;
    if (v >= pl->t.leaves) return true;
    return take_subtree(pl, 2 * v, query) && take_subtree(pl, 2 * v + 1, query);
}

/* The placed temporaries living at some step of [a, b], into pl->found. */
static bool overlapping(planner *pl, uint32_t a, uint32_t b, uint32_t query) {
    pl->n_found = 0;
    for (uint32_t l = a + pl->t.leaves, r = b + pl->t.leaves + 1; l < r; l >>= 1, r >>= 1) {
        uint32_t canon[2], n = 0;
        if (l & 1) canon[n++] = l++;
        if (r & 1) canon[n++] = --r;
        for (uint32_t c = 0; c < n; c++) {
            if (!take_subtree(pl, canon[c], query)) return false;
            for (uint32_t u = canon[c] >> 1; u; u >>= 1) /* ancestors cover it whole */
                if (!take_node(pl, u, query)) return false;
        }
    }
    return true;
}

/* qsort's context, per thread: plans are made on several threads at once. */
static _Thread_local const size_t *sort_slots;

static int by_slot(const void *x, const void *y) {
    size_t a = sort_slots[*(const uint32_t *)x], b = sort_slots[*(const uint32_t *)y];
    return a < b ? -1 : a > b;
}

static _Thread_local const size_t *sort_sizes;

static int by_size_desc(const void *x, const void *y) {
    uint32_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
    size_t a = sort_sizes[i], b = sort_sizes[j];
    if (a != b) return a > b ? -1 : 1;
    return i < j ? -1 : i > j; /* stable: ties in operand order */
}

/* The lowest offset where size bytes fit between the found temporaries' blocks. */
static size_t lowest_fit(planner *pl, size_t size) {
    sort_slots = pl->slot;
    if (pl->n_found > 1) qsort(pl->found, pl->n_found, sizeof *pl->found, by_slot);
    size_t off = 0;
    for (uint32_t k = 0; k < pl->n_found; k++) {
        uint32_t j = pl->found[k];
        if (pl->slot[j] >= off + size) break;
        if (pl->slot[j] + pl->size[j] > off) off = pl->slot[j] + pl->size[j];
    }
    return off;
}

static size_t align_up(size_t n) {
    return (n + ENG_ARENA_ALIGN - 1) & ~(size_t)(ENG_ARENA_ALIGN - 1);
}

static void planner_free(planner *pl) {
    for (uint32_t v = 0; pl->t.at && v < 2 * pl->t.leaves; v++)
        free(pl->t.at[v].v);
    free(pl->t.at);
    free(pl->t.stored);
    free(pl->stamp);
    free(pl->found);
}

schema_status eng_plan_arena(eng_prepared *p, char *err, size_t errlen) {
    uint32_t n = p->n_operands;
    uint32_t *first = malloc(sizeof(uint32_t) * (n + 1)),
             *last = malloc(sizeof(uint32_t) * (n + 1));
    uint32_t *temps = malloc(sizeof(uint32_t) * (n + 1));
    size_t *size = calloc(n + 1, sizeof(size_t));
    planner pl = {.first = first, .last = last, .size = size, .slot = p->slot};
    pl.t.leaves = 1;
    while (pl.t.leaves < p->n_steps)
        pl.t.leaves *= 2;
    pl.t.at = calloc(2 * (size_t)pl.t.leaves, sizeof *pl.t.at);
    pl.t.stored = calloc(2 * (size_t)pl.t.leaves, sizeof *pl.t.stored);
    pl.stamp = calloc(n + 1, sizeof *pl.stamp);
    schema_status s = SCHEMA_OK;
    if (!first || !last || !temps || !size || !pl.t.at || !pl.t.stored || !pl.stamp) {
        s = FAIL("out of memory planning the arena");
        goto out;
    }
    for (uint32_t i = 0; i < n; i++)
        first[i] = UINT32_MAX, last[i] = 0, p->slot[i] = ENG_NO_SLOT;
    for (uint32_t k = 0; k < p->n_steps; k++) {
        const eng_step *st = &p->steps[k];
        for (uint32_t j = 0; j < st->n_out; j++)
            if (first[st->out[j]] == UINT32_MAX) first[st->out[j]] = k;
        for (uint32_t j = 0; j < st->n_in; j++)
            last[st->in[j]] = k;
    }
    uint32_t nt = 0;
    uint64_t total = 0; /* bounds every offset below: none can overflow */
    for (uint32_t i = 0; i < n; i++) {
        const eng_tensor *t = &p->tensors[i];
        if (t->lifetime != SCHEMA_TEMPORARY || !t->known) continue;
        if (p->driver_owned && p->driver_owned[i]) continue; /* never leaves its driver */
        if (first[i] == UINT32_MAX) first[i] = 0; /* written by no step: validation refuses */
        if (last[i] < first[i]) last[i] = first[i];
        uint64_t bytes = schema_shape_bytes(t->type, t->rank, t->dims);
        if (bytes == UINT64_MAX || (total += align_up((size_t)bytes)) > SCHEMA_MAX_TENSOR_BYTES) {
            s = FAIL("operand %u: temporaries larger than %llu bytes", i,
                     (unsigned long long)SCHEMA_MAX_TENSOR_BYTES);
            goto out;
        }
        size[i] = align_up((size_t)bytes);
        temps[nt++] = i;
    }
    sort_sizes = size;
    qsort(temps, nt, sizeof *temps, by_size_desc);
    size_t arena = 0;
    uint32_t a = 0;
    for (; a < nt && pl.reported <= OVERLAP_BUDGET(nt); a++) {
        uint32_t i = temps[a];
        if (!overlapping(&pl, first[i], last[i], a)) {
            s = FAIL("out of memory planning the arena");
            goto out;
        }
        size_t off = lowest_fit(&pl, size[i]);
        p->slot[i] = off;
        if (off + size[i] > arena) arena = off + size[i];
        if (!tree_insert(&pl.t, first[i], last[i], i)) {
            s = FAIL("out of memory planning the arena");
            goto out;
        }
    }
    for (; a < nt; a++) { /* over the budget: one after another */
        p->slot[temps[a]] = arena;
        arena += size[temps[a]];
    }
    p->arena_size = arena;
out:
    planner_free(&pl);
    free(first), free(last), free(temps), free(size);
    return s;
}
