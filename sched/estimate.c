/* SPDX-License-Identifier: Apache-2.0 */
/* estimate.c: a window of recent run times, trimmed mean and tail. See estimate.h. */
#include "sched/estimate.h"

#include <stdlib.h>
#include <string.h>

void qos_est_init(qos_estimator *e, uint64_t seed_ns) {
    memset(e, 0, sizeof *e);
    e->seed_ns = seed_ns ? seed_ns : 1;
    e->typical_ns = e->seed_ns;
    e->tail_ns = e->max_ns = 2 * e->seed_ns;
}

/* Index of the first sorted sample >= ns. */
static uint32_t lower_bound(const uint64_t *v, uint32_t n, uint64_t ns) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (v[mid] < ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void qos_est_add(qos_estimator *e, uint64_t ns) {
    if (!ns) ns = 1;
    uint64_t *v = e->sorted;
    if (e->n == NND_EST_WINDOW) { /* the oldest sample leaves the sorted copy */
        uint32_t at = lower_bound(v, e->n, e->window[e->next]);
        memmove(&v[at], &v[at + 1], sizeof v[0] * (e->n - at - 1));
        e->n--;
    }
    uint32_t at = lower_bound(v, e->n, ns);
    memmove(&v[at + 1], &v[at], sizeof v[0] * (e->n - at));
    v[at] = ns;
    e->n++;
    e->window[e->next] = ns;
    e->next = (e->next + 1) % NND_EST_WINDOW;
    e->runs++;
    uint32_t keep = e->n - e->n / 10;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < keep; i++)
        sum += v[i];
    e->typical_ns = sum / keep;
    uint32_t rank = e->n < 20 ? e->n : (e->n * 95 + 99) / 100; /* nearest rank */
    e->tail_ns = v[rank - 1] > e->typical_ns ? v[rank - 1] : e->typical_ns;
    e->max_ns = v[e->n - 1];
}
