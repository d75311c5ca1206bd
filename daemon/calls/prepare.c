/* SPDX-License-Identifier: Apache-2.0 */
/* prepare.c: preparing models, and the prepared model a session holds. See prepare.h. */
#include "daemon/calls/prepare.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/bus.h"
#include "daemon/cache/cache.h"
#include "daemon/wire/convert.h"
#include "daemon/devices/devices.h"
#include "daemon/calls/execution.h"
#include "daemon/devices/extensions.h"
#include "daemon/stats/tally.h"
#include "daemon/base/log.h"
#include "daemon/calls/model_obj.h"
#include "daemon/clients/pool.h"
#include "daemon/calls/off_loop.h"
#include "daemon/calls/prepare_off_loop.h"
#include "daemon/calls/prepare_request.h"
#include "daemon/devices/refused.h"
#include "storage/serialize.h"

static bool valid_priority(Nnd__Priority p) {
    return p == NND__PRIORITY__PRIORITY_UNSPECIFIED || p == NND__PRIORITY__PRIORITY_LOW ||
           p == NND__PRIORITY__PRIORITY_MEDIUM || p == NND__PRIORITY__PRIORITY_HIGH;
}

/* What PrepareModel and PrepareModelFromCache check first: a known priority, room in the
 * quotas for one more prepared model, and a deadline not yet past (else answered here). */
static bool prepare_admitted(srv_call *c, Nnd__Priority priority, uint64_t deadline_ns) {
    if (!valid_priority(priority)) {
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT, "invalid priority %d", (int)priority);
        return false;
    }
    if (!srv_call_room_for(c, SRV_OBJ_PREPARED)) return false;
    /* An app at its prepared_bytes is refused before anything is prepared. */
    schema_status st =
        srv_quota_check(&c->s->quota, SRV_QUOTA_PREPARED_BYTES, 1, c->err, sizeof c->err);
    if (st != SCHEMA_OK) {
        srv_call_fail(c, st, "%s", c->err);
        return false;
    }
    if (deadline_ns && srv_now_ns() > deadline_ns) {
        srv_call_fail(c, SCHEMA_MISSED_DEADLINE_PERSISTENT,
                      "deadline passed before preparation began");
        return false;
    }
    return true;
}

/* Maps a model's pools read-only into views[] (n_pools entries, caller-allocated). */
static schema_status map_model_pools(srv_call *c, const Nnd__Model *m, eng_memory_view *views) {
    srv_pool *pools = calloc(m->n_pools + 1, sizeof *pools);
    if (!pools) {
        snprintf(c->err, sizeof c->err, "out of memory mapping %zu pools", m->n_pools);
        return SCHEMA_GENERAL_FAILURE;
    }
    schema_status st =
        srv_pools_map(m->pools, m->n_pools, c->in, true, NULL, pools, c->err, sizeof c->err);
    for (size_t i = 0; st == SCHEMA_OK && i < m->n_pools; i++)
        views[i] = pools[i].view;
    free(pools);
    return st;
}

static void release_views(eng_memory_view *views, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (views[i].release) views[i].release(views[i].ctx);
}

/* The engine's reason for each refused operation, kept for refused.h's debug lines. */
typedef struct refusals {
    char **reasons; /* one per operation; NULL when not logging at debug level */
    uint32_t n;
} refusals;

static void keep_refusal(void *ctx, uint32_t k, const char *reason) {
    refusals *r = ctx;
    if (r->reasons && k < r->n && !r->reasons[k]) r->reasons[k] = strdup(reason);
}

static void refusals_free(refusals *r) {
    for (uint32_t k = 0; r->reasons && k < r->n; k++)
        free(r->reasons[k]);
    free(r->reasons);
}

/* A GetSupportedOperations' model and verdict, answered on the loop or after a worker. */
typedef struct supported_job {
    eng_model_desc desc;
    void *owned; /* what desc borrows, once it goes off the loop */
    /* A spilled request goes whole (request_off_loop_wanted): its message, converted on the
     * worker, and its bytes counted against the session's prepared_bytes while held. */
    ProtobufCMessage *msg;
    const Nnd__Model *model; /* in msg */
    srv_device_plan plan;
    srv_session *s;
    uv_loop_t *loop;
    uint64_t msg_bytes;
    eng_memory_view *views;
    size_t n_views;
    bool *sup;
    refusals why;
    schema_status st;
    char err[SCHEMA_ERR_LEN];
} supported_job;

