/* SPDX-License-Identifier: Apache-2.0 */
/* admin_call: one request on the daemon's admin bus (nanomsg REQ/REP), as nndctl and
 * nnd-exporter send them. tool_admin_call() connects to url, sends request, and waits up
 * to timeout_ms for the reply, of any size (a status with thousands of clients passes
 * nanomsg's default 1 MiB limit). Returns the malloc'd reply text, NUL-terminated, or
 * NULL with err saying what failed (connect, send, no answer, memory). */
#ifndef TOOL_COMMON_ADMIN_CALL_H
#define TOOL_COMMON_ADMIN_CALL_H

#include <stddef.h>

char *tool_admin_call(const char *url, const char *request, int timeout_ms, char *err,
                      size_t errlen);

#endif
