/* SPDX-License-Identifier: Apache-2.0 */
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
 * - qos_est_add() costs a few dozen word moves (it runs on every execution's path).
 * - Not thread-safe: the scheduler guards it with its lock.
 */
#ifndef NND_SCHED_ESTIMATE_H
#define NND_SCHED_ESTIMATE_H

#include <stdint.h>

#define NND_EST_WINDOW 32

typedef struct qos_estimator {
    uint64_t window[NND_EST_WINDOW]; /* the last runs, ns, in arrival order */
    uint64_t sorted[NND_EST_WINDOW]; /* the same, ascending: kept so, no sort per run */
    uint32_t n, next;                /* samples held, slot for the next */
    uint64_t runs;                   /* runs measured since the seed */
    uint64_t seed_ns;
    uint64_t typical_ns, tail_ns, max_ns; /* kept current by qos_est_add() */
} qos_estimator;

void qos_est_init(qos_estimator *e, uint64_t seed_ns);
void qos_est_add(qos_estimator *e, uint64_t ns);

static inline uint64_t qos_est_typical(const qos_estimator *e) {
    return e->typical_ns;
}
static inline uint64_t qos_est_tail(const qos_estimator *e) {
    return e->tail_ns;
}
/* The window's largest sample (the tail's value before any). */
static inline uint64_t qos_est_max(const qos_estimator *e) {
    return e->max_ns;
}

#endif
