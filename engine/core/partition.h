/* SPDX-License-Identifier: Apache-2.0 */
/* partition: a model's driver partitions (nnd/driver.h), planned at prepare (partition.c;
 * one partition's submodel, preparation and place in the plan: partition_sub.h), run
 * (partition_run.h) and cached (partition_blobs.h).
 *
 * Contract:
 * - eng_partition_model() (prepare, main graph only, before the CPU's claims) offers the
 *   whole main graph once to each driver of m (supported_operations(); IF, WHILE, steps
 *   whose shapes are not all known at prepare, and steps with operands of types outside
 *   the ABI's are unsupported before the call), gives each step to the device with the
 *   lowest figure (engine.h, eng_model_desc.drivers), and prepares each run of
 *   consecutive steps of one driver as one partition: its submodel's constants point into
 *   the plan (its own copies, or the client's pools the prepared model keeps), its
 *   inputs are the tensors it reads from outside, its outputs the ones read outside it
 *   or the model's. UNSUPPORTED (or a fault) from prepare() leaves those steps to the
 *   CPU; another failure fails the preparation. From blobs (m->from_blobs) the
 *   partitions are those the blobs name, rebuilt by cache_load() (prepare() when it
 *   fails). The driver's held_bytes count in the model's footprint. Temporaries inside
 *   a partition are marked driver_owned: no arena space.
 * - eng_partition_run() runs the partition whose first step is k of e's bound run:
 *   SCHEMA_OK (done), ENG_ON_DEVICE (started, engine.h), or the failure with err.
 *   eng_partition_finish() completes one that was started, once its notify came.
 */
#ifndef ENG_CORE_PARTITION_H
#define ENG_CORE_PARTITION_H

#include "engine/backends/drivers/driver_call.h"
#include "engine/core/internal.h"

schema_status eng_partition_model(eng_prepared *p, const eng_model_desc *m, char *err,
                                  size_t errlen);
/* Whether step st of p may be offered to a driver at all. */
bool eng_partition_offerable(const eng_prepared *p, const eng_step *st);
/* A driver's answer for the whole main graph of p, per step (false where not offerable). */
void eng_partition_supported(const eng_prepared *p, eng_driver_dev *dev, bool *by_step);

#endif
