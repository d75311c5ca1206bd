/* SPDX-License-Identifier: Apache-2.0 */
/* case_probe: a case's model taken apart to find where two kernel sets or two devices part:
 * the whole model with every intermediate tensor as an output, or one operation alone.
 *
 * Contract:
 * - tool_probe_all() copies model m (main graph) and makes every operation's outputs model
 *   outputs too: the copy's outputs are m's own, in order, then each operation's outputs,
 *   in operation order, that are not outputs already. (*writer)[j] is the operation that
 *   writes output j (malloc'd, n_output_indexes entries; UINT32_MAX for an output that is
 *   also a model input). NULL when out of memory or when m has no operations. A fold
 *   that needs a temporary (engine/core/rewrites.h) does not happen in such a copy, on
 *   any device alike: its last bits may differ from the model's own run there.
 * - tool_probe_op() builds a model of operation k of m alone: its operands are k's inputs
 *   then its outputs, each once; an input another operation or the caller writes (not a
 *   constant) becomes a model input, the outputs model outputs. (*from)[i] is the operand
 *   of m that model input i stands for (malloc'd). Constants keep their values and
 *   locations (the pools of m, operand_values copied). NULL for IF and WHILE, or when out
 *   of memory.
 * - Both copies are freed with nnd__model__free_unpacked(copy, NULL).
 * - tool_probe_bytes() is the size of operand o's data from its dimensions; 0 when one is
 *   unknown (0).
 * - tool_probe_compare() compares n elements of a and b, both in o's type: for 8-bit and
 *   16-bit quantized types the difference counts steps (stored values), for floats the
 *   absolute difference, for others any difference. It fills d with the largest difference,
 *   where it is (the first such element) and its two values, and how many elements differ.
 *   tool_probe_is_quant() says whether o's differences count steps. */
#ifndef TOOL_CONFORMANCE_CASE_PROBE_H
#define TOOL_CONFORMANCE_CASE_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd.pb-c.h"

Nnd__Model *tool_probe_all(const Nnd__Model *m, uint32_t **writer);
Nnd__Model *tool_probe_op(const Nnd__Model *m, size_t k, uint32_t **from);
size_t tool_probe_bytes(const Nnd__Operand *o);
bool tool_probe_is_quant(const Nnd__Operand *o);

typedef struct tool_probe_diff {
    double max;    /* largest difference: steps, or absolute for floats */
    size_t at;     /* the first element with it */
    double a, b;   /* the two values there (stored values for quantized types) */
    size_t differ; /* elements that differ at all */
    size_t count;  /* elements compared */
} tool_probe_diff;
void tool_probe_compare(const Nnd__Operand *o, const void *a, const void *b, size_t n,
                        tool_probe_diff *d);

#endif
