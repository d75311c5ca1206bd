/* SPDX-License-Identifier: Apache-2.0 */
/* status: status names and error messages, for every module that answers with a status
 * and a sentence (the engine, the daemon, storage, libnnd).
 *
 * Contract: schema_errf() writes the formatted message to err (nothing when err is NULL or
 * errlen 0); schema_failf() does the same and returns st. Messages are cut to errlen; a
 * caller's buffer of SCHEMA_ERR_LEN holds every message the engine writes whole or cut.
 * schema_engine_status_name() names a status as the HAL's ErrorStatus does ("NONE" for
 * SCHEMA_OK), "UNKNOWN_STATUS" for any other value. */
#ifndef SCHEMA_STATUS_H
#define SCHEMA_STATUS_H

#include <stddef.h>

#include "schema/codes.h"

#define SCHEMA_ERR_LEN 256

void schema_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
schema_status schema_failf(char *err, size_t errlen, schema_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

const char *schema_engine_status_name(schema_status s);

#endif
