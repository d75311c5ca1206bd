/* SPDX-License-Identifier: Apache-2.0 */
/* prepare_off_loop.c: the content cache's copy and hash on a worker thread. See
 * prepare_off_loop.h. */
#include "daemon/calls/prepare_off_loop.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cache/cache.h"
#include "daemon/clients/pool.h"
#include "daemon/wire/convert.h"

typedef struct job {
    uv_work_t work, make_work;
    srv_daemon *d;
    srv_session *s;
    uint64_t id, t0;
    srv_model_obj *o;
    eng_model_desc desc;
    void *owned;        /* what desc borrows (srv_model_desc_own()) */
    eng_prepared *plan; /* desc's, from eng_plan() */
    eng_memory_view *views;
    size_t n_views;
    uint32_t preference;
    int priority;
    bool token;
    uint8_t token_bytes[SRV_CACHE_TOKEN_LEN];
    int model_fd, data_fd;
    srv_prepare_done_fn done;
    bool in_place;          /* eng_prepare() on the client's memory, no content cache */
    eng_prepared *prepared; /* in place: the result, owning the views */
    bool views_gone;        /* the views were taken by (or freed with) the prepared model */
    srv_cache_encoded x;
    srv_cache_ref *made; /* a content-cache miss's entry, made off the loop until adopted */
    schema_status st;
    char err[SCHEMA_ERR_LEN];
} job;

static void encode(uv_work_t *w) {
    job *j = w->data;
    if (j->in_place) {
        uint64_t faults = srv_pool_faults(); /* this thread's: the client's pages read here */
        j->st = eng_prepare(&j->desc, &j->prepared, j->err, sizeof j->err);
        if (j->st == SCHEMA_OK && srv_pool_faults() != faults) {
            eng_prepared_free(j->prepared); /* releases the views it took */
            j->prepared = NULL;
            j->views_gone = true;
            j->st = SCHEMA_GENERAL_FAILURE;
            snprintf(j->err, sizeof j->err, "a model pool shrank while the model was prepared");
        }
        if (j->st == SCHEMA_OK) j->views_gone = true;
        return;
    }
    j->st = srv_cache_encode(j->d->cache, &j->desc, j->preference, &j->x, j->err, sizeof j->err);
}

static void make(uv_work_t *w) {
    job *j = w->data;
    j->st = srv_cache_entry_make(j->d->cache, &j->x, j->plan, &j->made, j->err, sizeof j->err);
    j->plan = NULL; /* taken, as x's buffers */
}

static void made(uv_work_t *w, int status);

static void finish(uv_work_t *w, int status) {
    job *j = w->data;
    if (status < 0 && j->st == SCHEMA_OK) { /* cancelled before it ran */
        j->st = SCHEMA_GENERAL_FAILURE;
        snprintf(j->err, sizeof j->err, "preparation cancelled");
    }
    srv_session *s = j->s;
    if (s->closing) { /* nobody to answer */
        if (j->st == SCHEMA_OK && !j->in_place) srv_cache_encoded_free(&j->x);
        srv_cache_made_free(j->made);
        eng_prepared_free(j->plan);
        eng_prepared_free(j->prepared);
        srv_model_obj_free(j->o);
    } else if (j->in_place) {
        proto_frame_in none = {0};
        Nnd__Request req = NND__REQUEST__INIT;
        req.id = j->id;
        srv_call c = {.d = j->d, .s = s, .in = &none, .req = &req, .name = "PrepareModel"};
        nnd__reply__init(&c.reply);
        c.reply.id = j->id;
        c.t0 = j->t0;
        snprintf(c.err, sizeof c.err, "%s", j->err);
        j->o->prepared = j->prepared;
        j->done(&c, j->o, j->st, srv_now_ns() - j->t0, j->priority);
    } else {
        proto_frame_in none = {0};
        Nnd__Request req = NND__REQUEST__INIT;
        req.id = j->id;
        srv_call c = {.d = j->d, .s = s, .in = &none, .req = &req, .name = "PrepareModel"};
        nnd__reply__init(&c.reply);
        c.reply.id = j->id;
        c.t0 = j->t0;
        snprintf(c.err, sizeof c.err, "%s", j->err);
        schema_status st = j->st;
        if (st == SCHEMA_OK && !j->made) {
            /* A hit answers now; a miss's entry is made on a worker (made() answers). */
            if (!srv_cache_encoded_hit(j->d->cache, s, &j->x, j->plan,
                                       j->token ? j->token_bytes : NULL, j->model_fd, j->data_fd,
                                       &j->o->ref, &st, c.err, sizeof c.err)) {
                j->make_work.data = j;
                if (uv_queue_work(j->d->loop, &j->make_work, make, made) == 0) return;
                srv_cache_encoded_free(&j->x);
                eng_prepared_free(j->plan);
                st = SCHEMA_GENERAL_FAILURE;
                snprintf(c.err, sizeof c.err, "cannot prepare the model now");
            }
        } else if (st == SCHEMA_OK) {
            st = srv_cache_entry_adopt(j->d->cache, s, &j->x, j->made,
                                       j->token ? j->token_bytes : NULL, j->model_fd, j->data_fd,
                                       &j->o->ref, c.err, sizeof c.err);
        } else {
            eng_prepared_free(j->plan);
        }
        j->made = NULL;
        if (st == SCHEMA_OK) j->o->prepared = (eng_prepared *)srv_cache_ref_prepared(j->o->ref);
        j->done(&c, j->o, st, srv_now_ns() - j->t0, j->priority);
    }
    srv_model_desc_clear(&j->desc);
    free(j->owned);
    for (size_t i = 0; !j->views_gone && i < j->n_views; i++)
        if (j->views[i].release) j->views[i].release(j->views[i].ctx);
    free(j->views);
    if (j->model_fd >= 0) close(j->model_fd);
    if (j->data_fd >= 0) close(j->data_fd);
    free(j);
    s->hold(s->send_ctx, false); /* last: it may free the session */
}

