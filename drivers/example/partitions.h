/* SPDX-License-Identifier: Apache-2.0 */
/* partitions: the example driver's live prepared partitions, so that allocate() (memory.c)
 * can check the roles it gets (nnd/driver.h, device memory): prepare() and cache_load()
 * add each one with its number of inputs and outputs, release() drops it, close() clears
 * the list. Safe from any thread. */
#ifndef EXAMPLE_PARTITIONS_H
#define EXAMPLE_PARTITIONS_H

#include <stdbool.h>
#include <stdint.h>

/* false when out of memory (the caller then fails the prepare). */
bool ex_partitions_add(const void *prepared, uint32_t n_inputs, uint32_t n_outputs);
void ex_partitions_drop(const void *prepared);
/* Whether prepared is a live partition of this driver with input (output) index. */
bool ex_partitions_has_io(const void *prepared, bool output, uint32_t index);
/* Forgets them all (close()). */
void ex_partitions_clear(void);

#endif
