/* SPDX-License-Identifier: Apache-2.0 */
/* case_pool: constants in a memory pool, as the upstream tests placed some of them. The
 * vectors mark such operands "wasConstantReference"; the loader keeps them inline
 * (CONSTANT_COPY) and records the marks, and a runner that wants the pool path asks for
 * the model with those constants moved into one pool.
 *
 * Contract:
 * - case_pool_marks_from_json() records, on c, every operand of the case's "model" object
 *   (its main graph and each of its "referenced" subgraphs) that carries
 *   "wasConstantReference": true and is CONSTANT_COPY in c->model. Returns 0, or -1 when
 *   out of memory (err says so).
 * - tool_case_pooled_model() makes a copy of c->model in which every marked operand is a
 *   CONSTANT_REFERENCE of pool 0, at a 64-byte aligned offset of *pool (malloc'd, *pool_len
 *   bytes, holding those constants), and whose pool list is one POOL_MEMFD pool of
 *   *pool_len bytes with fd index 0, for the runner to back with memory holding *pool (a
 *   memfd for the daemon and the NDK; the bytes themselves in process). The copy is freed
 *   with nnd__model__free_unpacked(copy, NULL), *pool with free(). Returns the copy; NULL
 *   with *pool NULL when the case marks nothing, or when out of memory.
 * - tool_case_model_copy() makes a deep copy of m through the wire form, every part
 *   malloc'd as the loader's are (nnd__model__free_unpacked(copy, NULL) frees it); NULL
 *   when out of memory.
 */
#ifndef TOOL_CONFORMANCE_CASE_POOL_H
#define TOOL_CONFORMANCE_CASE_POOL_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/conformance/case_record.h"

int case_pool_marks_from_json(const cJSON *model, tool_case *c, char *err, size_t errlen);
Nnd__Model *tool_case_model_copy(const Nnd__Model *m);
Nnd__Model *tool_case_pooled_model(const tool_case *c, uint8_t **pool, size_t *pool_len);

#endif
