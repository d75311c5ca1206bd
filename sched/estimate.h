/* SPDX-License-Identifier: Apache-2.0 */
/* estimate: how long an execution takes: the cost model that seeds a prepared model's
 * estimate, the estimate its measured runs refine, and the latency histograms that record
 * them for status. Three parts, one concern:
 *
 * 1. cost: the cost model that seeds execution-time estimates before a model has run.
 *
 * Contract:
 * - qos_throughput_measure() times three small models through the engine in process at
 *   daemon start (a few milliseconds, after one untimed run that starts the engine's
 *   kernel libraries): a chain of small ADDs gives the fixed cost of one operation, an
 *   ADD over 12 MB (past the caches) the memory throughput, a FULLY_CONNECTED the
 *   arithmetic throughput. It measures whatever kernels the engine picks, so the figures match the
 *   engine as built. Should a probe fail, conservative defaults stand in.
 * - qos_cost_step_ns(): one operation's estimate, op_ns + flops / arithmetic throughput +
 *   bytes / memory throughput, from eng_prepared_step_cost(). Only a seed: measured runs
 *   take over (estimate.h).
 *
 * 2. estimate: how long one execution of a prepared model takes on this device.
 *
 * Contract:
 * - Seeded with the cost model's figure (part 1) when the model is prepared; every
 *   measured run (time on device, complete runs only) refines it.
 * - typical: the mean of the last QOS_EST_WINDOW runs after dropping their slowest tenth,
 *   so one run that a page fault or a busy machine slowed does not move it, while a
 *   lasting change does within a window. Sums of typical estimates stand for queued work.
 * - tail: the 95th percentile of the window (its maximum while it holds under 20 runs),
 *   never below typical; before any run, twice the seed (cost models are rough). Used
 *   where a late answer costs more than a refused one.
 * - qos_est_add() costs a few dozen word moves (it runs on every execution's path).
 * - Not thread-safe: the scheduler guards it with its lock.
 *
 * 3. hist: latency histogram with bounded relative error, for percentiles in status.
 *
 * Contract:
 * - Log-linear buckets: 16 per power of two from 1 us, so any percentile is reported
 *   within about 6% of the true value; values under 1 us share the first bucket, values
 *   past ~2^40 us the last. Fixed size, no allocation; not thread-safe.
 * - For exported histograms: the sum of every value added, and how many values fell
 *   below a bound, exact when the bound is a bucket edge (k * 2^e us with 16 <= k <= 32,
 *   or a whole number of us up to 16; 25 * 2^e us are edges, for e >= 0).
 */
#ifndef QOS_ESTIMATE_H
#define QOS_ESTIMATE_H

#include <stdint.h>

#include "engine/engine.h"

/* ---- the cost model ---- */

typedef struct qos_throughput {
    double flops_per_ns; /* arithmetic, GFLOP/s */
    double bytes_per_ns; /* memory traffic, GB/s */
    double op_ns;        /* fixed cost of one operation */
    uint64_t took_ns;    /* how long measuring took (the untimed start excluded) */
} qos_throughput;

void qos_throughput_measure(qos_throughput *t);
double qos_cost_step_ns(const qos_throughput *t, const eng_prepared *p, uint32_t k);

/* ---- the estimate ---- */

#define QOS_EST_WINDOW 32

typedef struct qos_estimator {
    uint64_t window[QOS_EST_WINDOW]; /* the last runs, ns, in arrival order */
    uint64_t sorted[QOS_EST_WINDOW]; /* the same, ascending: kept so, no sort per run */
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

/* ---- latency histograms ---- */

#define QOS_HIST_SUB     16
#define QOS_HIST_OCTAVES 40
#define QOS_HIST_BUCKETS (QOS_HIST_SUB * QOS_HIST_OCTAVES)

typedef struct qos_hist {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t b[QOS_HIST_BUCKETS];
} qos_hist;

void qos_hist_add(qos_hist *h, uint64_t ns);
/* The q-quantile (0 < q <= 1) in ns: the upper edge of the bucket that holds it; 0 when empty. */
uint64_t qos_hist_quantile(const qos_hist *h, double q);
/* How many values were under bound_ns: the buckets whose upper edge is at most bound_ns. */
uint64_t qos_hist_count_below(const qos_hist *h, uint64_t bound_ns);

#endif
