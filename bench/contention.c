/* SPDX-License-Identifier: Apache-2.0 */
/* contention.c: the contention row of `make bench`. See contention.h. */
#include "bench/contention.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "schema/codes.h"
#include "tests/support/harness.h"
#include "tests/support/mobilenet.h"
#include "tests/support/mobilenet_nnapi.h"
#include "bench/mobilenet_xnn.h"
#include "nnd/NeuralNetworks.h"
#include "tests/support/timing.h"

#define MAX_SAMPLES 4096
/* The others keep competing this long after the measured process's window. */
#define TAIL_NS 1000000000ull

typedef struct report {
    double p99_ns, median_ns;
    uint64_t samples, done, failed;
} report;

/* Reports arrive in any order, each in one write (under PIPE_BUF): tagged by index. */
typedef struct tagged {
    int index;
    report rep;
} tagged;

/* One process's model, on either side. */
typedef struct runner {
    bench_net net;
    void *input;
    bench_nnapi nnapi;
    bench_xnn *xnn;
} runner;

static int runner_open(runner *r, bool through_nnd, int priority) {
    memset(r, 0, sizeof *r);
    r->nnapi.fd = -1;
    if (bench_net_init(&r->net, SCHEMA_TENSOR_FLOAT32) || !(r->input = bench_net_input(&r->net)))
        return -1;
    if (through_nnd) return bench_nnapi_open_at(&r->nnapi, &r->net, r->input, priority);
    return (r->xnn = bench_xnn_open(&r->net, r->input)) ? 0 : -1;
}

static double runner_run(runner *r) {
    return r->xnn ? bench_xnn_run(r->xnn) : bench_nnapi_run(&r->nnapi);
}

/* A child: builds its model, warms it up, says it is ready, waits for the start, runs
 * until its end and reports (the measured one, index 0, its latencies). */
static void child_main(int index, bool through_nnd, int ready_fd, int go_fd, int report_fd) {
    runner r;
    int priority = index == 0 ? ANEURALNETWORKS_PRIORITY_HIGH : ANEURALNETWORKS_PRIORITY_LOW;
    int ok = runner_open(&r, through_nnd, priority) == 0;
    for (int i = 0; ok && i < 2; i++)
        ok = runner_run(&r) > 0;
    char x = ok ? 'r' : 'f';
    uint64_t start = 0;
    if (write(ready_fd, &x, 1) != 1 || read(go_fd, &start, sizeof start) != sizeof start) _exit(2);
    uint64_t end = start + (uint64_t)(BENCH_CONTENTION_SECONDS * 1e9) + (index ? TAIL_NS : 0);
    static double lat[MAX_SAMPLES];
    tagged tg = {.index = index};
    report rep = {0};
    while (ok && bench_now_ns() < start) {
        usleep(1000);
    }
    while (ok && bench_now_ns() < end) {
        double t = runner_run(&r);
        if (t <= 0) {
            rep.failed = 1;
            break;
        }
        rep.done++;
        if (index == 0 && rep.samples < MAX_SAMPLES) lat[rep.samples++] = t;
    }
    rep.failed |= !ok;
    if (rep.samples) {
        qsort(lat, rep.samples, sizeof *lat, bench_cmp_double);
        size_t at99 = (size_t)ceil(0.99 * (double)rep.samples) - 1;
        rep.p99_ns = lat[at99];
        rep.median_ns = lat[rep.samples / 2];
    }
    tg.rep = rep;
    _exit(write(report_fd, &tg, sizeof tg) == sizeof tg ? 0 : 2);
}

static int run_side(bool through_nnd, bench_contention_side *out) {
    int ready[2], go[2], back[2];
    if (pipe(ready) || pipe(go) || pipe(back)) {
        perror("bench contention: pipe");
        return -1;
    }
    int forked = 0;
    for (int i = 0; i < BENCH_CONTENTION_PROCS; i++) {
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) child_main(i, through_nnd, ready[1], go[0], back[1]);
        forked++;
    }
    int ok = 0;
    for (int i = 0; i < forked; i++) {
        char x;
        if (read(ready[0], &x, 1) == 1 && x == 'r') ok++;
    }
    uint64_t start = bench_now_ns() + 200000000ull;
    for (int i = 0; i < forked; i++)
        if (write(go[1], &start, sizeof start) != sizeof start) ok = -1;
    memset(out, 0, sizeof *out);
    uint64_t failed = forked < BENCH_CONTENTION_PROCS;
    for (int i = 0; i < forked; i++) {
        tagged t;
        if (read(back[0], &t, sizeof t) != sizeof t) {
            failed++;
            continue;
        }
        failed += t.rep.failed;
        if (t.index == 0) {
            out->p99_ns = t.rep.p99_ns;
            out->median_ns = t.rep.median_ns;
            out->samples = t.rep.samples;
        } else {
            out->others_done += t.rep.done;
        }
    }
    for (int i = 0; i < forked; i++)
        wait(NULL);
    for (int k = 0; k < 2; k++)
        close(ready[k]), close(go[k]), close(back[k]);
    if (ok != BENCH_CONTENTION_PROCS || failed || !out->samples) {
        fprintf(stderr, "bench contention: %s side: %d of %d processes ready, %llu failed\n",
                through_nnd ? "daemon" : "in-process", ok, BENCH_CONTENTION_PROCS,
                (unsigned long long)failed);
        return -1;
    }
    return 0;
}

int bench_contention_rows(bench_contention *out) {
    memset(out, 0, sizeof *out);
    if (run_side(false, &out->inproc)) return -1;
    tst_daemon d;
    if (tst_daemon_start(&d, NULL) != 0) {
        fprintf(stderr, "bench contention: cannot start the daemon\n");
        return -1;
    }
    /* The NNAPI layer of each child finds the daemon here. */
    char *saved = getenv("NND_SOCKET") ? strdup(getenv("NND_SOCKET")) : NULL;
    setenv("NND_SOCKET", d.socket_path, 1);
    int rc = run_side(true, &out->nnd);
    tst_daemon_stop(&d);
    if (saved)
        setenv("NND_SOCKET", saved, 1);
    else
        unsetenv("NND_SOCKET");
    free(saved);
    return rc;
}
