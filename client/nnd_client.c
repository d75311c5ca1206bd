/* nnd_client.c: libnnd, one blocking connection per client. See include/nnd/nnd.h. */
#include "nnd/nnd.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client_internal.h"
#include "frame.h"
#include "paths.h"

void nnd_client_set_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

const char *nnd_status_name(int status) {
    const ProtobufCEnumValue *v =
        protobuf_c_enum_descriptor_get_value(&nnd__error_status__descriptor, status);
    return v ? v->name : "UNKNOWN";
}

/* Errors after which the connection cannot carry another call. */
static bool fatal_errno(int e) {
    return e == EPIPE || e == ECONNRESET || e == ENOTCONN || e == ECONNREFUSED || e == EBADF ||
           e == EPROTO;
}

/* Waits for the reply to `id`, discarding stale replies. Called with the lock held. */
static int recv_reply(nnd_client *c, uint64_t id, Nnd__Reply **reply, int *reply_fds,
                      size_t *n_reply_fds, char *err, size_t errlen) {
    size_t cap = n_reply_fds ? *n_reply_fds : 0;
    if (n_reply_fds) *n_reply_fds = 0;
    for (;;) {
        /* Wait in recvmsg itself: a poll() first would cost a system call per reply. */
        nnd_frame_in in;
        char ferr[256] = "";
        int rc =
            nnd_frame_recv_wait(c->sock, &nnd__reply__descriptor, c->buf, &in, ferr, sizeof ferr);
        if (rc == -EAGAIN) continue;
        if (rc == 0) {
            nnd_client_set_err(err, errlen, "the daemon closed the connection");
            return -ENOTCONN;
        }
        if (rc < 0) {
            if (rc == -EPROTO)
                nnd_client_set_err(err, errlen, "bad reply from the daemon: %s", ferr);
            else
                nnd_client_set_err(err, errlen, "receiving from the daemon failed: %s",
                                   strerror(-rc));
            return rc;
        }
        Nnd__Reply *r = (Nnd__Reply *)in.msg;
        if (r->id != id) { /* an asynchronous ticket's, or an abandoned call's */
            if (!nnd_async_keep(c, &in)) nnd_frame_in_clear(&in);
            continue;
        }
        for (size_t i = 0; i < in.nfds && reply_fds && i < cap; i++)
            reply_fds[(*n_reply_fds)++] = nnd_frame_take_fd(&in, (uint32_t)i);
        in.msg = NULL; /* the reply is the caller's now; clear closes the fds not taken */
        nnd_frame_in_clear(&in);
        *reply = r;
        return 0;
    }
}

int nnd_client_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                    Nnd__Reply **reply, int *reply_fds, size_t *n_reply_fds, char *err,
                    size_t errlen) {
    *reply = NULL;
    pthread_mutex_lock(&c->lock);
    int rc;
    if (c->dead) {
        nnd_client_set_err(err, errlen, "the connection to the daemon is closed");
        rc = -ENOTCONN;
        goto out;
    }
    req->id = ++c->next_id;
    static const int no_fds[1] = {-1};
    if (!fds) fds = no_fds; /* frame.c memcpy()s fds even when nfds is 0 */
    nnd_packed p;
    if (nnd_frame_pack(&req->base, fds, nfds, &p, err, errlen) < 0) {
        rc = -EINVAL; /* nothing was sent: the connection is still good */
        goto out;
    }
    rc = nnd_frame_sendmsg(c->sock, &p, 0);
    nnd_packed_clear(&p);
    if (rc < 0) {
        nnd_client_set_err(err, errlen, "sending to the daemon failed: %s", strerror(-rc));
        if (rc == -EPIPE || rc == -ECONNRESET || rc == -ENOTCONN) rc = -ENOTCONN;
    } else {
        rc = recv_reply(c, req->id, reply, reply_fds, n_reply_fds, err, errlen);
    }
    if (rc < 0 && fatal_errno(-rc)) c->dead = true;
out:
    pthread_mutex_unlock(&c->lock);
    return rc;
}

