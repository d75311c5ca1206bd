/* admin.c: see admin.h. */
#include "admin.h"

#include <stdio.h>
#include <string.h>

#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>

#include "paths.h"

cJSON *nnd_test_admin(const nnd_test_daemon *d, const char *cmd) {
    char url[512], req[128];
    if (!nnd_admin_url(d->state_dir, url, sizeof url)) return NULL;
    int sock = nn_socket(AF_SP, NN_REQ);
    if (sock < 0) return NULL;
    int timeout = 10000;
    nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout, sizeof timeout);
    cJSON *reply = NULL;
    char *buf = NULL;
    int n = -1;
    snprintf(req, sizeof req, "{\"cmd\":\"%s\"}", cmd);
    if (nn_connect(sock, url) >= 0 && nn_send(sock, req, strlen(req), 0) == (int)strlen(req))
        n = nn_recv(sock, &buf, NN_MSG, 0);
    if (n > 0) reply = cJSON_ParseWithLength(buf, (size_t)n);
    if (buf) nn_freemsg(buf);
    nn_close(sock);
    if (!reply) fprintf(stderr, "admin \"%s\": no answer from %s\n", cmd, url);
    return reply;
}
