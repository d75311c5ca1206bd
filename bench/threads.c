/* SPDX-License-Identifier: Apache-2.0 */
/* threads.c: the rows of `make bench` for threads on one connection. See threads.h. */
#include "bench/threads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "tests/ndk/ndk_load.h"
#include "tests/support/timing.h"

#define HIGH_SAMPLES 200
#define RATE_SECONDS 2.0
#define RATE_WORKERS 8

static int priority_rows(bench_threads *out) {
    ndk_fc_chain c;
    if (ndk_fc_chain_build(&c, 12, 32, 1024)) return -1;
    ndk_priority_result r[BENCH_THREADS_REPEATS];
    int rc = 0;
    for (int k = 0; k < BENCH_THREADS_REPEATS && !rc; k++) {
        rc = ndk_priority_run(&c, HIGH_SAMPLES, &r[k]);
        out->high_runs[k] = r[k].flood_p90_ns / r[k].idle_p90_ns;
    }
    ndk_fc_chain_free(&c);
    if (rc) return -1;
    const ndk_priority_result *m = &r[bench_median_index(out->high_runs, BENCH_THREADS_REPEATS)];
    out->high_ratio = m->flood_p90_ns / m->idle_p90_ns;
    out->idle_p90_ns = m->idle_p90_ns;
    out->flood_p90_ns = m->flood_p90_ns;
    out->idle_median_ns = m->idle_median_ns;
    out->flood_median_ns = m->flood_median_ns;
    out->low_done = m->low_done;
    return 0;
}

static int rate_rows(bench_threads *out) {
    /* Both sides on the last CPU; the daemon runs where the scheduler puts it. */
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    out->cpu = n > 1 ? (int)n - 1 : -1;
    double t[BENCH_THREADS_REPEATS], p[BENCH_THREADS_REPEATS];
    for (int k = 0; k < BENCH_THREADS_REPEATS; k++) {
        bool procs_first = k % 2; /* alternate, so that drift weighs on both */
        p[k] = procs_first ? ndk_rate(RATE_WORKERS, true, RATE_SECONDS, out->cpu) : 0;
        t[k] = ndk_rate(RATE_WORKERS, false, RATE_SECONDS, out->cpu);
        if (!procs_first) p[k] = ndk_rate(RATE_WORKERS, true, RATE_SECONDS, out->cpu);
        if (t[k] <= 0 || p[k] <= 0) return -1;
        out->rate_runs[k] = t[k] / p[k];
    }
    int m = bench_median_index(out->rate_runs, BENCH_THREADS_REPEATS);
    out->rate_ratio = out->rate_runs[m];
    out->rate_threads = t[m];
    out->rate_procs = p[m];
    return 0;
}

int bench_threads_rows(bench_threads *out, bool priority, bool rates) {
    memset(out, 0, sizeof *out);
    tst_daemon d;
    if (tst_daemon_start(&d, NULL) != 0) {
        fprintf(stderr, "bench threads: cannot start the daemon\n");
        return -1;
    }
    /* The NNAPI layer finds the daemon here; this process keeps one connection to it. */
    setenv("NND_SOCKET", d.socket_path, 1);
    int rc = priority ? priority_rows(out) : 0;
    if (!rc && rates) rc = rate_rows(out);
    tst_daemon_stop(&d);
    return rc;
}
