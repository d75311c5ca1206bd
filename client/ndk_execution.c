/* ndk_execution.c: ANeuralNetworksExecution.
 *
 * An execution goes PREPARATION -> COMPUTATION -> COMPLETED once (feature level 4: no
 * reuse). Pointer arguments are staged in a memfd the compilation keeps and hands to its
 * next execution (copy in before, copy out after: the daemon only reads and writes shared
 * memory); memory arguments travel as their own fds (in a burst, only the first time:
 * then as the daemon's slot numbers). startCompute runs the same
 * synchronous call on a detached thread that signals the event; startComputeWithDependencies
 * waits for its dependencies and computes before returning (the daemon has no fences yet),
 * so its event is already signalled. See ndk_execution.h. */
#include "ndk_execution.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ndk_compilation.h"
#include "ndk_event.h"
#include "ndk_memory.h"
#include "ndk_model.h"
#include "ndk_request.h"
#include "ndk_types.h"

#define STAGE_ALIGN 64

enum { ST_PREPARATION, ST_COMPUTATION, ST_COMPLETED };

struct ANeuralNetworksExecution {
    ANeuralNetworksCompilation *c;
    uint32_t n_in, n_out;
    ndk_arg *in, *out; /* ndk_request.h */
    bool measure;
    uint64_t timeout_ns;
    uint64_t loop_timeout_ns;
    atomic_int state;
    int result; /* once COMPLETED */
    uint64_t time_device, time_driver;
    pthread_mutex_t lock; /* guards async and freed */
    bool async;           /* a startCompute thread owns the execution */
    bool freed;           /* freed while the thread ran: the thread frees it */
};

/* ---- creation and arguments ------------------------------------------------------------- */

