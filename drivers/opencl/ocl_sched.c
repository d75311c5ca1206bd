/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_sched.c: executions on a device (ocl_exec.h): checked, queued by priority, enqueued
 * by the device's scheduler thread, completed from the OpenCL event callback. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ocl_exec.h"
#include "ocl_memory.h"

typedef struct ocl_job ocl_job;
struct ocl_job {
    ocl_job *next;
    nnd_driver_execution *x;
    ocl_prepared *p;
    ocl_ctx *ctx;
    struct ocl_sched *s;
    int32_t priority;
    uint64_t t_start, t_enqueued;
    uint32_t next_launch; /* a yielding execution's next piece starts here */
    bool yield_slot;      /* holds the device's one yielding slot */
    bool sync, done;
    int status;
    pthread_cond_t cv; /* sync: done */
};

struct ocl_sched {
    ocl_device *dev;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    pthread_t thread;
    bool stop;
    ocl_job *pending; /* highest priority first, FIFO within one */
    uint32_t in_flight;
    bool yield_busy;      /* a yielding execution's piece is on the device */
    int32_t top_priority; /* the highest priority queued ... */
    uint64_t top_seen_ns; /* ... last seen then (yielding, ocl_exec.h) */
};

/* Every running scheduler, for cancel(), which must not read the execution it is given. */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ocl_sched *all[NND_DRIVER_MAX_DEVICES];

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void fail_msg(nnd_driver_execution *x, const char *msg) {
    if (x->err && x->errlen) snprintf(x->err, x->errlen, "%s", msg);
}

/* Ends a job: its context back to the partition, the device slot freed, complete() (or
 * the waiting execute()) told. The job is freed (async) or handed back (sync). */
static void finish(ocl_job *j, int status, bool had_slot) {
    struct ocl_sched *s = j->s;
    nnd_driver_execution *x = j->x;
    if (x->measure && status == NND_DRIVER_OK) {
        uint64_t t = now_ns();
        x->time_in_driver_ns = t - j->t_start;
        x->time_on_device_ns = j->t_enqueued ? t - j->t_enqueued : 0;
    }
    pthread_mutex_lock(&s->lock);
    if (j->ctx) {
        *ocl_ctx_next(j->ctx) = j->p->free_ctx;
        j->p->free_ctx = j->ctx;
    }
    if (had_slot) s->in_flight--;
    if (j->yield_slot) s->yield_busy = false, j->yield_slot = false;
    pthread_cond_broadcast(&s->cv);
    j->status = status;
    if (j->sync) {
        j->done = true;
        pthread_cond_broadcast(&j->cv);
        pthread_mutex_unlock(&s->lock);
        return;
    }
    pthread_mutex_unlock(&s->lock);
    free(j);
    x->complete(x, status);
}

static void CL_CALLBACK on_complete(cl_event ev, cl_int st, void *data) {
    ocl_job *j = data;
    if (st != CL_COMPLETE) {
        char msg[96];
        snprintf(msg, sizeof msg, "the OpenCL device failed the execution (%d)", st);
        fail_msg(j->x, msg);
    }
    clReleaseEvent(ev);
    finish(j, st == CL_COMPLETE ? NND_DRIVER_OK : NND_DRIVER_GENERAL_FAILURE, true);
}

/* Back in the queue, first of its priority: the pieces of one execution keep their order. */
static void requeue_locked(struct ocl_sched *s, ocl_job *j) {
    ocl_job **pp = &s->pending;
    while (*pp && (*pp)->priority > j->priority)
        pp = &(*pp)->next;
    j->next = *pp;
    *pp = j;
}

/* A yielding execution's piece is done: it goes back in the queue, holding its context. */
static void CL_CALLBACK on_piece(cl_event ev, cl_int st, void *data) {
    ocl_job *j = data;
    clReleaseEvent(ev);
    if (st != CL_COMPLETE) {
        char msg[96];
        snprintf(msg, sizeof msg, "the OpenCL device failed the execution (%d)", st);
        fail_msg(j->x, msg);
        finish(j, NND_DRIVER_GENERAL_FAILURE, true);
        return;
    }
    struct ocl_sched *s = j->s;
    pthread_mutex_lock(&s->lock);
    s->in_flight--;
    if (j->yield_slot) s->yield_busy = false, j->yield_slot = false;
    requeue_locked(s, j);
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->lock);
}

