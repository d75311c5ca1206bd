/* dispatch.c: one handler per call. See dispatch.h. */
#include "dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus.h"
#include "convert.h"
#include "log.h"
#include "pool.h"

/* A prepared model as a session owns it. */
typedef struct model_obj {
    nnd_prepared *prepared;
    nnd_exec *exec; /* made at the first execution, then reused */
} model_obj;

static void model_obj_free(void *p) {
    model_obj *o = p;
    nnd_exec_free(o->exec);
    nnd_prepared_free(o->prepared); /* releases the constant pools it owns */
    free(o);
}

/* One request being answered. */
typedef struct call {
    nnd_daemon *d;
    nnd_session *s;
    nnd_frame_in *in;
    const Nnd__Request *req;
    const char *name; /* the call's message name, e.g. "PrepareModel" */
    Nnd__Reply reply;
    uint64_t t0;           /* CLOCK_MONOTONIC when dispatch began */
    char err[NND_ERR_LEN]; /* filled by the engine, pools and convert */
    char msg[NND_ERR_LEN + 64];
} call;

Nnd__ErrorStatus nnd_wire_status(nnd_status st) {
    if (st == NND_UNSUPPORTED) return NND__ERROR_STATUS__INVALID_ARGUMENT;
    if ((int)st < 0 || (int)st > NND_RESOURCE_EXHAUSTED_PERSISTENT)
        return NND__ERROR_STATUS__GENERAL_FAILURE;
    return (Nnd__ErrorStatus)st;
}

static const char *wire_status_name(Nnd__ErrorStatus st) {
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&nnd__error_status__descriptor, (int)st);
    return v ? v->name : "?";
}

static void send_reply(call *c) {
    /* Close the fds the call did not keep first: once answered, the daemon holds nothing
     * of the request but what it was asked to keep. */
    for (size_t i = 0; i < c->in->nfds; i++) {
        if (c->in->fds[i] >= 0) close(c->in->fds[i]);
        c->in->fds[i] = -1;
    }
    if (c->reply.status != NND__ERROR_STATUS__NONE)
        nnd_log_debug("client %llu: %s id %llu: %s: %s", (unsigned long long)c->s->serial, c->name,
                      (unsigned long long)c->req->id, wire_status_name(c->reply.status),
                      c->reply.message);
    c->s->send(c->s->send_ctx, &c->reply.base, NULL, 0);
}

static void fail(call *c, nnd_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(call *c, nnd_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->msg, sizeof c->msg, fmt, ap);
    va_end(ap);
    c->reply.status = nnd_wire_status(st);
    c->reply.message = c->msg;
    c->reply.result_case = NND__REPLY__RESULT__NOT_SET;
    send_reply(c);
}

static bool valid_priority(Nnd__Priority p) {
    return p == NND__PRIORITY__PRIORITY_UNSPECIFIED || p == NND__PRIORITY__PRIORITY_LOW ||
           p == NND__PRIORITY__PRIORITY_MEDIUM || p == NND__PRIORITY__PRIORITY_HIGH;
}

/* ---- device queries -------------------------------------------------------------------- */

static void on_hello(call *c) {
    const Nnd__Hello *h = c->req->hello;
    snprintf(c->s->name, sizeof c->s->name, "%s", h->client_name);
    nnd_log_debug("client %llu is \"%s\", protocol %u", (unsigned long long)c->s->serial,
                  c->s->name, h->protocol_version);
    Nnd__HelloReply r = NND__HELLO_REPLY__INIT;
    r.protocol_version = NND_PROTOCOL_VERSION;
    r.daemon_version = (char *)NND_VERSION;
    c->reply.result_case = NND__REPLY__RESULT_HELLO;
    c->reply.hello = &r;
    send_reply(c);
}

#define N_PERF_TYPES 15 /* FLOAT32 .. TENSOR_QUANT8_ASYMM_SIGNED */

static void on_get_capabilities(call *c) {
    /* Uniform, plausible numbers (relative to the CPU reference: lower is better). */
    Nnd__PerformanceInfo one = NND__PERFORMANCE_INFO__INIT;
    one.exec_time = 1.0f;
    one.power_usage = 1.0f;
    Nnd__OperandPerformance ops[N_PERF_TYPES], *opp[N_PERF_TYPES];
    for (int i = 0; i < N_PERF_TYPES; i++) {
        nnd__operand_performance__init(&ops[i]);
        ops[i].type = i;
        ops[i].info = &one;
        opp[i] = &ops[i];
    }
    Nnd__Capabilities caps = NND__CAPABILITIES__INIT;
    caps.relaxed_float32_to_float16_scalar = &one;
    caps.relaxed_float32_to_float16_tensor = &one;
    caps.if_performance = &one;
    caps.while_performance = &one;
    caps.n_operand_performance = N_PERF_TYPES;
    caps.operand_performance = opp;
    caps.dma_buf_supported = access("/dev/dma_heap/system", F_OK) == 0;
    c->reply.result_case = NND__REPLY__RESULT_CAPABILITIES;
    c->reply.capabilities = &caps;
    send_reply(c);
}

