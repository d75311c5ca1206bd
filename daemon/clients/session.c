/* SPDX-License-Identifier: Apache-2.0 */
/* session.c: client identity and the handle table. See session.h. */
#include "daemon/clients/session.h"

#include "daemon/clients/pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define MIN_CAP 16

/* The quota an object of this kind counts against, or -1. */
static int quota_of(srv_obj_kind kind) {
    if (kind == SRV_OBJ_PREPARED) return SRV_QUOTA_PREPARED_MODELS;
    if (kind == SRV_OBJ_BUFFER) return SRV_QUOTA_BUFFERS;
    if (kind == SRV_OBJ_MEMORY) return SRV_QUOTA_DESCRIPTORS; /* keeps a file open */
    return -1;
}

/* delta objects of kind, holding bytes (given back with delta < 0). */
static void count(srv_session *s, srv_obj_kind kind, int64_t delta, uint64_t bytes) {
    s->count += (size_t)delta;
    s->per_kind[kind] += (size_t)delta;
    int r = quota_of(kind);
    if (r >= 0) srv_quota_add(&s->quota, (srv_quota_res)r, delta);
    if (bytes)
        srv_quota_add(&s->quota, SRV_QUOTA_PREPARED_BYTES,
                      delta < 0 ? -(int64_t)bytes : (int64_t)bytes);
}

void srv_session_init(srv_session *s, int fd, uint64_t serial) {
    memset(s, 0, sizeof *s);
    s->serial = serial;
    s->pid = -1;
    s->uid = (uid_t)-1;
    s->gid = (gid_t)-1;
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
        s->pid = cred.pid;
        s->uid = cred.uid;
        s->gid = cred.gid;
    }
    s->quota = (srv_quota_conn){.uid = s->uid, .pid = s->pid, .serial = serial};
    while (!s->token)
        if (getrandom(&s->token, sizeof s->token, 0) != (ssize_t)sizeof s->token) s->token = serial;
    if (s->pid > 0) {
        char link[64];
        snprintf(link, sizeof link, "/proc/%d/exe", (int)s->pid);
        ssize_t n = readlink(link, s->exe, sizeof s->exe - 1);
        s->exe[n > 0 ? n : 0] = '\0';
    }
}

/* Handles are random, so their low bits already spread well. */
static size_t slot_of(const srv_session *s, uint64_t h) {
    return (size_t)h & (s->cap - 1);
}

static srv_handle_slot *lookup(const srv_session *s, uint64_t h) {
    if (!s->cap || h == 0) return NULL;
    for (size_t i = slot_of(s, h);; i = (i + 1) & (s->cap - 1)) {
        if (s->slots[i].handle == h) return &s->slots[i];
        if (s->slots[i].handle == 0) return NULL;
    }
}

static void insert(srv_handle_slot *slots, size_t cap, const srv_handle_slot *e) {
    size_t i = (size_t)e->handle & (cap - 1);
    while (slots[i].handle)
        i = (i + 1) & (cap - 1);
    slots[i] = *e;
}

static int grow(srv_session *s) {
    size_t cap = s->cap ? s->cap * 2 : MIN_CAP;
    srv_handle_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i].handle) insert(slots, cap, &s->slots[i]);
    free(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

int srv_session_add(srv_session *s, srv_obj_kind kind, void *obj, void (*free_fn)(void *),
                    uint64_t *handle) {
    return srv_session_add_bytes(s, kind, obj, free_fn, 0, handle);
}

int srv_session_add_bytes(srv_session *s, srv_obj_kind kind, void *obj, void (*free_fn)(void *),
                          uint64_t bytes, uint64_t *handle) {
    if (s->count >= SRV_SESSION_MAX_OBJECTS) return -1;
    /* Keep the load factor under 1/2 so probes stay short. */
    if ((s->count + 1) * 2 > s->cap && grow(s) < 0) return -1;
    uint64_t h = 0;
    while (h == 0 || lookup(s, h)) {
        ssize_t n = getrandom(&h, sizeof h, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n != (ssize_t)sizeof h) return -1;
    }
    srv_handle_slot e = {.handle = h, .kind = kind, .obj = obj, .free = free_fn, .bytes = bytes};
    insert(s->slots, s->cap, &e);
    count(s, kind, 1, bytes);
    *handle = h;
    return 0;
}

void *srv_session_find(const srv_session *s, uint64_t handle, srv_obj_kind kind) {
    const srv_handle_slot *e = lookup(s, handle);
    if (!e || (kind != SRV_OBJ_ANY && e->kind != kind)) return NULL;
    return e->obj;
}

int srv_session_release(srv_session *s, uint64_t handle) {
    srv_handle_slot *e = lookup(s, handle);
    if (!e) return -1;
    srv_handle_slot gone = *e;
    /* Backward-shift deletion: re-seat the rest of the probe run, no tombstones. */
    size_t i = (size_t)(e - s->slots);
    e->handle = 0;
    for (size_t j = (i + 1) & (s->cap - 1); s->slots[j].handle; j = (j + 1) & (s->cap - 1)) {
        srv_handle_slot moved = s->slots[j];
        s->slots[j].handle = 0;
        insert(s->slots, s->cap, &moved);
    }
    count(s, gone.kind, -1, gone.bytes);
    if (gone.free) gone.free(gone.obj);
    return 0;
}

size_t srv_session_count(const srv_session *s, srv_obj_kind kind) {
    return kind == SRV_OBJ_ANY ? s->count : s->per_kind[kind];
}

schema_status srv_session_check_quota(srv_session *s, srv_obj_kind kind, char *err, size_t errlen) {
    if (s->count >= SRV_SESSION_MAX_OBJECTS) {
        snprintf(err, errlen, "this connection already holds %d objects; release some first",
                 SRV_SESSION_MAX_OBJECTS);
        return SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    int r = quota_of(kind);
    return r < 0 ? SCHEMA_OK : srv_quota_check(&s->quota, (srv_quota_res)r, 1, err, errlen);
}

void srv_session_clear(srv_session *s) {
    s->closing = true;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slots[i].handle) continue;
        count(s, s->slots[i].kind, -1, s->slots[i].bytes);
        if (s->slots[i].free) s->slots[i].free(s->slots[i].obj);
    }
    free(s->slots);
    s->slots = NULL;
    s->cap = s->count = 0;
    memset(s->per_kind, 0, sizeof s->per_kind);
    srv_pool_cache_free(s->pool_cache);
    s->pool_cache = NULL;
}
