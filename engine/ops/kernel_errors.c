/* kernel_errors.c: operation error messages. See kernel_errors.h. */
#include "kernel_errors.h"

#include <stdarg.h>
#include <stdio.h>

static nnd_status vfail(nnd_op_ctx *c, nnd_status s, const char *fmt, va_list ap) {
    if (c->err && c->errlen) {
        int n =
            snprintf(c->err, c->errlen, "%s #%u: ", c->def ? c->def->name : "operation", c->index);
        if (n >= 0 && (size_t)n < c->errlen) vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    }
    return s;
}

nnd_status nnd_fail(nnd_op_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    nnd_status s = vfail(c, NND_INVALID_ARGUMENT, fmt, ap);
    va_end(ap);
    return s;
}

nnd_status nnd_unsupported(nnd_op_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    nnd_status s = vfail(c, NND_UNSUPPORTED, fmt, ap);
    va_end(ap);
    return s;
}
