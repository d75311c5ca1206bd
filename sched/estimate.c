/* estimate.c: a window of recent run times, trimmed mean and tail. See estimate.h. */
#include "estimate.h"

#include <stdlib.h>
#include <string.h>

void nnd_est_init(nnd_estimator *e, uint64_t seed_ns) {
    memset(e, 0, sizeof *e);
    e->seed_ns = seed_ns ? seed_ns : 1;
    e->typical_ns = e->seed_ns;
    e->tail_ns = e->max_ns = 2 * e->seed_ns;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void nnd_est_add(nnd_estimator *e, uint64_t ns) {
    e->window[e->next] = ns ? ns : 1;
    e->next = (e->next + 1) % NND_EST_WINDOW;
    if (e->n < NND_EST_WINDOW) e->n++;
    e->runs++;
    uint64_t v[NND_EST_WINDOW];
    memcpy(v, e->window, sizeof(uint64_t) * e->n);
    qsort(v, e->n, sizeof v[0], cmp_u64);
    uint32_t keep = e->n - e->n / 10;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < keep; i++)
        sum += v[i];
    e->typical_ns = sum / keep;
    uint32_t rank = e->n < 20 ? e->n : (e->n * 95 + 99) / 100; /* nearest rank */
    e->tail_ns = v[rank - 1] > e->typical_ns ? v[rank - 1] : e->typical_ns;
    e->max_ns = v[e->n - 1];
}