static void supported_free(void *ctx) {
    supported_job *j = ctx;
    refusals_free(&j->why);
    srv_model_desc_clear(&j->desc);
    free(j->owned);
    srv_off_loop_free_msg(j->loop, j->msg);
    if (j->s) srv_quota_add(&j->s->quota, SRV_QUOTA_PREPARED_BYTES, -(int64_t)j->msg_bytes);
    release_views(j->views, j->n_views);
    free(j->views);
    free(j->sup);
    free(j);
}

/* The description of the model (its message and mapped pools) and room for the verdict;
 * on the loop, or on a worker for a spilled request. */
static void supported_describe(supported_job *j, const Nnd__Model *m, bool extensions_allowed,
                               const srv_device_plan *plan) {
    j->st = srv_model_from_proto_ext(m, j->views, j->n_views, extensions_allowed, &j->desc, j->err,
                                     sizeof j->err);
    if (j->st == SCHEMA_OK && !(j->sup = calloc(j->desc.n_operations + 1, sizeof *j->sup))) {
        j->st = SCHEMA_GENERAL_FAILURE;
        snprintf(j->err, sizeof j->err, "out of memory");
    }
    j->why.n = j->desc.n_operations;
    if (j->st == SCHEMA_OK && srv_log_enabled(SRV_LOG_DEBUG))
        j->why.reasons = calloc(j->desc.n_operations + 1, sizeof *j->why.reasons);
    srv_device_plan_apply(plan, &j->desc);
}

static void supported_work(void *ctx) {
    supported_job *j = ctx;
    uint64_t faults = srv_pool_faults(); /* this thread's */
    if (j->msg) supported_describe(j, j->model, false, &j->plan);
    if (j->msg && j->st != SCHEMA_OK) return;
    j->st =
        eng_supported_operations_on(&j->desc, j->sup, keep_refusal, &j->why, j->err, sizeof j->err);
    if (j->st == SCHEMA_OK && srv_pool_faults() != faults) {
        j->st = SCHEMA_GENERAL_FAILURE;
        snprintf(j->err, sizeof j->err, "a model pool shrank while it was being read");
    }
}

static void supported_answer(srv_call *c, void *ctx, bool queued) {
    supported_job *j = ctx;
    uint32_t n = j->desc.n_operations;
    protobuf_c_boolean *wire = queued ? calloc(n + 1, sizeof *wire) : NULL;
    if (!queued) {
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "cannot check the model's operations now");
    } else if (j->st != SCHEMA_OK) {
        srv_call_fail(c, j->st, "%s", j->err);
    } else if (!wire) {
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "out of memory");
    } else {
        srv_refused_note(c->s->serial, &j->desc, j->sup, j->why.reasons);
        for (uint32_t i = 0; i < n; i++)
            wire[i] = j->sup[i];
        Nnd__SupportedOperationsReply r = NND__SUPPORTED_OPERATIONS_REPLY__INIT;
        r.n_supported = n;
        r.supported = wire;
        c->reply.result_case = NND__REPLY__RESULT_SUPPORTED_OPERATIONS;
        c->reply.supported_operations = &r;
        srv_call_reply(c);
    }
    free(wire);
    supported_free(j);
}

static const srv_off_loop_fns supported_off_loop = {
    .work = supported_work, .answer = supported_answer, .drop = supported_free};

/* Where PrepareModel's work runs (prepare_off_loop.h, prepare_request.h): on libuv's worker
 * threads, holding up no other client, when the session can answer later and the work
 * grows with the model. size is the model's serialized size (store_ser_size()). */
static bool off_loop_wanted(const srv_call *c, uint64_t size) {
    return c->s->hold && size >= SRV_PREPARE_OFF_LOOP_BYTES;
}

/* Prepared in place, validation and planning grow with the operations too. */
static bool in_place_off_loop_wanted(const srv_call *c, const eng_model_desc *m, uint64_t size) {
    return c->s->hold && (m->n_operations + (uint64_t)m->n_operands >= SRV_PREPARE_OFF_LOOP_OPS ||
                          size >= SRV_PREPARE_OFF_LOOP_BYTES);
}

