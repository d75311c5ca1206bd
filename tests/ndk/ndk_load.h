/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_load: load that one process puts on the daemon through the NNAPI layer (one
 * connection, shared by its threads), as an application would; what test_ndk_priority and
 * `make bench` (bench/threads.c) measure. $NND_SOCKET names the daemon.
 *
 * - ndk_fc_chain_build(): a chain of `layers` FULLY_CONNECTED layers on [batch, width]
 *   floats (one [width, width] weight constant shared by every layer), compiled twice: at
 *   HIGH and at LOW priority.
 * - ndk_priority_run(): the p90 latency of `samples` HIGH executions (create, set, compute,
 *   free; a pause of 1 to 4 ms before each) from the calling thread on an idle daemon, and
 *   of as many while another thread of this process computes LOW executions of the same
 *   model back to back; the two kinds are taken in alternating blocks. Every result is
 *   checked against the first one.
 * - ndk_rate(): executions per second of a small model (ADD of two [16] floats) computed
 *   back to back by `n` threads of this process, or by `n` child processes, for `seconds`
 *   after a warm-up, every result checked. With cpu >= 0 the workers (threads or
 *   processes) run pinned to that CPU.
 * All return 0 (or a rate > 0), or -1 with a message on stderr. */
#ifndef TST_NDK_NDK_LOAD_H
#define TST_NDK_NDK_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "nnd/NeuralNetworks.h"

typedef struct ndk_fc_chain {
    uint32_t layers, batch, width;
    ANeuralNetworksModel *model;
    ANeuralNetworksCompilation *high, *low;
    float *weights, *bias; /* the constants, referenced until the model is freed */
} ndk_fc_chain;

typedef struct ndk_priority_result {
    double idle_p90_ns, flood_p90_ns;
    double idle_median_ns, flood_median_ns;
    uint64_t low_done; /* LOW executions completed during the flood */
} ndk_priority_result;

int ndk_fc_chain_build(ndk_fc_chain *c, uint32_t layers, uint32_t batch, uint32_t width);
void ndk_fc_chain_free(ndk_fc_chain *c);
int ndk_priority_run(const ndk_fc_chain *c, int samples, ndk_priority_result *out);
double ndk_rate(int n, bool processes, double seconds, int cpu);

#endif