/* Whether a job of this priority yields now: something higher was queued lately. Under the
 * scheduler's lock. */
static bool yields_locked(const struct ocl_sched *s, int32_t priority) {
    return priority < s->top_priority && now_ns() - s->top_seen_ns < OCL_YIELD_WINDOW_NS;
}

static cl_command_queue queue_for(const ocl_device *d, int32_t priority) {
    if (!d->has_priority) return d->queue;
    return priority >= NND_DRIVER_PRIORITY_HIGH  ? d->prio[2]
           : priority <= NND_DRIVER_PRIORITY_LOW ? d->prio[0]
                                                 : d->prio[1];
}

/* Enqueues a job holding a context: writes, launches, reads, the callback; a yielding job
 * (one holding the yielding slot) only its next piece of launches, and a marker whose
 * callback queues it again. */
static void submit(ocl_job *j) {
    nnd_driver_execution *x = j->x;
    ocl_prepared *p = j->p;
    bool first = j->next_launch == 0;
    if (first && x->deadline_ns != NND_DRIVER_NO_DEADLINE && now_ns() >= x->deadline_ns) {
        fail_msg(x, "the deadline passed before the execution reached the device");
        finish(j, NND_DRIVER_MISSED_DEADLINE_TRANSIENT, true);
        return;
    }
    cl_command_queue q = queue_for(p->dev, j->priority);
    cl_int e = CL_SUCCESS;
    if (first) j->t_enqueued = now_ns();
    for (uint32_t i = 0; first && i < p->n_in && !e; i++) {
        if (p->in[i].buf == UINT32_MAX) continue;
        cl_mem dst = ocl_ctx_mem(j->ctx, p->in[i].buf), src;
        size_t size;
        if (x->inputs[i].data)
            e = clEnqueueWriteBuffer(q, dst, CL_FALSE, 0, p->in[i].bytes, x->inputs[i].data, 0,
                                     NULL, NULL);
        else if ((src = ocl_memory_get(p->dev, x->inputs[i].memory, &size)))
            e = clEnqueueCopyBuffer(q, src, dst, 0, 0, p->in[i].bytes, 0, NULL, NULL);
        else
            e = CL_INVALID_MEM_OBJECT;
    }
    uint32_t n = p->plan.n_launches, end = n;
    if (j->yield_slot) {
        uint32_t piece = (n + OCL_YIELD_PIECES - 1) / OCL_YIELD_PIECES;
        end = j->next_launch + piece < n ? j->next_launch + piece : n;
    }
    if (!e && first && end == n)
        e = ocl_ctx_enqueue(j->ctx, q);
    else if (!e)
        e = ocl_ctx_enqueue_range(j->ctx, q, j->next_launch, end);
    j->next_launch = end;
    cl_event ev = NULL;
    for (uint32_t i = 0; end == n && i < p->n_out && !e; i++) {
        cl_mem src = ocl_ctx_mem(j->ctx, p->out[i].buf), dst;
        cl_event *last = i + 1 == p->n_out ? &ev : NULL;
        size_t size;
        if (x->outputs[i].data)
            e = clEnqueueReadBuffer(q, src, CL_FALSE, 0, p->out[i].bytes, x->outputs[i].data, 0,
                                    NULL, last);
        else if ((dst = ocl_memory_get(p->dev, x->outputs[i].memory, &size)))
            e = clEnqueueCopyBuffer(q, src, dst, 0, 0, p->out[i].bytes, 0, NULL, last);
        else
            e = CL_INVALID_MEM_OBJECT;
    }
    if (!e && !ev) e = clEnqueueMarkerWithWaitList(q, 0, NULL, &ev);
    if (!e) e = clSetEventCallback(ev, CL_COMPLETE, end == n ? on_complete : on_piece, j);
    if (e) {
        /* What was enqueued may still run: wait for it before the context is reused. */
        clFinish(q);
        if (ev) clReleaseEvent(ev);
        char msg[96];
        snprintf(msg, sizeof msg, "enqueueing the execution on the OpenCL device failed (%d)", e);
        fail_msg(x, msg);
        finish(j, NND_DRIVER_GENERAL_FAILURE, true);
        return;
    }
    clFlush(q);
}

