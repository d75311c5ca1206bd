/* SPDX-License-Identifier: Apache-2.0 */
/* queue.c: per-app binary heaps and a round-robin ring of apps. See queue.h. */
#include "sched/queue.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct heap {
    qos_qentry **v;
    uint32_t n, cap;
} heap;

typedef struct qos_qapp {
    uint32_t app;
    heap h[QOS_QUEUE_PRIOS];
    size_t n;      /* entries over all priorities */
    uint64_t cost; /* sum of their cost_ns */
} qos_qapp;

struct qos_queue {
    qos_qapp **apps; /* the ring, in order of arrival */
    size_t n_apps, cap_apps;
    size_t cursor; /* index of the app whose turn is next */
    size_t len;
    size_t depth[QOS_QUEUE_PRIOS];
    uint64_t seq;
};

static uint64_t dkey(const qos_qentry *e) {
    return e->deadline ? e->deadline : UINT64_MAX;
}

/* Earliest deadline first, then arrival; an unqueued entry without seq is the newest. */
static bool before(const qos_qentry *a, const qos_qentry *b) {
    uint64_t da = dkey(a), db = dkey(b);
    if (da != db) return da < db;
    uint64_t sa = a->seq ? a->seq : UINT64_MAX, sb = b->seq ? b->seq : UINT64_MAX;
    return sa < sb;
}

static void heap_set(heap *h, uint32_t i, qos_qentry *e) {
    h->v[i] = e;
    e->pos = i;
}

static void sift_up(heap *h, uint32_t i) {
    qos_qentry *e = h->v[i];
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!before(e, h->v[parent])) break;
        heap_set(h, i, h->v[parent]);
        i = parent;
    }
    heap_set(h, i, e);
}

static void sift_down(heap *h, uint32_t i) {
    qos_qentry *e = h->v[i];
    for (;;) {
        uint32_t l = 2 * i + 1, best = i;
        qos_qentry *b = e;
        if (l < h->n && before(h->v[l], b)) best = l, b = h->v[l];
        if (l + 1 < h->n && before(h->v[l + 1], b)) best = l + 1, b = h->v[l + 1];
        if (best == i) break;
        heap_set(h, i, b);
        i = best;
    }
    heap_set(h, i, e);
}

static void heap_remove(heap *h, uint32_t i) {
    qos_qentry *last = h->v[--h->n];
    if (i == h->n) return;
    heap_set(h, i, last);
    sift_up(h, i);
    sift_down(h, last->pos);
}

qos_queue *qos_queue_new(void) {
    return calloc(1, sizeof(qos_queue));
}

static void app_free(qos_qapp *a) {
    for (int p = 0; p < QOS_QUEUE_PRIOS; p++)
        free(a->h[p].v);
    free(a);
}

void qos_queue_free(qos_queue *q) {
    if (!q) return;
    for (size_t i = 0; i < q->n_apps; i++)
        app_free(q->apps[i]);
    free(q->apps);
    free(q);
}

static size_t app_index(const qos_queue *q, uint32_t app) {
    for (size_t i = 0; i < q->n_apps; i++)
        if (q->apps[i]->app == app) return i;
    return SIZE_MAX;
}

int qos_queue_push(qos_queue *q, qos_qentry *e) {
    size_t i = app_index(q, e->app);
    qos_qapp *a;
    if (i == SIZE_MAX) {
        if (q->n_apps == q->cap_apps) {
            size_t cap = q->cap_apps ? 2 * q->cap_apps : 8;
            qos_qapp **v = realloc(q->apps, cap * sizeof *v);
            if (!v) return -1;
            q->apps = v;
            q->cap_apps = cap;
        }
        if (!(a = calloc(1, sizeof *a))) return -1;
        a->app = e->app;
        q->apps[q->n_apps++] = a;
    } else {
        a = q->apps[i];
    }
    if (e->prio >= QOS_QUEUE_PRIOS) e->prio = QOS_QUEUE_PRIOS - 1;
    heap *h = &a->h[e->prio];
    if (h->n == h->cap) {
        uint32_t cap = h->cap ? 2 * h->cap : 8;
        qos_qentry **v = realloc(h->v, cap * sizeof *v);
        if (!v) {
            if (!a->n) { /* the record was made for this entry: drop it again */
                q->n_apps--;
                app_free(a);
            }
            return -1;
        }
        h->v = v;
        h->cap = cap;
    }
    if (!e->seq) e->seq = ++q->seq;
    e->qapp = a;
    heap_set(h, h->n++, e);
    sift_up(h, e->pos);
    a->n++;
    a->cost += e->cost_ns;
    q->len++;
    q->depth[e->prio]++;
    return 0;
}

