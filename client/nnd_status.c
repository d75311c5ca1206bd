/* SPDX-License-Identifier: Apache-2.0 */
/* nnd_status.c: status names (nnd_status_name, nnd/nnd.h) and the message writer every
 * libnnd file uses (cli_set_err, client_internal.h); apart so that they call no file back. */
#include <stdarg.h>
#include <stdio.h>

#include "client/client_internal.h"
#include "nnd.pb-c.h"
#include "nnd/nnd.h"

void cli_set_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *nnd_status_name(int status) {
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&nnd__error_status__descriptor, status);
    return v ? v->name : "UNKNOWN";
}
