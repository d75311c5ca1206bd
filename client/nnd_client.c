/* SPDX-License-Identifier: Apache-2.0 */
/* nnd_client.c: libnnd: connecting, the calls and their replies (the connection itself is
 * nnd_conn.c). See include/nnd/nnd.h and nnd_wire.h. */
#include "nnd/nnd_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client/client_internal.h"
#include "client/record.h"
#include "proto/frame.h"
#include "proto/paths.h"

/* The deadline a request carries, 0 for none: its reply may take that long. */
static uint64_t request_deadline(const Nnd__Request *req) {
    switch (req->call_case) {
    case NND__REQUEST__CALL_EXECUTE: return req->execute ? req->execute->deadline_ns : 0;
    case NND__REQUEST__CALL_BURST_EXECUTE:
        return req->burst_execute ? req->burst_execute->deadline_ns : 0;
    case NND__REQUEST__CALL_PREPARE_MODEL:
        return req->prepare_model ? req->prepare_model->deadline_ns : 0;
    case NND__REQUEST__CALL_PREPARE_MODEL_FROM_CACHE:
        return req->prepare_model_from_cache ? req->prepare_model_from_cache->deadline_ns : 0;
    default: return 0;
    }
}

/* An execution whose reply did not come in time is cancelled, so that the daemon does not
 * run it for nobody; the answer to the Cancel is dropped like the late reply. */
static void cancel_late(nnd_client *c, cli_lane *lane, const Nnd__Request *req) {
    if (req->call_case != NND__REQUEST__CALL_EXECUTE &&
        req->call_case != NND__REQUEST__CALL_BURST_EXECUTE)
        return;
    Nnd__Cancel call = NND__CANCEL__INIT;
    call.request_id = req->id;
    Nnd__Request r = NND__REQUEST__INIT;
    r.call_case = NND__REQUEST__CALL_CANCEL;
    r.cancel = &call;
    if (lane)
        cli_lane_send(c, lane, &r, cli_conn_bound(c, 0));
    else
        cli_conn_send(c, &r, NULL, 0, NULL, cli_conn_bound(c, 0), false, NULL, 0);
}

int nnd_client_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                    Nnd__Reply **reply, int *reply_fds, size_t *n_reply_fds, char *err,
                    size_t errlen) {
    *reply = NULL;
    size_t cap = n_reply_fds ? *n_reply_fds : 0;
    if (n_reply_fds) *n_reply_fds = 0;
    uint64_t bound = cli_conn_bound(c, request_deadline(req));
    proto_frame_in in;
    int rc;
    cli_lane *lane = cli_lane_for_thread(c);
    if (lane) {
        rc = cli_lane_call(c, lane, req, fds, nfds, bound, &in, err, errlen);
    } else {
        cli_pending p;
        rc = cli_conn_send(c, req, fds, nfds, &p, bound, false, err, errlen);
        if (rc < 0) return rc;
        rc = cli_conn_wait(c, &p, &in, err, errlen);
    }
    if (rc == -ETIMEDOUT) cancel_late(c, lane, req);
    if (rc < 0) return rc;
    for (size_t i = 0; i < in.nfds && reply_fds && i < cap; i++)
        reply_fds[(*n_reply_fds)++] = proto_frame_take_fd(&in, (uint32_t)i);
    *reply = (Nnd__Reply *)in.msg;
    in.msg = NULL; /* the reply is the caller's now; clear closes the fds not taken */
    proto_frame_in_clear(&in);
    return 0;
}

/* One call whose reply must carry `want` on success. Returns the status or -errno; on
 * status NONE *out is the reply (free it), otherwise err holds the reply's message. */
int cli_take_reply(Nnd__Reply *r, bool keep_failed, Nnd__Reply **out, char *err, size_t errlen) {
    int status = r->status;
    if (status != NND__ERROR_STATUS__NONE)
        cli_set_err(err, errlen, "%s: %s", nnd_status_name(status),
                    r->message && *r->message ? r->message : "(no message)");
    if (out && (status == NND__ERROR_STATUS__NONE || keep_failed))
        *out = r;
    else
        nnd__reply__free_unpacked(r, NULL);
    return status;
}

