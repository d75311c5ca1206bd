/* SPDX-License-Identifier: Apache-2.0 */
/* case_report.c: lines the conformance runners print alike. See case_report.h. */
#include "tools/conformance/case_report.h"

#include <stddef.h>
#include <stdio.h>

void tool_case_report_unreadable(void *ctx, const char *file, const char *case_name,
                                 const char *reason) {
    (*(size_t *)ctx)++;
    printf("FAIL %s%s%s: unreadable: %s\n", file, case_name ? ": case " : "",
           case_name ? case_name : "", reason);
}
