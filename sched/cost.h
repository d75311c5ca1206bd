/* cost: the cost model that seeds execution-time estimates before a model has run.
 *
 * Contract:
 * - nnd_throughput_measure() times three small models through the engine in process at
 *   daemon start (a few milliseconds, after one untimed run that starts the engine's
 *   kernel libraries): a chain of small ADDs gives the fixed cost of one operation, an
 *   ADD over 12 MB (past the caches) the memory throughput, a FULLY_CONNECTED the
 *   arithmetic throughput. It measures whatever kernels the engine picks, so the figures match the
 *   engine as built. Should a probe fail, conservative defaults stand in.
 * - nnd_cost_step_ns(): one operation's estimate, op_ns + flops / arithmetic throughput +
 *   bytes / memory throughput, from nnd_prepared_step_cost(). Only a seed: measured runs
 *   take over (estimate.h).
 */
#ifndef NND_SCHED_COST_H
#define NND_SCHED_COST_H

#include <stdint.h>

#include "engine.h"

typedef struct nnd_throughput {
    double flops_per_ns; /* arithmetic, GFLOP/s */
    double bytes_per_ns; /* memory traffic, GB/s */
    double op_ns;        /* fixed cost of one operation */
    uint64_t took_ns;    /* how long measuring took (the untimed start excluded) */
} nnd_throughput;

void nnd_throughput_measure(nnd_throughput *t);
double nnd_cost_step_ns(const nnd_throughput *t, const nnd_prepared *p, uint32_t k);

#endif
