/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_fenced.c: ANeuralNetworksExecution_startComputeWithDependencies. The execution goes
 * to the daemon's ExecuteFenced with the sync fences of its dependencies, which the daemon
 * waits for; the call returns at once with an event backed by the daemon's own sync fence
 * (an eventfd, readable once the execution ended), which can be another execution's
 * dependency in turn.
 *
 * As the NNAPI runtime does: a dependency without a sync fence (startCompute's event) is
 * waited for here; outputs must have fully known dimensions; an execution with pointer
 * outputs completes before the call returns (its results must be copied out of the
 * staging memfd), and its event has no sync fence. The event's first wait (or its free)
 * asks the daemon for the execution's status and timings and completes the execution.
 * See ndk_execution.h. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include "proto/frame.h"
#include "client/ndk_event.h"
#include "client/ndk_execution.h"
#include "client/ndk_model.h"
#include "client/ndk_types.h"
#include "client/record.h"

#define TICK_MS 100 /* how often a wait on the daemon's fence looks at the connection */

/* A fenced execution in flight, owned by its event. */
typedef struct fenced {
    ANeuralNetworksExecution *e;
    ndk_job j;
    uint64_t handle; /* the daemon's name for it */
    int fence;       /* the daemon's sync fence (the event owns it) */
    uint64_t bound;  /* the deadline plus the reply margin; 0: none */
} fenced;

/* Waits for the daemon's fence: NO_ERROR once it signalled; DEAD_OBJECT when the
 * connection went away first; MISSED_DEADLINE_TRANSIENT past the bound. */
static int wait_fence(const fenced *f) {
    ndk_session *s = f->e->c->session;
    for (;;) {
        struct pollfd p = {.fd = f->fence, .events = POLLIN};
        int n = poll(&p, 1, TICK_MS);
        if (n > 0) return p.revents & POLLIN ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OP_FAILED;
        if (n < 0 && errno != EINTR) return ANEURALNETWORKS_OP_FAILED;
        if (atomic_load(&s->dead) || !nnd_client_alive(s->client))
            return ndk_session_code(s, -ENOTCONN);
        if (f->bound && ndk_now_ns() >= f->bound) return ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT;
    }
}

/* The event's completion: the status and timings from the daemon, the execution completed
 * and the daemon's object released. */
static int finish(void *ctx) {
    fenced *f = ctx;
    ANeuralNetworksExecution *e = f->e;
    ndk_session *s = e->c->session;
    Nnd__Timing launched = NND__TIMING__INIT, at_fence = NND__TIMING__INIT;
    int rc = wait_fence(f);
    if (rc == ANEURALNETWORKS_NO_ERROR) {
        int status = 0;
        int st =
            nnd_client_fenced_info(s->client, f->handle, &status, &launched, &at_fence, NULL, 0);
        rc = st ? ndk_execution_code(e, st, f->bound) : ndk_status_code(status);
        if (!st && cli_record_live()) /* its outputs are there now; no shapes: all known */
            cli_record_executed(s->client, e->c->handle, &f->j.r.req, f->j.r.fds, f->j.r.n_fds,
                                status, NULL);
    }
    if (!atomic_load(&s->dead)) ndk_session_code(s, nnd_client_release(s->client, f->handle));
    Nnd__ExecuteReply x = NND__EXECUTE_REPLY__INIT; /* no shapes: they were all known */
    x.timing = &launched;
    rc = ndk_execution_end(e, &f->j, rc, &x, &at_fence);
    ndk_execution_unhold(e);
    free(f);
    return rc;
}

static bool is_tensor(int32_t type) {
    uint32_t size;
    bool tensor;
    return ndk_type_info(type, &size, &tensor) && tensor;
}

/* Fenced outputs need their full shape; *pointers tells whether one is a pointer. */
static bool outputs_known(const ANeuralNetworksExecution *e, bool *pointers) {
    *pointers = false;
    for (uint32_t i = 0; i < e->n_out; i++) {
        const ndk_arg *a = &e->out[i];
        *pointers |= a->state == ARG_POINTER;
        if (a->state == ARG_NO_VALUE || !is_tensor(ndk_model_output(e->c->model, i)->type))
            continue;
        bool known = a->rank > 0;
        for (uint32_t k = 0; k < a->rank; k++)
            known = known && a->dims[k];
        if (!known) return false;
    }
    return true;
}

/* Waits here for a fence the request has no room for. */
static void wait_here(int fd) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (poll(&p, 1, -1) < 0 && errno == EINTR)
        continue;
}

