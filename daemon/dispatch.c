/* dispatch.c: one handler per call. See dispatch.h. */
#include "dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buffer.h"
#include "burst.h"
#include "bus.h"
#include "cache.h"
#include "convert.h"
#include "extension.h"
#include "extensions.h"
#include "log.h"
#include "pool.h"
#include "execution.h"
#include "fenced.h"
#include "reply.h"

/* A prepared model as a session owns it. */
typedef struct model_obj {
    nnd_prepared *prepared; /* borrowed from ref when ref is set */
    nnd_cache_ref *ref;     /* a model from the cache, maybe shared with other sessions */
    nnd_sched_model *sm;    /* the scheduler's view: estimates, executions (execution.h) */
} model_obj;

/* Frees what keeps the prepared model alive, and o. */
static void model_obj_destroy(void *p) {
    model_obj *o = p;
    if (o->ref)
        nnd_cache_unref(o->ref);
    else
        nnd_prepared_free(o->prepared); /* releases the constant pools it owns */
    free(o);
}

/* The session's free function. Queued or running executions hold references on o->sm,
 * whose last one destroys o. */
static void model_obj_free(void *p) {
    model_obj *o = p;
    if (o->sm)
        nnd_sched_model_unref(o->sm);
    else
        model_obj_destroy(o);
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

static void send_reply(call *c) {
    nnd_close_unclaimed(c->in); /* the fds the call did not keep go first */
    if (c->reply.status != NND__ERROR_STATUS__NONE)
        nnd_log_debug("client %llu: %s id %llu: %s: %s", (unsigned long long)c->s->serial, c->name,
                      (unsigned long long)c->req->id, nnd_wire_status_name(c->reply.status),
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

/* Whether the session may hold one more object of kind; answers when not. */
static bool room_for(call *c, nnd_obj_kind kind) {
    nnd_status st = nnd_session_check_quota(c->s, kind, c->err, sizeof c->err);
    if (st != NND_OK) fail(c, st, "%s", c->err);
    return st == NND_OK;
}

static bool valid_priority(Nnd__Priority p) {
    return p == NND__PRIORITY__PRIORITY_UNSPECIFIED || p == NND__PRIORITY__PRIORITY_LOW ||
           p == NND__PRIORITY__PRIORITY_MEDIUM || p == NND__PRIORITY__PRIORITY_HIGH;
}

/* What PrepareModel and PrepareModelFromCache check first: a known priority, room in the
 * quotas for one more prepared model, and a deadline not yet past (else answered here). */
static bool prepare_admitted(call *c, Nnd__Priority priority, uint64_t deadline_ns) {
    if (!valid_priority(priority)) {
        fail(c, NND_INVALID_ARGUMENT, "invalid priority %d", (int)priority);
        return false;
    }
    if (!room_for(c, NND_OBJ_PREPARED)) return false;
    if (deadline_ns && nnd_now_ns() > deadline_ns) {
        fail(c, NND_MISSED_DEADLINE_PERSISTENT, "deadline passed before preparation began");
        return false;
    }
    return true;
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
    caps.dma_buf_supported = nnd_pool_dmabuf_supported();
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

/* The loaded extensions, for allowed clients only (extensions.h); faulted ones are left
 * out, since models using them would fail. */
static void on_get_supported_extensions(call *c) {
    bool allowed = nnd_extensions_allowed(c->d, c->s);
    uint32_t n = allowed ? nnd_ext_count() : 0, k = 0;
    Nnd__Extension *ext = calloc(n + 1, sizeof *ext), **extp = calloc(n + 1, sizeof *extp);
    size_t n_types = 0;
    nnd_ext_info x;
    for (uint32_t i = 0; i < n && nnd_ext_get(i, &x); i++)
        n_types += x.n_operand_types;
    Nnd__ExtensionOperandTypeInformation *ti = calloc(n_types + 1, sizeof *ti);
    Nnd__ExtensionOperandTypeInformation **tip = calloc(n_types + 1, sizeof *tip);
    if (!ext || !extp || !ti || !tip) {
        free(ext), free(extp), free(ti), free(tip);
        fail(c, NND_GENERAL_FAILURE, "out of memory");
        return;
    }
    size_t t = 0;
    for (uint32_t i = 0; i < n && nnd_ext_get(i, &x); i++) {
        if (x.faulted || t + x.n_operand_types > n_types) continue;
        nnd__extension__init(&ext[k]);
        ext[k].name = (char *)x.name;
        ext[k].operand_types = &tip[t];
        for (uint32_t j = 0; j < x.n_operand_types; j++, t++) {
            nnd__extension_operand_type_information__init(&ti[t]);
            ti[t].type = x.operand_types[j].code;
            ti[t].is_tensor = x.operand_types[j].is_tensor;
            ti[t].byte_size = x.operand_types[j].byte_size;
            tip[t] = &ti[t];
        }
        ext[k].n_operand_types = x.n_operand_types;
        extp[k] = &ext[k];
        k++;
    }
    if (!allowed)
        nnd_log_debug("client %llu (uid %u, %s) is not on the extensions allowlist",
                      (unsigned long long)c->s->serial, (unsigned)c->s->uid,
                      c->s->exe[0] ? c->s->exe : "executable unknown");
    Nnd__SupportedExtensionsReply r = NND__SUPPORTED_EXTENSIONS_REPLY__INIT;
    r.n_extensions = k;
    r.extensions = extp;
    c->reply.result_case = NND__REPLY__RESULT_SUPPORTED_EXTENSIONS;
    c->reply.supported_extensions = &r;
    send_reply(c);
    free(ext), free(extp), free(ti), free(tip);
}

static void on_get_number_of_cache_files_needed(call *c) {
    Nnd__CacheFilesReply r = NND__CACHE_FILES_REPLY__INIT; /* 0 and 0 when caching is off */
    if (c->d->cache) r.model_cache = r.data_cache = 1;
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
    if (st == NND_OK)
        st = nnd_model_from_proto_ext(m, views, m->n_pools, nnd_extensions_allowed(c->d, c->s),
                                      &desc, c->err, sizeof c->err);
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

/* The fd at a request's fd index, or -1 when the index is out of range or taken. */
static int request_fd(const call *c, uint32_t index) {
    return index < c->in->nfds ? c->in->fds[index] : -1;
}

/* Whether PrepareModel asks for client caching in a form this daemon takes: one model and
 * one data cache file and a 32-byte token. Anything else prepares without caching, as the
 * HAL allows. */
static bool cache_args(const call *c, const Nnd__PrepareModel *pm, int *model_fd, int *data_fd) {
    if (!pm->n_model_cache_fds && !pm->n_data_cache_fds) return false;
    if (c->d->cache && pm->token.len == NND_CACHE_TOKEN_LEN && pm->n_model_cache_fds == 1 &&
        pm->n_data_cache_fds == 1) {
        *model_fd = request_fd(c, pm->model_cache_fds[0]);
        *data_fd = request_fd(c, pm->data_cache_fds[0]);
        if (*model_fd >= 0 && *data_fd >= 0 && *model_fd != *data_fd) return true;
    }
    nnd_log_debug("client %llu: cache arguments not usable; preparing without caching",
                  (unsigned long long)c->s->serial);
    return false;
}

/* Stores a prepared model in the session and answers. */
static nnd_status model_sched(call *c, model_obj *o);

static void reply_prepared(call *c, model_obj *o, uint64_t t, bool from_cache) {
    uint64_t handle = 0;
    /* The cost model seeds its estimate; a model beyond the device is refused here. */
    nnd_status st = model_sched(c, o);
    if (st != NND_OK) {
        model_obj_free(o);
        fail(c, st, "%s", c->err);
        return;
    }
    if (nnd_session_add(c->s, NND_OBJ_PREPARED, o, model_obj_free, &handle) < 0) {
        model_obj_free(o);
        fail(c, NND_GENERAL_FAILURE, "out of memory storing the prepared model");
        return;
    }
    uint32_t n_ops = nnd_prepared_num_operations(o->prepared);
    nnd_log_info("client %llu prepared model 0x%016llx%s: %u operations in %llu us",
                 (unsigned long long)c->s->serial, (unsigned long long)handle,
                 from_cache ? " from its cache" : "", n_ops, (unsigned long long)(t / 1000));
    Nnd__PreparedReply r = NND__PREPARED_REPLY__INIT;
    r.handle = handle;
    c->reply.result_case = NND__REPLY__RESULT_PREPARED;
    c->reply.prepared = &r;
    send_reply(c);
    cJSON *ev = nnd_bus_event(c->d->bus, "prepared");
    if (ev) {
        cJSON_AddNumberToObject(ev, "pid", c->s->pid);
        nnd_json_add_handle(ev, "handle", handle);
        cJSON_AddNumberToObject(ev, "operations", n_ops);
        nnd_json_add_u64(ev, "prepare_ns", t);
        cJSON_AddBoolToObject(ev, "from_cache", from_cache);
    }
    nnd_bus_publish(c->d->bus, ev);
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
    if (!prepare_admitted(c, pm->priority, pm->deadline_ns)) return;

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
    uint64_t t = 0, faults = nnd_pool_faults();
    nnd_status st = map_model_pools(c, m, views);
    if (st == NND_OK)
        st = nnd_model_from_proto_ext(m, views, m->n_pools, nnd_extensions_allowed(c->d, c->s),
                                      &desc, c->err, sizeof c->err);
    if (st == NND_OK) {
        /* Cache fds are looked up after the pools took theirs: an fd cannot be both. */
        int model_fd = -1, data_fd = -1;
        const uint8_t *token = cache_args(c, pm, &model_fd, &data_fd) ? pm->token.data : NULL;
        t = nnd_now_ns();
        /* Models using extensions are never cached: their engine codes name plugins
         * loaded now (extension.h), which neither a cache file nor a reload keeps. */
        if (!nnd_model_uses_extensions(m) && nnd_cache_wants(c->d->cache, &desc, token != NULL)) {
            st = nnd_cache_prepare(c->d->cache, c->s, &desc, (uint32_t)pm->preference, token,
                                   model_fd, data_fd, &o->ref, c->err, sizeof c->err);
            if (st == NND_OK) o->prepared = (nnd_prepared *)nnd_cache_ref_prepared(o->ref);
        } else {
            st = nnd_prepare(&desc, &o->prepared, c->err, sizeof c->err);
            views_owned = st == NND_OK;
        }
        t = nnd_now_ns() - t;
    }
    if (st == NND_OK && nnd_pool_faults() != faults) {
        st = NND_GENERAL_FAILURE;
        snprintf(c->err, sizeof c->err, "a model pool shrank while the model was prepared");
    }
    nnd_model_desc_clear(&desc);
    if (!views_owned) release_views(views, m->n_pools);
    free(views);
    if (st != NND_OK) {
        model_obj_free(o);
        fail(c, st, "%s", c->err);
        return;
    }
    reply_prepared(c, o, t, false);
}

static void on_prepare_model_from_cache(call *c) {
    const Nnd__PrepareModelFromCache *pm = c->req->prepare_model_from_cache;
    if (!prepare_admitted(c, pm->priority, pm->deadline_ns)) return;
    if (!c->d->cache) {
        fail(c, NND_GENERAL_FAILURE, "compilation caching is off in this daemon");
        return;
    }
    if (pm->token.len != NND_CACHE_TOKEN_LEN || pm->n_model_cache_fds != 1 ||
        pm->n_data_cache_fds != 1) {
        fail(c, NND_INVALID_ARGUMENT,
             "PrepareModelFromCache needs a %d-byte token, 1 model and 1 data cache file (got "
             "%zu bytes, %zu and %zu)",
             NND_CACHE_TOKEN_LEN, pm->token.len, pm->n_model_cache_fds, pm->n_data_cache_fds);
        return;
    }
    int model_fd = request_fd(c, pm->model_cache_fds[0]);
    int data_fd = request_fd(c, pm->data_cache_fds[0]);
    if (model_fd < 0 || data_fd < 0 || model_fd == data_fd) {
        fail(c, NND_INVALID_ARGUMENT, "cache fd indexes %u and %u do not name two of the %zu fds",
             pm->model_cache_fds[0], pm->data_cache_fds[0], c->in->nfds);
        return;
    }
    model_obj *o = calloc(1, sizeof *o);
    if (!o) {
        fail(c, NND_GENERAL_FAILURE, "out of memory");
        return;
    }
    uint64_t t = nnd_now_ns();
    nnd_status st = nnd_cache_prepare_from_cache(c->d->cache, c->s, pm->token.data, model_fd,
                                                 data_fd, &o->ref, c->err, sizeof c->err);
    t = nnd_now_ns() - t;
    if (st != NND_OK) {
        free(o);
        fail(c, st, "%s", c->err);
        return;
    }
    o->prepared = (nnd_prepared *)nnd_cache_ref_prepared(o->ref);
    reply_prepared(c, o, t, true);
}

/* ---- execution ------------------------------------------------------------------------- */

/* The scheduler's view of o, made when it is prepared (or first used). It takes over
 * freeing o: see model_obj_free(). */
static nnd_status model_sched(call *c, model_obj *o) {
    if (o->sm) return NND_OK;
    int prio = 0;
    if (c->req->call_case == NND__REQUEST__CALL_PREPARE_MODEL)
        prio = c->req->prepare_model->priority;
    else if (c->req->call_case == NND__REQUEST__CALL_PREPARE_MODEL_FROM_CACHE)
        prio = c->req->prepare_model_from_cache->priority;
    return nnd_execution_model(c->d, o->prepared, prio, model_obj_destroy, o, &o->sm, c->err,
                               sizeof c->err);
}

/* The prepared model a request names, ready for the scheduler; NULL after answering. */
static model_obj *exec_model(call *c, uint64_t handle) {
    model_obj *o = nnd_session_find(c->s, handle, NND_OBJ_PREPARED);
    if (!o) {
        fail(c, NND_INVALID_ARGUMENT, "unknown prepared model handle 0x%016llx",
             (unsigned long long)handle);
        return NULL;
    }
    nnd_status st = model_sched(c, o);
    if (st != NND_OK) {
        fail(c, st, "%s", c->err);
        return NULL;
    }
    return o;
}

/* Executions run on the scheduler's workers and answer from there (execution.h, fenced.h). */
static void on_execute(call *c) {
    model_obj *o = exec_model(c, c->req->execute->prepared_model);
    if (o) nnd_execute(c->d, c->s, c->in, c->req, o->sm);
}

static void on_execute_fenced(call *c) {
    model_obj *o = exec_model(c, c->req->execute_fenced->prepared_model);
    if (o) nnd_execute_fenced(c->d, c->s, c->in, c->req, o->sm);
}

/* ---- bursts (burst.h) ------------------------------------------------------------------ */

static void on_configure_burst(call *c) {
    uint64_t mh = c->req->configure_burst->prepared_model;
    if (nnd_session_count(c->s, NND_OBJ_ANY) >= NND_SESSION_MAX_OBJECTS) {
        fail(c, NND_RESOURCE_EXHAUSTED_TRANSIENT,
             "this connection already holds %d objects; release some first",
             NND_SESSION_MAX_OBJECTS);
        return;
    }
    if (!exec_model(c, mh)) return;
    nnd_burst *b = nnd_burst_new(c->s, mh);
    uint64_t handle = 0;
    if (!b || nnd_session_add(c->s, NND_OBJ_BURST, b, nnd_burst_free, &handle) < 0) {
        if (b) nnd_burst_free(b);
        fail(c, NND_GENERAL_FAILURE, "out of memory storing the burst");
        return;
    }
    Nnd__BurstReply r = NND__BURST_REPLY__INIT;
    r.burst = handle;
    c->reply.result_case = NND__REPLY__RESULT_BURST;
    c->reply.burst = &r;
    send_reply(c);
}

/* The burst a request names, or NULL after failing the call. */
static nnd_burst *find_burst(call *c, uint64_t handle) {
    nnd_burst *b = nnd_session_find(c->s, handle, NND_OBJ_BURST);
    if (!b)
        fail(c, NND_INVALID_ARGUMENT, "unknown burst handle 0x%016llx", (unsigned long long)handle);
    return b;
}

static void on_burst_execute(call *c) {
    uint64_t bh = c->req->burst_execute->burst;
    nnd_burst *b = find_burst(c, bh);
    if (!b) return;
    uint64_t mh = nnd_burst_model(b);
    model_obj *o = nnd_session_find(c->s, mh, NND_OBJ_PREPARED);
    if (!o) {
        fail(c, NND_INVALID_ARGUMENT,
             "burst 0x%016llx: its prepared model 0x%016llx has been released",
             (unsigned long long)bh, (unsigned long long)mh);
        return;
    }
    nnd_status st = model_sched(c, o);
    if (st != NND_OK) {
        fail(c, st, "%s", c->err);
        return;
    }
    nnd_execute_burst(c->d, c->s, c->in, c->req, o->sm, b);
}

static void on_burst_forget(call *c) {
    const Nnd__BurstForget *x = c->req->burst_forget;
    nnd_burst *b = find_burst(c, x->burst);
    if (!b) return;
    size_t n = nnd_burst_forget(b, x->slots, x->n_slots);
    nnd_log_debug("client %llu: burst 0x%016llx forgot %zu of %zu slots",
                  (unsigned long long)c->s->serial, (unsigned long long)x->burst, n, x->n_slots);
    Nnd__Empty done = NND__EMPTY__INIT;
    c->reply.result_case = NND__REPLY__RESULT_DONE;
    c->reply.done = &done;
    send_reply(c);
}

static void on_get_fenced_execution_info(call *c) {
    nnd_fenced_info(c->d, c->s, c->req);
}

static void on_cancel(call *c) {
    nnd_execution_cancel(c->d, c->s, c->req);
}

/* ---- memory domains (buffer.h) --------------------------------------------------------- */

/* A buffer's bytes count against its session's quotas (quota.h). */
static nnd_status charge_bytes(void *s, uint64_t bytes, char *err, size_t errlen) {
    return nnd_quota_take(s, NND_QUOTA_BUFFER_BYTES, bytes, err, errlen);
}

static void refund_bytes(void *s, uint64_t bytes) {
    nnd_quota_add(s, NND_QUOTA_BUFFER_BYTES, -(int64_t)bytes);
}

static void on_allocate(call *c) {
    const Nnd__Allocate *a = c->req->allocate;
    if (!room_for(c, NND_OBJ_BUFFER)) return;
    nnd_buffer_model *models = calloc(a->n_prepared_models + 1, sizeof *models);
    if (!models) {
        fail(c, NND_GENERAL_FAILURE, "out of memory");
        return;
    }
    for (size_t i = 0; i < a->n_prepared_models; i++) {
        /* Only the caller's own models: another connection's handle is simply unknown. */
        model_obj *o = nnd_session_find(c->s, a->prepared_models[i], NND_OBJ_PREPARED);
        if (!o) {
            free(models);
            fail(c, NND_INVALID_ARGUMENT, "prepared model %zu: unknown handle 0x%016llx", i,
                 (unsigned long long)a->prepared_models[i]);
            return;
        }
        models[i] = (nnd_buffer_model){.handle = a->prepared_models[i], .prepared = o->prepared};
    }
    nnd_buffer *b = NULL;
    nnd_buffer_account acct = {.charge = charge_bytes, .refund = refund_bytes, .ctx = c->s};
    nnd_status st = nnd_buffer_allocate(c->s, a, models, &acct, &b, c->err, sizeof c->err);
    free(models);
    if (st != NND_OK) {
        fail(c, st, "%s", c->err);
        return;
    }
    uint64_t handle = 0;
    if (nnd_session_add(c->s, NND_OBJ_BUFFER, b, nnd_buffer_drop, &handle) < 0) {
        nnd_buffer_drop(b);
        fail(c, NND_GENERAL_FAILURE, "out of memory storing the buffer");
        return;
    }
    Nnd__AllocateReply r = NND__ALLOCATE_REPLY__INIT;
    r.buffer = handle;
    r.token = nnd_buffer_token(b);
    c->reply.result_case = NND__REPLY__RESULT_ALLOCATED;
    c->reply.allocated = &r;
    send_reply(c);
}

/* The buffer under a BufferCopyTo/From handle, or NULL after failing the call. */
static nnd_buffer *copy_buffer(call *c, uint64_t handle, const Nnd__MemoryPool *mp) {
    nnd_buffer *b = nnd_session_find(c->s, handle, NND_OBJ_BUFFER);
    if (!b)
        fail(c, NND_INVALID_ARGUMENT, "unknown buffer handle 0x%016llx",
             (unsigned long long)handle);
    else if (!mp)
        fail(c, NND_INVALID_ARGUMENT, "%s names no memory", c->name);
    else if (mp->kind != NND__POOL_KIND__POOL_MEMFD && mp->kind != NND__POOL_KIND__POOL_MMAP_FD &&
             mp->kind != NND__POOL_KIND__POOL_DMABUF)
        fail(c, NND_INVALID_ARGUMENT, "%s copies to or from memfd, mmap_fd or dma-buf memory only",
             c->name);
    else
        return b;
    return NULL;
}

static void on_buffer_copy_to(call *c) {
    const Nnd__BufferCopyTo *x = c->req->buffer_copy_to;
    nnd_buffer *b = copy_buffer(c, x->buffer, x->src);
    if (!b) return;
    nnd_pool src;
    nnd_status st = nnd_pool_map(x->src, 0, c->in, true, NULL, &src, c->err, sizeof c->err);
    if (st == NND_OK) {
        st = nnd_buffer_copy_in(b, &src, x->dimensions, x->n_dimensions, c->err, sizeof c->err);
        nnd_pool_release(&src);
    }
    if (st != NND_OK) {
        fail(c, st, "%s", c->err);
        return;
    }
    Nnd__Empty done = NND__EMPTY__INIT;
    c->reply.result_case = NND__REPLY__RESULT_DONE;
    c->reply.done = &done;
    send_reply(c);
}

static void on_buffer_copy_from(call *c) {
    const Nnd__BufferCopyFrom *x = c->req->buffer_copy_from;
    nnd_buffer *b = copy_buffer(c, x->buffer, x->dst);
    if (!b) return;
    nnd_pool dst;
    nnd_output_shape shape;
    nnd_status st = nnd_pool_map(x->dst, 0, c->in, false, NULL, &dst, c->err, sizeof c->err);
    if (st == NND_OK) {
        st = nnd_buffer_copy_out(b, &dst, x->dimensions, x->n_dimensions, &shape, c->err,
                                 sizeof c->err);
        nnd_pool_release(&dst);
    }
    if (st != NND_OK) {
        fail(c, st, "%s", c->err);
        return;
    }
    Nnd__BufferCopiedReply r = NND__BUFFER_COPIED_REPLY__INIT;
    r.n_dimensions = shape.rank;
    r.dimensions = shape.dims;
    c->reply.result_case = NND__REPLY__RESULT_BUFFER_COPIED;
    c->reply.buffer_copied = &r;
    send_reply(c);
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
    case NND__REQUEST__CALL_GET_SUPPORTED_EXTENSIONS: return on_get_supported_extensions;
    case NND__REQUEST__CALL_GET_NUMBER_OF_CACHE_FILES_NEEDED:
        return on_get_number_of_cache_files_needed;
    case NND__REQUEST__CALL_GET_SUPPORTED_OPERATIONS: return on_get_supported_operations;
    case NND__REQUEST__CALL_PREPARE_MODEL: return on_prepare_model;
    case NND__REQUEST__CALL_PREPARE_MODEL_FROM_CACHE: return on_prepare_model_from_cache;
    case NND__REQUEST__CALL_EXECUTE: return on_execute;
    case NND__REQUEST__CALL_EXECUTE_FENCED: return on_execute_fenced;
    case NND__REQUEST__CALL_GET_FENCED_EXECUTION_INFO: return on_get_fenced_execution_info;
    case NND__REQUEST__CALL_CONFIGURE_BURST: return on_configure_burst;
    case NND__REQUEST__CALL_BURST_EXECUTE: return on_burst_execute;
    case NND__REQUEST__CALL_BURST_FORGET: return on_burst_forget;
    case NND__REQUEST__CALL_CANCEL: return on_cancel;
    case NND__REQUEST__CALL_ALLOCATE: return on_allocate;
    case NND__REQUEST__CALL_BUFFER_COPY_TO: return on_buffer_copy_to;
    case NND__REQUEST__CALL_BUFFER_COPY_FROM: return on_buffer_copy_from;
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
