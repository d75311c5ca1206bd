/* SPDX-License-Identifier: Apache-2.0 */
/* case_report: what the conformance runners (`nndctl conformance`, nnd-conformance-local)
 * print alike.
 *
 * Contract: tool_case_report_unreadable() is an tool_case_skip_fn for tool_cases_load(): a
 * case or file the loader could not read counts as failed (ctx points at a size_t it
 * increments) and gets one line on stdout naming the file, the case and the reason; the
 * run goes on with the rest. */
#ifndef TOOL_CONFORMANCE_CASE_REPORT_H
#define TOOL_CONFORMANCE_CASE_REPORT_H

void tool_case_report_unreadable(void *ctx, const char *file, const char *case_name,
                                 const char *reason);

#endif
