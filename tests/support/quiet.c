/* SPDX-License-Identifier: Apache-2.0 */
/* quiet.c: see quiet.h. */
#include "tests/support/quiet.h"
#include "tests/support/timing.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The machine's working ticks since boot: every state of the "cpu" line but idle and iowait. */
static uint64_t machine_busy_ticks(void) {
    unsigned long long v[10] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return 0;
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                   &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
    fclose(f);
    if (n < 8) return 0;
    /* user nice system [idle iowait] irq softirq steal; guest time is inside user already. */
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

/* A process's user and system ticks, its finished children's included (/proc/PID/stat). */
static uint64_t process_ticks(pid_t pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    const char *p = strrchr(buf, ')'); /* the name may hold spaces */
    unsigned long long ut = 0, st = 0, cut = 0, cst = 0;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ut,
                     &st, &cut, &cst) != 4)
        return 0;
    return ut + st + cut + cst;
}

static uint64_t own_ticks(pid_t other) {
    return process_ticks(getpid()) + (other > 0 ? process_ticks(other) : 0);
}

void tst_quiet_start(tst_quiet *q, pid_t other) {
    q->other = other;
    q->own_ticks = own_ticks(other);
    q->busy_ticks = machine_busy_ticks();
    q->t_ns = bench_now_ns();
}

double tst_quiet_others(const tst_quiet *q) {
    double seconds = (double)(bench_now_ns() - q->t_ns) / 1e9;
    uint64_t busy = machine_busy_ticks() - q->busy_ticks, own = own_ticks(q->other) - q->own_ticks;
    double hz = (double)sysconf(_SC_CLK_TCK);
    if (seconds <= 0 || hz <= 0) return 0;
    double others = busy > own ? (double)(busy - own) / hz : 0;
    return others / seconds;
}
