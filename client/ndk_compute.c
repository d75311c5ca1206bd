/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_compute.c: ANeuralNetworksExecution_compute, startCompute, and burstCompute's
 * computation (ndk_burst.c): one Execute or BurstExecute on the compilation's connection,
 * which carries the requests of every thread at once.
 *
 * startCompute runs the same synchronous call on a detached thread that signals the
 * event. A reusable execution computes through a daemon burst of its own from its second
 * computation on, so that the daemon keeps its memory mapped between computations. See
 * ndk_execution.h. */
#include <pthread.h>
#include <stdlib.h>

#include "client/ndk_event.h"
#include "client/ndk_execution.h"

/* The daemon burst of a reusable execution computed before, made on first need; NULL when
 * it is not reusable, is computed for the first time, or the daemon refused a burst. */
static nnd_burst *own_burst(ANeuralNetworksExecution *e) {
    if (!e->reusable || e->own_burst_failed) return NULL;
    if (!e->own_burst && e->has_kept) {
        ndk_session *s = e->c->session;
        if (nnd_client_burst_configure(s->client, e->c->handle, &e->own_burst, NULL, 0) != 0) {
            e->own_burst = NULL;
            e->own_burst_failed = true;
        }
    }
    return e->own_burst;
}

/* One started computation (ndk_execution_begin), synchronous, through burst b when not
 * NULL; returns the NDK code it completed with. */
static int run(ANeuralNetworksExecution *e, ndk_job *j, nnd_burst *b) {
    ANeuralNetworksCompilation *c = e->c;
    ndk_session *s = c->session;
    uint64_t deadline = ndk_execution_deadline(e);
    Nnd__Reply *reply = NULL;
    char why[256] = "";
    int rc = 0;
    bool sent = false;
    nnd_burst *own = b ? NULL : own_burst(e);
    if (b || own) {
        sent = true;
        /* A burst runs at its compilation's priority, which the daemon already has. */
        nnd_exec_opts o = {.measure_timing = e->measure,
                           .deadline_ns = deadline,
                           .loop_timeout_ns = e->loop_timeout_ns};
        rc = nnd_client_burst_execute_keyed(b ? b : own, &j->r.req, j->r.fds, j->r.keys, j->r.n_fds,
                                            &o, &reply, why, sizeof why);
        if (own && rc == NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT) {
            /* No slots left on the connection: this execution goes on without its burst. */
            ndk_session_code(s, nnd_client_burst_free(own));
            e->own_burst = NULL;
            e->own_burst_failed = true;
            if (reply) nnd__reply__free_unpacked(reply, NULL);
            reply = NULL;
            sent = false;
        }
    }
    if (!sent) {
        nnd_exec_opts o = {.measure_timing = e->measure,
                           .deadline_ns = deadline,
                           .loop_timeout_ns = e->loop_timeout_ns,
                           .priority = c->priority};
        rc = nnd_client_execute_opts(s->client, c->handle, &j->r.req, j->r.fds, j->r.n_fds, &o,
                                     &reply, why, sizeof why);
    }
    if (rc) ndk_debug("computing: %s", why);
    rc = ndk_execution_code(e, rc, deadline);
    const Nnd__ExecuteReply *x =
        reply && reply->result_case == NND__REPLY__RESULT_EXECUTED ? reply->executed : NULL;
    rc = ndk_execution_end(e, j, rc, x, NULL);
    if (reply) nnd__reply__free_unpacked(reply, NULL);
    return rc;
}

/* compute, or burstCompute with b. */
static int compute(ANeuralNetworksExecution *e, nnd_burst *b) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    ndk_job j;
    int rc = ndk_execution_begin(e, &j);
    return rc ? rc : run(e, &j, b);
}

int ANeuralNetworksExecution_compute(ANeuralNetworksExecution *e) {
    return compute(e, NULL);
}

int ndk_execution_compute_burst(ANeuralNetworksExecution *e, nnd_burst *b) {
    return compute(e, b);
}

typedef struct async_job {
    ANeuralNetworksExecution *e;
    ANeuralNetworksEvent *ev;
    ndk_job j;
} async_job;

static void *async_main(void *arg) {
    async_job *a = arg;
    int rc = run(a->e, &a->j, NULL);
    ndk_execution_unhold(a->e);
    ndk_event_signal(a->ev, rc); /* after: a waiter may free the execution right away */
    ndk_event_unref(a->ev);
    free(a);
    return NULL;
}

int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution *e,
                                          ANeuralNetworksEvent **event) {
    if (!e || !event) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *event = NULL;
    int rc = ndk_execution_ready(e);
    if (rc) return rc;
    async_job *a = calloc(1, sizeof *a);
    ANeuralNetworksEvent *ev = a ? ndk_event_new(2) : NULL; /* the caller's and the thread's */
    if (!ev) {
        free(a);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    if ((rc = ndk_execution_begin(e, &a->j))) {
        ndk_event_unref(ev);
        free(a);
        if (rc == ANEURALNETWORKS_BAD_STATE) { /* another thread started it first */
            ndk_event_unref(ev);
            return rc;
        }
        ndk_event_signal(ev, rc); /* it started and failed at once: the event tells */
        *event = ev;
        return ANEURALNETWORKS_NO_ERROR;
    }
    a->e = e;
    a->ev = ev;
    ndk_execution_hold(e);
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    bool started = pthread_create(&t, &attr, async_main, a) == 0;
    pthread_attr_destroy(&attr);
    *event = ev;
    if (!started) async_main(a); /* no thread to spare: compute now, signal at once */
    return ANEURALNETWORKS_NO_ERROR;
}
