/* SPDX-License-Identifier: Apache-2.0 */
/* scrape: one scrape of the daemon, as `nndctl metrics` does it: the admin bus's status
 * reply rendered as Prometheus text (metrics/prom.h).
 *
 * Contract:
 * - exp_scrape() asks the admin bus in state_dir (NULL: the directory the daemon at
 *   socket_path names in its Hello, else the default state directory) for "status", within
 *   timeout_ms, and returns the text, malloc'd; NULL with err set (naming the bus path)
 *   when the daemon does not answer or its reply is not a status.
 * - Status fields the renderer does not know are left out of the text and named on stderr
 *   (once per distinct list), so a daemon newer than the exporter never fails a scrape.
 */
#ifndef TOOL_EXPORTER_SCRAPE_H
#define TOOL_EXPORTER_SCRAPE_H

#include <stddef.h>

typedef struct exp_target {
    const char *socket_path; /* NULL: the default socket */
    const char *state_dir;   /* NULL: ask the daemon */
    int timeout_ms;
} exp_target;

char *exp_scrape(const exp_target *t, char *err, size_t errlen);

#endif
