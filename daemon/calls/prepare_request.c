/* SPDX-License-Identifier: Apache-2.0 */
/* prepare_request.c: a spilled PrepareModel converted, sighted and prepared on worker
 * threads. See prepare_request.h. */
#include "daemon/calls/prepare_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cache/cache.h"
#include "daemon/clients/pool.h"
#include "daemon/clients/quota.h"
#include "daemon/calls/off_loop.h"
#include "daemon/devices/extensions.h"
#include "daemon/wire/convert.h"
#include "proto/model_bytes.h"

typedef struct job {
    uv_work_t convert_work, prepare_work, make_work;
    srv_daemon *d;
    srv_session *s;
    uint64_t id, t0;
    ProtobufCMessage *msg;       /* the request, owned; NULL once freed */
    uint64_t msg_bytes;          /* counted against the session's prepared_bytes while held */
    const Nnd__PrepareModel *pm; /* in msg */
    uint32_t preference;
    int priority;
    srv_model_obj *o;
    srv_device_plan plan;
    bool extensions_allowed;
    eng_memory_view *views;
    size_t n_views;
    bool views_gone; /* taken by (or freed with) the prepared model */
    eng_model_desc desc;
    /* What the conversion step measured, for the loop's decision. */
    srv_cache_sighting sighting;
    uint64_t copy_bytes, constant_bytes;
    /* The decision and the preparation. */
    bool token, cached;
    uint8_t token_bytes[SRV_CACHE_TOKEN_LEN];
    int model_fd, data_fd;
    eng_prepared *planned;  /* cached: eng_plan()'s, finished by srv_cache_prepare_encoded */
    bool encoded;           /* x holds srv_cache_encode()'s result */
    srv_cache_encoded x;    /* cached */
    srv_cache_ref *made;    /* cached, a miss: the entry made off the loop until adopted */
    eng_prepared *prepared; /* in place: the result, owning the views */
    srv_prepare_done_fn done;
    schema_status st;
    char err[SCHEMA_ERR_LEN];
} job;

/* Gives back the request's bytes and frees it; the description borrowing from it goes
 * first. */
static void drop_request(job *j) {
    srv_model_desc_clear(&j->desc);
    srv_off_loop_free_msg(j->d->loop, j->msg);
    j->msg = NULL;
    srv_quota_add(&j->s->quota, SRV_QUOTA_PREPARED_BYTES, -(int64_t)j->msg_bytes);
    j->msg_bytes = 0;
}

/* Everything the job holds, on the loop; the session's hold last (it may free it). */
static void job_free(job *j) {
    srv_session *s = j->s;
    drop_request(j);
    if (j->encoded) srv_cache_encoded_free(&j->x);
    eng_prepared_free(j->planned);
    srv_cache_made_free(j->made);
    eng_prepared_free(j->prepared); /* releases the views it took */
    if (j->o) srv_model_obj_free(j->o);
    for (size_t i = 0; !j->views_gone && i < j->n_views; i++)
        if (j->views[i].release) j->views[i].release(j->views[i].ctx);
    free(j->views);
    int held_fds = (j->model_fd >= 0) + (j->data_fd >= 0);
    if (j->model_fd >= 0) close(j->model_fd);
    if (j->data_fd >= 0) close(j->data_fd);
    srv_quota_add(&s->quota, SRV_QUOTA_DESCRIPTORS, -held_fds);
    free(j);
    s->hold(s->send_ctx, false);
}

/* The call standing for the original one, to answer it from the loop. */
static void answer(job *j, schema_status st) {
    proto_frame_in none = {0};
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = j->id;
    srv_call c = {.d = j->d, .s = j->s, .in = &none, .req = &req, .name = "PrepareModel"};
    nnd__reply__init(&c.reply);
    c.reply.id = j->id;
    c.t0 = j->t0;
    snprintf(c.err, sizeof c.err, "%s", j->err);
    if (st == SCHEMA_OK && j->cached) {
        j->o->prepared = (eng_prepared *)srv_cache_ref_prepared(j->o->ref);
    } else if (st == SCHEMA_OK) {
        j->o->prepared = j->prepared;
        j->prepared = NULL;
    }
    drop_request(j); /* before the answer checks prepared_bytes */
    srv_model_obj *o = j->o;
    j->o = NULL;
    j->done(&c, o, st, srv_now_ns() - j->t0, j->priority);
}