int cli_simple_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                    Nnd__Reply__ResultCase want, Nnd__Reply **out, char *err, size_t errlen) {
    return cli_simple_call_fds(c, req, fds, nfds, want, out, NULL, NULL, err, errlen);
}

int cli_simple_call_fds(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                        Nnd__Reply__ResultCase want, Nnd__Reply **out, int *reply_fds,
                        size_t *n_reply_fds, char *err, size_t errlen) {
    Nnd__Reply *r = NULL;
    if (out) *out = NULL;
    int rc = nnd_client_call(c, req, fds, nfds, &r, reply_fds, n_reply_fds, err, errlen);
    if (rc < 0) return rc;
    if (r->status == NND__ERROR_STATUS__NONE && want != NND__REPLY__RESULT__NOT_SET &&
        r->result_case != want) {
        cli_set_err(err, errlen, "the daemon answered with the wrong result (%d, wanted %d)",
                    (int)r->result_case, (int)want);
        nnd__reply__free_unpacked(r, NULL);
        return -EBADMSG;
    }
    return cli_take_reply(r, false, out, err, errlen);
}

/* $NND_CLIENT_LANES: how many lanes a client may open (0: none); CLI_CONN_LANES at most. */
static unsigned lanes_wanted(void) {
    const char *v = getenv("NND_CLIENT_LANES");
    if (!v || !*v) return CLI_CONN_LANES;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    return *end || n > CLI_CONN_LANES ? CLI_CONN_LANES : (unsigned)n;
}

