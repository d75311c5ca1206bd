/* SPDX-License-Identifier: Apache-2.0 */
/* driver_rtt: a tiny execution through a driver host and in process (driver_rtt.h). */
#include "bench/driver_rtt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "driverhost/drvhost.h"

#define N       256
#define OP_RELU 19

static const nnd_driver_operand operands[2] = {
    {.type = NND_DRIVER_TENSOR_FLOAT32, .rank = 1, .dims = {N}, .lifetime = NND_DRIVER_INPUT},
    {.type = NND_DRIVER_TENSOR_FLOAT32, .rank = 1, .dims = {N}, .lifetime = NND_DRIVER_OUTPUT}};
static const uint32_t in_idx[1] = {0}, out_idx[1] = {1};
static const nnd_driver_operation relu = {OP_RELU, 1, 1, in_idx, out_idx, 0};
static const nnd_driver_model model = {2, operands, 1, &relu, 1, 1, in_idx, out_idx, false};

typedef struct side {
    const nnd_driver *d;
    void *prepared;
    float *pool;
} side;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double run(void *ctx) {
    side *s = ctx;
    char err[256];
    nnd_driver_arg a = {.data = s->pool, .length = N * sizeof(float), .rank = 1, .dims = {N}};
    nnd_driver_arg b = {.data = s->pool + N, .length = N * sizeof(float), .rank = 1, .dims = {N}};
    nnd_driver_execution x = {.prepared = s->prepared,
                              .n_inputs = 1,
                              .n_outputs = 1,
                              .inputs = &a,
                              .outputs = &b,
                              .err = err,
                              .errlen = sizeof err};
    double t0 = now_ns();
    int rc = s->d->execute(&x);
    double t = now_ns() - t0;
    if (rc != NND_DRIVER_OK) fprintf(stderr, "bench: driver_rtt: execute: %d %s\n", rc, err);
    return rc == NND_DRIVER_OK ? t : -1;
}

static int open_side(side *s, const nnd_driver *d, float *pool) {
    char err[256] = "";
    nnd_driver_device_info dev;
    nnd_driver_prepare_args args = {NND_DRIVER_PREFER_FAST_SINGLE_ANSWER,
                                    NND_DRIVER_PRIORITY_MEDIUM, NND_DRIVER_NO_DEADLINE};
    nnd_driver_prepared_info p = {0};
    s->d = d, s->pool = pool;
    if (d->open(&dev, 1, err, sizeof err) != 1 ||
        d->prepare(dev.device, &model, &args, &p, err, sizeof err) != NND_DRIVER_OK) {
        fprintf(stderr, "bench: driver_rtt: %s\n", err);
        return -1;
    }
    s->prepared = p.prepared;
    return 0;
}

int bench_driver_rtt_rows(bench_pair *out) {
    size_t bytes = 2 * N * sizeof(float);
    int fd = memfd_create("bench-driver-rtt", MFD_CLOEXEC);
    float *pool = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)bytes) == 0)
        pool = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (pool == MAP_FAILED) {
        fprintf(stderr, "bench: driver_rtt: no memfd\n");
        if (fd >= 0) close(fd);
        return -1;
    }
    for (int i = 0; i < N; i++)
        pool[i] = (float)(i % 5) - 2.0f;
    int region = drvhost_register_region(fd, 0, pool, bytes, true);
    char err[256] = "";
    drvhost *h = NULL;
    const nnd_driver *remote = drvhost_start(BENCH_FAULT_DRIVER, NULL, &h, err, sizeof err);
    void *so = dlopen(BENCH_FAULT_DRIVER, RTLD_NOW | RTLD_LOCAL);
    const nnd_driver *local = so ? dlsym(so, NND_DRIVER_SYMBOL) : NULL;
    side a = {0}, b = {0};
    int rc = -1;
    if (!remote || !local)
        fprintf(stderr, "bench: driver_rtt: %s\n", remote ? dlerror() : err);
    else if (open_side(&a, remote, pool) == 0 && open_side(&b, local, pool) == 0)
        rc = bench_alternate(run, &a, run, &b, NULL, 20, 500, out);
    if (b.prepared) local->release(b.prepared);
    if (local) local->close();
    if (so) dlclose(so);
    if (a.prepared) remote->release(a.prepared);
    if (remote) remote->close();
    drvhost_stop(h);
    if (region > 0) drvhost_unregister_region(region);
    munmap(pool, bytes);
    close(fd);
    if (rc == 0) out->shape = "RELU of 256 floats in a registered memfd";
    return rc;
}
