/* SPDX-License-Identifier: Apache-2.0 */
/* test_pool_place (unit): XNNPACK's pool threads pinned to CPUs of their own
 * (engine/backends/xnnpack/pool_place.h). With NND_ENGINE_PLACE=0 no thread is pinned. With
 * placement on, each pool thread but the caller's has one CPU of the process's mask, no two
 * the same and none the first; a caller that runs on a pool thread's CPU moves that thread to
 * the free CPU; the pool still computes every item. Skipped with fewer than two usable CPUs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <pthreadpool.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "engine/backends/xnnpack/pool_place.h"

#define MAX_THREADS 64

typedef struct thread_cpu {
    pid_t tid;
    int cpus; /* how many CPUs its mask has */
    int cpu;  /* its one CPU, when it has one */
} thread_cpu;

/* The process's threads other than the caller, with their masks. */
static int other_threads(thread_cpu *out) {
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < MAX_THREADS;) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid <= 0 || tid == gettid()) continue;
        cpu_set_t set;
        assert_int_equal(sched_getaffinity(tid, sizeof set, &set), 0);
        out[n] = (thread_cpu){tid, CPU_COUNT(&set), -1};
        for (int c = 0; c < CPU_SETSIZE && out[n].cpus == 1; c++)
            if (CPU_ISSET(c, &set)) out[n].cpu = c;
        n++;
    }
    closedir(d);
    return n;
}

static int nth_cpu(const cpu_set_t *set, int k) {
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set) && k-- == 0) return c;
    return -1;
}

static cpu_set_t g_mask;

static int setup(void **state) {
    (void)state;
    return sched_getaffinity(0, sizeof g_mask, &g_mask);
}

static void test_off_pins_nothing(void **state) {
    (void)state;
    if (CPU_COUNT(&g_mask) < 2) skip();
    setenv("NND_ENGINE_PLACE", "0", 1);
    pthreadpool_t pool = pthreadpool_create((size_t)CPU_COUNT(&g_mask));
    assert_non_null(pool);
    eng_pool_place_init(pool);
    unsetenv("NND_ENGINE_PLACE");
    assert_false(eng_pool_place_active());
    thread_cpu t[MAX_THREADS];
    int n = other_threads(t);
    assert_int_equal(n, CPU_COUNT(&g_mask) - 1);
    for (int i = 0; i < n; i++)
        assert_int_equal(t[i].cpus, CPU_COUNT(&g_mask));
    pthreadpool_destroy(pool);
}

static void add_square(void *p, size_t i) {
    atomic_fetch_add((_Atomic uint64_t *)p, (uint64_t)i * i);
}

static void test_pool_threads_apart_and_off_the_caller(void **state) {
    (void)state;
    int n_cpus = CPU_COUNT(&g_mask);
    if (n_cpus < 2) skip();
    pthreadpool_t pool = pthreadpool_create((size_t)n_cpus);
    assert_non_null(pool);
    eng_pool_place_init(pool);
    assert_true(eng_pool_place_active());

    thread_cpu t[MAX_THREADS];
    int n = other_threads(t), first = nth_cpu(&g_mask, 0);
    assert_int_equal(n, n_cpus - 1);
    bool held[CPU_SETSIZE] = {false};
    for (int i = 0; i < n; i++) {
        assert_int_equal(t[i].cpus, 1);
        assert_true(CPU_ISSET(t[i].cpu, &g_mask));
        assert_int_not_equal(t[i].cpu, first);
        assert_false(held[t[i].cpu]);
        held[t[i].cpu] = true;
    }

    /* The caller runs where pool thread 0 of the list is pinned: that thread moves to the
     * CPU none held (the first), and nothing is pinned where the caller is. */
    int taken = t[0].cpu;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(taken, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    assert_int_equal(sched_getcpu(), taken);
    eng_pool_place_caller();
    assert_true(eng_pool_place_active());
    thread_cpu after[MAX_THREADS];
    assert_int_equal(other_threads(after), n);
    for (int i = 0; i < n; i++) {
        assert_int_equal(after[i].cpus, 1);
        assert_int_not_equal(after[i].cpu, taken);
        if (after[i].tid == t[0].tid) assert_int_equal(after[i].cpu, first);
    }

    /* A second call where nothing is pinned moves nothing. */
    eng_pool_place_caller();
    thread_cpu again[MAX_THREADS];
    assert_int_equal(other_threads(again), n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (again[i].tid == after[j].tid) assert_int_equal(again[i].cpu, after[j].cpu);

    /* The pool computes every item with its threads where they are now. */
    _Atomic uint64_t sum = 0;
    pthreadpool_parallelize_1d(pool, add_square, &sum, 1000, 0);
    assert_int_equal(atomic_load(&sum), 332833500ull); /* 0^2 + ... + 999^2 */

    assert_int_equal(sched_setaffinity(0, sizeof g_mask, &g_mask), 0);
    pthreadpool_destroy(pool);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_pins_nothing),
        cmocka_unit_test(test_pool_threads_apart_and_off_the_caller),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
