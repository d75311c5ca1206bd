/* SPDX-License-Identifier: Apache-2.0 */
/* timing: the clock and the medians every bench row uses (header only). */
#ifndef TST_SUPPORT_TIMING_H
#define TST_SUPPORT_TIMING_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "engine/base/clock.h"

/* The engine's clock (CLOCK_MONOTONIC), so that a row's figures and the engine's agree. */
static inline uint64_t bench_now_ns(void) {
    return eng_now_ns();
}

static inline int bench_cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts v in place and returns its median. */
static inline double bench_median(double *v, size_t n) {
    qsort(v, n, sizeof *v, bench_cmp_double);
    return v[n / 2];
}

static inline int bench_cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The same for nanosecond counts. */
static inline double bench_median_u64(uint64_t *v, size_t n) {
    qsort(v, n, sizeof *v, bench_cmp_u64);
    return (double)v[n / 2];
}

/* Index of the median of v[0..n) (n odd), v left as it is: the run whose figures a row
 * reports. */
static inline int bench_median_index(const double *v, int n) {
    for (int i = 0; i < n; i++) {
        int below = 0, equal = 0;
        for (int k = 0; k < n; k++) {
            below += v[k] < v[i];
            equal += v[k] == v[i];
        }
        if (below <= n / 2 && below + equal > n / 2) return i;
    }
    return 0;
}

#endif
