/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_execution.c: ANeuralNetworksExecution: creation, arguments, the FL5 settings
 * (reusable, padding), the start and end of a computation, and the results.
 *
 * Pointer arguments are staged in a memfd the compilation lends (copy in before, copy out
 * after: the daemon only reads and writes shared memory); memory arguments travel as their
 * own fds. A reusable execution keeps its request and staging memfd across computations.
 * See ndk_execution.h; the compute calls are in ndk_compute.c and ndk_fenced.c. */
#include "client/ndk_execution.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "client/ndk_compilation.h"
#include "client/ndk_memory.h"
#include "client/ndk_model.h"
#include "client/ndk_types.h"

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
    atomic_init(&e->state, NDK_EXEC_PREPARATION);
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

static void job_free(ANeuralNetworksExecution *e, ndk_job *j) {
    ndk_request_free(&j->r);
    if (j->st.fd >= 0) ndk_staging_put(e->c, &j->st);
    j->st.fd = -1;
}

static void execution_destroy(ANeuralNetworksExecution *e) {
    /* The own burst first: the daemon unmaps its slots before the memories can go. */
    if (e->own_burst) ndk_session_code(e->c->session, nnd_client_burst_free(e->own_burst));
    if (e->has_kept) job_free(e, &e->kept);
    for (uint32_t i = 0; i < e->n_in; i++)
        arg_clear(&e->in[i]);
    for (uint32_t i = 0; i < e->n_out; i++)
        arg_clear(&e->out[i]);
    pthread_mutex_destroy(&e->lock);
    free(e->attributes.tokens);
    free(e->in);
    free(e->out);
    free(e);
}

void ANeuralNetworksExecution_free(ANeuralNetworksExecution *e) {
    if (!e) return;
    pthread_mutex_lock(&e->lock);
    bool owned = e->owned;
    if (owned) e->freed = true; /* the computation in flight frees it when done */
    pthread_mutex_unlock(&e->lock);
    if (!owned) execution_destroy(e);
}

void ndk_execution_hold(ANeuralNetworksExecution *e) {
    pthread_mutex_lock(&e->lock);
    e->owned = true;
    pthread_mutex_unlock(&e->lock);
}

void ndk_execution_unhold(ANeuralNetworksExecution *e) {
    pthread_mutex_lock(&e->lock);
    e->owned = false;
    bool freed = e->freed;
    pthread_mutex_unlock(&e->lock);
    if (freed) execution_destroy(e);
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
    if (atomic_load(&e->state) != NDK_EXEC_PREPARATION) return ANEURALNETWORKS_BAD_STATE;
    if (index < 0 || (uint32_t)index >= (output ? e->n_out : e->n_in))
        return ANEURALNETWORKS_BAD_DATA;
    *a = output ? &e->out[index] : &e->in[index];
    if ((*a)->state != ARG_UNSPECIFIED) return ANEURALNETWORKS_BAD_STATE; /* set once */
    *o = output ? ndk_model_output(e->c->model, (uint32_t)index)
                : ndk_model_input(e->c->model, (uint32_t)index);
    return ANEURALNETWORKS_NO_ERROR;
}

/* Fills the argument's dimensions (the caller's type, else the model's) and checks length
 * against the bytes they hold, when known. */
