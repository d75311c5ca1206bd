/* SPDX-License-Identifier: Apache-2.0 */
/* hist.c: log-linear buckets. See hist.h. */
#include "sched/hist.h"

static unsigned bucket(uint64_t ns) {
    uint64_t us = ns / 1000;
    if (us < NND_HIST_SUB) return (unsigned)us;        /* the first octaves are exact */
    unsigned oct = 63 - (unsigned)__builtin_clzll(us); /* us in [2^oct, 2^(oct+1)) */
    unsigned sub = (unsigned)((us >> (oct - 4)) & (NND_HIST_SUB - 1));
    unsigned b = (oct - 3) * NND_HIST_SUB + sub;
    return b < NND_HIST_BUCKETS ? b : NND_HIST_BUCKETS - 1;
}

/* Upper edge of bucket b, in ns. */
static uint64_t edge(unsigned b) {
    if (b < NND_HIST_SUB) return (uint64_t)(b + 1) * 1000;
    unsigned oct = b / NND_HIST_SUB + 3, sub = b % NND_HIST_SUB;
    return (((uint64_t)(NND_HIST_SUB + sub + 1)) << (oct - 4)) * 1000;
}

void qos_hist_add(qos_hist *h, uint64_t ns) {
    h->b[bucket(ns)]++;
    h->count++;
    h->sum_ns += ns;
}

uint64_t qos_hist_count_below(const qos_hist *h, uint64_t bound_ns) {
    uint64_t n = 0;
    for (unsigned b = 0; b < NND_HIST_BUCKETS && edge(b) <= bound_ns; b++)
        n += h->b[b];
    return n;
}

uint64_t qos_hist_quantile(const qos_hist *h, double q) {
    if (!h->count) return 0;
    uint64_t want = (uint64_t)(q * (double)h->count + 0.999999);
    if (want < 1) want = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < NND_HIST_BUCKETS; b++) {
        seen += h->b[b];
        if (seen >= want) return edge(b);
    }
    return edge(NND_HIST_BUCKETS - 1);
}
