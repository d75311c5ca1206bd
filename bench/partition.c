/* SPDX-License-Identifier: Apache-2.0 */
/* partition.c: the partitioned-model row. See partition.h. */
#include "bench/partition.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/qos_models.h"
#include "tests/support/timing.h"

#define STEPS  64
#define LEN    65536
#define ROUNDS 15
#define OP_SUB 36

static int run_once(nnd_client *c, uint64_t h, qos_req *r, int fd, uint64_t *ns) {
    char err[256];
    uint64_t t0 = bench_now_ns();
    int st = nnd_client_execute(c, h, &r->req, &fd, 1, false, 0, NULL, err, sizeof err);
    *ns = bench_now_ns() - t0;
    if (st) fprintf(stderr, "bench partition: execute: %s\n", err);
    return st ? -1 : 0;
}

int bench_partition_rows(bench_pair *out) {
    tst_daemon d;
    const char *args[] = {"--drivers-dir", BENCH_DRIVERS_DIR, NULL};
    if (tst_daemon_start(&d, args) != 0) return -1;
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "bench-partition", err, sizeof err);
    qos_chain chain;
    qos_chain_init(&chain, STEPS, LEN);
    /* Whole partitions: the first half on the driver, the second on nnd-cpu. */
    for (uint32_t k = STEPS / 2; k < STEPS; k++)
        chain.opn[k].type = OP_SUB;
    const char *cpu[] = {"nnd-cpu"};
    /* Named: the example ranks after nnd-cpu, so only a named set gives it the ADDs. */
    const char *both[] = {"nnd-example", "nnd-cpu"};
    uint64_t hp = 0, hc = 0;
    int rc =
        !c ? -1
        : nnd_client_prepare_on(c, both, 2, &chain.model, NULL, 0, 0, 0, 0, &hp, err, sizeof err) ||
                nnd_client_prepare_on(c, cpu, 1, &chain.model, NULL, 0, 0, 0, 0, &hc, err,
                                      sizeof err)
            ? -1
            : 0;
    if (rc) fprintf(stderr, "bench partition: %s\n", err);
    size_t bytes = (size_t)LEN * sizeof(float), size = 3 * bytes;
    void *map = NULL;
    int fd = rc ? -1 : nnd_memfd_create("bench-partition", size, &map);
    if (!rc && fd < 0) rc = -1;
    qos_req r;
    qos_req_init(&r, LEN, size, 0, bytes, 2 * bytes);
    uint64_t a[ROUNDS], b[ROUNDS];
    for (int i = -2; i < ROUNDS && !rc; i++) { /* two warm-up rounds */
        uint64_t ta, tb;
        rc = run_once(c, hp, &r, fd, &ta) || run_once(c, hc, &r, fd, &tb) ? -1 : 0;
        if (i >= 0) a[i] = ta, b[i] = tb;
    }
    if (!rc) {
        out->a_ns = bench_median_u64(a, ROUNDS);
        out->b_ns = bench_median_u64(b, ROUNDS);
        out->shape = "64 steps over [65536] floats: 32 ADD on nnd-example, then 32 SUB on nnd-cpu";
    }
    if (map) munmap(map, size);
    if (fd >= 0) close(fd);
    qos_chain_free(&chain);
    if (c) nnd_client_close(c);
    tst_daemon_stop(&d);
    return rc;
}
