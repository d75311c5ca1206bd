/* SPDX-License-Identifier: Apache-2.0 */
/* partition_run: running a driver partition (partition_sub.h) of a bound execution.
 * - eng_partition_run() runs the partition whose first step is k of e's run: its inputs
 *   (host copies of device memory read back first), execute(), or start() when the
 *   driver has it and the caller can leave the run (cp->can_suspend; else the engine
 *   waits for complete()): SCHEMA_OK (done), ENG_ON_DEVICE (started, engine.h), or the
 *   failure with err.
 * - eng_partition_completed() says whether the partition started at `from` completed
 *   (its notify came); eng_partition_finish() then takes its status, output shapes
 *   (OUTPUT_INSUFFICIENT_SIZE) and measured times.
 * - eng_partition_run_reset() forgets a completion no run went on from (a fresh run);
 *   eng_partition_run_free() waits for a started partition (asking the driver to cancel). */
#ifndef ENG_CORE_PARTITION_RUN_H
#define ENG_CORE_PARTITION_RUN_H

#include "engine/core/internal.h"

schema_status eng_partition_run(eng_exec *e, uint32_t k, const eng_checkpoint *cp, char *err,
                                size_t errlen);
schema_status eng_partition_finish(eng_exec *e, uint32_t k, char *err, size_t errlen);
bool eng_partition_completed(const eng_exec *e, uint32_t from);
void eng_partition_run_reset(struct eng_part_run *r);
void eng_partition_run_free(struct eng_part_run *r);

#endif
