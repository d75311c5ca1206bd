/* SPDX-License-Identifier: Apache-2.0 */
/* partition_sub: one driver partition (partition.h): the submodel of a run of a plan's
 * steps as the driver sees it (nnd_driver_model: constants pointing into the plan, inputs
 * the tensors it reads from outside, outputs those read outside it or the model's), its
 * preparation (prepare(), or cache_load() from blobs, prepare() when that fails; the
 * driver's held_bytes in the model's footprint), its place in the plan (its first step
 * runs it, the others are members; temporaries inside are driver_owned) and its release. */
#ifndef ENG_CORE_PARTITION_SUB_H
#define ENG_CORE_PARTITION_SUB_H

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

/* The submodel of steps [first, first + n) of p into *out, its storage owned by *out
 * (eng_submodel_free()); false when out of memory. */
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
void eng_partition_release(void *state);

#endif