static int arg_shape(ndk_arg *a, const ndk_operand *o, const ANeuralNetworksOperandType *t,
                     size_t length, bool check_length, bool padding) {
    uint32_t rank = t ? t->dimensionCount : o->rank;
    const uint32_t *dims = t ? t->dimensions : o->dims;
    uint32_t *d = malloc(sizeof *d * (rank ? rank : 1));
    if (!d) return ANEURALNETWORKS_OUT_OF_MEMORY;
    if (rank) memcpy(d, dims, sizeof *d * rank);
    if (check_length && o->type != NDK_OEM_SCALAR) {
        /* Exactly the bytes the data needs, or with padding enabled at least those. */
        uint64_t need = ndk_type_bytes(o->type, rank, d);
        if (need && (padding ? length < need : need != length)) {
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
        e->args_set = true;
        a->state = ARG_NO_VALUE;
        return ANEURALNETWORKS_NO_ERROR;
    }
    if ((rc = arg_shape(a, o, type, length, true, e->padding))) return rc;
    e->args_set = true;
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
    if ((rc = arg_shape(a, o, type, length, !memory->driver, e->padding))) return rc;
    e->args_set = true;
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

bool ndk_execution_single_device(const ANeuralNetworksExecution *e) {
    return e->c->explicit_devices && e->c->n_devices == 1;
}

static bool preparing(const ANeuralNetworksExecution *e) {
    return atomic_load(&e->state) == NDK_EXEC_PREPARATION;
}

int ANeuralNetworksExecution_setMeasureTiming(ANeuralNetworksExecution *e, bool measure) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!ndk_execution_single_device(e)) return ANEURALNETWORKS_BAD_DATA;
    if (!preparing(e)) return ANEURALNETWORKS_BAD_STATE;
    e->measure = measure;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_setTimeout(ANeuralNetworksExecution *e, uint64_t duration) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!ndk_execution_single_device(e)) return ANEURALNETWORKS_BAD_DATA;
    if (!preparing(e)) return ANEURALNETWORKS_BAD_STATE;
    e->timeout_ns = duration;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_setLoopTimeout(ANeuralNetworksExecution *e, uint64_t duration) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!preparing(e)) return ANEURALNETWORKS_BAD_STATE;
    /* Over the maximum counts as the maximum; 0 is no time at all (the wire's 0 would mean
     * the default), so it travels as 1 ns. */
    e->loop_timeout_ns = duration > NDK_MAX_LOOP_TIMEOUT_NS ? NDK_MAX_LOOP_TIMEOUT_NS
                         : duration                         ? duration
                                                            : 1;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_setReusable(ANeuralNetworksExecution *e, bool reusable) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!preparing(e)) return ANEURALNETWORKS_BAD_STATE;
    e->reusable = reusable;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksExecution_enableInputAndOutputPadding(ANeuralNetworksExecution *e, bool enable) {
    if (!e) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!preparing(e) || e->args_set) return ANEURALNETWORKS_BAD_STATE;
    e->padding = enable;
    return ANEURALNETWORKS_NO_ERROR;
}

uint64_t ndk_execution_deadline(const ANeuralNetworksExecution *e) {
    return ndk_deadline_after(e->timeout_ns);
}

int ndk_execution_code(const ANeuralNetworksExecution *e, int rc, uint64_t deadline) {
    int code = ndk_session_code(e->c->session, rc);
    if (rc == -ETIMEDOUT && deadline) return ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT;
    /* The request itself was checked here: what the daemon refuses in it is a shape or value
     * that conflicts as the model runs, which the NNAPI runtime reports as OP_FAILED. */
    return rc == NND__ERROR_STATUS__INVALID_ARGUMENT ? ANEURALNETWORKS_OP_FAILED : code;
}

/* ---- the start and end of a computation --------------------------------------------------- */

