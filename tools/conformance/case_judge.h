/* SPDX-License-Identifier: Apache-2.0 */
/* case_judge: one output of a case's example against the pass criteria of
 * the conformance vectors' README.md, tests/vectors/conformance.tar.xz.
 *
 * Contract: tool_case_judge() checks the dimensions, then the values of one output, with
 * the README's tolerances (float32 absolute and relative, wider when the case relaxes
 * float32 to float16; float16; one step for quantized types, or the case's quant_steps when it sets
 * set; exact otherwise). Outputs in ignored_outputs pass on dimensions alone, except
 * RANDOM_MULTINOMIAL's, which are judged by their class distribution against the softmax of the
 * example's first input.
 *
 * A case with expect_failure has no outputs to judge: it passes when the driver refuses
 * it with an error status at any step (supported operations, prepare, execution), and
 * fails when every step succeeds. tool_case_refusal_passes() judges the refusal: a case
 * with infinite_loop_timeout passes only on MISSED_DEADLINE_TRANSIENT or _PERSISTENT (the
 * loop timeout stopped it), any other on any error. Runners execute such a case with
 * TOOL_CASE_LOOP_TIMEOUT_NS as its loop timeout and judge the time it took with
 * tool_case_judge_endless(). A runner that finds an operation
 * unsupported skips the case, as it skips any other: that says nothing about validity. */
#ifndef TOOL_CONFORMANCE_CASE_JUDGE_H
#define TOOL_CONFORMANCE_CASE_JUDGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tools/conformance/case_load.h"

/* Judges one output against the README's criteria; returns true on pass, else writes a
 * reason (element index, expected, actual, or dimension mismatch) into why. actual holds
 * actual_bytes in expected->type's format; actual_dims are the dimensions the driver
 * reported. */
bool tool_case_judge(const tool_case *c, const tool_case_tensor *expected, const void *actual,
                     size_t actual_bytes, const uint32_t *actual_dims, uint32_t actual_rank,
                     char *why, size_t whylen);

/* A refusal of an expect_failure case: true when it passes, else the reason in why.
 * missed_deadline: the refusal's status was MISSED_DEADLINE_TRANSIENT or _PERSISTENT. */
bool tool_case_refusal_passes(const tool_case *c, bool missed_deadline, char *why, size_t whylen);

/* Endless loops (infinite_loop_timeout): runners execute them with this loop timeout, and
 * the execution must end no sooner than it and at most TOOL_CASE_LOOP_SLACK_NS later. */
#define TOOL_CASE_LOOP_TIMEOUT_NS 100000000ull  /* 100 ms */
#define TOOL_CASE_LOOP_SLACK_NS   1000000000ull /* 1 s, for a busy machine */
/* One execution of an endless-loop case, run with loop timeout timeout_ns, that ended
 * after elapsed_ns: true when it ended with MISSED_DEADLINE_TRANSIENT or _PERSISTENT
 * (missed_deadline) within the bounds above; else why says how it went wrong. */
bool tool_case_judge_endless(bool missed_deadline, uint64_t elapsed_ns, uint64_t timeout_ns,
                             char *why, size_t whylen);

#endif
