/* SPDX-License-Identifier: Apache-2.0 */
/* host_reply: the driver host's replies (host.h), sent whole under one lock: a started
 * execution completes from the driver's threads while the serving thread replies too. */
#include <pthread.h>

#include "driverhost/host.h"

static pthread_mutex_t g_send_lock = PTHREAD_MUTEX_INITIALIZER;

void dhh_reply(dhh_host *h, uint32_t call, int status, const char *err, const dh_wbuf *extra) {
    dh_wbuf w = {0};
    dh_reply_head_put(&w, status, err);
    if (extra) dh_put(&w, extra->p, extra->len);
    dh_msg_header hd = {.type = DH_MSG_REPLY, .call = call};
    pthread_mutex_lock(&g_send_lock);
    /* A failed send means the proxy is gone: the next receive ends the host. */
    if (!w.oom) dh_send(h->sock, &hd, w.p, w.len, NULL, 0, -1, 0);
    pthread_mutex_unlock(&g_send_lock);
    dh_wbuf_free(&w);
}
