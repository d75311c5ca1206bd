/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_exec: executions through a driver host (drvhost.h): execute() waits for the reply,
 * start() returns and the supervisor thread completes it; tensors placed in shared regions,
 * or staged through a memfd when they lie in none. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driverhost/proxy_internal.h"

#define NOT_STAGED UINT64_MAX

typedef struct exec_ctx {
    dhp_call call;
    nnd_driver_execution *x;
    drvhost *h;
    dhp_staging st;
    uint64_t *staged; /* each output's staging offset, or NOT_STAGED */
} exec_ctx;

static void set_err(nnd_driver_execution *x, const char *msg) {
    if (x->err && x->errlen) snprintf(x->err, x->errlen, "%s", msg);
}

/* Builds the call: its body, regions, staging (inputs copied in) and bound. */
static int build(nnd_driver_execution *x, exec_ctx *c, dh_wbuf *w, dhp_regions *regs) {
    char err[DH_ERR_MAX] = "";
    drvhost *h = dhp_prepared_host(x->prepared);
    c->x = x, c->h = h, c->st.fd = -1;
    uint64_t remote = 0;
    uint32_t gen = 0;
    int status = dhp_prepared_remote(x->prepared, &remote, &gen, err, sizeof err);
    if (status) {
        set_err(x, err);
        return status;
    }
    dh_exec_head head = {remote,      x->n_inputs,          x->n_outputs,
                         x->priority, x->measure ? 1u : 0u, x->deadline_ns};
    dh_put(w, &head, sizeof head);
    c->staged = calloc(x->n_outputs + 1u, sizeof *c->staged);
    dh_arg *args = calloc((size_t)x->n_inputs + x->n_outputs + 1u, sizeof *args);
    if (!c->staged || !args) {
        free(args);
        set_err(x, "out of memory for a driver call");
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    uint64_t staging_len = 0;
    for (uint32_t i = 0; i < x->n_inputs + x->n_outputs && !status; i++) {
        bool in = i < x->n_inputs;
        const nnd_driver_arg *s = in ? &x->inputs[i] : &x->outputs[i - x->n_inputs];
        dh_arg *a = &args[i];
        a->length = s->length, a->rank = s->rank > NND_DRIVER_MAX_RANK ? 0 : s->rank;
        memcpy(a->dims, s->dims, sizeof a->dims);
        if (!s->data) {
            a->region = DH_REGION_NONE;
            status = dhp_memory_remote(h, s->memory, gen, &a->memory);
            if (status)
                snprintf(err, sizeof err,
                         "%s %u: its device memory was lost in a "
                         "driver host restart",
                         in ? "input" : "output", in ? i : i - x->n_inputs);
        } else {
            dhp_place(s->data, s->length, a, regs, &staging_len);
        }
        if (!in)
            c->staged[i - x->n_inputs] = a->region == DH_REGION_STAGING ? a->offset : NOT_STAGED;
    }
    if (!status && staging_len) {
        if (dhp_staging_make(&c->st, staging_len) < 0) {
            status = NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
            snprintf(err, sizeof err, "cannot make staging memory of %llu bytes",
                     (unsigned long long)staging_len);
        } else {
            for (uint32_t i = 0; i < x->n_inputs; i++)
                if (args[i].region == DH_REGION_STAGING && x->inputs[i].length)
                    memcpy(c->st.base + args[i].offset, x->inputs[i].data, x->inputs[i].length);
            dhp_count_staged(h, staging_len);
        }
    }
    dh_put(w, args, sizeof *args * ((size_t)x->n_inputs + x->n_outputs));
    free(args);
    if (status) {
        set_err(x, err);
        return status;
    }
    c->call.gen = gen;
    uint64_t now = dh_now_ns();
    if (x->deadline_ns != NND_DRIVER_NO_DEADLINE) {
        c->call.bound_ns = x->deadline_ns + (uint64_t)h->lim.deadline_grace_ms * 1000000ull;
        c->call.bound_ms =
            c->call.bound_ns > now ? (uint32_t)((c->call.bound_ns - now) / 1000000u) : 0;
        c->call.timeout_status = NND_DRIVER_MISSED_DEADLINE_TRANSIENT;
    } else {
        c->call.bound_ns = dhp_bound(h->lim.call_timeout_ms);
        c->call.bound_ms = h->lim.call_timeout_ms;
        c->call.timeout_status = NND_DRIVER_GENERAL_FAILURE;
    }
    return 0;
}

/* The reply into x: times, output shapes, staged outputs copied back, the message. */
static int land(exec_ctx *c) {
    nnd_driver_execution *x = c->x;
    int status = c->call.status;
    if (c->call.reply.body) {
        uint64_t dev = 0, drv = 0;
        int rc = dh_exec_reply_get(&c->call.rest, &dev, &drv, x->outputs, x->n_outputs);
        if (x->measure) x->time_on_device_ns = dev, x->time_in_driver_ns = drv;
        if (rc < 0 && status == NND_DRIVER_OK) {
            status = NND_DRIVER_GENERAL_FAILURE;
            snprintf(c->call.err, sizeof c->call.err, "malformed reply from the driver host");
        }
    }
    if (status == NND_DRIVER_OK)
        for (uint32_t i = 0; i < x->n_outputs; i++)
            if (c->staged[i] != NOT_STAGED && x->outputs[i].length)
                memcpy(x->outputs[i].data, c->st.base + c->staged[i], x->outputs[i].length);
    if (status != NND_DRIVER_OK) set_err(x, c->call.err);
    dhp_staging_drop(&c->st);
    dhp_call_free(&c->call);
    free(c->staged);
    return status;
}

int dhp_execute(nnd_driver_execution *x) {
    exec_ctx c;
    memset(&c, 0, sizeof c);
    dh_wbuf w = {0};
    dhp_regions regs = {0};
    x->time_on_device_ns = x->time_in_driver_ns = NND_DRIVER_NO_TIME;
    int status = build(x, &c, &w, &regs);
    if (status == 0) {
        dhp_call_run(c.h, DH_MSG_EXECUTE, &w, &regs, c.st.fd, &c.call);
        status = land(&c);
    } else {
        dhp_staging_drop(&c.st);
        free(c.staged);
    }
    dh_wbuf_free(&w);
    return status;
}

static void finish_started(dhp_call *call) {
    exec_ctx *c = (exec_ctx *)call;
    nnd_driver_execution *x = c->x;
    int status = land(c);
    free(c);
    x->complete(x, status);
}

static int start_now(nnd_driver_execution *x) {
    exec_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        set_err(x, "out of memory for a driver call");
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    dh_wbuf w = {0};
    dhp_regions regs = {0};
    x->time_on_device_ns = x->time_in_driver_ns = NND_DRIVER_NO_TIME;
    int status = build(x, c, &w, &regs);
    if (status == 0) {
        c->call.finish = finish_started;
        c->call.id = dhp_next_call_id(c->h);
        x->driver_data = (void *)(uintptr_t)c->call.id;
        status = dhp_call_run(c->h, DH_MSG_EXECUTE, &w, &regs, c->st.fd, &c->call);
        if (status != NND_DRIVER_STARTED) {
            status = land(c);
            free(c);
        }
    } else {
        dhp_staging_drop(&c->st);
        free(c->staged);
        free(c);
    }
    dh_wbuf_free(&w);
    return status;
}

/* A start that must wait (a host restarting, a partition to prepare again) waits on a
 * thread of its own: start() never holds its caller, which may be the daemon's loop. */
static void *start_later(void *arg) {
    nnd_driver_execution *x = arg;
    int status = start_now(x);
    if (status != NND_DRIVER_STARTED) x->complete(x, status);
    return NULL;
}

int dhp_start(nnd_driver_execution *x) {
    if (dhp_start_ready(x->prepared) != 0) return start_now(x);
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &a, start_later, x);
    pthread_attr_destroy(&a);
    return rc == 0 ? NND_DRIVER_STARTED : start_now(x);
}

void dhp_cancel(nnd_driver_execution *x) {
    drvhost *h = dhp_prepared_host(x->prepared);
    uint32_t id = (uint32_t)(uintptr_t)x->driver_data;
    uint32_t gen = dhp_gen(h);
    if (!dhp_call_pending(h, id)) return;
    dh_wbuf w = {0};
    dh_put_u32(&w, id);
    dhp_send_oneway(h, DH_MSG_CANCEL, &w, gen);
    dh_wbuf_free(&w);
}
