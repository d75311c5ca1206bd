/* SPDX-License-Identifier: Apache-2.0 */
/* case_tensor: example tensors in their operands' own byte formats, both ways. Internal to
 * tools/conformance.
 *
 * Contract:
 * - case_tensors_from_json() fills *out with one tensor per element of the JSON array a
 *   (an example's "inputs" or "outputs"), each taking type, scale and zero point from the
 *   model operand its index names in g. Values are encoded as case_load.h says. Returns
 *   0, or -1 with err naming the problem (left as it was when memory runs out); *out and
 *   *n then hold the tensors built so far, for the caller to free with the case.
 * - case_element_value() reads element i of data in type's byte format as a double.
 */
#ifndef TOOL_CONFORMANCE_CASE_TENSOR_H
#define TOOL_CONFORMANCE_CASE_TENSOR_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/conformance/case_record.h"

int case_tensors_from_json(const cJSON *a, const Nnd__Subgraph *g, bool is_input,
                           tool_case_tensor **out, size_t *n, char *err, size_t errlen);
double case_element_value(int32_t type, const void *base, size_t i);

#endif
