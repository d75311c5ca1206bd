/* SPDX-License-Identifier: Apache-2.0 */
/* cpu_crowd.c: the runnable-thread count against the CPUs. See cpu_crowd.h. */
#include "engine/backends/xnnpack/cpu_crowd.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t crowd_once = PTHREAD_ONCE_INIT;
static int loadavg_fd = -1; /* -1: never crowded */
static atomic_int mode = ENG_CPU_CROWD_AUTO;
static long online_cpus = 1;
static _Atomic uint64_t next_read_ns;
static atomic_bool crowded;

static void crowd_init(void) {
    const char *env = getenv("NND_ENGINE_CROWD");
    if (env && (!strcmp(env, "0") || !strcmp(env, "1")))
        atomic_store(&mode, env[0] == '1' ? ENG_CPU_CROWD_ALWAYS : ENG_CPU_CROWD_NEVER);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    online_cpus = n > 0 ? n : 1;
    loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

static uint64_t coarse_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The kernel's count of runnable threads, -1 when unknown. "0.52 0.58 0.59 3/421 1234". */
static long runnable_threads(void) {
    char buf[128];
    ssize_t n = pread(loadavg_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return -1;
    buf[n] = 0;
    long running = -1;
    return sscanf(buf, "%*s %*s %*s %ld/", &running) == 1 ? running : -1;
}

void eng_cpus_crowd_mode(int m) {
    pthread_once(&crowd_once, crowd_init);
    atomic_store(&mode, m);
}

bool eng_cpus_crowded(size_t pool_threads) {
    pthread_once(&crowd_once, crowd_init);
    int m = atomic_load_explicit(&mode, memory_order_relaxed);
    if (m != ENG_CPU_CROWD_AUTO) return m == ENG_CPU_CROWD_ALWAYS;
    if (loadavg_fd < 0) return false;
    uint64_t now = coarse_now_ns(), due = atomic_load_explicit(&next_read_ns, memory_order_relaxed);
    /* One reader per period: the one that moves the due time on. */
    if (now >= due &&
        atomic_compare_exchange_strong(&next_read_ns, &due, now + ENG_CROWD_PERIOD_NS)) {
        long running = runnable_threads();
        long ours = 1 + (pool_threads > 1 ? (long)pool_threads - 1 : 0);
        atomic_store_explicit(&crowded, running >= 0 && running - ours >= online_cpus,
                              memory_order_relaxed);
    }
    return atomic_load_explicit(&crowded, memory_order_relaxed);
}