/* Drops the empty app at index i, keeping the ring's order and whose turn is next. */
static void drop_app(qos_queue *q, size_t i) {
    app_free(q->apps[i]);
    memmove(&q->apps[i], &q->apps[i + 1], (q->n_apps - i - 1) * sizeof *q->apps);
    q->n_apps--;
    if (i < q->cursor) q->cursor--;
    if (q->cursor >= q->n_apps) q->cursor = 0;
}

static void take(qos_queue *q, qos_qentry *e) {
    qos_qapp *a = e->qapp;
    heap_remove(&a->h[e->prio], e->pos);
    a->n--;
    a->cost -= e->cost_ns;
    q->len--;
    q->depth[e->prio]--;
    e->qapp = NULL;
}

qos_qentry *qos_queue_pop(qos_queue *q, const uint32_t *prefer) {
    if (!q->len) return NULL;
    size_t i = prefer ? app_index(q, *prefer) : SIZE_MAX;
    bool turn = i == SIZE_MAX; /* a preferred app does not use up a turn */
    if (turn) i = q->cursor % q->n_apps;
    qos_qapp *a = q->apps[i];
    qos_qentry *e = NULL;
    for (int p = QOS_QUEUE_PRIOS - 1; p >= 0 && !e; p--)
        if (a->h[p].n) e = a->h[p].v[0];
    take(q, e);
    if (turn) q->cursor = i + 1;
    if (!a->n) {
        /* The next app slides into index i: it is next in turn if a was. */
        if (turn) q->cursor = i;
        drop_app(q, i);
    }
    if (q->n_apps) q->cursor %= q->n_apps;
    return e;
}

void qos_queue_remove(qos_queue *q, qos_qentry *e) {
    qos_qapp *a = e->qapp;
    if (!a) return;
    take(q, e);
    if (!a->n) drop_app(q, app_index(q, a->app));
}

size_t qos_queue_len(const qos_queue *q) {
    return q->len;
}

size_t qos_queue_depth(const qos_queue *q, unsigned prio) {
    return prio < QOS_QUEUE_PRIOS ? q->depth[prio] : 0;
}

size_t qos_queue_app_len(const qos_queue *q, uint32_t app) {
    size_t i = app_index(q, app);
    return i == SIZE_MAX ? 0 : q->apps[i]->n;
}

/* Service order inside one app. */
static int cmp_service(const void *pa, const void *pb) {
    const qos_qentry *a = *(qos_qentry *const *)pa, *b = *(qos_qentry *const *)pb;
    if (a->prio != b->prio) return a->prio > b->prio ? -1 : 1;
    return before(a, b) ? -1 : before(b, a) ? 1 : 0;
}

/* Cost of the first k entries an app would be served. */
static uint64_t first_cost(const qos_qapp *a, size_t k) {
    if (k >= a->n) return a->cost;
    qos_qentry **v = malloc(a->n * sizeof *v);
    if (!v) return a->cost; /* overestimating is the safe side */
    size_t n = 0;
    for (int p = 0; p < QOS_QUEUE_PRIOS; p++)
        for (uint32_t j = 0; j < a->h[p].n; j++)
            v[n++] = a->h[p].v[j];
    qsort(v, n, sizeof *v, cmp_service);
    uint64_t sum = 0;
    for (size_t j = 0; j < k; j++)
        sum += v[j]->cost_ns;
    free(v);
    return sum;
}

uint64_t qos_queue_ahead(const qos_queue *q, const qos_qentry *e) {
    size_t self = app_index(q, e->app), pos = 0;
    uint64_t sum = 0;
    if (self != SIZE_MAX) {
        const qos_qapp *a = q->apps[self];
        for (int p = 0; p < QOS_QUEUE_PRIOS; p++)
            for (uint32_t j = 0; j < a->h[p].n; j++) {
                const qos_qentry *x = a->h[p].v[j];
                if (x->prio > e->prio || (x->prio == e->prio && before(x, e))) {
                    pos++;
                    sum += x->cost_ns;
                }
            }
    }
    /* e is served in its app's turn number pos + 1; every other app gets as many. */
    for (size_t i = 0; i < q->n_apps; i++)
        if (i != self) sum += first_cost(q->apps[i], pos + 1);
    return sum;
}
