/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_event.c: ANeuralNetworksEvent: signalled by the execution that made it, or backed by
 * a sync fence fd. See ndk_event.h. */
#include "client/ndk_event.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

struct ANeuralNetworksEvent {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool done;
    int status;
    int fence; /* a sync fence fd (createFromSyncFenceFd, a fenced execution), else -1 */
    int (*finish)(void *ctx); /* deferred: completes it on the first wait */
    void *ctx;
    atomic_int refs;
};

ANeuralNetworksEvent *ndk_event_new(int refs) {
    ANeuralNetworksEvent *ev = calloc(1, sizeof *ev);
    if (!ev) return NULL;
    pthread_mutex_init(&ev->lock, NULL);
    pthread_cond_init(&ev->cond, NULL);
    ev->fence = -1;
    atomic_init(&ev->refs, refs);
    return ev;
}

void ndk_event_unref(ANeuralNetworksEvent *ev) {
    if (atomic_fetch_sub(&ev->refs, 1) != 1) return;
    if (ev->fence >= 0) close(ev->fence);
    pthread_cond_destroy(&ev->cond);
    pthread_mutex_destroy(&ev->lock);
    free(ev);
}

void ndk_event_signal(ANeuralNetworksEvent *ev, int status) {
    pthread_mutex_lock(&ev->lock);
    ev->status = status;
    ev->done = true;
    pthread_cond_broadcast(&ev->cond);
    pthread_mutex_unlock(&ev->lock);
}

ANeuralNetworksEvent *ndk_event_new_deferred(int fence, int (*finish)(void *ctx), void *ctx) {
    ANeuralNetworksEvent *ev = ndk_event_new(1);
    if (!ev) return NULL;
    ev->fence = fence;
    ev->finish = finish;
    ev->ctx = ctx;
    return ev;
}

int ndk_event_fence(const ANeuralNetworksEvent *ev) {
    return ev->fence;
}

int ndk_event_wait(ANeuralNetworksEvent *ev) {
    if (ev->finish) { /* the first waiter completes it; the others wait for that */
        pthread_mutex_lock(&ev->lock);
        if (!ev->done) {
            ev->status = ev->finish(ev->ctx);
            ev->done = true;
        }
        int status = ev->status;
        pthread_mutex_unlock(&ev->lock);
        return status;
    }
    if (ev->fence >= 0) { /* a sync_file or eventfd is readable once signalled */
        struct pollfd p = {.fd = ev->fence, .events = POLLIN};
        int n;
        while ((n = poll(&p, 1, -1)) < 0 && errno == EINTR)
            continue;
        return n == 1 && (p.revents & POLLIN) && !(p.revents & (POLLERR | POLLNVAL))
                   ? ANEURALNETWORKS_NO_ERROR
                   : ANEURALNETWORKS_OP_FAILED;
    }
    pthread_mutex_lock(&ev->lock);
    while (!ev->done)
        pthread_cond_wait(&ev->cond, &ev->lock);
    int status = ev->status;
    pthread_mutex_unlock(&ev->lock);
    return status;
}

int ANeuralNetworksEvent_wait(ANeuralNetworksEvent *event) {
    if (!event) return ANEURALNETWORKS_UNEXPECTED_NULL;
    return ndk_event_wait(event);
}

void ANeuralNetworksEvent_free(ANeuralNetworksEvent *event) {
    if (!event) return;
    /* As the NDK: free waits for the execution (not for a foreign fence). */
    if (event->fence < 0 || event->finish) ndk_event_wait(event);
    ndk_event_unref(event);
}

int ANeuralNetworksEvent_createFromSyncFenceFd(int syncFenceFd, ANeuralNetworksEvent **event) {
    if (!event) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *event = NULL;
    if (syncFenceFd <= 0) return ANEURALNETWORKS_BAD_DATA;
    int fd = fcntl(syncFenceFd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return errno == EBADF ? ANEURALNETWORKS_BAD_DATA : ANEURALNETWORKS_OP_FAILED;
    ANeuralNetworksEvent *ev = ndk_event_new(1);
    if (!ev) {
        close(fd);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    ev->fence = fd;
    *event = ev;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksEvent_getSyncFenceFd(const ANeuralNetworksEvent *event, int *syncFenceFd) {
    if (!syncFenceFd) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *syncFenceFd = -1;
    if (!event) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (event->fence < 0) return ANEURALNETWORKS_BAD_DATA; /* not backed by a sync fence */
    int fd = fcntl(event->fence, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return ANEURALNETWORKS_OP_FAILED;
    *syncFenceFd = fd;
    return ANEURALNETWORKS_NO_ERROR;
}
