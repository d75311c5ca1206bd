/* SPDX-License-Identifier: Apache-2.0 */
/* conformance: the conformance-vector library of tools/conformance, one include for its
 * users (nndctl, nnd-conformance-local, the tests, the fuzz seeds):
 * - case_load.h: vectors into cases (wire models and example tensors);
 * - case_judge.h: an output against the pass criteria;
 * - schema/hal_names.h: HAL names of operation and operand type codes, element sizes;
 * - case_guard.h: tensors that end at a guard page (nnd-conformance-local --guard-pages);
 * - case_pool.h: the constants the vectors mark wasConstantReference, in a memory pool;
 * - case_report.h: the lines the runners print alike.
 * Each header states its own contract. */
#ifndef TOOL_CONFORMANCE_CONFORMANCE_H
#define TOOL_CONFORMANCE_CONFORMANCE_H

#include "tools/conformance/case_guard.h"
#include "tools/conformance/case_judge.h"
#include "tools/conformance/case_load.h"
#include "schema/hal_names.h"
#include "tools/conformance/case_pool.h"
#include "tools/conformance/case_report.h"

#endif
