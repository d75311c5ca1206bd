/* SPDX-License-Identifier: Apache-2.0 */
/* off_loop.c: a call's work on libuv's worker threads. See off_loop.h. */
#include "daemon/calls/off_loop.h"

#include <stdlib.h>

typedef struct job {
    uv_work_t work;
    srv_daemon *d;
    srv_session *s;
    uint64_t id, t0;
    const char *name;
    const srv_off_loop_fns *fns;
    void *ctx;
} job;

static void run(uv_work_t *w) {
    job *j = w->data;
    j->fns->work(j->ctx);
}

static void answer(job *j, bool queued) {
    proto_frame_in none = {0};
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = j->id;
    srv_call c = {.d = j->d, .s = j->s, .in = &none, .req = &req, .name = j->name};
    nnd__reply__init(&c.reply);
    c.reply.id = j->id;
    c.t0 = j->t0;
    j->fns->answer(&c, j->ctx, queued);
}

static void done(uv_work_t *w, int status) {
    job *j = w->data;
    srv_session *s = j->s;
    if (s->closing)
        j->fns->drop(j->ctx);
    else
        answer(j, status >= 0);
    free(j);
    s->hold(s->send_ctx, false); /* last: it may free the session */
}

void srv_off_loop_run(srv_call *c, const srv_off_loop_fns *fns, void *ctx) {
    job *j = calloc(1, sizeof *j);
    if (!j) {
        fns->answer(c, ctx, false);
        return;
    }
    *j = (job){.d = c->d,
               .s = c->s,
               .id = c->req->id,
               .t0 = c->t0,
               .name = c->name,
               .fns = fns,
               .ctx = ctx};
    j->work.data = j;
    c->s->hold(c->s->send_ctx, true);
    if (uv_queue_work(c->d->loop, &j->work, run, done) < 0) {
        answer(j, false);
        free(j);
        c->s->hold(c->s->send_ctx, false);
    }
}

typedef struct free_job {
    uv_work_t work;
    ProtobufCMessage *msg;
} free_job;

static void free_work(uv_work_t *w) {
    free_job *f = w->data;
    protobuf_c_message_free_unpacked(f->msg, NULL);
}

static void free_done(uv_work_t *w, int status) {
    free_job *f = w->data;
    if (status < 0) protobuf_c_message_free_unpacked(f->msg, NULL); /* cancelled at shutdown */
    free(f);
}

void srv_off_loop_free_msg(uv_loop_t *loop, ProtobufCMessage *msg) {
    if (!msg) return;
    free_job *f = malloc(sizeof *f);
    if (f) {
        *f = (free_job){.msg = msg};
        f->work.data = f;
        if (uv_queue_work(loop, &f->work, free_work, free_done) == 0) return;
        free(f);
    }
    protobuf_c_message_free_unpacked(msg, NULL);
}
