/* SPDX-License-Identifier: Apache-2.0 */
/* partition: a model's driver partitions (nnd/driver.h), planned at prepare (partition.c),
 * run (partition_run.c) and cached (partition_blobs.c).
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
 *   NND_OK (done), ENG_ON_DEVICE (started, engine.h), or the failure with err.
 *   eng_partition_finish() completes one that was started, once its notify came.
 */
#ifndef NND_PARTITION_H
#define NND_PARTITION_H

#include "engine/backends/drivers/driver_call.h"
#include "engine/core/internal.h"

typedef struct eng_partition {
    eng_driver_dev *dev;
    void *prepared; /* the driver's */
    uint64_t held_bytes;
    uint32_t first, n_steps; /* steps of the plan */
    uint32_t n_in, n_out;
    uint32_t *in, *out; /* plan operand indexes, in the order execute() gets them */
} eng_partition;

schema_status eng_partition_model(eng_prepared *p, const eng_model_desc *m, char *err,
                                  size_t errlen);
/* Whether step st of p may be offered to a driver at all. */
bool eng_partition_offerable(const eng_prepared *p, const eng_step *st);
/* A driver's answer for the whole main graph of p, per step (false where not offerable). */
void eng_partition_supported(const eng_prepared *p, eng_driver_dev *dev, bool *by_step);
void eng_partition_release(void *state);
schema_status eng_partition_run(eng_exec *e, uint32_t k, const eng_checkpoint *cp, char *err,
                                size_t errlen);
schema_status eng_partition_finish(eng_exec *e, uint32_t k, char *err, size_t errlen);
void eng_partition_run_free(struct eng_part_run *r);
/* A fresh run: a completion left over from a run that did not go on is forgotten. */
void eng_partition_run_reset(struct eng_part_run *r);
/* Whether e's partition at step `from` was started and has completed (its notify came). */
bool eng_partition_completed(const eng_exec *e, uint32_t from);

/* partition_blobs.c: a partition's blob (engine.h eng_step_blob) read back: its steps and
 * its driver's blobs (at most max, pointing into data); false when malformed. */
bool eng_partition_blob_parse(const uint8_t *data, size_t len, uint32_t *n_steps,
                              nnd_driver_blob *blobs, uint32_t *n_blobs, uint32_t max);

/* partition_sub.c: the submodel of steps [first, first + n) of p into *out, its storage
 * owned by *out (eng_submodel_free()); false when out of memory. */
typedef struct eng_submodel {
    nnd_driver_model m;
    nnd_driver_operand *operands;
    nnd_driver_operation *ops;
    uint32_t *lists;
    uint32_t *map; /* plan operand -> submodel operand, UINT32_MAX: not in it */
    uint32_t *in, *out;
} eng_submodel;
bool eng_submodel_make(const eng_prepared *p, uint32_t first, uint32_t n, eng_submodel *out);
void eng_submodel_free(eng_submodel *s);
/* prepare() or, with blobs, cache_load() of steps [first, first + n) of p on dev into a new
 * partition (*out); the driver's status, or -1 (fault, out of memory). */
int eng_partition_prepare(eng_prepared *p, const eng_model_desc *m, eng_driver_dev *dev,
                          uint32_t first, uint32_t n, const nnd_driver_blob *blobs,
                          uint32_t n_blobs, eng_partition **out, char *err, size_t errlen);
/* Steps first.. of p become partition part's (its first step runs it). */
void eng_partition_install(eng_prepared *p, eng_partition *part);

#endif
