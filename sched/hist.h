/* SPDX-License-Identifier: Apache-2.0 */
/* hist: latency histogram with bounded relative error, for percentiles in status.
 *
 * Contract:
 * - Log-linear buckets: 16 per power of two from 1 us, so any percentile is reported
 *   within about 6% of the true value; values under 1 us share the first bucket, values
 *   past ~2^40 us the last. Fixed size, no allocation; not thread-safe.
 * - For exported histograms: the sum of every value added, and how many values fell
 *   below a bound, exact when the bound is a bucket edge (k * 2^e us with 16 <= k <= 32,
 *   or a whole number of us up to 16; 25 * 2^e us are edges, for e >= 0).
 */
#ifndef NND_SCHED_HIST_H
#define NND_SCHED_HIST_H

#include <stdint.h>

#define NND_HIST_SUB     16
#define NND_HIST_OCTAVES 40
#define NND_HIST_BUCKETS (NND_HIST_SUB * NND_HIST_OCTAVES)

typedef struct qos_hist {
    uint64_t count;
    uint64_t sum_ns;
    uint64_t b[NND_HIST_BUCKETS];
} qos_hist;

void qos_hist_add(qos_hist *h, uint64_t ns);
/* The q-quantile (0 < q <= 1) in ns: the upper edge of the bucket that holds it; 0 when empty. */
uint64_t qos_hist_quantile(const qos_hist *h, double q);
/* How many values were under bound_ns: the buckets whose upper edge is at most bound_ns. */
uint64_t qos_hist_count_below(const qos_hist *h, uint64_t bound_ns);

#endif