/* The entry of a content-cache miss is made: finish() adopts it and answers. */
static void made(uv_work_t *w, int status) {
    finish(w, status);
}

/* No job could be made: everything the call handed over is freed, and it is answered. */
static void give_up(srv_call *c, srv_model_obj *o, eng_prepared *plan, eng_model_desc *desc,
                    void *owned, eng_memory_view *views, size_t n_views, int priority,
                    srv_prepare_done_fn done, const char *why) {
    eng_prepared_free(plan);
    srv_model_desc_clear(desc);
    free(owned);
    for (size_t i = 0; i < n_views; i++)
        if (views[i].release) views[i].release(views[i].ctx);
    free(views);
    snprintf(c->err, sizeof c->err, "%s", why);
    done(c, o, SCHEMA_GENERAL_FAILURE, 0, priority);
}

/* j takes over desc and goes to libuv's pool; the connection reads nothing more until it
 * is answered. */
static void queue(srv_call *c, job *j, eng_model_desc *desc) {
    memset(desc, 0, sizeof *desc); /* the job's now */
    j->work.data = j;
    c->s->hold(c->s->send_ctx, true);
    if (uv_queue_work(c->d->loop, &j->work, encode, finish) < 0) {
        j->st = SCHEMA_GENERAL_FAILURE;
        snprintf(j->err, sizeof j->err, "cannot prepare the model now");
        finish(&j->work, 0);
    }
}

void srv_prepare_off_loop(srv_call *c, srv_model_obj *o, eng_model_desc *desc, void *owned,
                          eng_prepared *plan, eng_memory_view *views, size_t n_views,
                          uint32_t preference, int priority, const uint8_t *token, int model_fd,
                          int data_fd, srv_prepare_done_fn done) {
    job *j = calloc(1, sizeof *j);
    if (j && token) {
        j->model_fd = fcntl(model_fd, F_DUPFD_CLOEXEC, 0);
        j->data_fd = fcntl(data_fd, F_DUPFD_CLOEXEC, 0);
    } else if (j) {
        j->model_fd = j->data_fd = -1;
    }
    if (!j || (token && (j->model_fd < 0 || j->data_fd < 0))) {
        if (j && j->model_fd >= 0) close(j->model_fd);
        if (j && j->data_fd >= 0) close(j->data_fd);
        free(j);
        give_up(c, o, plan, desc, owned, views, n_views, priority, done,
                "out of memory or descriptors preparing the model");
        return;
    }
    *j = (job){.d = c->d,
               .s = c->s,
               .id = c->req->id,
               .t0 = srv_now_ns(),
               .o = o,
               .desc = *desc,
               .owned = owned,
               .plan = plan,
               .views = views,
               .n_views = n_views,
               .preference = preference,
               .priority = priority,
               .token = token != NULL,
               .model_fd = j->model_fd,
               .data_fd = j->data_fd,
               .done = done};
    if (token) memcpy(j->token_bytes, token, SRV_CACHE_TOKEN_LEN);
    queue(c, j, desc);
}

void srv_prepare_in_place_off_loop(srv_call *c, srv_model_obj *o, eng_model_desc *desc, void *owned,
                                   eng_memory_view *views, size_t n_views, int priority,
                                   srv_prepare_done_fn done) {
    job *j = calloc(1, sizeof *j);
    if (!j) {
        give_up(c, o, NULL, desc, owned, views, n_views, priority, done,
                "out of memory preparing the model");
        return;
    }
    *j = (job){.d = c->d,
               .s = c->s,
               .id = c->req->id,
               .t0 = srv_now_ns(),
               .o = o,
               .desc = *desc,
               .owned = owned,
               .views = views,
               .n_views = n_views,
               .priority = priority,
               .model_fd = -1,
               .data_fd = -1,
               .done = done,
               .in_place = true};
    queue(c, j, desc);
}
