/* SPDX-License-Identifier: Apache-2.0 */
/* faulty_attack.c: the attacker of test_faulty_drivers, and the models and pools its
 * clients share. See faulty_attack.h. */
#include "tests/daemon/faulty_attack.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

uint64_t fa_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void fa_relu_model(mb *m, uint32_t n) {
    mb_init(m);
    uint32_t x = mb_temp(m, 1, &n), y = mb_temp(m, 1, &n);
    mb_op(m, OP_RELU, 1, &x, y);
    mb_finish(m, 1, &x, y);
}

int fa_pool_open(fa_pool *p, uint32_t n) {
    size_t bytes = sizeof(float) * n;
    mb_req_init(&p->r, 1, &bytes, bytes);
    void *map;
    p->fd = nnd_memfd_create("test-faulty-drivers", p->r.size, &map);
    if (p->fd < 0) return -1;
    p->in = map;
    p->out = (float *)((uint8_t *)map + p->r.out_offset);
    p->n = n;
    return 0;
}

void fa_pool_close(fa_pool *p) {
    munmap(p->in, p->r.size);
    close(p->fd);
}

static void fill(fa_pool *p, float first, uint32_t seed) {
    for (uint32_t i = 0; i < p->n; i++)
        p->in[i] = (float)((i * 7 + seed) % 13) - 6.0f;
    p->in[0] = first;
    memset(p->out, 0xff, sizeof(float) * p->n); /* NaN: a run that wrote nothing is wrong */
}

static int execute(nnd_client *c, uint64_t h, fa_pool *p, char *err, size_t errlen) {
    err[0] = '\0';
    return nnd_client_execute_opts(c, h, &p->r.req, &p->fd, 1, NULL, NULL, err, errlen);
}

int fa_run(nnd_client *c, uint64_t h, fa_pool *p, float first, uint32_t seed, int *right, char *err,
           size_t errlen) {
    fill(p, first, seed);
    int st = execute(c, h, p, err, errlen);
    *right = st == 0;
    for (uint32_t i = 0; *right && i < p->n; i++)
        *right = p->out[i] == (p->in[i] > 0 ? p->in[i] : 0);
    return st;
}

/* ---- the attacker ------------------------------------------------------------------------- */

static mb g_model;

static void say_exec(const char *label, int st, uint64_t t0, int right, const char *err) {
    printf("exec %s %d %llu %llu %d %s\n", label, st, (unsigned long long)t0,
           (unsigned long long)fa_now_ns(), right, err);
    fflush(stdout);
}

/* Prepares RELU over [n] on the devices named; 0 when it failed (said either way). */
static uint64_t prepare(nnd_client *c, const char *label, uint32_t n, const char *const *devices,
                        size_t n_devices) {
    char err[512] = "";
    uint64_t h = 0;
    fa_relu_model(&g_model, n);
    int st = nnd_client_prepare_on(c, devices, n_devices, &g_model.model, NULL, 0, 0, 0, 0, &h, err,
                                   sizeof err);
    mb_free(&g_model);
    printf("prepare %s %d %s\n", label, st, err);
    fflush(stdout);
    return st == 0 ? h : 0;
}

static void run(nnd_client *c, uint64_t h, fa_pool *p, const char *label, float first,
                uint32_t seed) {
    char err[512];
    int right;
    uint64_t t0 = fa_now_ns();
    int st = fa_run(c, h, p, first, seed, &right, err, sizeof err);
    say_exec(label, st, t0, right, err);
}

static int attack_hang(nnd_client *c) {
    const char *fault[] = {"nnd-fault"};
    static const struct {
        const char *name;
        uint32_t n;
    } sizes[2] = {{"small", FA_SMALL}, {"large", FA_LARGE}};
    for (int s = 0; s < 2; s++) {
        fa_pool p;
        uint64_t h = prepare(c, sizes[s].name, sizes[s].n, fault, 1);
        if (!h || fa_pool_open(&p, sizes[s].n) < 0) return 1;
        char label[64];
        for (int i = 0; i < 3; i++) {
            snprintf(label, sizeof label, "%s-before-%d", sizes[s].name, i);
            run(c, h, &p, label, 1.0f, (uint32_t)i);
        }
        snprintf(label, sizeof label, "%s-hang", sizes[s].name);
        run(c, h, &p, label, FA_HANG, 0);
        snprintf(label, sizeof label, "%s-after", sizes[s].name);
        run(c, h, &p, label, 2.0f, 5);
        fa_pool_close(&p);
        nnd_client_release(c, h);
    }
    return 0;
}

