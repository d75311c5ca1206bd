/* SPDX-License-Identifier: Apache-2.0 */
/* session: what the daemon knows about one client connection, and what it owns.
 *
 * Contract:
 * - Identity (pid, uid, gid, executable) is read once at accept from SO_PEERCRED and
 *   /proc/<pid>/exe; the name comes from Hello.
 * - Objects the client creates live in a per-session handle table under random,
 *   unguessable 64-bit handles (getrandom), never 0. A handle is only ever looked up in
 *   its own session, so another connection's handle is simply unknown.
 * - srv_session_release() frees one object; srv_session_clear() frees them all (on
 *   disconnect). Each object is freed through the function it was added with.
 * - Quotas (quota.h): storing a prepared model or a buffer counts one against the
 *   session's and its app's quota of that kind, a registered memory one of the app's
 *   descriptors, and a prepared model its memory (srv_session_add_bytes) against
 *   prepared_bytes; freeing it gives them back. The caller
 *   checks the quota first (srv_session_check_quota), as nothing else runs in between on
 *   the loop. The quota module sees a session only through its share (srv_session.quota),
 *   which the caller passes.
 * - Replies go out through the send hook the server installs.
 * - token (random at init, never 0) names the session in HelloReply; other connections of
 *   the same process join it with it (server.h), and then use this session's objects.
 */
#ifndef SRV_CLIENTS_SESSION_H
#define SRV_CLIENTS_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <protobuf-c/protobuf-c.h>

#include "daemon/clients/quota.h"

/* Objects of every kind one connection may hold at once: the handle table's ceiling. The
 * per-kind quotas (quota.h) may not be set above it. */
#define SRV_SESSION_MAX_OBJECTS 16384

typedef enum srv_obj_kind {
    SRV_OBJ_ANY = 0, /* for lookups only */
    SRV_OBJ_PREPARED = 1,
    SRV_OBJ_BUFFER = 2,
    SRV_OBJ_BURST = 3,
    SRV_OBJ_EXECUTION = 4, /* a fenced execution (fenced.h) */
    SRV_OBJ_MEMORY = 5,    /* a registered memory (memreg.h) */
    SRV_OBJ_KINDS
} srv_obj_kind;

typedef struct srv_handle_slot {
    uint64_t handle; /* 0: free */
    srv_obj_kind kind;
    void *obj;
    void (*free)(void *obj);
    uint64_t bytes; /* counted against the kind's bytes quota (prepared_bytes) */
} srv_handle_slot;

/* Sends one packed reply with fds (borrowed); returns 0 or -errno. */
typedef int (*srv_send_fn)(void *ctx, const ProtobufCMessage *reply, const int *fds, size_t nfds);
/* hold true: read no more requests of this session until hold false (a call answered
 * later, off the loop). Each hold true is matched by one hold false; the session stays
 * valid in between, even once its connection closed (then `closing` is set), and may be
 * freed by the hold false that ends the last hold. */
typedef void (*srv_hold_fn)(void *ctx, bool on);

typedef struct srv_session {
    uint64_t serial; /* connection number since startup, for logs */
    pid_t pid;
    uid_t uid;
    gid_t gid;
    char exe[PATH_MAX];     /* "" when unreadable */
    char name[64];          /* from Hello, "" until then */
    uint64_t token;         /* random; names the session to the connections that join it */
    volatile bool closing;  /* stop flag for running work: the connection is gone */
    srv_handle_slot *slots; /* open addressing, linear probing, power-of-two capacity */
    size_t cap;
    size_t count;
    size_t per_kind[SRV_OBJ_KINDS];
    srv_send_fn send;
    void *send_ctx;                    /* also the hold hook's */
    srv_hold_fn hold;                  /* NULL: the session cannot answer later (unit tests) */
    struct srv_pool_cache *pool_cache; /* recent execution pool mappings (pool.h) */
    srv_quota_conn quota; /* this connection's share (quota.h), passed to the quota calls */
    size_t burst_slots;   /* slots its bursts cache (burst.h) */
} srv_session;

/* Reads the peer's identity from a connected AF_UNIX socket. */
void srv_session_init(srv_session *s, int fd, uint64_t serial);
/* Frees every owned object and the table; the session may then be discarded. */
void srv_session_clear(srv_session *s);

/* Stores obj under a new handle. Returns 0, or -1 when out of memory or randomness, or
 * when the session already holds SRV_SESSION_MAX_OBJECTS. */
int srv_session_add(srv_session *s, srv_obj_kind kind, void *obj, void (*free_fn)(void *),
                    uint64_t *handle);
/* srv_session_add() of a prepared model (SRV_OBJ_PREPARED) that also counts bytes of
 * memory against quota.*.prepared_bytes until it is freed; the caller checked them
 * (srv_quota_check) first. */
int srv_session_add_bytes(srv_session *s, srv_obj_kind kind, void *obj, void (*free_fn)(void *),
                          uint64_t bytes, uint64_t *handle);
/* The object under handle if it has this kind (or any kind for SRV_OBJ_ANY), else NULL. */
void *srv_session_find(const srv_session *s, uint64_t handle, srv_obj_kind kind);
/* Frees the object under handle; returns 0, or -1 when the handle is unknown. */
int srv_session_release(srv_session *s, uint64_t handle);
size_t srv_session_count(const srv_session *s, srv_obj_kind kind);
/* Whether one more object of kind fits the session's quotas and the handle table:
 * SCHEMA_OK, or RESOURCE_EXHAUSTED_TRANSIENT with err saying which limit. */
schema_status srv_session_check_quota(srv_session *s, srv_obj_kind kind, char *err, size_t errlen);

#endif