/* The first pending job that may go now (a context free, or one more to make), removed. */
static ocl_job *pick(struct ocl_sched *s, bool *make) {
    if (s->in_flight >= OCL_MAX_IN_FLIGHT) return NULL;
    for (ocl_job **pp = &s->pending; *pp; pp = &(*pp)->next) {
        ocl_job *j = *pp;
        bool yields = yields_locked(s, j->priority);
        if (yields && s->yield_busy) continue;
        if (!j->ctx && !j->p->free_ctx && j->p->n_ctx >= OCL_MAX_IN_FLIGHT) continue;
        *pp = j->next;
        if (yields) s->yield_busy = j->yield_slot = true;
        *make = !j->ctx && !j->p->free_ctx;
        if (j->ctx) {
            /* a yielding execution's next piece: it kept its context */
        } else if (*make) {
            j->p->n_ctx++;
        } else {
            j->ctx = j->p->free_ctx;
            j->p->free_ctx = *ocl_ctx_next(j->ctx);
        }
        s->in_flight++;
        return j;
    }
    return NULL;
}

static void *sched_main(void *arg) {
    struct ocl_sched *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        bool make = false;
        ocl_job *j = NULL;
        while (!s->stop && !(j = pick(s, &make)))
            pthread_cond_wait(&s->cv, &s->lock);
        if (!j) break;
        pthread_mutex_unlock(&s->lock);
        if (make) {
            char msg[200] = "";
            j->ctx = ocl_ctx_make(j->p, msg, sizeof msg);
            if (!j->ctx) {
                pthread_mutex_lock(&s->lock);
                j->p->n_ctx--;
                pthread_mutex_unlock(&s->lock);
                fail_msg(j->x, msg);
                finish(j, NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT, true);
            }
        }
        if (j->ctx) submit(j);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int ocl_sched_start(ocl_device *d) {
    struct ocl_sched *s = calloc(1, sizeof *s);
    if (!s) return -1;
    s->dev = d;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cv, NULL);
    if (pthread_create(&s->thread, NULL, sched_main, s)) {
        free(s);
        return -1;
    }
    d->sched = s;
    pthread_mutex_lock(&all_lock);
    for (int i = 0; i < NND_DRIVER_MAX_DEVICES; i++)
        if (!all[i]) {
            all[i] = s;
            break;
        }
    pthread_mutex_unlock(&all_lock);
    return 0;
}

void ocl_sched_stop(ocl_device *d) {
    struct ocl_sched *s = d->sched;
    if (!s) return;
    pthread_mutex_lock(&all_lock);
    for (int i = 0; i < NND_DRIVER_MAX_DEVICES; i++)
        if (all[i] == s) all[i] = NULL;
    pthread_mutex_unlock(&all_lock);
    pthread_mutex_lock(&s->lock);
    s->stop = true;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->lock);
    pthread_join(s->thread, NULL);
    /* Executions still queued end now; those on the device end in their callbacks, which
     * use s: wait for them. */
    pthread_mutex_lock(&s->lock);
    ocl_job *left = s->pending;
    s->pending = NULL;
    pthread_mutex_unlock(&s->lock);
    while (left) {
        ocl_job *j = left;
        left = j->next;
        fail_msg(j->x, "the OpenCL driver is closing");
        finish(j, NND_DRIVER_DEVICE_UNAVAILABLE, false);
    }
    pthread_mutex_lock(&s->lock);
    while (s->in_flight)
        pthread_cond_wait(&s->cv, &s->lock);
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->cv);
    free(s);
    d->sched = NULL;
}

static bool same_dims(const nnd_driver_arg *a, const ocl_io *io) {
    return a->rank == 0 || io->buf == UINT32_MAX ||
           (a->rank == io->rank && !memcmp(a->dims, io->dims, sizeof(uint32_t) * io->rank));
}