static int attack_crash(nnd_client *c) {
    const char *only[] = {"nnd-crash3"}, *with_cpu[] = {"nnd-crash3", "nnd-cpu"};
    fa_pool p, q;
    if (fa_pool_open(&p, FA_SMALL) < 0 || fa_pool_open(&q, 2 * FA_SMALL) < 0) return 1;
    /* "seen": the content cache lists both compilations before the driver is disabled. */
    uint64_t seen = prepare(c, "seen-only", FA_SMALL, only, 1);
    uint64_t seen_cpu = prepare(c, "seen-with-cpu", FA_SMALL, with_cpu, 2);
    if (!seen || !seen_cpu) return 1;
    nnd_client_release(c, seen_cpu);
    char label[64];
    for (int i = 1; i <= 12; i++) {
        snprintf(label, sizeof label, "call-%d", i);
        run(c, seen, &p, label, 1.0f, (uint32_t)i);
    }
    nnd_client_release(c, seen);
    /* Disabled by now (three restarts within the window, over its limit of two). */
    static const struct {
        const char *label;
        uint32_t n;
        int n_devices;
    } after[4] = {{"seen-only-after", FA_SMALL, 1},
                  {"seen-with-cpu-after", FA_SMALL, 2},
                  {"fresh-only", 2 * FA_SMALL, 1},
                  {"fresh-with-cpu", 2 * FA_SMALL, 2}};
    for (int k = 0; k < 4; k++) {
        uint64_t h = prepare(c, after[k].label, after[k].n,
                             after[k].n_devices == 1 ? only : with_cpu, (size_t)after[k].n_devices);
        if (h) run(c, h, after[k].n == FA_SMALL ? &p : &q, after[k].label, 1.0f, 3);
        if (h) nnd_client_release(c, h);
    }
    fa_pool_close(&p);
    fa_pool_close(&q);
    return 0;
}

static int attack_leak(nnd_client *c) {
    const char *fault[] = {"nnd-fault"};
    fa_pool p;
    uint64_t h = prepare(c, "leak", FA_SMALL, fault, 1);
    if (!h || fa_pool_open(&p, FA_SMALL) < 0) return 1;
    char label[64];
    for (int i = 0; i < 64; i++) {
        snprintf(label, sizeof label, "leak-%d", i);
        run(c, h, &p, label, FA_LEAK, (uint32_t)i);
    }
    run(c, h, &p, "leak-after", 1.0f, 1);
    fa_pool_close(&p);
    return 0;
}

typedef struct shrink_run {
    nnd_client *c;
    uint64_t h;
    fa_pool *p;
} shrink_run;

/* Only the call: the pool is filled before and not read after (its file is cut meanwhile,
 * and a read of it here would be this process's own SIGBUS). */
static void *slow_read(void *arg) {
    shrink_run *s = arg;
    char err[512];
    uint64_t t0 = fa_now_ns();
    int st = execute(s->c, s->h, s->p, err, sizeof err);
    say_exec("shrunk", st, t0, 0, err);
    return NULL;
}

static int attack_shrink(nnd_client *c) {
    const char *fault[] = {"nnd-fault"};
    fa_pool p;
    uint32_t n = 64u << 10; /* 256 KiB: pages past the first one the driver read */
    uint64_t h = prepare(c, "shrink", n, fault, 1);
    if (!h || fa_pool_open(&p, n) < 0) return 1;
    run(c, h, &p, "shrink-before", 1.0f, 0);
    fill(&p, FA_SLOW_READ, 0);
    shrink_run s = {c, h, &p};
    pthread_t t;
    if (pthread_create(&t, NULL, slow_read, &s) != 0) return 1;
    usleep(150 * 1000); /* inside the driver's 300 ms wait */
    int cut = ftruncate(p.fd, 0);
    pthread_join(t, NULL);
    if (cut < 0 || ftruncate(p.fd, (off_t)p.r.size) < 0) return 1;
    run(c, h, &p, "shrink-grown-back", 1.0f, 2);
    fa_pool_close(&p);
    return 0;
}

int fa_attack(const char *mode, const char *socket) {
    char err[256];
    nnd_client *c = nnd_client_connect(socket, "faulty-attacker", err, sizeof err);
    if (!c) {
        fprintf(stderr, "attacker: connect: %s\n", err);
        return 1;
    }
    int rc = !strcmp(mode, "hang")     ? attack_hang(c)
             : !strcmp(mode, "crash")  ? attack_crash(c)
             : !strcmp(mode, "leak")   ? attack_leak(c)
             : !strcmp(mode, "shrink") ? attack_shrink(c)
                                       : 1;
    nnd_client_close(c);
    return rc;
}