nnd_client *nnd_client_connect(const char *socket_path, const char *client_name, char *err,
                               size_t errlen) {
    char def[sizeof(((struct sockaddr_un *)0)->sun_path)];
    if (!socket_path) socket_path = proto_client_socket_path(def, sizeof def);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!socket_path || strlen(socket_path) >= sizeof sa.sun_path) {
        cli_set_err(err, errlen, "socket path %s too long", socket_path ? socket_path : "(none)");
        return NULL;
    }
    strcpy(sa.sun_path, socket_path);
    nnd_client *c = calloc(1, sizeof *c);
    if (!c || !(c->buf = malloc(PROTO_FRAME_RECV_BUF))) {
        free(c);
        cli_set_err(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    snprintf(c->path, sizeof c->path, "%s", socket_path);
    atomic_init(&c->call_timeout_ms, NND_CALL_TIMEOUT_MS);
    uint64_t bound = cli_conn_now_ns() + NND_CONNECT_TIMEOUT_MS * 1000000ull;
    c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    int rc = c->sock < 0 ? -errno : cli_connect_bounded(c->sock, &sa, bound);
    if (rc < 0) {
        cli_set_err(err, errlen, "cannot connect to the daemon at %s: %s", socket_path,
                    rc == -ETIMEDOUT ? "it accepts no connection" : strerror(-rc));
        nnd_client_close(c);
        return NULL;
    }
    Nnd__Hello hello = NND__HELLO__INIT;
    hello.protocol_version = PROTO_PROTOCOL_VERSION;
    snprintf(c->name, sizeof c->name, "%s", client_name ? client_name : "libnnd");
    hello.client_name = c->name;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_HELLO;
    req.hello = &hello;
    Nnd__Reply *r = NULL;
    cli_pending p;
    char msg[256] = "";
    int status = cli_conn_send(c, &req, NULL, 0, &p, bound, false, msg, sizeof msg);
    proto_frame_in in;
    if (status == 0) status = cli_conn_wait(c, &p, &in, msg, sizeof msg);
    if (status == 0) {
        r = (Nnd__Reply *)in.msg;
        in.msg = NULL;
        proto_frame_in_clear(&in);
        status = r->status;
        if (status == 0 && r->result_case != NND__REPLY__RESULT_HELLO) status = -EPROTO;
        if (status > 0)
            snprintf(msg, sizeof msg, "%s: %s", nnd_status_name(status),
                     r->message ? r->message : "");
        else if (status < 0)
            snprintf(msg, sizeof msg, "its reply is no Hello");
    }
    if (status == 0 && r->hello->protocol_version != PROTO_PROTOCOL_VERSION) {
        cli_set_err(err, errlen, "the daemon at %s speaks protocol %u, this client %u", socket_path,
                    r->hello->protocol_version, PROTO_PROTOCOL_VERSION);
        status = -EPROTO;
    } else if (status != 0) {
        cli_set_err(err, errlen, "the daemon at %s %s Hello: %s", socket_path,
                    status > 0 ? "refused" : "did not answer", msg);
    }
    if (status != 0) {
        if (r) nnd__reply__free_unpacked(r, NULL);
        nnd_client_close(c);
        return NULL;
    }
    snprintf(c->daemon_version, sizeof c->daemon_version, "%s",
             r->hello->daemon_version ? r->hello->daemon_version : "");
    c->daemon_state_dir = strdup(r->hello->state_dir ? r->hello->state_dir : "");
    c->daemon_operation_types = r->hello->supported_operation_types;
    c->session_token = r->hello->session_token;
    cli_lanes_init(c, lanes_wanted());
    nnd__reply__free_unpacked(r, NULL);
    if (!c->daemon_state_dir) {
        cli_set_err(err, errlen, "out of memory");
        nnd_client_close(c);
        return NULL;
    }
    return c;
}

void nnd_client_close(nnd_client *c) {
    if (!c) return;
    if (cli_record_live()) cli_record_closed(c);
    if (c->sock >= 0) close(c->sock);
    cli_conn_free(c);
    for (size_t i = 0; i < c->n_registered; i++)
        close(c->registered[i].fd);
    free(c->registered);
    pthread_mutex_destroy(&c->lock);
    free(c->daemon_state_dir);
    free(c->buf);
    free(c);
}

void nnd_client_set_call_timeout(nnd_client *c, uint32_t ms) {
    atomic_store(&c->call_timeout_ms, ms);
}

const char *nnd_client_daemon_version(const nnd_client *c) {
    return c->daemon_version;
}

const char *nnd_client_daemon_state_dir(const nnd_client *c) {
    return c->daemon_state_dir;
}

unsigned nnd_client_daemon_operation_types(const nnd_client *c) {
    return c->daemon_operation_types;
}

int nnd_client_get_capabilities(nnd_client *c, Nnd__Capabilities **caps, char *err, size_t errlen) {
    Nnd__GetCapabilities call = NND__GET_CAPABILITIES__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_CAPABILITIES;
    req.get_capabilities = &call;
    Nnd__Reply *r;
    *caps = NULL;
    int st = cli_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_CAPABILITIES, &r, err, errlen);
    if (st != 0) return st;
    /* protobuf-c allocates every sub-message on its own, so it can outlive its parent. */
    *caps = r->capabilities;
    r->capabilities = NULL;
    r->result_case = NND__REPLY__RESULT__NOT_SET;
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

int nnd_client_version_string(nnd_client *c, char *buf, size_t len, char *err, size_t errlen) {
    Nnd__GetVersionString call = NND__GET_VERSION_STRING__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_VERSION_STRING;
    req.get_version_string = &call;
    Nnd__Reply *r;
    int st = cli_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_VERSION_STRING, &r, err, errlen);
    if (st != 0) return st;
    if (len) snprintf(buf, len, "%s", r->version_string->version ? r->version_string->version : "");
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

int nnd_client_get_type(nnd_client *c, int *type, char *err, size_t errlen) {
    Nnd__GetType call = NND__GET_TYPE__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_TYPE;
    req.get_type = &call;
    Nnd__Reply *r;
    int st = cli_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_TYPE, &r, err, errlen);
    if (st != 0) return st;
    *type = (int)r->type->type;
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

int nnd_client_supported_operations(nnd_client *c, const Nnd__Model *model, const int *pool_fds,
                                    size_t n_pool_fds, bool *out, size_t n_ops, char *err,
                                    size_t errlen) {
    return nnd_client_supported_operations_on(c, NULL, 0, model, pool_fds, n_pool_fds, out, n_ops,
                                              err, errlen);
}

int nnd_client_supported_operations_on(nnd_client *c, const char *const *devices, size_t n_devices,
                                       const Nnd__Model *model, const int *pool_fds,
                                       size_t n_pool_fds, bool *out, size_t n_ops, char *err,
                                       size_t errlen) {
    Nnd__GetSupportedOperations call = NND__GET_SUPPORTED_OPERATIONS__INIT;
    call.model = (Nnd__Model *)model; /* packing only reads it */
    call.n_devices = n_devices;
    call.devices = (char **)devices;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_SUPPORTED_OPERATIONS;
    req.get_supported_operations = &call;
    Nnd__Reply *r;
    int st = cli_simple_call(c, &req, pool_fds, n_pool_fds, NND__REPLY__RESULT_SUPPORTED_OPERATIONS,
                             &r, err, errlen);
    if (st != 0) return st;
    if (r->supported_operations->n_supported != n_ops) {
        cli_set_err(err, errlen, "the daemon judged %zu operations, the model has %zu",
                    r->supported_operations->n_supported, n_ops);
        st = -EBADMSG;
    } else {
        for (size_t i = 0; i < n_ops; i++)
            out[i] = r->supported_operations->supported[i];
    }
    nnd__reply__free_unpacked(r, NULL);
    return st;
}

int nnd_client_get_devices(nnd_client *c, Nnd__DevicesReply **devices, char *err, size_t errlen) {
    Nnd__GetDevices call = NND__GET_DEVICES__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_DEVICES;
    req.get_devices = &call;
    Nnd__Reply *r;
    *devices = NULL;
    int st = cli_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_DEVICES, &r, err, errlen);
    if (st != 0) return st;
    *devices = r->devices; /* kept; the rest of the reply goes */
    r->devices = NULL;
    r->result_case = NND__REPLY__RESULT__NOT_SET;
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

int nnd_client_prepare(nnd_client *c, const Nnd__Model *model, const int *pool_fds,
                       size_t n_pool_fds, int preference, int priority, uint64_t deadline_ns,
                       uint64_t *handle, char *err, size_t errlen) {
    return nnd_client_prepare_on(c, NULL, 0, model, pool_fds, n_pool_fds, preference, priority,
                                 deadline_ns, handle, err, errlen);
}

int nnd_client_prepare_on(nnd_client *c, const char *const *devices, size_t n_devices,
                          const Nnd__Model *model, const int *pool_fds, size_t n_pool_fds,
                          int preference, int priority, uint64_t deadline_ns, uint64_t *handle,
                          char *err, size_t errlen) {
    Nnd__PrepareModel call = NND__PREPARE_MODEL__INIT;
    call.n_devices = n_devices;
    call.devices = (char **)devices;
    call.model = (Nnd__Model *)model;
    call.preference = (Nnd__ExecutionPreference)preference;
    call.priority = (Nnd__Priority)priority;
    call.deadline_ns = deadline_ns;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &call;
    Nnd__Reply *r;
    *handle = 0;
    int st = cli_simple_call(c, &req, pool_fds, n_pool_fds, NND__REPLY__RESULT_PREPARED, &r, err,
                             errlen);
    if (st == 0) {
        *handle = r->prepared->handle;
        nnd__reply__free_unpacked(r, NULL);
    }
    cli_record_prepared(c, *handle, model, pool_fds, n_pool_fds, st, err);
    return st;
}

int nnd_client_execute(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *request,
                       const int *pool_fds, size_t n_pool_fds, bool measure_timing,
                       uint64_t deadline_ns, Nnd__Reply **reply, char *err, size_t errlen) {
    Nnd__Execute call = NND__EXECUTE__INIT;
    call.prepared_model = handle;
    call.request = (Nnd__ExecutionRequest *)request;
    call.measure_timing = measure_timing;
    call.deadline_ns = deadline_ns;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_EXECUTE;
    req.execute = &call;
    Nnd__Reply *got = NULL;
    int st = cli_reply_call(c, &req, pool_fds, n_pool_fds, &got, err, errlen);
    if (cli_record_live()) cli_record_executed(c, handle, request, pool_fds, n_pool_fds, st, got);
    if (reply)
        *reply = got;
    else if (got)
        nnd__reply__free_unpacked(got, NULL);
    return st;
}

int cli_reply_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                   Nnd__Reply **reply, char *err, size_t errlen) {
    Nnd__Reply *r = NULL;
    if (reply) *reply = NULL;
    int rc = nnd_client_call(c, req, fds, nfds, &r, NULL, NULL, err, errlen);
    return rc < 0 ? rc : cli_take_reply(r, true, reply, err, errlen);
}

