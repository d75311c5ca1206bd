/* SPDX-License-Identifier: Apache-2.0 */
/* http: the exporter's HTTP side, as small as a scrape needs.
 *
 * Contract:
 * - exp_http_listen() opens a listening TCP socket on "HOST:PORT" ("127.0.0.1:9464",
 *   "[::1]:9464", "localhost:9464"); -1 with err set when it cannot.
 * - exp_http_serve() accepts and answers one connection at a time, forever (until *stop
 *   becomes true or accept() fails for good): it reads one request of at most
 *   EXP_HTTP_MAX_REQUEST bytes within EXP_HTTP_TIMEOUT_MS, answers `GET /metrics` (a query
 *   string is ignored) with 200 and what page() returns (text/plain; version=0.0.4), or
 *   503 with page()'s error when it returns NULL; `HEAD` as GET without the body; any
 *   other path 404, another method 405, a malformed or oversized request 400 / 431; then
 *   closes the connection. A slow or silent client costs at most the timeout, never the
 *   next scrape's answer. Writes never raise SIGPIPE.
 */
#ifndef TOOL_EXPORTER_HTTP_H
#define TOOL_EXPORTER_HTTP_H

#include <signal.h>
#include <stddef.h>

#define EXP_HTTP_MAX_REQUEST 8192
#define EXP_HTTP_TIMEOUT_MS  5000

/* The page: malloc'd text, or NULL with err set (the daemon unreachable). */
typedef char *(*exp_page_fn)(void *ctx, char *err, size_t errlen);

int exp_http_listen(const char *addr, char *err, size_t errlen);
int exp_http_serve(int listen_fd, exp_page_fn page, void *ctx, volatile sig_atomic_t *stop);

#endif
