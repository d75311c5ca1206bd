/* SPDX-License-Identifier: Apache-2.0 */
/* dispatch.c: one handler per call; those preparing models are prepare.c's. See
 * dispatch.h. */
#include "daemon/calls/dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/binding/buffer.h"
#include "daemon/binding/burst.h"
#include "daemon/calls/burst_channel.h"
#include "daemon/cache/cache.h"
#include "daemon/calls/call.h"
#include "daemon/devices/devices.h"
#include "daemon/calls/execution.h"
#include "engine/plugins/extension.h"
#include "daemon/devices/extensions.h"
#include "daemon/calls/fenced.h"
#include "daemon/base/log.h"
#include "daemon/binding/memreg.h"
#include "daemon/clients/pool.h"
#include "daemon/calls/model_obj.h"
#include "daemon/calls/prepare.h"
#include "daemon/clients/quota.h"

/* ---- device queries -------------------------------------------------------------------- */

static void on_hello(srv_call *c) {
    const Nnd__Hello *h = c->req->hello;
    snprintf(c->s->name, sizeof c->s->name, "%s", h->client_name);
    srv_log_debug("client %llu is \"%s\", protocol %u", (unsigned long long)c->s->serial,
                  c->s->name, h->protocol_version);
    Nnd__HelloReply r = NND__HELLO_REPLY__INIT;
    r.protocol_version = PROTO_PROTOCOL_VERSION;
    r.daemon_version = (char *)SRV_VERSION;
    /* nndctl finds the daemon's bus through this, and counts its operations. */
    r.state_dir = (char *)c->d->state_dir;
    r.supported_operation_types = eng_supported_operation_count();
    r.session_token = c->s->token; /* the joined session's, for a connection that joined */
    c->reply.result_case = NND__REPLY__RESULT_HELLO;
    c->reply.hello = &r;
    srv_call_reply(c);
}

#define N_PERF_TYPES 15 /* FLOAT32 .. TENSOR_QUANT8_ASYMM_SIGNED */

static void on_get_capabilities(srv_call *c) {
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
    caps.dma_buf_supported = srv_pool_dmabuf_supported();
    c->reply.result_case = NND__REPLY__RESULT_CAPABILITIES;
    c->reply.capabilities = &caps;
    srv_call_reply(c);
}

static void on_get_version_string(srv_call *c) {
    Nnd__VersionStringReply r = NND__VERSION_STRING_REPLY__INIT;
    r.version = (char *)("nnd " SRV_VERSION);
    c->reply.result_case = NND__REPLY__RESULT_VERSION_STRING;
    c->reply.version_string = &r;
    srv_call_reply(c);
}

static void on_get_type(srv_call *c) {
    Nnd__TypeReply r = NND__TYPE_REPLY__INIT;
    r.type = NND__DEVICE_TYPE__DEVICE_CPU;
    c->reply.result_case = NND__REPLY__RESULT_TYPE;
    c->reply.type = &r;
    srv_call_reply(c);
}

static void on_get_devices(srv_call *c) {
    size_t n;
    const srv_device *dev = srv_devices(&n);
    Nnd__DeviceInfo info[SRV_MAX_DEVICES], *infop[SRV_MAX_DEVICES];
    for (size_t i = 0; i < n && i < SRV_MAX_DEVICES; i++) {
        nnd__device_info__init(&info[i]);
        info[i].name = (char *)dev[i].name;
        info[i].type = (Nnd__DeviceType)dev[i].type;
        info[i].version = (char *)(dev[i].version ? dev[i].version : "nnd " SRV_VERSION);
        info[i].feature_level = SRV_DEVICE_FEATURE_LEVEL;
        info[i].reference_only = dev[i].reference_only;
        info[i].exec_time = srv_device_exec_time(&dev[i]);
        infop[i] = &info[i];
    }
    Nnd__DevicesReply r = NND__DEVICES_REPLY__INIT;
    r.n_devices = n < SRV_MAX_DEVICES ? n : SRV_MAX_DEVICES;
    r.devices = infop;
    c->reply.result_case = NND__REPLY__RESULT_DEVICES;
    c->reply.devices = &r;
    srv_call_reply(c);
}

