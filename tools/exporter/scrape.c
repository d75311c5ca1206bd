/* SPDX-License-Identifier: Apache-2.0 */
/* scrape.c: the admin bus's status as Prometheus text. See scrape.h. */
#include "tools/exporter/scrape.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/prom.h"
#include "nnd/nnd.h"
#include "proto/paths.h"
#include "tools/common/admin_call.h"

/* The admin bus's url: from state_dir, else the daemon's Hello, else the default. */
static const char *admin_url(const exp_target *t, char *url, size_t len) {
    char dir[512];
    const char *d = t->state_dir;
    if (!d) {
        char err[256];
        nnd_client *c = nnd_client_connect(t->socket_path, "nnd-exporter", err, sizeof err);
        const char *named = c ? nnd_client_daemon_state_dir(c) : "";
        if (*named && (size_t)snprintf(dir, sizeof dir, "%s", named) < sizeof dir)
            d = dir;
        else
            d = proto_default_state_dir(dir, sizeof dir);
        nnd_client_close(c);
    }
    return d && proto_admin_url(d, url, len) ? url : NULL;
}

char *exp_scrape(const exp_target *t, char *err, size_t errlen) {
    char url[600];
    if (!admin_url(t, url, sizeof url)) {
        snprintf(err, errlen, "state directory path too long");
        return NULL;
    }
    char *text = tool_admin_call(url, "{\"cmd\":\"status\"}", t->timeout_ms, err, errlen);
    if (!text) return NULL;
    cJSON *j = cJSON_Parse(text);
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(j, "ok");
    char *unmapped = NULL, *prom = NULL;
    if (!cJSON_IsTrue(ok))
        snprintf(err, errlen, "the admin bus %s answered no status: %.200s", url, text);
    else if (!(prom = met_prom_render(j, &unmapped)))
        snprintf(err, errlen, "out of memory rendering the status");
    static char *said; /* the last list named, so a steady mismatch is said once */
    if (unmapped && (!said || strcmp(said, unmapped))) {
        fprintf(stderr, "nnd-exporter: status fields not exported: %s\n", unmapped);
        free(said);
        said = unmapped;
        unmapped = NULL;
    }
    free(unmapped);
    cJSON_Delete(j);
    free(text);
    return prom;
}