static void on_get_version_string(call *c) {
    Nnd__VersionStringReply r = NND__VERSION_STRING_REPLY__INIT;
    r.version = (char *)("nnd " NND_VERSION);
    c->reply.result_case = NND__REPLY__RESULT_VERSION_STRING;
    c->reply.version_string = &r;
    send_reply(c);
}

static void on_get_type(call *c) {
    Nnd__TypeReply r = NND__TYPE_REPLY__INIT;
    r.type = NND__DEVICE_TYPE__DEVICE_CPU;
    c->reply.result_case = NND__REPLY__RESULT_TYPE;
    c->reply.type = &r;
    send_reply(c);
}

static void on_get_number_of_cache_files_needed(call *c) {
    Nnd__CacheFilesReply r = NND__CACHE_FILES_REPLY__INIT; /* no caching yet: 0 and 0 */
    c->reply.result_case = NND__REPLY__RESULT_CACHE_FILES;
    c->reply.cache_files = &r;
    send_reply(c);
}

/* ---- models ---------------------------------------------------------------------------- */

/* Maps a model's pools read-only into views[] (n_pools entries, caller-allocated). */
static nnd_status map_model_pools(call *c, const Nnd__Model *m, nnd_memory_view *views) {
    nnd_pool *pools = calloc(m->n_pools + 1, sizeof *pools);
    if (!pools) {
        snprintf(c->err, sizeof c->err, "out of memory mapping %zu pools", m->n_pools);
        return NND_GENERAL_FAILURE;
    }
    nnd_status st =
        nnd_pools_map(m->pools, m->n_pools, c->in, true, NULL, pools, c->err, sizeof c->err);
    for (size_t i = 0; st == NND_OK && i < m->n_pools; i++)
        views[i] = pools[i].view;
    free(pools);
    return st;
}

static void release_views(nnd_memory_view *views, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (views[i].release) views[i].release(views[i].ctx);
}

static void on_get_supported_operations(call *c) {
    const Nnd__Model *m = c->req->get_supported_operations->model;
    if (!m) {
        fail(c, NND_INVALID_ARGUMENT, "GetSupportedOperations names no model");
        return;
    }
    nnd_memory_view *views = calloc(m->n_pools + 1, sizeof *views);
    if (!views) {
        fail(c, NND_GENERAL_FAILURE, "out of memory");
        return;
    }
    nnd_model_desc desc;
    memset(&desc, 0, sizeof desc);
    bool *sup = NULL;
    protobuf_c_boolean *wire = NULL;
    nnd_status st = map_model_pools(c, m, views);
    if (st == NND_OK) st = nnd_model_from_proto(m, views, m->n_pools, &desc, c->err, sizeof c->err);
    if (st == NND_OK) {
        sup = calloc(desc.n_operations + 1, sizeof *sup);
        wire = calloc(desc.n_operations + 1, sizeof *wire);
        if (!sup || !wire) {
            st = NND_GENERAL_FAILURE;
            snprintf(c->err, sizeof c->err, "out of memory");
        }
    }
    uint64_t faults = nnd_pool_faults();
    if (st == NND_OK) st = nnd_supported_operations(&desc, sup, c->err, sizeof c->err);
    if (st == NND_OK && nnd_pool_faults() != faults) {
        st = NND_GENERAL_FAILURE;
        snprintf(c->err, sizeof c->err, "a model pool shrank while it was being read");
    }
    if (st != NND_OK) {
        fail(c, st, "%s", c->err);
    } else {
        for (uint32_t i = 0; i < desc.n_operations; i++)
            wire[i] = sup[i];
        Nnd__SupportedOperationsReply r = NND__SUPPORTED_OPERATIONS_REPLY__INIT;
        r.n_supported = desc.n_operations;
        r.supported = wire;
        c->reply.result_case = NND__REPLY__RESULT_SUPPORTED_OPERATIONS;
        c->reply.supported_operations = &r;
        send_reply(c);
    }
    nnd_model_desc_clear(&desc);
    release_views(views, m->n_pools);
    free(views);
    free(sup);
    free(wire);
}

