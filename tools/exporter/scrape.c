/* SPDX-License-Identifier: Apache-2.0 */
/* scrape.c: the admin bus's status as Prometheus text. See scrape.h. */
#include "tools/exporter/scrape.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/prom.h"
#include "nnd/nnd.h"
#include "proto/paths.h"

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

static char *admin_status(const char *url, int timeout_ms, char *err, size_t errlen) {
    int s = nn_socket(AF_SP, NN_REQ);
    if (s < 0) {
        snprintf(err, errlen, "nn_socket: %s", nn_strerror(nn_errno()));
        return NULL;
    }
    int unlimited = -1; /* a status with thousands of clients passes nanomsg's 1 MiB */
    nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVMAXSIZE, &unlimited, sizeof unlimited);
    nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    nn_setsockopt(s, NN_SOL_SOCKET, NN_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
    static const char req[] = "{\"cmd\":\"status\"}";
    char *out = NULL;
    void *msg = NULL;
    int n;
    if (nn_connect(s, url) < 0) {
        snprintf(err, errlen, "cannot connect to %s: %s", url, nn_strerror(nn_errno()));
    } else if (nn_send(s, req, sizeof req - 1, 0) < 0) {
        snprintf(err, errlen, "cannot send to %s: %s", url, nn_strerror(nn_errno()));
    } else if ((n = nn_recv(s, &msg, NN_MSG, 0)) < 0) {
        int e = nn_errno();
        snprintf(err, errlen, "no answer from the daemon's admin bus %s: %s", url,
                 e == ETIMEDOUT ? "timed out" : nn_strerror(e));
    } else if ((out = malloc((size_t)n + 1))) {
        memcpy(out, msg, (size_t)n);
        out[n] = 0;
    } else {
        snprintf(err, errlen, "out of memory");
    }
    if (msg) nn_freemsg(msg);
    nn_close(s);
    return out;
}

char *exp_scrape(const exp_target *t, char *err, size_t errlen) {
    char url[600];
    if (!admin_url(t, url, sizeof url)) {
        snprintf(err, errlen, "state directory path too long");
        return NULL;
    }
    char *text = admin_status(url, t->timeout_ms, err, errlen);
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