/* The loaded extensions, for allowed clients only (extensions.h); faulted ones are left
 * out, since models using them would fail. */
static void on_get_supported_extensions(srv_call *c) {
    bool allowed = srv_extensions_allowed(c->d, c->s);
    uint32_t n = allowed ? eng_ext_count() : 0, k = 0;
    Nnd__Extension *ext = calloc(n + 1, sizeof *ext), **extp = calloc(n + 1, sizeof *extp);
    size_t n_types = 0;
    eng_ext_info x;
    for (uint32_t i = 0; i < n && eng_ext_get(i, &x); i++)
        n_types += x.n_operand_types;
    Nnd__ExtensionOperandTypeInformation *ti = calloc(n_types + 1, sizeof *ti);
    Nnd__ExtensionOperandTypeInformation **tip = calloc(n_types + 1, sizeof *tip);
    if (!ext || !extp || !ti || !tip) {
        free(ext), free(extp), free(ti), free(tip);
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "out of memory");
        return;
    }
    size_t t = 0;
    for (uint32_t i = 0; i < n && eng_ext_get(i, &x); i++) {
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
        srv_log_debug("client %llu (uid %u, %s) is not on the extensions allowlist",
                      (unsigned long long)c->s->serial, (unsigned)c->s->uid,
                      c->s->exe[0] ? c->s->exe : "executable unknown");
    Nnd__SupportedExtensionsReply r = NND__SUPPORTED_EXTENSIONS_REPLY__INIT;
    r.n_extensions = k;
    r.extensions = extp;
    c->reply.result_case = NND__REPLY__RESULT_SUPPORTED_EXTENSIONS;
    c->reply.supported_extensions = &r;
    srv_call_reply(c);
    free(ext), free(extp), free(ti), free(tip);
}

static void on_get_number_of_cache_files_needed(srv_call *c) {
    Nnd__CacheFilesReply r = NND__CACHE_FILES_REPLY__INIT; /* 0 and 0 when caching is off */
    if (c->d->cache) r.model_cache = r.data_cache = 1;
    r.save_max_bytes = srv_cache_save_max(c->d->cache);
    c->reply.result_case = NND__REPLY__RESULT_CACHE_FILES;
    c->reply.cache_files = &r;
    srv_call_reply(c);
}

/* ---- execution ------------------------------------------------------------------------- */

/* The scheduler's view of o, made when o was prepared (prepare.h); made here, at the
 * default priority, for a model that has none. */
static schema_status model_sched(srv_call *c, srv_model_obj *o) {
    return srv_model_obj_view(c->d, o, NND__PRIORITY__PRIORITY_UNSPECIFIED, c->err, sizeof c->err);
}

/* The prepared model a request names, ready for the scheduler; NULL after answering. */
static srv_model_obj *exec_model(srv_call *c, uint64_t handle) {
    srv_model_obj *o = srv_session_find(c->s, handle, SRV_OBJ_PREPARED);
    if (!o) {
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT, "unknown prepared model handle 0x%016llx",
                      (unsigned long long)handle);
        return NULL;
    }
    schema_status st = model_sched(c, o);
    if (st != SCHEMA_OK) {
        srv_call_fail(c, st, "%s", c->err);
        return NULL;
    }
    return o;
}

/* Executions run on the scheduler's workers and answer from there (execution.h, fenced.h). */
static void on_execute(srv_call *c) {
    srv_model_obj *o = exec_model(c, c->req->execute->prepared_model);
    if (o) srv_execute(c->d, c->s, c->in, c->req, o->sm);
}

static void on_execute_fenced(srv_call *c) {
    srv_model_obj *o = exec_model(c, c->req->execute_fenced->prepared_model);
    if (o) srv_execute_fenced(c->d, c->s, c->in, c->req, o->sm);
}

/* ---- bursts (burst.h) ------------------------------------------------------------------ */

