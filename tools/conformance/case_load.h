/* SPDX-License-Identifier: Apache-2.0 */
/* case_load: loads the NN HAL conformance vectors (the conformance vectors' README.md,
 * tests/vectors/conformance.tar.xz) into cases (case_record.h): a wire model each, with its
 * examples' tensors.
 *
 * Contract:
 * - tool_cases_load() appends every case of a JSON file, or of every *.json below a folder
 *   (sorted by path), to *cases. A case it cannot read (an operation or operand type it does
 *   not know, a malformed field) or a whole file it cannot read (not JSON, no "cases") is
 *   handed to on_skip with the file, the case name (NULL for a whole file) and the reason,
 *   and the load goes on with the rest. With on_skip NULL the first such failure ends the
 *   load instead. It returns -1 with err set when the path itself cannot be read (or, strict,
 *   at that first failure); cases loaded before stay appended.
 * - case.model is an Nnd__Model whose every part is malloc'd on its own, so
 *   nnd__model__free_unpacked(model, NULL) releases it (tool_cases_free does). Operand and
 *   operation names are mapped to their numeric codes; CONSTANT_COPY values ride inline in
 *   operand_values.
 * - Tensor data is encoded in the operand's own byte format: float32, _Float16 for FP16,
 *   int32, uint8 (QUANT8_ASYMM, BOOL8 as 0/1), int8 (QUANT8_SYMM*, QUANT8_ASYMM_SIGNED),
 *   int16 (QUANT16_SYMM), uint16 (QUANT16_ASYMM). An example input with no data is an
 *   omitted input (count 0, data NULL): pass it with has_no_value. A zero-sized output has
 *   count 0 and bytes 0 whatever placeholder data the file holds.
 * - The fields of the HAL 1.3 and later folders: expect_failure, infinite_loop_timeout,
 *   min_supported_version and folder. A file without them (V1_0 to V1_2) reads as false,
 *   TOOL_CASE_VERSION_UNKNOWN and "". A min_supported_version the loader does not know
 *   makes the case unreadable. How a runner judges the flags: case_judge.h.
 * - Control flow (HAL 1.3): a model's "referenced" subgraphs come as Model.referenced, the
 *   SUBGRAPH type and lifetime as their codes; the operands marked wasConstantReference
 *   are listed in pooled (case_pool.h).
 */
#ifndef TOOL_CONFORMANCE_CASE_LOAD_H
#define TOOL_CONFORMANCE_CASE_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/conformance/case_record.h"

typedef void (*tool_case_skip_fn)(void *ctx, const char *file, const char *case_name,
                                  const char *reason);
int tool_cases_load(const char *path, tool_case **cases, size_t *n_cases, tool_case_skip_fn on_skip,
                    void *ctx, char *err, size_t errlen);

#endif
