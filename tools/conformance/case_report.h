/* case_report: what the conformance runners (`nndctl conformance`, nnd-conformance-local)
 * print alike.
 *
 * Contract: nnd_case_report_unreadable() is an nnd_case_skip_fn for nnd_cases_load(): a
 * case or file the loader could not read counts as failed (ctx points at a size_t it
 * increments) and gets one line on stdout naming the file, the case and the reason; the
 * run goes on with the rest. */
#ifndef NND_CASE_REPORT_H
#define NND_CASE_REPORT_H

void nnd_case_report_unreadable(void *ctx, const char *file, const char *case_name,
                                const char *reason);

#endif