/* A spilled request (its message malloc'd, proto_frame_take_msg()) goes whole. */
static bool request_off_loop_wanted(const srv_call *c) {
    return c->s->hold && c->in->msg && !c->in->arena;
}

void srv_on_get_supported_operations(srv_call *c) {
    const Nnd__Model *m = c->req->get_supported_operations->model;
    if (!m) {
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT, "GetSupportedOperations names no model");
        return;
    }
    srv_device_plan plan;
    const Nnd__GetSupportedOperations *gso = c->req->get_supported_operations;
    schema_status chosen =
        srv_device_plan_for(gso->devices, gso->n_devices, &plan, c->err, sizeof c->err);
    if (chosen != SCHEMA_OK) {
        srv_call_fail(c, chosen, "%s", c->err);
        return;
    }
    supported_job *j = calloc(1, sizeof *j);
    eng_memory_view *views = calloc(m->n_pools + 1, sizeof *views);
    if (!j || !views) {
        free(j);
        free(views);
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "out of memory");
        return;
    }
    j->views = views;
    j->n_views = m->n_pools;
    uint64_t faults = srv_pool_faults();
    j->st = map_model_pools(c, m, views);
    if (j->st != SCHEMA_OK) snprintf(j->err, sizeof j->err, "%s", c->err);
    /* A spilled request goes to a worker whole: its conversion grows with the model too. */
    if (j->st == SCHEMA_OK && !plan.n_drivers && !srv_request_uses_extensions(c->in, m) &&
        request_off_loop_wanted(c) && srv_pool_faults() == faults) {
        j->model = m;
        j->plan = plan;
        j->s = c->s;
        j->loop = c->d->loop;
        j->msg_bytes = c->in->bytes;
        j->msg = proto_frame_take_msg(c->in); /* c->req points into it: unused from here */
        srv_quota_add(&c->s->quota, SRV_QUOTA_PREPARED_BYTES, (int64_t)j->msg_bytes);
        srv_off_loop_run(c, &supported_off_loop, j);
        return;
    }
    if (j->st == SCHEMA_OK) supported_describe(j, m, srv_extensions_allowed(c->d, c->s), &plan);
    /* A large model is checked on a worker thread, holding up no other client. */
    if (j->st == SCHEMA_OK && !plan.n_drivers && !srv_request_uses_extensions(c->in, m) &&
        srv_pool_faults() == faults &&
        in_place_off_loop_wanted(c, &j->desc, store_ser_size(&j->desc)) &&
        (j->owned = srv_model_desc_own(&j->desc, SRV_PREPARE_OFF_LOOP_OWN_MAX))) {
        j->desc.drivers = NULL; /* none: the plan goes when this call returns */
        srv_off_loop_run(c, &supported_off_loop, j);
        return;
    }
    if (j->st == SCHEMA_OK) supported_work(j);
    if (j->st == SCHEMA_OK && srv_pool_faults() != faults) {
        j->st = SCHEMA_GENERAL_FAILURE;
        snprintf(j->err, sizeof j->err, "a model pool shrank while it was being read");
    }
    supported_answer(c, j, true);
}

/* The fd at a request's fd index, or -1 when the index is out of range or taken. */
static int request_fd(const srv_call *c, uint32_t index) {
    return index < c->in->nfds ? c->in->fds[index] : -1;
}

/* Whether PrepareModel asks for client caching in a form this daemon takes: one model and
 * one data cache file and a 32-byte token. Anything else prepares without caching, as the
 * HAL allows. */
static bool cache_args(const srv_call *c, const Nnd__PrepareModel *pm, int *model_fd,
                       int *data_fd) {
    if (!pm->n_model_cache_fds && !pm->n_data_cache_fds) return false;
    if (c->d->cache && pm->token.len == SRV_CACHE_TOKEN_LEN && pm->n_model_cache_fds == 1 &&
        pm->n_data_cache_fds == 1) {
        *model_fd = request_fd(c, pm->model_cache_fds[0]);
        *data_fd = request_fd(c, pm->data_cache_fds[0]);
        if (*model_fd >= 0 && *data_fd >= 0 && *model_fd != *data_fd) return true;
    }
    srv_log_debug("client %llu: cache arguments not usable; preparing without caching",
                  (unsigned long long)c->s->serial);
    return false;
}

