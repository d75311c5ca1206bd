/* SPDX-License-Identifier: Apache-2.0 */
/* faulty_attack: the attacker of test_faulty_drivers, a client that names a driver built
 * to fail (drv_fault_driver.c) through a real daemon's public socket. test_faulty_drivers
 * runs it as uid 65534 (its own program with --attack MODE SOCKET). Each mode prints one
 * line per call, for the test to judge:
 *   "prepare LABEL STATUS MESSAGE"
 *   "exec LABEL STATUS START_NS END_NS RIGHT MESSAGE"   (CLOCK_MONOTONIC, RIGHT 0 or 1:
 *                                                        the output is RELU of the input)
 * and exits 0 when it could run (a refusal is a result), 1 when it could not start.
 *   hang    RELU of 1,024 floats ("small") and of 4 Mi floats ("large", work too long for
 *           the daemon's event loop) on nnd-fault: right runs, then one that hangs, then a
 *           right run again, for each
 *   crash   RELU on nnd-crash3 (every third execute() in a host dies): twelve runs; model
 *           "seen" prepared on {nnd-crash3} and on {nnd-crash3, nnd-cpu} before them, then,
 *           once the runs disabled the driver, "seen" again and a model never prepared
 *           ("fresh") on both sets, each run once when prepared
 *   leak    64 runs on nnd-fault leaking 1 MiB each, then a plain run
 *   shrink  a run on nnd-fault whose input file the attacker shrinks while the driver reads
 *           it, then a run on the file grown back
 * Also the models and pools the test's own clients use (RELU over n floats, one memfd). */
#ifndef TST_DAEMON_FAULTY_ATTACK_H
#define TST_DAEMON_FAULTY_ATTACK_H

#include <stddef.h>
#include <stdint.h>

#include "nnd/nnd_wire.h"
#include "tests/daemon/drv_models.h"

#define FA_HANG      7001.0f /* drv_fault_driver.c: the first input element that hangs */
#define FA_SLOW_READ 7002.0f /* reads, waits 300 ms, reads the whole input again */
#define FA_LEAK      7003.0f /* leaks 1 MiB */
#define FA_SMALL     1024u
#define FA_LARGE     (1u << 20)

typedef struct fa_pool {
    mb_req r;
    int fd;
    float *in, *out;
    uint32_t n;
} fa_pool;

/* RELU over [n] floats (m allocated by the caller: it is large). */
void fa_relu_model(mb *m, uint32_t n);
/* Input then output of n floats in one memfd; 0 or -1. */
int fa_pool_open(fa_pool *p, uint32_t n);
void fa_pool_close(fa_pool *p);
/* Fills the input (first element `first`, the others from seed), runs, and tells whether
 * the output is RELU of the input (*right). The status; err has the message. */
int fa_run(nnd_client *c, uint64_t h, fa_pool *p, float first, uint32_t seed, int *right, char *err,
           size_t errlen);
uint64_t fa_now_ns(void);

/* The attacker: mode as above against the daemon at socket. The exit status. */
int fa_attack(const char *mode, const char *socket);

#endif