static void on_prepare_model(call *c) {
    const Nnd__PrepareModel *pm = c->req->prepare_model;
    const Nnd__Model *m = pm->model;
    if (!m) {
        fail(c, NND_INVALID_ARGUMENT, "PrepareModel names no model");
        return;
    }
    if ((int)pm->preference < 0 || (int)pm->preference > 3) {
        fail(c, NND_INVALID_ARGUMENT, "invalid execution preference %d", (int)pm->preference);
        return;
    }
    if (!valid_priority(pm->priority)) {
        fail(c, NND_INVALID_ARGUMENT, "invalid priority %d", (int)pm->priority);
        return;
    }
    if (nnd_session_count(c->s, NND_OBJ_ANY) >= NND_SESSION_MAX_OBJECTS) {
        fail(c, NND_RESOURCE_EXHAUSTED_TRANSIENT,
             "this connection already holds %d objects; release some first",
             NND_SESSION_MAX_OBJECTS);
        return;
    }
    if (pm->deadline_ns && nnd_now_ns() > pm->deadline_ns) {
        fail(c, NND_MISSED_DEADLINE_PERSISTENT, "deadline passed before preparation began");
        return;
    }

    nnd_memory_view *views = calloc(m->n_pools + 1, sizeof *views);
    model_obj *o = calloc(1, sizeof *o);
    if (!views || !o) {
        free(views);
        free(o);
        fail(c, NND_GENERAL_FAILURE, "out of memory");
        return;
    }
    nnd_model_desc desc;
    memset(&desc, 0, sizeof desc);
    bool views_owned = false; /* true once the prepared model owns the views */
    uint64_t t = 0, faults = nnd_pool_faults(), handle = 0;
    nnd_status st = map_model_pools(c, m, views);
    if (st == NND_OK) st = nnd_model_from_proto(m, views, m->n_pools, &desc, c->err, sizeof c->err);
    if (st == NND_OK) {
        t = nnd_now_ns();
        st = nnd_prepare(&desc, &o->prepared, c->err, sizeof c->err);
        t = nnd_now_ns() - t;
        views_owned = st == NND_OK;
    }
    if (st == NND_OK && nnd_pool_faults() != faults) {
        st = NND_GENERAL_FAILURE;
        snprintf(c->err, sizeof c->err, "a model pool shrank while the model was prepared");
    }
    if (st == NND_OK && nnd_session_add(c->s, NND_OBJ_PREPARED, o, model_obj_free, &handle) < 0) {
        st = NND_GENERAL_FAILURE;
        snprintf(c->err, sizeof c->err, "out of memory storing the prepared model");
    }
    nnd_model_desc_clear(&desc);
    if (!views_owned) release_views(views, m->n_pools);
    free(views);
    if (st != NND_OK) {
        model_obj_free(o);
        fail(c, st, "%s", c->err);
        return;
    }
    uint32_t n_ops = nnd_prepared_num_operations(o->prepared);
    nnd_log_info("client %llu prepared model 0x%016llx: %u operations in %llu us",
                 (unsigned long long)c->s->serial, (unsigned long long)handle, n_ops,
                 (unsigned long long)(t / 1000));
    Nnd__PreparedReply r = NND__PREPARED_REPLY__INIT;
    r.handle = handle;
    c->reply.result_case = NND__REPLY__RESULT_PREPARED;
    c->reply.prepared = &r;
    send_reply(c);
    cJSON *ev = nnd_bus_event("prepared");
    if (ev) {
        cJSON_AddNumberToObject(ev, "pid", c->s->pid);
        nnd_json_add_handle(ev, "handle", handle);
        cJSON_AddNumberToObject(ev, "operations", n_ops);
        nnd_json_add_u64(ev, "prepare_ns", t);
    }
    nnd_bus_publish(c->d->bus, ev);
}

/* ---- execution ------------------------------------------------------------------------- */

typedef struct run_ctx {
    const nnd_session *s;
    uint64_t deadline_ns;
} run_ctx;

/* Between operations: stop when nobody waits for the answer or it would come too late. */
static nnd_status checkpoint(void *ctx, uint32_t next_op) {
    (void)next_op;
    const run_ctx *r = ctx;
    if (r->s->closing) return NND_GENERAL_FAILURE;
    if (r->deadline_ns && nnd_now_ns() > r->deadline_ns) return NND_MISSED_DEADLINE_TRANSIENT;
    return NND_OK;
}