int ANeuralNetworksExecution_create(ANeuralNetworksCompilation *c,
                                    ANeuralNetworksExecution **execution) {
    if (!c || !execution) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *execution = NULL;
    if (!c->finished || !c->valid) return ANEURALNETWORKS_BAD_STATE;
    ANeuralNetworksExecution *e = calloc(1, sizeof *e);
    if (!e) return ANEURALNETWORKS_OUT_OF_MEMORY;
    e->c = c;
    e->n_in = c->model->n_inputs;
    e->n_out = c->model->n_outputs;
    e->in = calloc(e->n_in + 1, sizeof *e->in);
    e->out = calloc(e->n_out + 1, sizeof *e->out);
    if (!e->in || !e->out) {
        free(e->in);
        free(e->out);
        free(e);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    e->loop_timeout_ns = NDK_DEFAULT_LOOP_TIMEOUT_NS;
    atomic_init(&e->state, ST_PREPARATION);
    pthread_mutex_init(&e->lock, NULL);
    *execution = e;
    return ANEURALNETWORKS_NO_ERROR;
}

static void arg_clear(ndk_arg *a) {
    ndk_memory_unref(a->mem);
    free(a->dims);
    free(a->out_dims);
    memset(a, 0, sizeof *a);
}

static void execution_destroy(ANeuralNetworksExecution *e) {
    for (uint32_t i = 0; i < e->n_in; i++)
        arg_clear(&e->in[i]);
    for (uint32_t i = 0; i < e->n_out; i++)
        arg_clear(&e->out[i]);
    pthread_mutex_destroy(&e->lock);
    free(e->in);
    free(e->out);
    free(e);
}

void ANeuralNetworksExecution_free(ANeuralNetworksExecution *e) {
    if (!e) return;
    pthread_mutex_lock(&e->lock);
    bool running = e->async;
    if (running) e->freed = true; /* the computing thread frees it when done */
    pthread_mutex_unlock(&e->lock);
    if (!running) execution_destroy(e);
}

const ANeuralNetworksCompilation *ndk_execution_compilation(const ANeuralNetworksExecution *e) {
    return e->c;
}

static bool is_tensor(int32_t type) {
    uint32_t size;
    bool tensor;
    return ndk_type_info(type, &size, &tensor) && tensor;
}

/* The NDK's check of a type given for an argument: valid, the model operand's type, and
 * only filling in dimensions the model left unknown. Without a type, the model's must be
 * fully specified unless unspecified dimensions are allowed. */
static int check_type(const ndk_operand *o, const ANeuralNetworksOperandType *t,
                      bool allow_unspecified) {
    if (!t) {
        if (allow_unspecified || !is_tensor(o->type)) return ANEURALNETWORKS_NO_ERROR;
        if (!o->rank) return ANEURALNETWORKS_BAD_DATA;
        for (uint32_t i = 0; i < o->rank; i++)
            if (!o->dims[i]) return ANEURALNETWORKS_BAD_DATA;
        return ANEURALNETWORKS_NO_ERROR;
    }
    if (ndk_check_operand_type(t, allow_unspecified) || t->type != o->type)
        return ANEURALNETWORKS_BAD_DATA;
    if (!o->rank) return ANEURALNETWORKS_NO_ERROR;
    if (o->rank != t->dimensionCount) return ANEURALNETWORKS_BAD_DATA;
    for (uint32_t i = 0; i < o->rank; i++)
        if (o->dims[i] && o->dims[i] != t->dimensions[i]) return ANEURALNETWORKS_BAD_DATA;
    return ANEURALNETWORKS_NO_ERROR;
}

/* Common checks of the four setters; *o is the model operand behind the argument. */
static int arg_slot(ANeuralNetworksExecution *e, bool output, int32_t index, ndk_arg **a,
                    const ndk_operand **o) {
    if (atomic_load(&e->state) != ST_PREPARATION) return ANEURALNETWORKS_BAD_STATE;
    if (index < 0 || (uint32_t)index >= (output ? e->n_out : e->n_in))
        return ANEURALNETWORKS_BAD_DATA;
    *a = output ? &e->out[index] : &e->in[index];
    *o = output ? ndk_model_output(e->c->model, (uint32_t)index)
                : ndk_model_input(e->c->model, (uint32_t)index);
    return ANEURALNETWORKS_NO_ERROR;
}

/* Fills the argument's dimensions (the caller's type, else the model's) and checks length
 * against the bytes they hold, when known. */
static int arg_shape(ndk_arg *a, const ndk_operand *o, const ANeuralNetworksOperandType *t,
                     size_t length, bool check_length) {
    uint32_t rank = t ? t->dimensionCount : o->rank;
    const uint32_t *dims = t ? t->dimensions : o->dims;
    uint32_t *d = malloc(sizeof *d * (rank ? rank : 1));
    if (!d) return ANEURALNETWORKS_OUT_OF_MEMORY;
    if (rank) memcpy(d, dims, sizeof *d * rank);
    if (check_length && o->type != NDK_OEM_SCALAR) {
        uint64_t need = ndk_type_bytes(o->type, rank, d);
        if (need && need != length) {
            free(d);
            return ANEURALNETWORKS_BAD_DATA;
        }
    }
    arg_clear(a);
    a->dims = d;
    a->rank = rank;
    a->has_dims = t && rank;
    return ANEURALNETWORKS_NO_ERROR;
}

static int set_pointer(ANeuralNetworksExecution *e, bool output, int32_t index,
                       const ANeuralNetworksOperandType *type, const void *buffer, size_t length) {
    if (!e || (!buffer && length)) return ANEURALNETWORKS_UNEXPECTED_NULL;
    ndk_arg *a;
    const ndk_operand *o;
    int rc = arg_slot(e, output, index, &a, &o);
    if (rc) return rc;
    if ((rc = check_type(o, type, output || !buffer))) return rc;
    if (length > UINT32_MAX || (buffer && !length)) return ANEURALNETWORKS_BAD_DATA;
    if (!buffer) { /* omitted */
        arg_clear(a);
        a->state = ARG_NO_VALUE;
        return ANEURALNETWORKS_NO_ERROR;
    }
    if ((rc = arg_shape(a, o, type, length, true))) return rc;
    a->state = ARG_POINTER;
    a->ptr = (void *)buffer; /* written only for outputs */
    a->length = length;
    return ANEURALNETWORKS_NO_ERROR;
}

static int set_memory(ANeuralNetworksExecution *e, bool output, int32_t index,
                      const ANeuralNetworksOperandType *type, const ANeuralNetworksMemory *memory,
                      size_t offset, size_t length) {
    if (!e || !memory) return ANEURALNETWORKS_UNEXPECTED_NULL;
    ndk_arg *a;
    const ndk_operand *o;
    int rc = arg_slot(e, output, index, &a, &o);
    if (rc) return rc;
    if ((rc = check_type(o, type, output))) return rc;
    if (memory->from_desc) {
        /* Only in a role it was made for, and only whole. */
        if (!ndk_memory_has_role(memory, e->c, output, (uint32_t)index) || offset || length)
            return ANEURALNETWORKS_BAD_DATA;
        length = memory->driver ? 0 : memory->size; /* a daemon buffer is named whole */
        if (type && type->dimensionCount && memory->rank) {
            if (type->dimensionCount != memory->rank) return ANEURALNETWORKS_BAD_DATA;
            for (uint32_t i = 0; i < memory->rank; i++)
                if (memory->dims[i] && type->dimensions[i] &&
                    memory->dims[i] != type->dimensions[i])
                    return ANEURALNETWORKS_BAD_DATA;
        }
    } else if (offset > memory->size || length > memory->size - offset) {
        return ANEURALNETWORKS_BAD_DATA;
    }
    if (length > UINT32_MAX) return ANEURALNETWORKS_BAD_DATA;
    if ((rc = arg_shape(a, o, type, length, !memory->driver))) return rc;
    a->state = ARG_MEMORY;
    a->mem = ndk_memory_ref(memory);
    a->offset = offset;
    a->length = length;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_setInput(ANeuralNetworksExecution *execution, int32_t index,
                                      const ANeuralNetworksOperandType *type, const void *buffer,
                                      size_t length) {
    return set_pointer(execution, false, index, type, buffer, length);
}

int ANeuralNetworksExecution_setOutput(ANeuralNetworksExecution *execution, int32_t index,
                                       const ANeuralNetworksOperandType *type, void *buffer,
                                       size_t length) {
    return set_pointer(execution, true, index, type, buffer, length);
}

int ANeuralNetworksExecution_setInputFromMemory(ANeuralNetworksExecution *execution, int32_t index,
                                                const ANeuralNetworksOperandType *type,
                                                const ANeuralNetworksMemory *memory, size_t offset,
                                                size_t length) {
    return set_memory(execution, false, index, type, memory, offset, length);
}

int ANeuralNetworksExecution_setOutputFromMemory(ANeuralNetworksExecution *execution, int32_t index,
                                                 const ANeuralNetworksOperandType *type,
                                                 const ANeuralNetworksMemory *memory, size_t offset,
                                                 size_t length) {
    return set_memory(execution, true, index, type, memory, offset, length);
}

static bool single_device(const ANeuralNetworksExecution *e) {
    return e->c->explicit_devices && e->c->n_devices == 1;
}

int ANeuralNetworksExecution_setMeasureTiming(ANeuralNetworksExecution *e, bool measure) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!single_device(e)) return ANEURALNETWORKS_BAD_DATA;
    if (atomic_load(&e->state) != ST_PREPARATION) return ANEURALNETWORKS_BAD_STATE;
    e->measure = measure;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_setTimeout(ANeuralNetworksExecution *e, uint64_t duration) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!single_device(e)) return ANEURALNETWORKS_BAD_DATA;
    if (atomic_load(&e->state) != ST_PREPARATION) return ANEURALNETWORKS_BAD_STATE;
    e->timeout_ns = duration;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_setLoopTimeout(ANeuralNetworksExecution *e, uint64_t duration) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (atomic_load(&e->state) != ST_PREPARATION) return ANEURALNETWORKS_BAD_STATE;
    /* Over the maximum counts as the maximum; 0 is no time at all (the wire's 0 would mean
     * the default), so it travels as 1 ns. */
    e->loop_timeout_ns = duration > NDK_MAX_LOOP_TIMEOUT_NS ? NDK_MAX_LOOP_TIMEOUT_NS
                         : duration                         ? duration
                                                            : 1;
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- computing ------------------------------------------------------------------------- */