int ndk_execution_ready(const ANeuralNetworksExecution *e) {
    int st = atomic_load(&e->state);
    if (st == NDK_EXEC_COMPUTATION || (st == NDK_EXEC_COMPLETED && !e->reusable))
        return ANEURALNETWORKS_BAD_STATE;
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

/* The job of a computation: the kept one of a reusable execution, else a new one. */
static int job_make(ANeuralNetworksExecution *e, ndk_job *j) {
    if (e->has_kept) {
        *j = e->kept;
        return ANEURALNETWORKS_NO_ERROR;
    }
    memset(j, 0, sizeof *j);
    j->st.fd = -1;
    size_t total = 0;
    for (uint32_t k = 0; k < e->n_in + e->n_out; k++) {
        ndk_arg *a = k < e->n_in ? &e->in[k] : &e->out[k - e->n_in];
        if (a->state != ARG_POINTER) continue;
        a->stage_off = total;
        total = (total + a->length + NDK_IO_ALIGN - 1) & ~(size_t)(NDK_IO_ALIGN - 1);
    }
    int rc = total ? ndk_staging_get(e->c, total, &j->st) : ANEURALNETWORKS_NO_ERROR;
    if (!rc && j->st.fd >= 0 && !j->st.token) /* once per staging memfd: later, no fd */
        j->st.token = ndk_session_register(e->c->session, NND__POOL_KIND__POOL_MEMFD, j->st.fd, 0,
                                           j->st.size);
    if (!rc) rc = ndk_request_build(e->in, e->n_in, e->out, e->n_out, &j->st, e->c->session, &j->r);
    if (!rc && e->reusable) {
        e->kept = *j;
        e->has_kept = true;
    }
    return rc;
}

int ndk_execution_begin(ANeuralNetworksExecution *e, ndk_job *j) {
    memset(j, 0, sizeof *j);
    j->st.fd = -1;
    int rc = ndk_execution_ready(e);
    if (rc) return rc;
    /* One computation at a time: of two threads starting one, one gets BAD_STATE. */
    int from = atomic_load(&e->state);
    if (!atomic_compare_exchange_strong(&e->state, &from, NDK_EXEC_COMPUTATION))
        return ANEURALNETWORKS_BAD_STATE;
    ndk_session *s = e->c->session;
    rc = e->c->fails_at_execution ? ANEURALNETWORKS_OP_FAILED
         : atomic_load(&s->dead)  ? ANEURALNETWORKS_DEAD_OBJECT
                                  : check_memories(e);
    if (!rc) rc = job_make(e, j);
    for (uint32_t i = 0; i < e->n_in && !rc; i++)
        if (e->in[i].state == ARG_POINTER)
            memcpy(j->st.map + e->in[i].stage_off, e->in[i].ptr, e->in[i].length);
    return rc ? ndk_execution_end(e, j, rc, NULL, NULL) : ANEURALNETWORKS_NO_ERROR;
}

/* True when the reported shape (rank, dims) contradicts a dimension a was declared with:
 * only unknown dimensions, or an unknown rank, may be filled in. */
static bool contradicts(const ndk_arg *a, uint32_t rank, const uint32_t *dims) {
    if (!a->rank) return false;
    if (rank != a->rank) return true;
    for (uint32_t k = 0; k < rank; k++)
        if (a->dims[k] && a->dims[k] != dims[k]) return true;
    return false;
}

/* Takes the output shapes the daemon reported; false when one contradicts its output. */
static bool take_shapes(ANeuralNetworksExecution *e, const Nnd__ExecuteReply *x) {
    bool ok = true;
    for (uint32_t i = 0; i < e->n_out; i++) {
        ndk_arg *a = &e->out[i];
        const Nnd__OutputShape *s =
            x && x->n_output_shapes == e->n_out ? x->output_shapes[i] : NULL;
        uint32_t rank = s ? (uint32_t)s->n_dimensions : a->rank;
        const uint32_t *dims = s ? s->dimensions : a->dims;
        if (s && a->state != ARG_NO_VALUE && contradicts(a, rank, dims)) ok = false;
        free(a->out_dims);
        a->out_dims = malloc(sizeof *a->out_dims * (rank ? rank : 1));
        a->out_rank = a->out_dims ? rank : 0;
        if (a->out_dims && rank) memcpy(a->out_dims, dims, sizeof *dims * rank);
        a->sufficient = s ? s->is_sufficient : true;
    }
    return ok;
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

static uint64_t ns_or_none(const Nnd__Timing *t, bool device) {
    if (!t) return UINT64_MAX;
    return device ? t->time_on_device_ns : t->time_in_driver_ns;
}

int ndk_execution_end(ANeuralNetworksExecution *e, ndk_job *j, int rc, const Nnd__ExecuteReply *x,
                      const Nnd__Timing *fenced) {
    if ((rc == ANEURALNETWORKS_NO_ERROR || rc == ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE) &&
        !take_shapes(e, x))
        rc = ANEURALNETWORKS_OP_FAILED; /* the declared dimensions must hold */
    finish_outputs(e, &j->st, rc);
    const Nnd__Timing *t = rc == ANEURALNETWORKS_NO_ERROR && e->measure && x ? x->timing : NULL;
    if (rc != ANEURALNETWORKS_NO_ERROR || !e->measure) fenced = NULL;
    e->time_device = ns_or_none(t, true);
    e->time_driver = ns_or_none(t, false);
    e->fenced_device = fenced ? ns_or_none(fenced, true) : e->time_device;
    e->fenced_driver = fenced ? ns_or_none(fenced, false) : e->time_driver;
    if (!e->has_kept || j->r.args != e->kept.r.args) job_free(e, j); /* a reusable one keeps it */
    e->result = rc;
    atomic_store(&e->state, NDK_EXEC_COMPLETED);
    return rc;
}

/* ---- results ---------------------------------------------------------------------------- */

/* Results are there once the execution completed without an error other than an output
 * buffer being too small. */
static int results_ready(const ANeuralNetworksExecution *e) {
    if (atomic_load(&e->state) != NDK_EXEC_COMPLETED) return ANEURALNETWORKS_BAD_STATE;
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
    if (atomic_load(&e->state) != NDK_EXEC_COMPLETED) return ANEURALNETWORKS_BAD_STATE;
    *duration = UINT64_MAX;
    /* As the NNAPI runtime: no measurement asked for, or a failed execution, is BAD_STATE
     * with UINT64_MAX. Not fenced, the fenced durations equal the others. */
    if (e->result != ANEURALNETWORKS_NO_ERROR || !e->measure) return ANEURALNETWORKS_BAD_STATE;
    switch (durationCode) {
    case ANEURALNETWORKS_DURATION_ON_HARDWARE: *duration = e->time_device; break;
    case ANEURALNETWORKS_DURATION_IN_DRIVER: *duration = e->time_driver; break;
    case ANEURALNETWORKS_FENCED_DURATION_ON_HARDWARE: *duration = e->fenced_device; break;
    default: *duration = e->fenced_driver; break;
    }
    return ANEURALNETWORKS_NO_ERROR;
}
