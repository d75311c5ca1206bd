/* estimate: how long one execution of a prepared model takes on this device.
 *
 * Contract:
 * - Seeded with the cost model's figure (cost.h) when the model is prepared; every
 *   measured run (time on device, complete runs only) refines it.
 * - typical: the mean of the last NND_EST_WINDOW runs after dropping their slowest tenth,
 *   so one run that a page fault or a busy machine slowed does not move it, while a
 *   lasting change does within a window. Sums of typical estimates stand for queued work.
 * - tail: the 95th percentile of the window (its maximum while it holds under 20 runs),
 *   never below typical; before any run, twice the seed (cost models are rough). Used
 *   where a late answer costs more than a refused one.
 * - Not thread-safe: the scheduler guards it with its lock.
 */
#ifndef NND_SCHED_ESTIMATE_H
#define NND_SCHED_ESTIMATE_H

#include <stdint.h>

#define NND_EST_WINDOW 32

typedef struct nnd_estimator {
    uint64_t window[NND_EST_WINDOW]; /* the last runs, ns */
    uint64_t sorted[NND_EST_WINDOW]; /* the same, ascending: kept so, not sorted per run */
    uint32_t n, next;                /* samples held, slot for the next */
    uint64_t runs;                   /* runs measured since the seed */
    uint64_t seed_ns;
    uint64_t typical_ns, tail_ns, max_ns; /* kept current by nnd_est_add() */
} nnd_estimator;

void nnd_est_init(nnd_estimator *e, uint64_t seed_ns);
void nnd_est_add(nnd_estimator *e, uint64_t ns);

static inline uint64_t nnd_est_typical(const nnd_estimator *e) {
    return e->typical_ns;
}
static inline uint64_t nnd_est_tail(const nnd_estimator *e) {
    return e->tail_ns;
}
/* The window's largest sample (the tail's value before any). */
static inline uint64_t nnd_est_max(const nnd_estimator *e) {
    return e->max_ns;
}

#endif