/* One call whose reply must carry `want` on success. Returns the status or -errno; on
 * status NONE *out is the reply (free it), otherwise err holds the reply's message. */
int nnd_client_take_reply(Nnd__Reply *r, bool keep_failed, Nnd__Reply **out, char *err,
                          size_t errlen) {
    int status = r->status;
    if (status != NND__ERROR_STATUS__NONE)
        nnd_client_set_err(err, errlen, "%s: %s", nnd_status_name(status),
                           r->message && *r->message ? r->message : "(no message)");
    if (out && (status == NND__ERROR_STATUS__NONE || keep_failed))
        *out = r;
    else
        nnd__reply__free_unpacked(r, NULL);
    return status;
}

int nnd_client_simple_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                           Nnd__Reply__ResultCase want, Nnd__Reply **out, char *err,
                           size_t errlen) {
    Nnd__Reply *r = NULL;
    if (out) *out = NULL;
    int rc = nnd_client_call(c, req, fds, nfds, &r, NULL, NULL, err, errlen);
    if (rc < 0) return rc;
    if (r->status == NND__ERROR_STATUS__NONE && want != NND__REPLY__RESULT__NOT_SET &&
        r->result_case != want) {
        nnd_client_set_err(err, errlen, "the daemon answered with the wrong result (%d, wanted %d)",
                           (int)r->result_case, (int)want);
        nnd__reply__free_unpacked(r, NULL);
        return -EPROTO;
    }
    return nnd_client_take_reply(r, false, out, err, errlen);
}

nnd_client *nnd_client_connect(const char *socket_path, const char *client_name, char *err,
                               size_t errlen) {
    char def[sizeof(((struct sockaddr_un *)0)->sun_path)];
    if (!socket_path) socket_path = nnd_client_socket_path(def, sizeof def);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (!socket_path || strlen(socket_path) >= sizeof sa.sun_path) {
        nnd_client_set_err(err, errlen, "socket path too long");
        return NULL;
    }
    strcpy(sa.sun_path, socket_path);
    nnd_client *c = calloc(1, sizeof *c);
    if (!c || !(c->buf = malloc(NND_FRAME_RECV_BUF))) {
        free(c);
        nnd_client_set_err(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&c->lock, NULL);
    c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    int rc = c->sock < 0 ? -1 : 0;
    while (rc == 0 && connect(c->sock, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (errno == EINTR) continue;
        rc = -1;
    }
    if (rc < 0) {
        nnd_client_set_err(err, errlen, "cannot connect to %s: %s", socket_path, strerror(errno));
        nnd_client_close(c);
        return NULL;
    }
    Nnd__Hello hello = NND__HELLO__INIT;
    hello.protocol_version = NND_PROTOCOL_VERSION;
    hello.client_name = (char *)(client_name ? client_name : "libnnd");
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_HELLO;
    req.hello = &hello;
    Nnd__Reply *r;
    int status =
        nnd_client_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_HELLO, &r, err, errlen);
    if (status != 0) {
        if (status > 0) {
            char msg[256];
            snprintf(msg, sizeof msg, "%s", err ? err : "");
            nnd_client_set_err(err, errlen, "the daemon refused Hello: %s", msg);
        }
        nnd_client_close(c);
        return NULL;
    }
    if (r->hello->protocol_version != NND_PROTOCOL_VERSION) {
        nnd_client_set_err(err, errlen, "the daemon speaks protocol %u, this client %u",
                           r->hello->protocol_version, NND_PROTOCOL_VERSION);
        nnd__reply__free_unpacked(r, NULL);
        nnd_client_close(c);
        return NULL;
    }
    snprintf(c->daemon_version, sizeof c->daemon_version, "%s",
             r->hello->daemon_version ? r->hello->daemon_version : "");
    c->daemon_state_dir = strdup(r->hello->state_dir ? r->hello->state_dir : "");
    c->daemon_operation_types = r->hello->supported_operation_types;
    nnd__reply__free_unpacked(r, NULL);
    if (!c->daemon_state_dir) {
        nnd_client_set_err(err, errlen, "out of memory");
        nnd_client_close(c);
        return NULL;
    }
    return c;
}

void nnd_client_close(nnd_client *c) {
    if (!c) return;
    if (c->sock >= 0) close(c->sock);
    nnd_async_free(c);
    pthread_mutex_destroy(&c->lock);
    free(c->daemon_state_dir);
    free(c->buf);
    free(c);
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
    int st =
        nnd_client_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_CAPABILITIES, &r, err, errlen);
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
    int st = nnd_client_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_VERSION_STRING, &r, err,
                                    errlen);
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
    int st = nnd_client_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_TYPE, &r, err, errlen);
    if (st != 0) return st;
    *type = (int)r->type->type;
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