/* What every compute call checks before it starts anything. */
static int ready(const ANeuralNetworksExecution *e) {
    if (atomic_load(&e->state) != ST_PREPARATION) return ANEURALNETWORKS_BAD_STATE;
    for (uint32_t i = 0; i < e->n_in; i++)
        if (e->in[i].state == ARG_UNSPECIFIED) return ANEURALNETWORKS_BAD_DATA;
    for (uint32_t i = 0; i < e->n_out; i++)
        if (e->out[i].state == ARG_UNSPECIFIED) return ANEURALNETWORKS_BAD_DATA;
    return ANEURALNETWORKS_NO_ERROR;
}
/* Memories must allow what the execution does with them; a daemon buffer lives on the
 * connection that allocated it. */
static int check_memories(const ANeuralNetworksExecution *e) {
    for (uint32_t i = 0; i < e->n_in + e->n_out; i++) {
        const ndk_arg *a = i < e->n_in ? &e->in[i] : &e->out[i - e->n_in];
        if (a->state == ARG_MEMORY && a->mem->driver && atomic_load(&a->mem->session->dead))
            return ANEURALNETWORKS_DEAD_OBJECT;
    }
    for (uint32_t i = 0; i < e->n_in; i++) {
        const ndk_arg *a = &e->in[i];
        if (a->state != ARG_MEMORY) continue;
        if (!(a->mem->prot & PROT_READ)) return ANEURALNETWORKS_UNMAPPABLE;
        if (a->mem->from_desc && !a->mem->initialized) return ANEURALNETWORKS_OP_FAILED;
    }
    for (uint32_t i = 0; i < e->n_out; i++)
        if (e->out[i].state == ARG_MEMORY && !(e->out[i].mem->prot & PROT_WRITE))
            return ANEURALNETWORKS_UNMAPPABLE;
    return ANEURALNETWORKS_NO_ERROR;
}