int ANeuralNetworksExecution_startComputeWithDependencies(
    ANeuralNetworksExecution *e, const ANeuralNetworksEvent *const *dependencies,
    uint32_t numDependencies, uint64_t duration, ANeuralNetworksEvent **event) {
    if (!event) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *event = NULL;
    if (!e || (!dependencies && numDependencies)) return ANEURALNETWORKS_UNEXPECTED_NULL;
    for (uint32_t i = 0; i < numDependencies; i++)
        if (!dependencies[i]) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = ndk_execution_ready(e);
    if (rc) return rc;
    if (duration && !ndk_execution_single_device(e)) return ANEURALNETWORKS_BAD_DATA;
    bool pointers;
    if (!outputs_known(e, &pointers)) return ANEURALNETWORKS_BAD_DATA;
    int *fences = calloc(numDependencies + 1, sizeof *fences);
    fenced *f = calloc(1, sizeof *f);
    if (!fences || !f) {
        free(fences);
        free(f);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    size_t n_fences = 0;
    for (uint32_t i = 0; i < numDependencies; i++) {
        ANeuralNetworksEvent *dep = (ANeuralNetworksEvent *)dependencies[i];
        int fd = ndk_event_fence(dep);
        if (fd >= 0)
            fences[n_fences++] = fd;
        else
            ndk_event_wait(dep); /* its result does not matter here, as in the NNAPI runtime */
    }
    if ((rc = ndk_execution_begin(e, &f->j))) {
        free(fences);
        free(f);
        return rc;
    }
    /* One request carries PROTO_FRAME_MAX_FDS fds, a spill memfd among them. */
    size_t max = PROTO_FRAME_MAX_FDS - 1, room = f->j.r.n_fds < max ? max - f->j.r.n_fds : 0;
    while (n_fences > room)
        wait_here(fences[--n_fences]);
    ANeuralNetworksCompilation *c = e->c;
    ndk_session *s = c->session;
    uint64_t deadline = ndk_execution_deadline(e);
    nnd_exec_opts o = {.measure_timing = e->measure,
                       .deadline_ns = deadline,
                       .loop_timeout_ns = e->loop_timeout_ns};
    int sync = -1;
    rc = nnd_client_execute_fenced(s->client, c->handle, &f->j.r.req, f->j.r.fds, f->j.r.n_fds,
                                   fences, n_fences, &o, duration, &f->handle, &sync, NULL, 0);
    free(fences);
    if (rc) { /* not launched: the execution completes with the error */
        rc = ndk_execution_end(e, &f->j, ndk_execution_code(e, rc, deadline), NULL, NULL);
        free(f);
        return rc;
    }
    f->e = e;
    f->fence = sync;
    uint64_t margin = NND_DEADLINE_MARGIN_MS * 1000000ull;
    f->bound = !deadline ? 0 : deadline > UINT64_MAX - margin ? UINT64_MAX : deadline + margin;
    ndk_execution_hold(e);
    ANeuralNetworksEvent *ev = pointers ? NULL : ndk_event_new_deferred(sync, finish, f);
    if (!ev) { /* pointer outputs (or no memory for an event): complete it now */
        rc = finish(f);
        close(sync);
        if (rc) return rc;
        if (!(ev = ndk_event_new(1))) return ANEURALNETWORKS_OUT_OF_MEMORY;
        ndk_event_signal(ev, rc);
    }
    *event = ev;
    return ANEURALNETWORKS_NO_ERROR;
}
