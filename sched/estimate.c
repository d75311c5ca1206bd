/* estimate.c: a window of recent run times, trimmed mean and tail. See estimate.h. */
#include "estimate.h"

#include <string.h>

void nnd_est_init(nnd_estimator *e, uint64_t seed_ns) {
    memset(e, 0, sizeof *e);
    e->seed_ns = seed_ns ? seed_ns : 1;
    e->typical_ns = e->seed_ns;
    e->tail_ns = e->max_ns = 2 * e->seed_ns;
}

void nnd_est_add(nnd_estimator *e, uint64_t ns) {
    ns = ns ? ns : 1;
    uint64_t *v = e->sorted;
    uint32_t n = e->n;
    if (n == NND_EST_WINDOW) { /* the oldest sample leaves the sorted copy */
        uint64_t old = e->window[e->next];
        uint32_t i = 0;
        while (v[i] != old)
            i++;
        memmove(&v[i], &v[i + 1], sizeof v[0] * (n - 1 - i));
        n--;
    }
    uint32_t at = n;
    while (at > 0 && v[at - 1] > ns)
        at--;
    memmove(&v[at + 1], &v[at], sizeof v[0] * (n - at));
    v[at] = ns;
    e->n = n + 1;
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
