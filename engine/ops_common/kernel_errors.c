/* SPDX-License-Identifier: Apache-2.0 */
/* kernel_errors.c: operation error messages. See kernel_errors.h. */
#include "engine/ops_common/kernel_errors.h"

#include <stdarg.h>
#include <stdio.h>

static schema_status vfail(eng_op_ctx *c, schema_status s, const char *fmt, va_list ap) {
    if (c->err && c->errlen) {
        int n =
            snprintf(c->err, c->errlen, "%s #%u: ", c->def ? c->def->name : "operation", c->index);
        if (n >= 0 && (size_t)n < c->errlen) vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    }
    return s;
}

schema_status eng_fail(eng_op_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    schema_status s = vfail(c, SCHEMA_INVALID_ARGUMENT, fmt, ap);
    va_end(ap);
    return s;
}

schema_status eng_unsupported(eng_op_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    schema_status s = vfail(c, SCHEMA_UNSUPPORTED, fmt, ap);
    va_end(ap);
    return s;
}