/* Takes the output shapes the daemon reported. */
static void take_shapes(ANeuralNetworksExecution *e, const Nnd__ExecuteReply *x) {
    for (uint32_t i = 0; i < e->n_out; i++) {
        ndk_arg *a = &e->out[i];
        const Nnd__OutputShape *s =
            x && x->n_output_shapes == e->n_out ? x->output_shapes[i] : NULL;
        uint32_t rank = s ? (uint32_t)s->n_dimensions : a->rank;
        const uint32_t *dims = s ? s->dimensions : a->dims;
        free(a->out_dims);
        a->out_dims = malloc(sizeof *a->out_dims * (rank ? rank : 1));
        a->out_rank = a->out_dims ? rank : 0;
        if (a->out_dims && rank) memcpy(a->out_dims, dims, sizeof *dims * rank);
        a->sufficient = s ? s->is_sufficient : true;
    }
}

/* The bytes an output holds by its reported shape (zero-sized outputs hold none), at most
 * its buffer: the rest of its staging region is stale. */
static size_t output_bytes(const ndk_arg *a, const ndk_operand *o) {
    uint32_t es;
    bool tensor;
    if (!ndk_type_info(o->type, &es, &tensor) || !es || (tensor && !a->out_rank)) return a->length;
    uint64_t n = es;
    for (uint32_t k = 0; k < a->out_rank; k++)
        n = a->out_dims[k] && n > UINT64_MAX / a->out_dims[k] ? UINT64_MAX : n * a->out_dims[k];
    return n < a->length ? (size_t)n : a->length;
}

