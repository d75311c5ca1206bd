/* SPDX-License-Identifier: Apache-2.0 */
/* partition_blobs: driver partitions as cache blobs (engine.h eng_prepared_blobs(): one
 * eng_step_blob per partition, its driver's cache_save() blobs with the partition's
 * extent), and such a blob read back: eng_partition_blob_parse() gives its steps and its
 * driver's blobs (at most max, pointing into data), false when malformed. */
#ifndef ENG_CORE_PARTITION_BLOBS_H
#define ENG_CORE_PARTITION_BLOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd/driver.h"

bool eng_partition_blob_parse(const uint8_t *data, size_t len, uint32_t *n_steps,
                              nnd_driver_blob *blobs, uint32_t *n_blobs, uint32_t max);

#endif