/* What a prepared model costs the daemon, for quota.*.prepared_bytes: its own memory when
 * prepared in place (a model from the content cache is counted there, cache_users.h), and
 * the session's object with the scheduler's view (a fraction per operation). */
static uint64_t prepared_bytes(const srv_model_obj *o) {
    uint64_t n =
        sizeof *o + sizeof(float) * ((uint64_t)eng_prepared_num_operations(o->prepared) + 1);
    return n + (o->ref ? 0 : eng_prepared_bytes(o->prepared));
}

/* Stores a prepared model in the session and answers. */
static void reply_prepared(srv_call *c, srv_model_obj *o, uint64_t t, bool from_cache,
                           int priority) {
    uint64_t handle = 0, bytes = prepared_bytes(o);
    /* Its memory is known now that it exists: past the quota it goes again. */
    schema_status st =
        srv_quota_check(&c->s->quota, SRV_QUOTA_PREPARED_BYTES, bytes, c->err, sizeof c->err);
    if (st != SCHEMA_OK) {
        srv_model_obj_free(o);
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    /* The cost model seeds its estimate; a model beyond the device is refused here. */
    st = srv_model_obj_view(c->d, o, priority, c->err, sizeof c->err);
    if (st != SCHEMA_OK) {
        srv_model_obj_free(o);
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    if (srv_session_add_bytes(c->s, SRV_OBJ_PREPARED, o, srv_model_obj_free, bytes, &handle) < 0) {
        srv_model_obj_free(o);
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "out of memory storing the prepared model");
        return;
    }
    uint32_t n_ops = eng_prepared_num_operations(o->prepared);
    srv_device_count_prepare(o->prepared);
    srv_tally_prepare(t);
    if (srv_log_threshold >= SRV_LOG_INFO) {
        char on[256];
        srv_device_steps_text(o->prepared, on, sizeof on);
        srv_log_client(SRV_LOG_INFO,
                       "client %llu prepared model 0x%016llx%s on %s: %u operations in %llu us "
                       "(steps: %s)",
                       (unsigned long long)c->s->serial, (unsigned long long)handle,
                       from_cache ? " from its cache" : "", srv_device_of(o->prepared)->name, n_ops,
                       (unsigned long long)(t / 1000), on[0] ? on : "none");
    }
    Nnd__PreparedReply r = NND__PREPARED_REPLY__INIT;
    r.handle = handle;
    r.cache_save_skipped = o->cache_save_skipped;
    c->reply.result_case = NND__REPLY__RESULT_PREPARED;
    c->reply.prepared = &r;
    srv_call_reply(c);
    cJSON *ev = srv_bus_event(c->d->bus, "prepared");
    if (ev) {
        srv_json_add_client(ev, c->s->serial, c->s->pid, c->s->uid);
        srv_json_add_handle(ev, "handle", handle);
        cJSON_AddNumberToObject(ev, "operations", n_ops);
        srv_json_add_u64(ev, "bytes", bytes);
        srv_json_add_u64(ev, "prepare_ns", t);
        cJSON_AddBoolToObject(ev, "from_cache", from_cache);
    }
    srv_bus_publish(c->d->bus, ev);
}

/* The answer of a preparation made off the loop (prepare_off_loop.h). */
static void prepared_off_loop(srv_call *c, srv_model_obj *o, schema_status st, uint64_t t,
                              int priority) {
    if (st != SCHEMA_OK) {
        srv_model_obj_free(o);
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    reply_prepared(c, o, t, false, priority);
}

void srv_on_prepare_model(srv_call *c) {
    const Nnd__PrepareModel *pm = c->req->prepare_model;
    const Nnd__Model *m = pm->model;
    if (!m) {
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT, "PrepareModel names no model");
        return;
    }
    if ((int)pm->preference < 0 || (int)pm->preference > 3) {
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT, "invalid execution preference %d",
                      (int)pm->preference);
        return;
    }
    srv_device_plan plan;
    schema_status chosen =
        srv_device_plan_for(pm->devices, pm->n_devices, &plan, c->err, sizeof c->err);
    if (chosen != SCHEMA_OK) {
        srv_call_fail(c, chosen, "%s", c->err);
        return;
    }
    if (!prepare_admitted(c, pm->priority, pm->deadline_ns)) return;

    eng_memory_view *views = calloc(m->n_pools + 1, sizeof *views);
    srv_model_obj *o = calloc(1, sizeof *o);
    if (o) o->uid = (uint32_t)c->s->uid;
    if (!views || !o) {
        free(views);
        free(o);
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "out of memory");
        return;
    }
    eng_model_desc desc;
    memset(&desc, 0, sizeof desc);
    bool views_owned = false; /* true once the prepared model owns the views */
    uint64_t t = 0, faults = srv_pool_faults();
    schema_status st = map_model_pools(c, m, views);
    bool extensions = srv_request_uses_extensions(c->in, m);
    /* A spilled request goes to worker threads whole: its conversion, the content cache's
     * sighting and the preparation hold up no other client (prepare_request.h). */
    if (st == SCHEMA_OK && !plan.n_drivers && request_off_loop_wanted(c) && !extensions &&
        srv_pool_faults() == faults) {
        int model_fd = -1, data_fd = -1;
        const uint8_t *token = cache_args(c, pm, &model_fd, &data_fd) ? pm->token.data : NULL;
        model_fd = token ? fcntl(model_fd, F_DUPFD_CLOEXEC, 0) : -1;
        data_fd = token ? fcntl(data_fd, F_DUPFD_CLOEXEC, 0) : -1;
        if (!token || (model_fd >= 0 && data_fd >= 0)) {
            srv_prepare_request(c, o, &plan, views, m->n_pools, token, model_fd, data_fd,
                                prepared_off_loop);
            return;
        }
        if (model_fd >= 0) close(model_fd);
        if (data_fd >= 0) close(data_fd);
        st = SCHEMA_GENERAL_FAILURE;
        snprintf(c->err, sizeof c->err, "out of descriptors preparing the model");
    }
    /* The extensions allowlist matters only to a model that uses extensions. */
    if (st == SCHEMA_OK)
        st = srv_model_from_proto_ext(m, views, m->n_pools,
                                      extensions && srv_extensions_allowed(c->d, c->s), &desc,
                                      c->err, sizeof c->err);
    srv_device_plan_apply(&plan, &desc);
    /* What the drivers' prepare() gets (nnd/driver.h numbers: the wire's preference is
     * NNAPI's, one above, with 0 for the default, FAST_SINGLE_ANSWER). */
    desc.preference =
        pm->preference ? (int32_t)pm->preference - 1 : NND_DRIVER_PREFER_FAST_SINGLE_ANSWER;
    desc.priority = pm->priority ? (int32_t)pm->priority : NND_DRIVER_PRIORITY_MEDIUM;
    desc.deadline_ns = pm->deadline_ns;
    if (st == SCHEMA_OK) {
        /* Cache fds are looked up after the pools took theirs: an fd cannot be both. */
        int model_fd = -1, data_fd = -1;
        const uint8_t *token = cache_args(c, pm, &model_fd, &data_fd) ? pm->token.data : NULL;
        t = srv_now_ns();
        /* The cache layer says how (cache.h): through the content cache or in place,
         * and whether client cache files are saved. */
        srv_prepare_route route = srv_cache_route(c->d->cache, c->s, m, &desc, token);
        token = route.token;
        o->cache_save_skipped = route.save_skipped;
        bool cached = route.cached;
        /* The constants it would copy must fit the app's prepared_bytes before the copy. */
        if (!cached)
            st = srv_quota_check(&c->s->quota, SRV_QUOTA_PREPARED_BYTES,
                                 eng_model_copy_bytes(&desc), c->err, sizeof c->err);
        /* The description borrows from the request, which goes when this call returns: what
         * it borrows is copied for the worker. Validated and planned here; copied and
         * hashed on a worker thread, answered from there. */
        void *owned = cached && !plan.n_drivers && off_loop_wanted(c, route.size)
                          ? srv_model_desc_own(&desc, SRV_PREPARE_OFF_LOOP_COPY_MAX)
                          : NULL;
        if (owned) {
            eng_prepared *planned = NULL;
            st = eng_plan(&desc, &planned, c->err, sizeof c->err);
            if (st == SCHEMA_OK && srv_pool_faults() == faults) {
                srv_prepare_off_loop(c, o, &desc, owned, planned, views, m->n_pools,
                                     (uint32_t)pm->preference, pm->priority, token, model_fd,
                                     data_fd, prepared_off_loop);
                return;
            }
            eng_prepared_free(planned);
            srv_model_desc_clear(&desc);
            free(owned);
        } else if (cached) {
            st = srv_cache_prepare(c->d->cache, c->s, &desc, (uint32_t)pm->preference, token,
                                   model_fd, data_fd, &o->ref, c->err, sizeof c->err);
            if (st == SCHEMA_OK) o->prepared = (eng_prepared *)srv_cache_ref_prepared(o->ref);
        } else if (st == SCHEMA_OK) {
            /* A large model is prepared on a worker thread, holding up no other client. */
            void *own =
                !plan.n_drivers && !extensions && in_place_off_loop_wanted(c, &desc, route.size)
                    ? srv_model_desc_own(&desc, SRV_PREPARE_OFF_LOOP_OWN_MAX)
                    : NULL;
            if (own && srv_pool_faults() == faults) {
                desc.drivers = NULL; /* none: the plan goes when this call returns */
                srv_prepare_in_place_off_loop(c, o, &desc, own, views, m->n_pools, pm->priority,
                                              prepared_off_loop);
                return;
            }
            if (own) { /* a pool shrank while converting: answered below */
                srv_model_desc_clear(&desc);
                free(own);
            } else {
                st = eng_prepare(&desc, &o->prepared, c->err, sizeof c->err);
                views_owned = st == SCHEMA_OK;
            }
        }
        t = srv_now_ns() - t;
    }
    if (st == SCHEMA_OK && srv_pool_faults() != faults) {
        st = SCHEMA_GENERAL_FAILURE;
        snprintf(c->err, sizeof c->err, "a model pool shrank while the model was prepared");
    }
    srv_model_desc_clear(&desc);
    if (!views_owned) release_views(views, m->n_pools);
    free(views);
    if (st != SCHEMA_OK) {
        srv_model_obj_free(o);
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    reply_prepared(c, o, t, false, pm->priority);
}

