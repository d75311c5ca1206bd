/* SPDX-License-Identifier: Apache-2.0 */
/* cost: the cost model that seeds execution-time estimates before a model has run.
 *
 * Contract:
 * - qos_throughput_measure() times three small models through the engine in process at
 *   daemon start (a few milliseconds, after one untimed run that starts the engine's
 *   kernel libraries): a chain of small ADDs gives the fixed cost of one operation, an
 *   ADD over 12 MB (past the caches) the memory throughput, a FULLY_CONNECTED the
 *   arithmetic throughput. It measures whatever kernels the engine picks, so the figures match the
 *   engine as built. Should a probe fail, conservative defaults stand in.
 * - qos_cost_step_ns(): one operation's estimate, op_ns + flops / arithmetic throughput +
 *   bytes / memory throughput, from eng_prepared_step_cost(). Only a seed: measured runs
 *   take over (estimate.h).
 */
#ifndef NND_SCHED_COST_H
#define NND_SCHED_COST_H

#include <stdint.h>

#include "engine/engine.h"

typedef struct qos_throughput {
    double flops_per_ns; /* arithmetic, GFLOP/s */
    double bytes_per_ns; /* memory traffic, GB/s */
    double op_ns;        /* fixed cost of one operation */
    uint64_t took_ns;    /* how long measuring took (the untimed start excluded) */
} qos_throughput;

void qos_throughput_measure(qos_throughput *t);
double qos_cost_step_ns(const qos_throughput *t, const eng_prepared *p, uint32_t k);

#endif
