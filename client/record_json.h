/* SPDX-License-Identifier: Apache-2.0 */
/* record_json: the parts of a recorded case in the conformance vectors' JSON
 * (the conformance vectors' README.md, tests/vectors/conformance.tar.xz), built with cJSON.
 * Internal to libnnd (record.c).
 *
 * Contract:
 * - rec_read() reads len bytes at offset off of fd: pread, or a read-only mapping for fds
 *   pread cannot read (dma-bufs). Returns 0, or -1.
 * - rec_model_json() is the "model" object of a wire model: operand and operation names as
 *   the vectors spell them, the numberOfConsumers of each operand, every subgraph it
 *   references. CONSTANT_REFERENCE constants are read from their pools (pool_fds as the
 *   model's pools name them) and written as CONSTANT_COPY values at 8-byte aligned offsets
 *   of operandValues, marked "wasConstantReference". NULL with why set when the model
 *   cannot be written: an extension operand type or operation, extension parameters, a
 *   pool that cannot be read, a value outside its pool or outside operandValues.
 * - rec_min_version() is the oldest interface version ("V1_0" ... "AIDL_V3") that defines
 *   every operation and operand type of the model and its relaxed flag.
 * - rec_tensor_json() is {"index", "dimensions", "data"} for count elements of type at data
 *   (count 0: "data": []), in the vectors' spelling: numbers in the operand's own type,
 *   booleans for BOOL8. Infinities are written 1e999 and -1e999, which JSON readers (cJSON
 *   among them) read back as infinities. NaN has no JSON form: it is written 0 and *has_nan
 *   set, for the caller to leave that output uncompared. NULL when out of memory or the type
 *   has no element size.
 */
#ifndef CLI_RECORD_JSON_H
#define CLI_RECORD_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd/nnd_wire.h"

__attribute__((visibility("hidden"))) int rec_read(int fd, uint64_t off, size_t len, void *dst);
__attribute__((visibility("hidden"))) cJSON *
rec_model_json(const Nnd__Model *m, const int *pool_fds, size_t n_fds, char *why, size_t whylen);
__attribute__((visibility("hidden"))) const char *rec_min_version(const Nnd__Model *m);
__attribute__((visibility("hidden"))) cJSON *rec_tensor_json(uint32_t index, int32_t type,
                                                             const uint32_t *dims, size_t rank,
                                                             const void *data, size_t count,
                                                             bool *has_nan);

#endif