/* Outputs must land in memory we mapped writable. */
static nnd_status check_outputs_writable(const Nnd__ExecutionRequest *r, const nnd_pool *pools,
                                         char *err, size_t errlen) {
    for (size_t i = 0; i < r->n_outputs; i++) {
        const Nnd__RequestArgument *a = r->outputs[i];
        if (a->has_no_value || !a->location || a->location->pool_index >= r->n_pools) continue;
        if (!pools[a->location->pool_index].writable) {
            snprintf(err, errlen, "output %zu points into pool %u, which is read-only", i,
                     a->location->pool_index);
            return NND_INVALID_ARGUMENT;
        }
    }
    return NND_OK;
}

static void on_execute(call *c) {
    const Nnd__Execute *x = c->req->execute;
    model_obj *o = nnd_session_find(c->s, x->prepared_model, NND_OBJ_PREPARED);
    if (!o) {
        fail(c, NND_INVALID_ARGUMENT, "unknown prepared model handle 0x%016llx",
             (unsigned long long)x->prepared_model);
        return;
    }
    if (!valid_priority(x->priority)) {
        fail(c, NND_INVALID_ARGUMENT, "invalid priority %d", (int)x->priority);
        return;
    }
    if (x->deadline_ns && nnd_now_ns() > x->deadline_ns) {
        fail(c, NND_MISSED_DEADLINE_PERSISTENT, "deadline passed before execution began");
        return;
    }
    const Nnd__ExecutionRequest *r = x->request;
    if (!r) {
        fail(c, NND_INVALID_ARGUMENT, "Execute names no request");
        return;
    }

    uint32_t ni = nnd_prepared_num_inputs(o->prepared), no = nnd_prepared_num_outputs(o->prepared);
    nnd_pool *pools = calloc(r->n_pools + 1, sizeof *pools);
    nnd_memory_view *views = calloc(r->n_pools + 1, sizeof *views);
    nnd_io *inputs = calloc(ni + 1, sizeof *inputs);
    nnd_io *outputs = calloc(no + 1, sizeof *outputs);
    nnd_output_shape *shapes = calloc(no + 1, sizeof *shapes);
    Nnd__OutputShape *ws = calloc(no + 1, sizeof *ws);
    Nnd__OutputShape **wsp = calloc(no + 1, sizeof *wsp);
    size_t mapped = 0;
    uint64_t t_run = 0;
    nnd_status st = NND_OK;
    if (!pools || !views || !inputs || !outputs || !shapes || !ws || !wsp) {
        st = NND_GENERAL_FAILURE;
        snprintf(c->err, sizeof c->err, "out of memory");
    }
    if (st == NND_OK) {
        if (!c->s->pool_cache) c->s->pool_cache = nnd_pool_cache_create();
        st = nnd_pools_map(r->pools, r->n_pools, c->in, false, c->s->pool_cache, pools, c->err,
                           sizeof c->err);
        if (st == NND_OK) mapped = r->n_pools;
    }
    for (size_t i = 0; i < mapped; i++)
        views[i] = pools[i].view;
    if (st == NND_OK) st = check_outputs_writable(r, pools, c->err, sizeof c->err);
    if (st == NND_OK)
        st = nnd_request_from_proto(r, o->prepared, views, mapped, inputs, outputs, c->err,
                                    sizeof c->err);
    if (st == NND_OK && !o->exec && !(o->exec = nnd_exec_create(o->prepared))) {
        st = NND_GENERAL_FAILURE;
        snprintf(c->err, sizeof c->err, "out of memory creating an execution");
    }
    bool ran = st == NND_OK;
    if (ran) {
        run_ctx rc = {.s = c->s, .deadline_ns = x->deadline_ns};
        nnd_checkpoint cp = {.check = checkpoint, .ctx = &rc};
        uint64_t faults = nnd_pool_faults();
        t_run = nnd_now_ns();
        st = nnd_exec_run(o->exec, inputs, outputs, shapes, &cp, c->err, sizeof c->err);
        t_run = nnd_now_ns() - t_run;
        if (nnd_pool_faults() != faults) {
            st = NND_GENERAL_FAILURE;
            snprintf(c->err, sizeof c->err, "a memory pool shrank during the execution");
        }
        c->d->executions++;
    }
    nnd_pools_release(pools, mapped);

    if (st == NND_OK || st == NND_OUTPUT_INSUFFICIENT_SIZE) {
        Nnd__ExecuteReply er = NND__EXECUTE_REPLY__INIT;
        for (uint32_t i = 0; i < no; i++) {
            nnd__output_shape__init(&ws[i]);
            ws[i].n_dimensions = shapes[i].rank;
            ws[i].dimensions = shapes[i].dims;
            ws[i].is_sufficient = shapes[i].sufficient;
            wsp[i] = &ws[i];
        }
        er.n_output_shapes = no;
        er.output_shapes = wsp;
        Nnd__Timing timing = NND__TIMING__INIT;
        timing.time_on_device_ns = timing.time_in_driver_ns = UINT64_MAX;
        if (x->measure_timing && st == NND_OK) {
            timing.time_on_device_ns = t_run;
            timing.time_in_driver_ns = nnd_now_ns() - c->t0;
        }
        er.timing = &timing;
        c->reply.status = nnd_wire_status(st);
        if (st != NND_OK) {
            snprintf(c->msg, sizeof c->msg, "%s", c->err);
            c->reply.message = c->msg;
        }
        c->reply.result_case = NND__REPLY__RESULT_EXECUTED;
        c->reply.executed = &er;
        send_reply(c);
    } else {
        fail(c, st, "%s", c->err);
    }
    if (ran) {
        cJSON *ev = nnd_bus_event("executed");
        if (ev) {
            cJSON_AddNumberToObject(ev, "pid", c->s->pid);
            nnd_json_add_handle(ev, "handle", x->prepared_model);
            cJSON_AddStringToObject(ev, "status", wire_status_name(nnd_wire_status(st)));
            nnd_json_add_u64(ev, "latency_ns", nnd_now_ns() - c->t0);
        }
        nnd_bus_publish(c->d->bus, ev);
    }
    free(pools);
    free(views);
    free(inputs);
    free(outputs);
    free(shapes);
    free(ws);
    free(wsp);
}