int nnd_client_release(nnd_client *c, uint64_t handle) {
    if (cli_record_live()) cli_record_released(c, handle);
    Nnd__Release call = NND__RELEASE__INIT;
    call.handle = handle;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_RELEASE;
    req.release = &call;
    return cli_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT__NOT_SET, NULL, NULL, 0);
}

int nnd_client_register_memory(nnd_client *c, int kind, int fd, uint64_t offset, uint64_t size,
                               uint64_t *token, char *err, size_t errlen) {
    *token = 0;
    if (size == 0) { /* to the end of the file */
        struct stat sb;
        bool known = fstat(fd, &sb) == 0;
        if (!known || (uint64_t)sb.st_size <= offset) {
            cli_set_err(err, errlen, "cannot register fd %d: %s", fd,
                        known ? "nothing past the offset" : strerror(errno));
            return -EINVAL;
        }
        size = (uint64_t)sb.st_size - offset;
    }
    Nnd__MemoryPool pool = NND__MEMORY_POOL__INIT;
    pool.kind = (Nnd__PoolKind)kind;
    pool.offset = offset;
    pool.size = size;
    Nnd__RegisterMemory call = NND__REGISTER_MEMORY__INIT;
    call.pool = &pool;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_REGISTER_MEMORY;
    req.register_memory = &call;
    Nnd__Reply *r;
    int st =
        cli_simple_call(c, &req, &fd, 1, NND__REPLY__RESULT_MEMORY_REGISTERED, &r, err, errlen);
    if (st != 0) return st;
    *token = r->memory_registered->token;
    nnd__reply__free_unpacked(r, NULL);
    const char *rec = getenv("NND_RECORD");
    if (rec && *rec) { /* the recorder will want the bytes of executions naming it */
        int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        pthread_mutex_lock(&c->lock);
        cli_registered *grown =
            dup >= 0 ? realloc(c->registered, (c->n_registered + 1) * sizeof *grown) : NULL;
        if (grown) {
            c->registered = grown;
            c->registered[c->n_registered++] =
                (cli_registered){.token = *token, .fd = dup, .offset = offset};
        } else if (dup >= 0) {
            close(dup);
        }
        pthread_mutex_unlock(&c->lock);
    }
    return 0;
}