static void fail(job *j, schema_status st, const char *why) {
    j->st = st;
    snprintf(j->err, sizeof j->err, "%s", why);
}

/* ---- step 1, a worker: the description, its sighting and its sizes ---------------------- */

static void convert(uv_work_t *w) {
    job *j = w->data;
    const Nnd__Model *m = j->pm->model;
    uint64_t faults = srv_pool_faults(); /* this thread's: the client's pages read here */
    j->st = srv_model_from_proto_ext(m, j->views, j->n_views, j->extensions_allowed, &j->desc,
                                     j->err, sizeof j->err);
    srv_device_plan_apply(&j->plan, &j->desc);
    if (j->st != SCHEMA_OK) return;
    srv_cache_sight(&j->desc, &j->sighting);
    j->copy_bytes = eng_model_copy_bytes(&j->desc);
    j->constant_bytes = proto_wire_constant_bytes(m);
    if (srv_pool_faults() != faults)
        fail(j, SCHEMA_GENERAL_FAILURE, "a model pool shrank while the model was read");
}

/* ---- step 3, a worker: the preparation ----------------------------------------------------- */

static void prepare(uv_work_t *w) {
    job *j = w->data;
    uint64_t faults = srv_pool_faults();
    if (j->cached) {
        j->st = eng_plan(&j->desc, &j->planned, j->err, sizeof j->err);
        if (j->st == SCHEMA_OK)
            j->st = srv_cache_encode(j->d->cache, &j->desc, j->preference, &j->x, j->err,
                                     sizeof j->err);
        j->encoded = j->st == SCHEMA_OK;
    } else {
        j->st = eng_prepare(&j->desc, &j->prepared, j->err, sizeof j->err);
        if (j->st == SCHEMA_OK) j->views_gone = true;
    }
    if (j->st == SCHEMA_OK && srv_pool_faults() != faults)
        fail(j, SCHEMA_GENERAL_FAILURE, "a model pool shrank while the model was prepared");
}

/* ---- step 4, a worker: a content-cache miss's entry (decoded from the daemon's copy, the
 * plan finished on it), made before the views go ---------------------------------------- */

static void make(uv_work_t *w) {
    job *j = w->data;
    j->st = srv_cache_entry_make(j->d->cache, &j->x, j->planned, &j->made, j->err, sizeof j->err);
    j->planned = NULL; /* taken, as x's buffers */
}

static void made(uv_work_t *w, int status) {
    job *j = w->data;
    if (status < 0 && j->st == SCHEMA_OK) fail(j, SCHEMA_GENERAL_FAILURE, "preparation cancelled");
    if (j->s->closing) {
        job_free(j);
        return;
    }
    if (j->st == SCHEMA_OK) {
        j->st = srv_cache_entry_adopt(j->d->cache, j->s, &j->x, j->made,
                                      j->token ? j->token_bytes : NULL, j->model_fd, j->data_fd,
                                      &j->o->ref, j->err, sizeof j->err);
        j->made = NULL;
    }
    answer(j, j->st);
    job_free(j);
}

static void prepared(uv_work_t *w, int status) {
    job *j = w->data;
    if (status < 0 && j->st == SCHEMA_OK) fail(j, SCHEMA_GENERAL_FAILURE, "preparation cancelled");
    if (j->s->closing) {
        job_free(j);
        return;
    }
    if (j->st == SCHEMA_OK && j->cached) {
        schema_status st;
        bool hit = srv_cache_encoded_hit(j->d->cache, j->s, &j->x, j->planned,
                                         j->token ? j->token_bytes : NULL, j->model_fd, j->data_fd,
                                         &j->o->ref, &st, j->err, sizeof j->err);
        if (hit) {
            j->planned = NULL;
            j->encoded = false;
            j->st = st;
        } else {
            j->make_work.data = j;
            if (uv_queue_work(j->d->loop, &j->make_work, make, made) == 0) return;
            fail(j, SCHEMA_GENERAL_FAILURE, "cannot prepare the model now");
        }
    }
    answer(j, j->st);
    job_free(j);
}