int nnd_client_supported_operations(nnd_client *c, const Nnd__Model *model, const int *pool_fds,
                                    size_t n_pool_fds, bool *out, size_t n_ops, char *err,
                                    size_t errlen) {
    Nnd__GetSupportedOperations call = NND__GET_SUPPORTED_OPERATIONS__INIT;
    call.model = (Nnd__Model *)model; /* packing only reads it */
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_SUPPORTED_OPERATIONS;
    req.get_supported_operations = &call;
    Nnd__Reply *r;
    int st = nnd_client_simple_call(c, &req, pool_fds, n_pool_fds,
                                    NND__REPLY__RESULT_SUPPORTED_OPERATIONS, &r, err, errlen);
    if (st != 0) return st;
    if (r->supported_operations->n_supported != n_ops) {
        nnd_client_set_err(err, errlen, "the daemon judged %zu operations, the model has %zu",
                           r->supported_operations->n_supported, n_ops);
        st = -EPROTO;
    } else {
        for (size_t i = 0; i < n_ops; i++)
            out[i] = r->supported_operations->supported[i];
    }
    nnd__reply__free_unpacked(r, NULL);
    return st;
}

int nnd_client_prepare(nnd_client *c, const Nnd__Model *model, const int *pool_fds,
                       size_t n_pool_fds, int preference, int priority, uint64_t deadline_ns,
                       uint64_t *handle, char *err, size_t errlen) {
    Nnd__PrepareModel call = NND__PREPARE_MODEL__INIT;
    call.model = (Nnd__Model *)model;
    call.preference = (Nnd__ExecutionPreference)preference;
    call.priority = (Nnd__Priority)priority;
    call.deadline_ns = deadline_ns;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &call;
    Nnd__Reply *r;
    *handle = 0;
    int st = nnd_client_simple_call(c, &req, pool_fds, n_pool_fds, NND__REPLY__RESULT_PREPARED, &r,
                                    err, errlen);
    if (st != 0) return st;
    *handle = r->prepared->handle;
    nnd__reply__free_unpacked(r, NULL);
    return 0;
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
    return nnd_client_reply_call(c, &req, pool_fds, n_pool_fds, reply, err, errlen);
}

int nnd_client_reply_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                          Nnd__Reply **reply, char *err, size_t errlen) {
    Nnd__Reply *r = NULL;
    if (reply) *reply = NULL;
    int rc = nnd_client_call(c, req, fds, nfds, &r, NULL, NULL, err, errlen);
    return rc < 0 ? rc : nnd_client_take_reply(r, true, reply, err, errlen);
}

int nnd_client_release(nnd_client *c, uint64_t handle) {
    Nnd__Release call = NND__RELEASE__INIT;
    call.handle = handle;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_RELEASE;
    req.release = &call;
    return nnd_client_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT__NOT_SET, NULL, NULL, 0);
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