static void on_configure_burst(srv_call *c) {
    uint64_t mh = c->req->configure_burst->prepared_model;
    if (srv_session_count(c->s, SRV_OBJ_ANY) >= SRV_SESSION_MAX_OBJECTS) {
        srv_call_fail(c, SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT,
                      "this connection already holds %d objects; release some first",
                      SRV_SESSION_MAX_OBJECTS);
        return;
    }
    if (!exec_model(c, mh)) return;
    srv_burst_obj *b = srv_burst_new(c->s, mh);
    uint64_t handle = 0;
    if (!b || srv_session_add(c->s, SRV_OBJ_BURST, b, srv_burst_free, &handle) < 0) {
        if (b) srv_burst_free(b);
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "out of memory storing the burst");
        return;
    }
    Nnd__BurstReply r = NND__BURST_REPLY__INIT;
    r.burst = handle;
    int chan_fds[2];
    r.channel = c->req->configure_burst->channel &&
                srv_burst_channel_open(c->d, c->s, b, handle, chan_fds) == 0;
    c->reply.result_case = NND__REPLY__RESULT_BURST;
    c->reply.burst = &r;
    srv_call_reply_fds(c, chan_fds, r.channel ? 2 : 0);
    if (r.channel) close(chan_fds[0]); /* the doorbell, chan_fds[1], stays the channel's */
}

/* The burst a request names, or NULL after failing the call. */
static srv_burst_obj *find_burst(srv_call *c, uint64_t handle) {
    srv_burst_obj *b = srv_session_find(c->s, handle, SRV_OBJ_BURST);
    if (!b)
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT, "unknown burst handle 0x%016llx",
                      (unsigned long long)handle);
    return b;
}

static void on_burst_execute(srv_call *c) {
    uint64_t bh = c->req->burst_execute->burst;
    srv_burst_obj *b = find_burst(c, bh);
    if (!b) return;
    qos_sched_model *m;
    schema_status st =
        srv_model_obj_sched(c->d, c->s, srv_burst_model(b), bh, &m, c->err, sizeof c->err);
    if (st != SCHEMA_OK) {
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    srv_execute_burst(c->d, c->s, c->in, c->req, m, b);
}

static void on_burst_forget(srv_call *c) {
    const Nnd__BurstForget *x = c->req->burst_forget;
    srv_burst_obj *b = find_burst(c, x->burst);
    if (!b) return;
    size_t n = srv_burst_forget(b, x->slots, x->n_slots);
    srv_log_debug("client %llu: burst 0x%016llx forgot %zu of %zu slots",
                  (unsigned long long)c->s->serial, (unsigned long long)x->burst, n, x->n_slots);
    srv_call_done(c, SCHEMA_OK);
}

static void on_get_fenced_execution_info(srv_call *c) {
    srv_fenced_info(c->d, c->s, c->req);
}

static void on_cancel(srv_call *c) {
    srv_execution_cancel(c->d, c->s, c->req);
}

/* ---- memory domains (buffer.h) --------------------------------------------------------- */

/* A buffer's bytes count against its session's quotas (quota.h). */
static schema_status charge_bytes(void *s, uint64_t bytes, char *err, size_t errlen) {
    return srv_quota_take(&((srv_session *)s)->quota, SRV_QUOTA_BUFFER_BYTES, bytes, err, errlen);
}

static void refund_bytes(void *s, uint64_t bytes) {
    srv_quota_add(&((srv_session *)s)->quota, SRV_QUOTA_BUFFER_BYTES, -(int64_t)bytes);
}

static void on_allocate(srv_call *c) {
    const Nnd__Allocate *a = c->req->allocate;
    if (!srv_call_room_for(c, SRV_OBJ_BUFFER)) return;
    srv_buffer_model *models = calloc(a->n_prepared_models + 1, sizeof *models);
    if (!models) {
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "out of memory");
        return;
    }
    for (size_t i = 0; i < a->n_prepared_models; i++) {
        /* Only the caller's own models: another connection's handle is simply unknown. */
        srv_model_obj *o = srv_session_find(c->s, a->prepared_models[i], SRV_OBJ_PREPARED);
        if (!o) {
            free(models);
            srv_call_fail(c, SCHEMA_INVALID_ARGUMENT,
                          "prepared model %zu: unknown handle 0x%016llx", i,
                          (unsigned long long)a->prepared_models[i]);
            return;
        }
        models[i] = (srv_buffer_model){.handle = a->prepared_models[i], .prepared = o->prepared};
    }
    srv_buffer *b = NULL;
    srv_buffer_account acct = {.charge = charge_bytes, .refund = refund_bytes, .ctx = c->s};
    schema_status st = srv_buffer_allocate(c->s, a, models, &acct, &b, c->err, sizeof c->err);
    free(models);
    if (st != SCHEMA_OK) {
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    uint64_t handle = 0;
    if (srv_session_add(c->s, SRV_OBJ_BUFFER, b, srv_buffer_drop, &handle) < 0) {
        srv_buffer_drop(b);
        srv_call_fail(c, SCHEMA_GENERAL_FAILURE, "out of memory storing the buffer");
        return;
    }
    Nnd__AllocateReply r = NND__ALLOCATE_REPLY__INIT;
    r.buffer = handle;
    r.token = srv_buffer_token(b);
    c->reply.result_case = NND__REPLY__RESULT_ALLOCATED;
    c->reply.allocated = &r;
    srv_call_reply(c);
}

/* The buffer under a BufferCopyTo/From handle, or NULL after failing the call. */
static srv_buffer *copy_buffer(srv_call *c, uint64_t handle, const Nnd__MemoryPool *mp) {
    srv_buffer *b = srv_session_find(c->s, handle, SRV_OBJ_BUFFER);
    if (!b)
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT, "unknown buffer handle 0x%016llx",
                      (unsigned long long)handle);
    else if (!mp)
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT, "%s names no memory", c->name);
    else if (mp->kind != NND__POOL_KIND__POOL_MEMFD && mp->kind != NND__POOL_KIND__POOL_MMAP_FD &&
             mp->kind != NND__POOL_KIND__POOL_DMABUF)
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT,
                      "%s copies to or from memfd, mmap_fd or dma-buf memory only", c->name);
    else
        return b;
    return NULL;
}

