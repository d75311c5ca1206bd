/* SPDX-License-Identifier: Apache-2.0 */
/* pool_place.c: XNNPACK's pool threads pinned to CPUs of their own. See pool_place.h. */
#include "engine/backends/xnnpack/pool_place.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/base/clock.h"

#define MAX_POOL_THREADS 256

static pthread_mutex_t place_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool active;
static cpu_set_t process_mask; /* what the pool threads get back when placement stops */
static size_t n_pinned;        /* pool threads besides the caller */
static pid_t pinned_tid[MAX_POOL_THREADS];
static int free_cpu; /* the CPU no pool thread holds */
/* cpu_holder[cpu]: 1 + the index into pinned_tid of the thread pinned there, 0 for none. */
static atomic_int cpu_holder[CPU_SETSIZE];

/* The roll call: item i runs first on pool thread i (pthreadpool gives thread i the i-th
 * share of a range as long as its thread count), and no thread leaves its item before every
 * thread has entered one, so none can take another's item while the call lasts. */
typedef struct roll {
    size_t threads;
    pid_t tid[MAX_POOL_THREADS + 1];
    atomic_size_t arrived;
    uint64_t until_ns;
} roll;

static void answer_roll(void *p, size_t i) {
    roll *r = p;
    r->tid[i] = gettid();
    atomic_fetch_add(&r->arrived, 1);
    while (atomic_load(&r->arrived) < r->threads && eng_now_ns() < r->until_ns)
        sched_yield();
}

static int pin(pid_t tid, int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(tid, sizeof one, &one);
}

/* With the lock held: every pool thread gets the whole mask back; placement stops. */
static void stop_placing(void) {
    atomic_store(&active, false);
    for (size_t k = 0; k < n_pinned; k++)
        sched_setaffinity(pinned_tid[k], sizeof process_mask, &process_mask);
    for (int c = 0; c < CPU_SETSIZE; c++)
        atomic_store(&cpu_holder[c], 0);
}

/* Whether the roll named the caller first and every other thread once. */
static bool roll_is_whole(const roll *r) {
    if (atomic_load(&r->arrived) != r->threads || r->tid[0] != gettid()) return false;
    for (size_t i = 0; i < r->threads; i++) {
        if (r->tid[i] <= 0) return false;
        for (size_t j = i + 1; j < r->threads; j++)
            if (r->tid[i] == r->tid[j]) return false;
    }
    return true;
}

void eng_pool_place_init(pthreadpool_t pool) {
    const char *env = getenv("NND_ENGINE_PLACE");
    if (!pool || (env && !strcmp(env, "0"))) return;
    size_t threads = pthreadpool_get_threads_count(pool);
    if (threads < 2 || threads > MAX_POOL_THREADS ||
        sched_getaffinity(0, sizeof process_mask, &process_mask) != 0 ||
        (size_t)CPU_COUNT(&process_mask) < threads)
        return;
    roll *r = calloc(1, sizeof *r);
    if (!r) return;
    r->threads = threads;
    r->until_ns = eng_now_ns() + ENG_POOL_PLACE_WAIT_NS;
    pthreadpool_parallelize_1d(pool, answer_roll, r, threads, 0);
    pthread_mutex_lock(&place_lock);
    if (roll_is_whole(r)) {
        int cpu = -1, k = -1; /* the mask's CPUs in order: the first stays free */
        bool pinned = true;
        while (pinned && k + 1 < (int)threads && ++cpu < CPU_SETSIZE) {
            if (!CPU_ISSET(cpu, &process_mask)) continue;
            if (++k == 0) {
                free_cpu = cpu;
                continue;
            }
            pinned_tid[n_pinned++] = r->tid[k];
            pinned = pin(r->tid[k], cpu) == 0;
            atomic_store(&cpu_holder[cpu], (int)n_pinned);
        }
        atomic_store(&active, pinned && n_pinned == threads - 1);
        if (!atomic_load(&active)) stop_placing();
    }
    pthread_mutex_unlock(&place_lock);
    free(r);
}

void eng_pool_place_caller(void) {
    if (!atomic_load_explicit(&active, memory_order_relaxed)) return;
    int cpu = sched_getcpu();
    if (cpu < 0 || cpu >= CPU_SETSIZE ||
        !atomic_load_explicit(&cpu_holder[cpu], memory_order_relaxed))
        return;
    pthread_mutex_lock(&place_lock);
    int holder = atomic_load(&cpu_holder[cpu]);
    if (atomic_load(&active) && holder) {
        if (pin(pinned_tid[holder - 1], free_cpu) == 0) {
            atomic_store(&cpu_holder[free_cpu], holder);
            atomic_store(&cpu_holder[cpu], 0);
            free_cpu = cpu;
        } else {
            stop_placing(); /* the CPU went away (a cpuset changed): the kernel places all */
        }
    }
    pthread_mutex_unlock(&place_lock);
}

bool eng_pool_place_active(void) {
    return atomic_load(&active);
}