/* After the daemon answered: pointer outputs leave the staging memfd, descriptor memories
 * learn whether they now hold a value, and of which shape. */
static void finish_outputs(ANeuralNetworksExecution *e, const ndk_staging *st, int rc) {
    for (uint32_t i = 0; i < e->n_out; i++) {
        ndk_arg *a = &e->out[i];
        const ndk_operand *o = ndk_model_output(e->c->model, i);
        if (a->state == ARG_POINTER && rc == ANEURALNETWORKS_NO_ERROR)
            memcpy(a->ptr, st->map + a->stage_off, output_bytes(a, o));
        if (a->state != ARG_MEMORY || !a->mem->from_desc) continue;
        ANeuralNetworksMemory *m = a->mem;
        pthread_mutex_lock(&m->lock);
        m->initialized = rc == ANEURALNETWORKS_NO_ERROR;
        if (m->initialized && a->out_rank) {
            uint32_t *d = malloc(sizeof *d * a->out_rank);
            if (d) {
                memcpy(d, a->out_dims, sizeof *d * a->out_rank);
                free(m->dims);
                m->dims = d;
                m->rank = a->out_rank;
            }
        }
        pthread_mutex_unlock(&m->lock);
    }
}

/* The computation proper, synchronous, through burst b when not NULL; returns the NDK code
 * and completes the execution. */
static int run(ANeuralNetworksExecution *e, uint64_t deadline, nnd_burst *b) {
    ANeuralNetworksCompilation *c = e->c;
    ndk_session *s = c->session;
    ndk_staging st = {.fd = -1};
    ndk_request r;
    memset(&r, 0, sizeof r);
    Nnd__Reply *reply = NULL;
    int rc = atomic_load(&s->dead) ? ANEURALNETWORKS_DEAD_OBJECT : check_memories(e);
    size_t total = 0;
    for (uint32_t k = 0; k < e->n_in + e->n_out && !rc; k++) {
        ndk_arg *a = k < e->n_in ? &e->in[k] : &e->out[k - e->n_in];
        if (a->state != ARG_POINTER) continue;
        a->stage_off = total;
        total = (total + a->length + STAGE_ALIGN - 1) & ~(size_t)(STAGE_ALIGN - 1);
    }
    if (!rc && total) rc = ndk_staging_get(c, total, &st);
    for (uint32_t i = 0; i < e->n_in && !rc; i++)
        if (e->in[i].state == ARG_POINTER)
            memcpy(st.map + e->in[i].stage_off, e->in[i].ptr, e->in[i].length);
    if (!rc) rc = ndk_request_build(e->in, e->n_in, e->out, e->n_out, &st, &r);
    if (!rc && b) {
        /* A burst runs at its compilation's priority, which the daemon already has. */
        nnd_exec_opts o = {.measure_timing = e->measure,
                           .deadline_ns = deadline,
                           .loop_timeout_ns = e->loop_timeout_ns};
        rc = ndk_session_code(s, nnd_client_burst_execute_keyed(b, &r.req, r.fds, r.keys, r.n_fds,
                                                                &o, &reply, NULL, 0));
    } else if (!rc) {
        Nnd__Execute x = NND__EXECUTE__INIT;
        x.prepared_model = c->handle;
        x.request = &r.req;
        x.measure_timing = e->measure;
        x.deadline_ns = deadline;
        x.loop_timeout_ns = e->loop_timeout_ns;
        x.priority = (Nnd__Priority)c->priority;
        Nnd__Request req = NND__REQUEST__INIT;
        req.call_case = NND__REQUEST__CALL_EXECUTE;
        req.execute = &x;
        int n = nnd_client_call(s->client, &req, r.fds, r.n_fds, &reply, NULL, NULL, NULL, 0);
        rc = ndk_session_code(s, n < 0 ? n : (int)reply->status);
    }
    const Nnd__ExecuteReply *x =
        reply && reply->result_case == NND__REPLY__RESULT_EXECUTED ? reply->executed : NULL;
    if (rc == ANEURALNETWORKS_NO_ERROR || rc == ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE)
        take_shapes(e, x);
    finish_outputs(e, &st, rc);
    e->time_device = e->time_driver = UINT64_MAX;
    if (rc == ANEURALNETWORKS_NO_ERROR && e->measure && x && x->timing) {
        e->time_device = x->timing->time_on_device_ns;
        e->time_driver = x->timing->time_in_driver_ns;
    }
    if (reply) nnd__reply__free_unpacked(reply, NULL);
    ndk_request_free(&r);
    if (st.fd >= 0) ndk_staging_put(c, &st);
    e->result = rc;
    atomic_store(&e->state, ST_COMPLETED);
    return rc;
}

