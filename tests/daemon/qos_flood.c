/* SPDX-License-Identifier: Apache-2.0 */
/* qos_flood: one app flooding the daemon, for the fairness test and the benchmark.
 *   qos_flood SOCKET START_NS END_NS INFLIGHT N LEN [PRIORITY]
 * Prepares a chain of N ADDs over [LEN] floats (qos_models.h), waits for START_NS
 * (CLOCK_MONOTONIC), keeps INFLIGHT executions outstanding until END_NS, and prints
 * "completed C wrong W" where C counts the replies that arrived inside [START, END]
 * and W the wrong results. Exit status 0 unless something failed. Run as another user
 * (setpriv) it is another app. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "nnd/nnd_wire.h"
#include "tests/support/qos_models.h"

#define MAX_INFLIGHT 32

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: qos_flood SOCKET START_NS END_NS INFLIGHT N LEN [PRIORITY]\n");
        return 2;
    }
    uint64_t start = strtoull(argv[2], NULL, 10), end = strtoull(argv[3], NULL, 10);
    int inflight = atoi(argv[4]);
    uint32_t n = (uint32_t)atoi(argv[5]), len = (uint32_t)atoi(argv[6]);
    int prio = argc > 7 ? atoi(argv[7]) : 0;
    if (inflight < 1 || inflight > MAX_INFLIGHT || !n || !len) return 2;
    char err[256];
    nnd_client *c = nnd_client_connect(argv[1], "qos-flood", err, sizeof err);
    if (!c) {
        fprintf(stderr, "qos_flood: %s\n", err);
        return 1;
    }
    qos_chain m;
    qos_chain_init(&m, n, len);
    uint64_t h;
    if (nnd_client_prepare(c, &m.model, NULL, 0, 0, prio, 0, &h, err, sizeof err) != 0) {
        fprintf(stderr, "qos_flood: prepare: %s\n", err);
        return 1;
    }
    /* a and b shared; one output region per slot. */
    size_t bytes = (size_t)len * sizeof(float), size = bytes * (2 + MAX_INFLIGHT);
    void *map;
    int fd = nnd_memfd_create("qos-flood", size, &map);
    if (fd < 0) return 1;
    float *f = map;
    for (uint32_t i = 0; i < len; i++)
        f[i] = (float)(i % 100), f[len + i] = 1.0f;
    qos_req req[MAX_INFLIGHT];
    for (int s = 0; s < inflight; s++)
        qos_req_init(&req[s], len, size, 0, bytes, bytes * (2 + (uint64_t)s));
    uint64_t ticket[MAX_INFLIGHT];
    while (now_ns() < start) {
        uint64_t left = start - now_ns();
        struct timespec ts = {(time_t)(left / 1000000000ull), (long)(left % 1000000000ull)};
        nanosleep(&ts, NULL);
    }
    long completed = 0, wrong = 0, failed = 0;
    for (int s = 0; s < inflight; s++)
        if (nnd_client_execute_start(c, h, &req[s].req, &fd, 1, NULL, &ticket[s], err, sizeof err) <
            0)
            return 1;
    /* Slots are served in order (one app, one priority, no deadlines): wait round robin. */
    int open = inflight;
    for (int s = 0; open; s = (s + 1) % inflight) {
        if (!ticket[s]) continue;
        int st = nnd_client_execute_wait(c, ticket[s], 30000, NULL, err, sizeof err);
        uint64_t t = now_ns();
        ticket[s] = 0;
        open--;
        if (st != 0) {
            fprintf(stderr, "qos_flood: execute: %s\n", err);
            failed++;
        } else if (t >= start && t <= end) {
            completed++;
            const float *out = f + (size_t)len * (2 + (size_t)s);
            if (out[len - 1] != (float)((len - 1) % 100) + (float)n) wrong++;
        }
        if (t < end && st >= 0) {
            if (nnd_client_execute_start(c, h, &req[s].req, &fd, 1, NULL, &ticket[s], err,
                                         sizeof err) < 0)
                return 1;
            open++;
        }
    }
    printf("completed %ld wrong %ld\n", completed, wrong);
    nnd_client_release(c, h);
    nnd_client_close(c);
    qos_chain_free(&m);
    close(fd);
    return failed || wrong ? 1 : 0;
}
