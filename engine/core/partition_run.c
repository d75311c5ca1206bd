/* SPDX-License-Identifier: Apache-2.0 */
/* partition_run.c: running a driver partition of a bound execution: its crossings in,
 * execute() or start() (the run then leaves the thread until complete()), its outputs
 * and timing back. See partition.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/core/partition_run.h"
#include "engine/core/partition_sub.h"
#include "engine/core/device_sync.h"
#include "engine/base/clock.h"

enum { IDLE, STARTED, DONE };

struct eng_part_run {
    nnd_driver_execution x;
    nnd_driver_arg *args;
    uint32_t cap;
    char msg[SCHEMA_ERR_LEN];
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int state;
    int status;
    bool in_start; /* complete() during start(): the starter finds it, no notify */
    bool waiting;  /* the engine waits for it itself: no notify */
    uint32_t step;
    eng_exec *e;
};

void eng_partition_run_free(struct eng_part_run *r) {
    if (!r) return;
    pthread_mutex_lock(&r->lock);
    if (r->state == STARTED) { /* never left so by a caller that waits for notify */
        r->waiting = true;
        eng_partition *part = r->e->p->steps[r->step].state;
        pthread_mutex_unlock(&r->lock);
        eng_drv_cancel(part->dev, &r->x);
        pthread_mutex_lock(&r->lock);
        while (r->state == STARTED)
            pthread_cond_wait(&r->cond, &r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->cond);
    free(r->args);
    free(r);
}

static void complete(nnd_driver_execution *x, int status) {
    struct eng_part_run *r = x->daemon_data;
    pthread_mutex_lock(&r->lock);
    r->status = status;
    r->state = DONE;
    eng_exec *e = r->e;
    bool notify = !r->in_start && !r->waiting && e->notify;
    void (*fn)(void *) = e->notify;
    void *ctx = e->notify_ctx;
    pthread_cond_broadcast(&r->cond);
    pthread_mutex_unlock(&r->lock);
    if (notify) fn(ctx); /* e may be reused from here on */
}

static struct eng_part_run *run_of(eng_exec *e, uint32_t n_args) {
    struct eng_part_run *r = e->part;
    if (!r) {
        if (!(r = calloc(1, sizeof *r))) return NULL;
        pthread_mutex_init(&r->lock, NULL);
        pthread_cond_init(&r->cond, NULL);
        r->e = e;
        e->part = r;
    }
    if (r->cap < n_args) {
        nnd_driver_arg *a = realloc(r->args, sizeof *a * n_args);
        if (!a) return NULL;
        r->args = a;
        r->cap = n_args;
    }
    return r;
}

static void arg_of(nnd_driver_arg *a, eng_tensor *t, const eng_backend *be, bool output) {
    memset(a, 0, sizeof *a);
    a->rank = t->rank;
    memcpy(a->dims, t->dims, sizeof(uint32_t) * t->rank);
    bool on_device = t->device == be && be->mem_alloc &&
                     !(t->device_sync & (output ? ENG_HOST_ONLY : ENG_DEVICE_STALE));
    if (on_device) {
        a->memory = t->device_handle;
        a->length = eng_tensor_bytes(t);
    } else {
        a->data = t->data;
        a->length = output ? t->bytes : eng_tensor_bytes(t);
    }
}

schema_status eng_partition_run(eng_exec *e, uint32_t k, const eng_checkpoint *cp, char *err,
                                size_t errlen) {
    eng_partition *part = e->p->steps[k].state;
    eng_driver_dev *dev = part->dev;
    const eng_backend *be = &dev->backend;
    struct eng_part_run *r = run_of(e, part->n_in + part->n_out + 1);
    if (!r) return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "out of memory");
    for (uint32_t j = 0; j < part->n_in; j++) {
        eng_tensor *t = &e->tensors[part->in[j]];
        schema_status s = eng_exec_inputs_to_host(&t, 1, be, false, err, errlen);
        if (s) return s;
        arg_of(&r->args[j], t, be, false);
    }
    for (uint32_t j = 0; j < part->n_out; j++)
        arg_of(&r->args[part->n_in + j], &e->tensors[part->out[j]], be, true);
    r->msg[0] = '\0';
    r->x = (nnd_driver_execution){.prepared = part->prepared,
                                  .n_inputs = part->n_in,
                                  .n_outputs = part->n_out,
                                  .inputs = r->args,
                                  .outputs = r->args + part->n_in,
                                  .priority = cp && cp->priority ? cp->priority
                                                                 : NND_DRIVER_PRIORITY_MEDIUM,
                                  .deadline_ns = cp ? cp->deadline_ns : 0,
                                  .measure = cp && cp->measure,
                                  .time_on_device_ns = NND_DRIVER_NO_TIME,
                                  .time_in_driver_ns = NND_DRIVER_NO_TIME,
                                  .err = r->msg,
                                  .errlen = sizeof r->msg,
                                  .complete = complete,
                                  .daemon_data = r};
    r->step = k;
    const nnd_driver *d = dev->lib->d;
    bool async = d->start && !(d->execute && !(cp && cp->can_suspend));
    if (!async) {
        r->state = IDLE;
        r->status = eng_drv_execute(dev, &r->x);
        r->state = DONE;
        return eng_partition_finish(e, k, err, errlen);
    }
    pthread_mutex_lock(&r->lock);
    r->state = STARTED;
    r->in_start = true;
    r->waiting = !(cp && cp->can_suspend);
    pthread_mutex_unlock(&r->lock);
    uint64_t t0 = eng_now_ns();
    int rc = eng_drv_start(dev, &r->x);
    pthread_mutex_lock(&r->lock);
    r->in_start = false;
    if (rc != NND_DRIVER_STARTED) { /* ended at once, without complete() */
        r->state = DONE;
        r->status = rc;
    }
    while (r->waiting && r->state == STARTED)
        pthread_cond_wait(&r->cond, &r->lock);
    bool done = r->state == DONE;
    pthread_mutex_unlock(&r->lock);
    (void)t0;
    return done ? eng_partition_finish(e, k, err, errlen) : ENG_ON_DEVICE;
}

