/* SPDX-License-Identifier: Apache-2.0 */
/* status.c: status names and error messages. See status.h. */
#include "schema/status.h"

#include <stdarg.h>
#include <stdio.h>

void schema_errf(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

schema_status schema_failf(char *err, size_t errlen, schema_status st, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return st;
}

const char *schema_engine_status_name(schema_status s) {
    switch (s) {
    case SCHEMA_OK: return "NONE";
    case SCHEMA_DEVICE_UNAVAILABLE: return "DEVICE_UNAVAILABLE";
    case SCHEMA_GENERAL_FAILURE: return "GENERAL_FAILURE";
    case SCHEMA_OUTPUT_INSUFFICIENT_SIZE: return "OUTPUT_INSUFFICIENT_SIZE";
    case SCHEMA_INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case SCHEMA_MISSED_DEADLINE_TRANSIENT: return "MISSED_DEADLINE_TRANSIENT";
    case SCHEMA_MISSED_DEADLINE_PERSISTENT: return "MISSED_DEADLINE_PERSISTENT";
    case SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT: return "RESOURCE_EXHAUSTED_TRANSIENT";
    case SCHEMA_RESOURCE_EXHAUSTED_PERSISTENT: return "RESOURCE_EXHAUSTED_PERSISTENT";
    case SCHEMA_UNSUPPORTED: return "UNSUPPORTED";
    }
    return "UNKNOWN_STATUS";
}