/* The checks before an execution is queued; outputs get their shapes. */
static int check(nnd_driver_execution *x) {
    ocl_prepared *p = x->prepared;
    char msg[160];
    if (x->n_inputs != p->n_in || x->n_outputs != p->n_out) {
        snprintf(msg, sizeof msg, "the partition takes %u inputs and %u outputs, got %u and %u",
                 p->n_in, p->n_out, x->n_inputs, x->n_outputs);
        fail_msg(x, msg);
        return NND_DRIVER_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < p->n_in; i++) {
        const nnd_driver_arg *a = &x->inputs[i];
        size_t dev_bytes = 0;
        bool in_device = !a->data && ocl_memory_get(p->dev, a->memory, &dev_bytes);
        if ((!a->data && !in_device && p->in[i].bytes) ||
            (in_device ? dev_bytes : a->length) < p->in[i].bytes || !same_dims(a, &p->in[i])) {
            snprintf(msg, sizeof msg,
                     "input %u must be %zu bytes (host memory or a buffer of this device) with "
                     "the shape the partition was prepared for",
                     i, p->in[i].bytes);
            fail_msg(x, msg);
            return NND_DRIVER_INVALID_ARGUMENT;
        }
    }
    int status = NND_DRIVER_OK;
    for (uint32_t i = 0; i < p->n_out; i++) {
        nnd_driver_arg *a = &x->outputs[i];
        a->rank = p->out[i].rank;
        memcpy(a->dims, p->out[i].dims, sizeof(uint32_t) * p->out[i].rank);
        size_t dev_bytes = 0;
        if (!a->data && !ocl_memory_get(p->dev, a->memory, &dev_bytes)) {
            snprintf(msg, sizeof msg,
                     "output %u is neither host memory nor a buffer of this device", i);
            fail_msg(x, msg);
            return NND_DRIVER_INVALID_ARGUMENT;
        }
        if ((a->data ? a->length : dev_bytes) < p->out[i].bytes) {
            snprintf(msg, sizeof msg, "output %u needs %zu bytes, has %zu", i, p->out[i].bytes,
                     a->length);
            fail_msg(x, msg);
            status = NND_DRIVER_OUTPUT_INSUFFICIENT_SIZE;
        }
    }
    if (!status && x->deadline_ns != NND_DRIVER_NO_DEADLINE && now_ns() >= x->deadline_ns) {
        fail_msg(x, "the deadline passed before the execution started");
        status = NND_DRIVER_MISSED_DEADLINE_TRANSIENT;
    }
    x->time_on_device_ns = x->time_in_driver_ns = NND_DRIVER_NO_TIME;
    return status;
}

static void queue_job(struct ocl_sched *s, ocl_job *j) {
    pthread_mutex_lock(&s->lock);
    uint64_t now = now_ns();
    if (j->priority >= s->top_priority || now - s->top_seen_ns >= OCL_YIELD_WINDOW_NS)
        s->top_priority = j->priority, s->top_seen_ns = now;
    ocl_job **pp = &s->pending;
    while (*pp && (*pp)->priority >= j->priority)
        pp = &(*pp)->next;
    j->next = *pp;
    *pp = j;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->lock);
}

int ocl_start(nnd_driver_execution *x) {
    int status = check(x);
    if (status) return status;
    ocl_prepared *p = x->prepared;
    ocl_job *j = calloc(1, sizeof *j);
    if (!j) {
        fail_msg(x, "out of memory");
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    *j =
        (ocl_job){.x = x, .p = p, .s = p->dev->sched, .priority = x->priority, .t_start = now_ns()};
    x->driver_data = j;
    queue_job(j->s, j);
    return NND_DRIVER_STARTED;
}

int ocl_execute(nnd_driver_execution *x) {
    int status = check(x);
    if (status) return status;
    ocl_prepared *p = x->prepared;
    ocl_job j = {.x = x,
                 .p = p,
                 .s = p->dev->sched,
                 .priority = x->priority,
                 .t_start = now_ns(),
                 .sync = true};
    pthread_cond_init(&j.cv, NULL);
    queue_job(j.s, &j);
    pthread_mutex_lock(&j.s->lock);
    while (!j.done)
        pthread_cond_wait(&j.cv, &j.s->lock);
    pthread_mutex_unlock(&j.s->lock);
    pthread_cond_destroy(&j.cv);
    return j.status;
}

void ocl_cancel(nnd_driver_execution *x) {
    /* x is matched, not read: it may be completing on another thread. */
    ocl_job *found = NULL;
    pthread_mutex_lock(&all_lock);
    for (int i = 0; i < NND_DRIVER_MAX_DEVICES && !found; i++) {
        struct ocl_sched *s = all[i];
        if (!s) continue;
        pthread_mutex_lock(&s->lock);
        for (ocl_job **pp = &s->pending; *pp; pp = &(*pp)->next)
            if ((*pp)->x == x) {
                found = *pp;
                *pp = found->next;
                break;
            }
        pthread_mutex_unlock(&s->lock);
    }
    pthread_mutex_unlock(&all_lock);
    if (!found) return;
    fail_msg(x, "the execution was cancelled before it reached the device");
    finish(found, NND_DRIVER_GENERAL_FAILURE, false);
}
