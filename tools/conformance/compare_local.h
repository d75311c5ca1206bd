/* SPDX-License-Identifier: Apache-2.0 */
/* compare_local: one case's model on the engine's two kernel sets in this process, the
 * reference kernels and the fast paths (NND_REFERENCE_KERNELS=1 and 0 at each prepare), to
 * find where they part (nnd-conformance-local --compare).
 *
 * Contract: tool_compare_local() runs the case's first example twice with every
 * intermediate tensor as an output, once per kernel set, and prints the first operation
 * whose outputs differ between them (a difference there may come from upstream). Then it
 * runs each operation alone on both kernel sets, fed the reference's own tensors, and
 * prints every operation whose outputs differ by more than max_steps steps (8-bit and
 * 16-bit quantized outputs; float outputs: more than 1e-4 relative, over 1; others: any
 * difference), and with verbose every operation that differs at all. It ends with the
 * largest difference per operation. Returns 0 when no operation drifts past those bounds,
 * 1 when one does, 2 when the case cannot be compared (no example, dynamic shapes, a
 * model the engine refuses), each with a line saying so. It leaves NND_REFERENCE_KERNELS
 * unset. */
#ifndef TOOL_CONFORMANCE_COMPARE_LOCAL_H
#define TOOL_CONFORMANCE_COMPARE_LOCAL_H

#include <stdbool.h>

#include "tools/conformance/case_record.h"

int tool_compare_local(const tool_case *c, double max_steps, bool verbose);

#endif