static void add_time(uint64_t *sum, uint64_t t) {
    if (t == NND_DRIVER_NO_TIME) return;
    *sum = *sum == UINT64_MAX ? t : *sum + t;
}

schema_status eng_partition_finish(eng_exec *e, uint32_t k, char *err, size_t errlen) {
    struct eng_part_run *r = e->part;
    eng_partition *part = e->p->steps[k].state;
    pthread_mutex_lock(&r->lock);
    int status = r->status;
    r->state = IDLE;
    pthread_mutex_unlock(&r->lock);
    r->msg[sizeof r->msg - 1] = '\0';
    const eng_step *st = &e->p->steps[k];
    if (status < 0)
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE, "%s #%u: %s", st->def->name,
                            st->index, r->msg[0] ? r->msg : "the driver faulted");
    if (r->x.measure) {
        add_time(&e->device_ns, r->x.time_on_device_ns);
        add_time(&e->driver_ns, r->x.time_in_driver_ns);
    }
    if (status == NND_DRIVER_OUTPUT_INSUFFICIENT_SIZE) {
        /* The driver's shapes say what the outputs need. */
        for (uint32_t j = 0; j < part->n_out; j++) {
            eng_tensor *t = &e->tensors[part->out[j]];
            const nnd_driver_arg *a = &r->args[part->n_in + j];
            if (a->rank && a->rank <= ENG_MAX_RANK) {
                t->rank = a->rank;
                memcpy(t->dims, a->dims, sizeof(uint32_t) * a->rank);
            }
        }
        e->insufficient = true;
        return SCHEMA_OK;
    }
    if (status != NND_DRIVER_OK) {
        schema_status s = eng_drv_status(status);
        if (s == SCHEMA_OK || s == SCHEMA_UNSUPPORTED) s = SCHEMA_GENERAL_FAILURE;
        return schema_failf(err, errlen, s, "%s #%u and the %u operations after it on %s: %s",
                            st->def->name, st->index, part->n_steps - 1, part->dev->info.name,
                            r->msg[0] ? r->msg : schema_engine_status_name(s));
    }
    for (uint32_t j = 0; j < part->n_out; j++) {
        eng_tensor *t = &e->tensors[part->out[j]];
        eng_exec_outputs_written(&t, 1, &part->dev->backend);
    }
    return SCHEMA_OK;
}

uint32_t eng_exec_stopped_at(const eng_exec *e) {
    return e->stopped_at;
}

void eng_exec_set_notify(eng_exec *e, void (*fn)(void *ctx), void *ctx) {
    e->notify = fn;
    e->notify_ctx = ctx;
}

void eng_exec_cancel_device(eng_exec *e) {
    struct eng_part_run *r = e->part;
    if (!r) return;
    pthread_mutex_lock(&r->lock);
    bool started = r->state == STARTED;
    pthread_mutex_unlock(&r->lock);
    if (!started) return;
    eng_partition *part = e->p->steps[r->step].state;
    eng_drv_cancel(part->dev, &r->x);
}

void eng_exec_driver_times(const eng_exec *e, uint64_t *on_device_ns, uint64_t *in_driver_ns) {
    *on_device_ns = e->device_ns;
    *in_driver_ns = e->driver_ns;
}

void eng_partition_run_reset(struct eng_part_run *r) {
    if (!r) return;
    pthread_mutex_lock(&r->lock);
    if (r->state == DONE) r->state = IDLE; /* a completion no run went on from */
    pthread_mutex_unlock(&r->lock);
}

/* Whether e's partition at step `from` was started and has completed. */
bool eng_partition_completed(const eng_exec *e, uint32_t from) {
    struct eng_part_run *r = e->part;
    if (!r) return false;
    pthread_mutex_lock(&r->lock);
    bool done = r->state == DONE && r->step == from;
    pthread_mutex_unlock(&r->lock);
    return done;
}
