/* SPDX-License-Identifier: Apache-2.0 */
/* wakeup.c: an eventfd the loop polls. See wakeup.h. */
#include "daemon/base/wakeup.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void on_readable(uv_poll_t *p, int status, int events) {
    (void)status, (void)events;
    srv_wakeup *w = p->data;
    uint64_t n;
    while (read(w->fd, &n, sizeof n) < 0 && errno == EINTR) {
    }
    /* Cleared after the read: a signal from here on writes again, and one before it is
     * served by the cb below. */
    atomic_store(&w->pending, false);
    w->cb(w);
}

int srv_wakeup_init(srv_wakeup *w, uv_loop_t *loop, srv_wakeup_fn cb, void *data) {
    w->cb = cb;
    w->closed = NULL;
    w->data = data;
    atomic_init(&w->pending, false);
    w->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->fd < 0) return -1;
    if (uv_poll_init(loop, &w->poll, w->fd) < 0) {
        close(w->fd);
        w->fd = -1;
        return -1;
    }
    w->poll.data = w;
    uv_poll_start(&w->poll, UV_READABLE, on_readable);
    return 0;
}

void srv_wakeup_signal(srv_wakeup *w) {
    if (atomic_exchange(&w->pending, true)) return;
    uint64_t one = 1;
    while (write(w->fd, &one, sizeof one) < 0 && errno == EINTR) {
    }
}

static void on_closed(uv_handle_t *h) {
    srv_wakeup *w = h->data;
    close(w->fd);
    w->fd = -1;
    if (w->closed) w->closed(w);
}

void srv_wakeup_close(srv_wakeup *w, srv_wakeup_fn closed) {
    w->closed = closed;
    uv_poll_stop(&w->poll);
    uv_close((uv_handle_t *)&w->poll, on_closed);
}