/* ---- objects --------------------------------------------------------------------------- */

static void on_release(call *c) {
    uint64_t h = c->req->release->handle;
    if (nnd_session_release(c->s, h) < 0) {
        fail(c, NND_INVALID_ARGUMENT, "unknown handle 0x%016llx", (unsigned long long)h);
        return;
    }
    Nnd__Empty done = NND__EMPTY__INIT;
    c->reply.result_case = NND__REPLY__RESULT_DONE;
    c->reply.done = &done;
    send_reply(c);
}

/* ---- the table ------------------------------------------------------------------------- */

typedef void (*handler)(call *c);

static handler handler_for(Nnd__Request__CallCase cc) {
    switch (cc) {
    case NND__REQUEST__CALL_HELLO: return on_hello;
    case NND__REQUEST__CALL_GET_CAPABILITIES: return on_get_capabilities;
    case NND__REQUEST__CALL_GET_VERSION_STRING: return on_get_version_string;
    case NND__REQUEST__CALL_GET_TYPE: return on_get_type;
    case NND__REQUEST__CALL_GET_NUMBER_OF_CACHE_FILES_NEEDED:
        return on_get_number_of_cache_files_needed;
    case NND__REQUEST__CALL_GET_SUPPORTED_OPERATIONS: return on_get_supported_operations;
    case NND__REQUEST__CALL_PREPARE_MODEL: return on_prepare_model;
    case NND__REQUEST__CALL_EXECUTE: return on_execute;
    case NND__REQUEST__CALL_RELEASE: return on_release;
    default: return NULL;
    }
}

void nnd_dispatch(nnd_daemon *d, nnd_session *s, nnd_frame_in *in) {
    call c = {.d = d, .s = s, .in = in, .req = (const Nnd__Request *)in->msg, .name = "Request"};
    nnd__reply__init(&c.reply);
    c.reply.id = c.req->id;
    c.t0 = nnd_now_ns();
    Nnd__Request__CallCase cc = c.req->call_case;
    if (cc == NND__REQUEST__CALL__NOT_SET) {
        fail(&c, NND_INVALID_ARGUMENT, "request names no call");
        return;
    }
    /* The call's name is its message type's, straight from the schema. */
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(&nnd__request__descriptor, (unsigned)cc);
    if (f && f->descriptor)
        c.name = ((const ProtobufCMessageDescriptor *)f->descriptor)->short_name;
    nnd_log_debug("client %llu: %s id %llu", (unsigned long long)s->serial, c.name,
                  (unsigned long long)c.req->id);
    handler h = handler_for(cc);
    if (!h) {
        fail(&c, NND_GENERAL_FAILURE, "%s: not implemented yet", c.name);
        return;
    }
    h(&c);
}

void nnd_reply_status(nnd_session *s, uint64_t id, nnd_status st, const char *message) {
    Nnd__Reply r = NND__REPLY__INIT;
    r.id = id;
    r.status = nnd_wire_status(st);
    r.message = (char *)message;
    s->send(s->send_ctx, &r.base, NULL, 0);
}