static uint64_t deadline_in(uint64_t duration) {
    return duration ? ndk_now_ns() + duration : 0;
}

/* compute, or burstCompute with b. */
static int compute(ANeuralNetworksExecution *e, nnd_burst *b) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = ready(e);
    if (rc) return rc;
    atomic_store(&e->state, ST_COMPUTATION);
    return run(e, deadline_in(e->timeout_ns), b);
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
    uint64_t deadline;
} async_job;

static void async_finish(async_job *j, int rc) {
    ANeuralNetworksExecution *e = j->e;
    pthread_mutex_lock(&e->lock);
    e->async = false;
    bool freed = e->freed;
    pthread_mutex_unlock(&e->lock);
    if (freed) execution_destroy(e);
    ndk_event_signal(j->ev, rc); /* last: a waiter may free the execution right after */
    ndk_event_unref(j->ev);
    free(j);
}

static void *async_main(void *arg) {
    async_job *j = arg;
    async_finish(j, run(j->e, j->deadline, NULL));
    return NULL;
}

int ANeuralNetworksExecution_startCompute(ANeuralNetworksExecution *e,
                                          ANeuralNetworksEvent **event) {
    if (!e || !event) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *event = NULL;
    int rc = ready(e);
    if (rc) return rc;
    async_job *j = calloc(1, sizeof *j);
    ANeuralNetworksEvent *ev = j ? ndk_event_new(2) : NULL; /* the caller's and the thread's */
    if (!ev) {
        free(j);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    *j = (async_job){.e = e, .ev = ev, .deadline = deadline_in(e->timeout_ns)};
    atomic_store(&e->state, ST_COMPUTATION);
    pthread_mutex_lock(&e->lock);
    e->async = true;
    pthread_mutex_unlock(&e->lock);
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    bool started = pthread_create(&t, &attr, async_main, j) == 0;
    pthread_attr_destroy(&attr);
    *event = ev;
    if (!started) async_main(j); /* no thread to spare: compute now, signal at once */
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_startComputeWithDependencies(
    ANeuralNetworksExecution *e, const ANeuralNetworksEvent *const *dependencies,
    uint32_t numDependencies, uint64_t duration, ANeuralNetworksEvent **event) {
    if (!event) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *event = NULL;
    if (!e || (!dependencies && numDependencies)) return ANEURALNETWORKS_UNEXPECTED_NULL;
    for (uint32_t i = 0; i < numDependencies; i++)
        if (!dependencies[i]) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = ready(e);
    if (rc) return rc;
    if (duration && !single_device(e)) return ANEURALNETWORKS_BAD_DATA;
    for (uint32_t i = 0; i < e->n_out; i++) { /* fenced outputs need their full shape */
        const ndk_arg *a = &e->out[i];
        if (a->state == ARG_NO_VALUE || !is_tensor(ndk_model_output(e->c->model, i)->type))
            continue;
        bool known = a->rank > 0;
        for (uint32_t k = 0; k < a->rank; k++)
            known = known && a->dims[k];
        if (!known) return ANEURALNETWORKS_BAD_DATA;
    }
    uint64_t deadline = deadline_in(e->timeout_ns);
    ANeuralNetworksEvent *ev = ndk_event_new(1);
    if (!ev) return ANEURALNETWORKS_OUT_OF_MEMORY;
    /* The daemon cannot wait on fences yet: wait here, then compute. */
    for (uint32_t i = 0; i < numDependencies; i++)
        if (ndk_event_wait((ANeuralNetworksEvent *)dependencies[i]) != ANEURALNETWORKS_NO_ERROR) {
            ndk_event_unref(ev);
            return ANEURALNETWORKS_OP_FAILED; /* a dependency did not complete normally */
        }
    if (duration) {
        uint64_t after = deadline_in(duration);
        if (!deadline || after < deadline) deadline = after;
    }
    atomic_store(&e->state, ST_COMPUTATION);
    rc = run(e, deadline, NULL);
    if (rc) {
        ndk_event_unref(ev);
        return rc;
    }
    ndk_event_signal(ev, rc);
    *event = ev;
    return ANEURALNETWORKS_NO_ERROR;
}

/* ---- results ---------------------------------------------------------------------------- */

/* Results are there once the execution completed without an error other than an output
 * buffer being too small. */
static int results_ready(const ANeuralNetworksExecution *e) {
    if (atomic_load(&e->state) != ST_COMPLETED) return ANEURALNETWORKS_BAD_STATE;
    if (e->result != ANEURALNETWORKS_NO_ERROR &&
        e->result != ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE)
        return ANEURALNETWORKS_BAD_STATE;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_getOutputOperandRank(ANeuralNetworksExecution *e, int32_t index,
                                                  uint32_t *rank) {
    if (!e || !rank) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = results_ready(e);
    if (rc) return rc;
    if (index < 0 || (uint32_t)index >= e->n_out) return ANEURALNETWORKS_BAD_DATA;
    *rank = e->out[index].out_rank;
    return e->out[index].sufficient ? ANEURALNETWORKS_NO_ERROR
                                    : ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE;
}

int ANeuralNetworksExecution_getOutputOperandDimensions(ANeuralNetworksExecution *e, int32_t index,
                                                        uint32_t *dimensions) {
    if (!e || !dimensions) return ANEURALNETWORKS_UNEXPECTED_NULL;
    int rc = results_ready(e);
    if (rc) return rc;
    if (index < 0 || (uint32_t)index >= e->n_out) return ANEURALNETWORKS_BAD_DATA;
    const ndk_arg *a = &e->out[index];
    if (!a->out_rank) return ANEURALNETWORKS_BAD_DATA; /* a scalar has no dimensions */
    memcpy(dimensions, a->out_dims, sizeof *dimensions * a->out_rank);
    return a->sufficient ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE;
}

int ANeuralNetworksExecution_getDuration(const ANeuralNetworksExecution *e, int32_t durationCode,
                                         uint64_t *duration) {
    if (!e || !duration) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (durationCode < ANEURALNETWORKS_DURATION_ON_HARDWARE ||
        durationCode > ANEURALNETWORKS_FENCED_DURATION_IN_DRIVER)
        return ANEURALNETWORKS_BAD_DATA;
    if (atomic_load(&e->state) != ST_COMPLETED) return ANEURALNETWORKS_BAD_STATE;
    *duration = UINT64_MAX;
    /* As the NNAPI runtime: no measurement asked for, or a failed execution, is BAD_STATE
     * with UINT64_MAX. Not fenced, the fenced durations equal the others. */
    if (e->result != ANEURALNETWORKS_NO_ERROR || !e->measure) return ANEURALNETWORKS_BAD_STATE;
    bool hw = durationCode == ANEURALNETWORKS_DURATION_ON_HARDWARE ||
              durationCode == ANEURALNETWORKS_FENCED_DURATION_ON_HARDWARE;
    *duration = hw ? e->time_device : e->time_driver;
    return ANEURALNETWORKS_NO_ERROR;
}