static void on_buffer_copy_to(srv_call *c) {
    const Nnd__BufferCopyTo *x = c->req->buffer_copy_to;
    srv_buffer *b = copy_buffer(c, x->buffer, x->src);
    if (!b) return;
    srv_pool src;
    schema_status st = srv_pool_map(x->src, 0, c->in, true, NULL, &src, c->err, sizeof c->err);
    if (st == SCHEMA_OK) {
        st = srv_buffer_copy_in(b, &src, x->dimensions, x->n_dimensions, c->err, sizeof c->err);
        srv_pool_release(&src);
    }
    srv_call_done(c, st);
}

static void on_buffer_copy_from(srv_call *c) {
    const Nnd__BufferCopyFrom *x = c->req->buffer_copy_from;
    srv_buffer *b = copy_buffer(c, x->buffer, x->dst);
    if (!b) return;
    srv_pool dst;
    eng_output_shape shape;
    schema_status st = srv_pool_map(x->dst, 0, c->in, false, NULL, &dst, c->err, sizeof c->err);
    if (st == SCHEMA_OK) {
        st = srv_buffer_copy_out(b, &dst, x->dimensions, x->n_dimensions, &shape, c->err,
                                 sizeof c->err);
        srv_pool_release(&dst);
    }
    if (st != SCHEMA_OK) {
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    Nnd__BufferCopiedReply r = NND__BUFFER_COPIED_REPLY__INIT;
    r.n_dimensions = shape.rank;
    r.dimensions = shape.dims;
    c->reply.result_case = NND__REPLY__RESULT_BUFFER_COPIED;
    c->reply.buffer_copied = &r;
    srv_call_reply(c);
}

/* ---- registered memories (memreg.h) ----------------------------------------------------- */

static void on_register_memory(srv_call *c) {
    uint64_t token = 0;
    schema_status st = srv_memreg_register(c->s, c->req->register_memory->pool, c->in, &token,
                                           c->err, sizeof c->err);
    if (st != SCHEMA_OK) {
        srv_call_fail(c, st, "%s", c->err);
        return;
    }
    Nnd__MemoryRegisteredReply r = NND__MEMORY_REGISTERED_REPLY__INIT;
    r.token = token;
    c->reply.result_case = NND__REPLY__RESULT_MEMORY_REGISTERED;
    c->reply.memory_registered = &r;
    srv_call_reply(c);
}

static void on_unregister_memory(srv_call *c) {
    schema_status st =
        srv_memreg_unregister(c->s, c->req->unregister_memory->token, c->err, sizeof c->err);
    srv_call_done(c, st);
}

/* ---- objects --------------------------------------------------------------------------- */

static void on_release(srv_call *c) {
    uint64_t h = c->req->release->handle;
    if (srv_session_release(c->s, h) < 0) {
        srv_call_fail(c, SCHEMA_INVALID_ARGUMENT, "unknown handle 0x%016llx",
                      (unsigned long long)h);
        return;
    }
    srv_call_done(c, SCHEMA_OK);
}

/* ---- the table ------------------------------------------------------------------------- */

typedef void (*handler)(srv_call *c);

static handler handler_for(Nnd__Request__CallCase cc) {
    switch (cc) {
    case NND__REQUEST__CALL_HELLO: return on_hello;
    case NND__REQUEST__CALL_GET_CAPABILITIES: return on_get_capabilities;
    case NND__REQUEST__CALL_GET_VERSION_STRING: return on_get_version_string;
    case NND__REQUEST__CALL_GET_TYPE: return on_get_type;
    case NND__REQUEST__CALL_GET_DEVICES: return on_get_devices;
    case NND__REQUEST__CALL_GET_SUPPORTED_EXTENSIONS: return on_get_supported_extensions;
    case NND__REQUEST__CALL_GET_NUMBER_OF_CACHE_FILES_NEEDED:
        return on_get_number_of_cache_files_needed;
    case NND__REQUEST__CALL_GET_SUPPORTED_OPERATIONS: return srv_on_get_supported_operations;
    case NND__REQUEST__CALL_PREPARE_MODEL: return srv_on_prepare_model;
    case NND__REQUEST__CALL_PREPARE_MODEL_FROM_CACHE: return srv_on_prepare_model_from_cache;
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
    case NND__REQUEST__CALL_REGISTER_MEMORY: return on_register_memory;
    case NND__REQUEST__CALL_UNREGISTER_MEMORY: return on_unregister_memory;
    default: return NULL;
    }
}

void srv_dispatch(srv_daemon *d, srv_session *s, proto_frame_in *in) {
    srv_call c = {
        .d = d, .s = s, .in = in, .req = (const Nnd__Request *)in->msg, .name = "Request"};
    nnd__reply__init(&c.reply);
    c.reply.id = c.req->id;
    c.t0 = srv_now_ns();
    Nnd__Request__CallCase cc = c.req->call_case;
    if (cc == NND__REQUEST__CALL__NOT_SET) {
        srv_call_fail(&c, SCHEMA_INVALID_ARGUMENT, "request names no call");
        return;
    }
    /* The call's name is its message type's, straight from the schema. */
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(&nnd__request__descriptor, (unsigned)cc);
    if (f && f->descriptor)
        c.name = ((const ProtobufCMessageDescriptor *)f->descriptor)->short_name;
    srv_log_debug("client %llu: %s id %llu", (unsigned long long)s->serial, c.name,
                  (unsigned long long)c.req->id);
    handler h = handler_for(cc);
    if (!h) {
        srv_call_fail(&c, SCHEMA_GENERAL_FAILURE, "%s: not implemented yet", c.name);
        return;
    }
    /* Client memory mapped while the call is handled is the app's to pay for (pool.h). */
    srv_pool_set_account(s->quota.app ? s->quota.app->maps : NULL);
    h(&c);
    srv_pool_set_account(NULL);
}
