/* SPDX-License-Identifier: Apache-2.0 */
/* burst_chan.c: a burst channel's header, polling and futex waits. See burst_chan.h. */
#include "proto/burst_chan.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

void proto_chan_init(proto_chan_hdr *h) {
    memset(h, 0, sizeof *h);
    h->magic = PROTO_CHAN_MAGIC;
    h->version = PROTO_CHAN_VERSION;
    h->size = PROTO_CHAN_SIZE;
    h->req_off = PROTO_CHAN_HEADER;
    h->res_off = PROTO_CHAN_HEADER + PROTO_CHAN_AREA;
    h->area = PROTO_CHAN_AREA;
    h->daemon_cpu = h->client_cpu = -1;
    h->daemon_sleeping = 1; /* until a daemon thread polls: ring the doorbell */
}

bool proto_chan_valid(const proto_chan_hdr *h, uint64_t size) {
    return size >= PROTO_CHAN_SIZE && h->magic == PROTO_CHAN_MAGIC &&
           h->version == PROTO_CHAN_VERSION && h->size == PROTO_CHAN_SIZE &&
           h->req_off == PROTO_CHAN_HEADER && h->res_off == PROTO_CHAN_HEADER + PROTO_CHAN_AREA &&
           h->area == PROTO_CHAN_AREA;
}

static uint32_t configured_us;
static pthread_once_t configured_once = PTHREAD_ONCE_INIT;

static void read_config(void) {
    configured_us = PROTO_CHAN_POLL_US_DEFAULT;
    const char *v = getenv("NND_BURST_POLL_US");
    if (v && *v) {
        char *end;
        unsigned long n = strtoul(v, &end, 10);
        if (!*end)
            configured_us = n > PROTO_CHAN_POLL_US_MAX ? PROTO_CHAN_POLL_US_MAX : (uint32_t)n;
    }
}

void proto_chan_poll_init(proto_chan_poll *p) {
    pthread_once(&configured_once, read_config);
    p->max_us = p->window_us = configured_us;
    /* Pinned to one CPU is no reason not to poll: the peer may be pinned to another. */
    p->one_cpu = sysconf(_SC_NPROCESSORS_ONLN) < 2;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static uint32_t load(const uint32_t *w) {
    return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

static bool stopped(const int *stop) {
    return stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE);
}

bool proto_chan_should_poll(const proto_chan_poll *p, int32_t peer_cpu, int32_t my_cpu) {
    return p->window_us && !p->one_cpu && peer_cpu != my_cpu;
}

bool proto_chan_spin(const proto_chan_poll *p, const uint32_t *word, uint32_t old,
                     const int *stop) {
    uint64_t until = now_ns() + (uint64_t)p->window_us * 1000u;
    for (unsigned i = 1;; i++) {
        if (load(word) != old) return true;
        if ((i & 63) == 0 && (now_ns() >= until || stopped(stop))) return false;
        cpu_relax();
    }
}

void proto_chan_adapt(proto_chan_poll *p, uint64_t took_us) {
    if (took_us <= p->max_us) {
        uint32_t w = p->window_us ? p->window_us * 2 : 1;
        p->window_us = w > p->max_us ? p->max_us : w;
    } else {
        p->window_us /= 2;
    }
}

uint32_t proto_chan_wait(proto_chan_poll *p, uint32_t *word, uint32_t old, uint32_t *sleeping,
                         const int32_t *peer_cpu, int32_t *my_cpu, const int *stop,
                         uint64_t timeout_ns) {
    int32_t me = sched_getcpu();
    __atomic_store_n(my_cpu, me, __ATOMIC_RELAXED);
    uint64_t t0 = now_ns();
    uint64_t until = timeout_ns ? t0 + timeout_ns : UINT64_MAX;
    uint32_t v = old;
    if (proto_chan_should_poll(p, __atomic_load_n(peer_cpu, __ATOMIC_RELAXED), me) &&
        proto_chan_spin(p, word, old, stop)) {
        v = load(word);
    } else {
        while (!stopped(stop)) {
            if ((v = proto_chan_sleeping(sleeping, word)) != old) break;
            uint64_t now = now_ns();
            if (now >= until) break;
            /* Bounded sleeps: a stop or a scribbled word costs at most this much. */
            uint64_t left = until - now, slice = left < 100000000u ? left : 100000000u;
            struct timespec ts = {(time_t)(slice / 1000000000u), (long)(slice % 1000000000u)};
            syscall(SYS_futex, word, FUTEX_WAIT, old, &ts, NULL, 0);
            if ((v = load(word)) != old) break;
        }
        __atomic_store_n(sleeping, 0, __ATOMIC_RELAXED);
    }
    if (v != old || !stopped(stop)) proto_chan_adapt(p, (now_ns() - t0) / 1000u);
    return v;
}

/* Both sides store, then load, sequentially consistent (no fences: ThreadSanitizer does
 * not take them): of a publisher and a sleeper, one sees the other's store. */
bool proto_chan_publish(uint32_t *word, uint32_t seq, const uint32_t *peer_sleeping) {
    __atomic_store_n(word, seq, __ATOMIC_SEQ_CST);
    return __atomic_load_n(peer_sleeping, __ATOMIC_SEQ_CST) != 0;
}

uint32_t proto_chan_sleeping(uint32_t *sleeping, const uint32_t *word) {
    __atomic_store_n(sleeping, 1, __ATOMIC_SEQ_CST);
    return __atomic_load_n(word, __ATOMIC_SEQ_CST);
}

void proto_chan_wake(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

uint32_t proto_chan_next(uint32_t seq) {
    return seq + 1 ? seq + 1 : 1;
}