void srv_on_prepare_model_from_cache(srv_call *c) {
    const Nnd__PrepareModelFromCache *pm = c->req->prepare_model_from_cache;
    if (!prepare_admitted(c, pm->priority, pm->deadline_ns)) return;
    if (!c->d->cache) {
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "compilation caching is off in this daemon");
        return;
    }
    if (pm->token.len != SRV_CACHE_TOKEN_LEN || pm->n_model_cache_fds != 1 ||
        pm->n_data_cache_fds != 1) {
        srv_call_fail(
            c, SCHEMA_INVALID_ARGUMENT,
            "PrepareModelFromCache needs a %d-byte token, 1 model and 1 data cache file (got "
            "%zu bytes, %zu and %zu)",
            SRV_CACHE_TOKEN_LEN, pm->token.len, pm->n_model_cache_fds, pm->n_data_cache_fds);
        return;
    }
    int model_fd = request_fd(c, pm->model_cache_fds[0]);
    int data_fd = request_fd(c, pm->data_cache_fds[0]);
    if (model_fd < 0 || data_fd < 0 || model_fd == data_fd) {
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT,
                      "cache fd indexes %u and %u do not name two of the %zu fds",
                      pm->model_cache_fds[0], pm->data_cache_fds[0], c->in->nfds);
        return;
    }
    srv_model_obj *o = calloc(1, sizeof *o);
    if (!o) {
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "out of memory");
        return;
    }
    o->uid = (uint32_t)c->s->uid;
    uint64_t t = srv_now_ns();
    schema_status st = srv_cache_prepare_from_cache(c->d->cache, c->s, pm->token.data, model_fd,
                                                    data_fd, &o->ref, c->err, sizeof c->err);
    t = srv_now_ns() - t;
    if (st != SCHEMA_OK) {
        free(o);
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    o->prepared = (eng_prepared *)srv_cache_ref_prepared(o->ref);
    reply_prepared(c, o, t, true, pm->priority);
}
