/* SPDX-License-Identifier: Apache-2.0 */
/* admin_call: one request on the admin bus (admin_call.h). */
#include "tools/common/admin_call.h"

#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tool_admin_call(const char *url, const char *request, int timeout_ms, char *err,
                      size_t errlen) {
    int s = nn_socket(AF_SP, NN_REQ);
    if (s < 0) {
        snprintf(err, errlen, "nn_socket: %s", nn_strerror(nn_errno()));
        return NULL;
    }
    int unlimited = -1;
    nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVMAXSIZE, &unlimited, sizeof unlimited);
    nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    nn_setsockopt(s, NN_SOL_SOCKET, NN_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
    char *out = NULL;
    void *msg = NULL;
    int n;
    if (nn_connect(s, url) < 0) {
        snprintf(err, errlen, "cannot connect to %s: %s", url, nn_strerror(nn_errno()));
    } else if (nn_send(s, request, strlen(request), 0) < 0) {
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