/* Forgets token's entry of the recording table (closing its fd). */
static void forget_registered(nnd_client *c, uint64_t token) {
    int fd = -1;
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->n_registered; i++)
        if (c->registered[i].token == token) {
            fd = c->registered[i].fd;
            c->registered[i] = c->registered[--c->n_registered];
            break;
        }
    pthread_mutex_unlock(&c->lock);
    if (fd >= 0) close(fd);
}

int nnd_client_unregister_memory(nnd_client *c, uint64_t token, char *err, size_t errlen) {
    Nnd__UnregisterMemory call = NND__UNREGISTER_MEMORY__INIT;
    call.token = token;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_UNREGISTER_MEMORY;
    req.unregister_memory = &call;
    int st = cli_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT__NOT_SET, NULL, err, errlen);
    if (st == 0) forget_registered(c, token);
    return st;
}

int nnd_memfd_create(const char *name, size_t size, void **map) {
    if (map) *map = NULL;
    int fd = memfd_create(name ? name : "nnd-pool", MFD_CLOEXEC);
    if (fd < 0) return -errno;
    if (ftruncate(fd, (off_t)size) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    if (map && size) {
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return -e;
        }
        *map = p;
    }
    return fd;
}

bool nnd_client_alive(nnd_client *c) {
    /* The peer's close shows as a hang-up on the socket; poll() with no wait only looks. */
    struct pollfd p = {.fd = c->sock, .events = POLLRDHUP};
    return c->sock >= 0 && poll(&p, 1, 0) >= 0 &&
           !(p.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL));
}