/* ---- step 2, the loop: content cache or in place, and the quotas ------------------------- */

static void converted(uv_work_t *w, int status) {
    job *j = w->data;
    if (status < 0 && j->st == SCHEMA_OK) fail(j, SCHEMA_GENERAL_FAILURE, "preparation cancelled");
    if (j->s->closing) { /* nobody to answer */
        job_free(j);
        return;
    }
    if (j->st == SCHEMA_OK) {
        /* As srv_on_prepare_model() decides (prepare.c), from the figures of step 1. */
        bool cacheable = srv_cache_devices_ok(&j->desc);
        if (j->token && cacheable && !srv_cache_save_pays(j->d->cache, j->s, j->constant_bytes)) {
            j->token = false;
            j->o->cache_save_skipped = true;
        }
        j->cached = cacheable && srv_cache_wants_sighted(j->d->cache, j->s, &j->sighting, j->token);
        /* The constants it copies come from its own request, which goes after the copy:
         * that request is not counted twice. */
        if (!j->cached) {
            srv_quota_add(&j->s->quota, SRV_QUOTA_PREPARED_BYTES, -(int64_t)j->msg_bytes);
            j->st = srv_quota_check(&j->s->quota, SRV_QUOTA_PREPARED_BYTES, j->copy_bytes, j->err,
                                    sizeof j->err);
            srv_quota_add(&j->s->quota, SRV_QUOTA_PREPARED_BYTES, (int64_t)j->msg_bytes);
        }
    }
    if (j->st == SCHEMA_OK) {
        j->prepare_work.data = j;
        if (uv_queue_work(j->d->loop, &j->prepare_work, prepare, prepared) == 0) return;
        fail(j, SCHEMA_GENERAL_FAILURE, "cannot prepare the model now");
    }
    answer(j, j->st);
    job_free(j);
}

void srv_prepare_request(srv_call *c, srv_model_obj *o, const srv_device_plan *plan,
                         eng_memory_view *views, size_t n_views, const uint8_t *token, int model_fd,
                         int data_fd, srv_prepare_done_fn done) {
    job *j = calloc(1, sizeof *j);
    if (!j) {
        for (size_t i = 0; i < n_views; i++)
            if (views[i].release) views[i].release(views[i].ctx);
        free(views);
        if (model_fd >= 0) close(model_fd);
        if (data_fd >= 0) close(data_fd);
        snprintf(c->err, sizeof c->err, "out of memory preparing the model");
        done(c, o, SCHEMA_GENERAL_FAILURE, 0, c->req->prepare_model->priority);
        return;
    }
    *j = (job){.d = c->d,
               .s = c->s,
               .id = c->req->id,
               .t0 = srv_now_ns(),
               .msg_bytes = c->in->bytes,
               .pm = c->req->prepare_model,
               .preference = (uint32_t)c->req->prepare_model->preference,
               .priority = c->req->prepare_model->priority,
               .o = o,
               .plan = *plan,
               .extensions_allowed = srv_extensions_allowed(c->d, c->s),
               .views = views,
               .n_views = n_views,
               .token = token != NULL,
               .model_fd = model_fd,
               .data_fd = data_fd,
               .done = done};
    if (token) memcpy(j->token_bytes, token, SRV_CACHE_TOKEN_LEN);
    j->msg = proto_frame_take_msg(c->in); /* c->req points into it: unused from here */
    srv_quota_add(&c->s->quota, SRV_QUOTA_PREPARED_BYTES, (int64_t)j->msg_bytes);
    srv_quota_add(&c->s->quota, SRV_QUOTA_DESCRIPTORS, (model_fd >= 0) + (data_fd >= 0));
    c->s->hold(c->s->send_ctx, true);
    j->convert_work.data = j;
    if (uv_queue_work(c->d->loop, &j->convert_work, convert, converted) < 0) {
        fail(j, SCHEMA_GENERAL_FAILURE, "cannot prepare the model now");
        answer(j, j->st);
        job_free(j);
    }
}
