/* SPDX-License-Identifier: Apache-2.0 */
/* bus.c: nanomsg admin REP and event PUB sockets on the libuv loop. See bus.h. */
#include "daemon/base/bus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nanomsg/nn.h>
#include <nanomsg/pubsub.h>
#include <nanomsg/reqrep.h>

#include "daemon/base/log.h"
#include "proto/paths.h"

struct srv_bus {
    uv_poll_t poll; /* on the REP socket's NN_RCVFD */
    int rep;
    int pub;
    srv_admin_fn admin;
    void *ctx;
    atomic_uint_fast64_t seq; /* events published: the next one's "seq" */
};

static int bind_private(int sock, const char *url, char *err, size_t errlen) {
    if (nn_bind(sock, url) < 0) {
        int e = nn_errno();
        snprintf(err, errlen, "cannot bind %s: %s", url, nn_strerror(e));
        return -e;
    }
    /* The state directory is 0700 already; the mode keeps the socket private if not. It is
     * set through a descriptor of the socket file itself, never by a path that a link
     * could redirect. */
    const char *path = url + strlen("ipc://");
    int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    char proc[64];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) || chmod(proc, 0600) < 0)
        srv_log_warn("cannot make %s private: %s", path,
                     fd >= 0 && !S_ISSOCK(st.st_mode) ? "not a socket" : strerror(errno));
    if (fd >= 0) close(fd);
    return 0;
}

static void answer(srv_bus *b, const char *text, size_t len) {
    cJSON *req = cJSON_ParseWithLength(text, len);
    cJSON *reply = b->admin(b->ctx, cJSON_IsObject(req) ? req : NULL);
    cJSON_Delete(req);
    char *out = reply ? cJSON_PrintUnformatted(reply) : NULL;
    cJSON_Delete(reply);
    const char *fallback = "{\"ok\":false,\"error\":\"out of memory\"}";
    const char *msg = out ? out : fallback;
    if (nn_send(b->rep, msg, strlen(msg), NN_DONTWAIT) < 0)
        srv_log_debug("admin reply not sent: %s", nn_strerror(nn_errno()));
    free(out);
}

static void on_admin(uv_poll_t *h, int status, int events) {
    (void)status;
    (void)events;
    srv_bus *b = h->data;
    /* REP accepts one request at a time: receive, answer, repeat until drained. */
    for (int i = 0; i < 64; i++) {
        char *buf = NULL;
        int n = nn_recv(b->rep, &buf, NN_MSG, NN_DONTWAIT);
        if (n < 0) {
            if (nn_errno() != EAGAIN && nn_errno() != EINTR)
                srv_log_warn("admin receive failed: %s", nn_strerror(nn_errno()));
            return;
        }
        answer(b, buf, (size_t)n);
        nn_freemsg(buf);
    }
}

srv_bus *srv_bus_open(uv_loop_t *loop, const char *state_dir, srv_admin_fn admin, void *ctx,
                      char *err, size_t errlen) {
    char admin_url[512], events_url[512];
    if (!proto_admin_url(state_dir, admin_url, sizeof admin_url) ||
        !proto_events_url(state_dir, events_url, sizeof events_url)) {
        snprintf(err, errlen, "state directory path too long: %s", state_dir);
        return NULL;
    }
    /* nanomsg leaks an endpoint whose bind fails: ask the directory first. */
    if (access(state_dir, W_OK | X_OK) < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot make the bus sockets in %s: %s", state_dir, strerror(e));
        errno = e;
        return NULL;
    }
    srv_bus *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->admin = admin;
    b->ctx = ctx;
    b->rep = nn_socket(AF_SP, NN_REP);
    b->pub = nn_socket(AF_SP, NN_PUB);
    int fd = -1, e = EIO, rc;
    size_t fdlen = sizeof fd;
    if (b->rep < 0 || b->pub < 0) {
        snprintf(err, errlen, "cannot create nanomsg sockets: %s", nn_strerror(nn_errno()));
        goto fail;
    }
    if ((rc = bind_private(b->rep, admin_url, err, errlen)) < 0 ||
        (rc = bind_private(b->pub, events_url, err, errlen)) < 0) {
        e = -rc;
        goto fail;
    }
    if (nn_getsockopt(b->rep, NN_SOL_SOCKET, NN_RCVFD, &fd, &fdlen) < 0) {
        snprintf(err, errlen, "cannot get the admin socket's fd: %s", nn_strerror(nn_errno()));
        goto fail;
    }
    rc = uv_poll_init(loop, &b->poll, fd);
    if (rc < 0) {
        snprintf(err, errlen, "cannot poll the admin socket: %s", uv_strerror(rc));
        goto fail;
    }
    b->poll.data = b;
    uv_poll_start(&b->poll, UV_READABLE, on_admin);
    return b;
fail:
    if (b->rep >= 0) nn_close(b->rep);
    if (b->pub >= 0) nn_close(b->pub);
    free(b);
    errno = e;
    return NULL;
}

static void on_closed(uv_handle_t *h) {
    srv_bus *b = h->data;
    nn_close(b->rep);
    nn_close(b->pub);
    free(b);
}

void srv_bus_close(srv_bus *b) {
    if (!b) return;
    uv_poll_stop(&b->poll);
    uv_close((uv_handle_t *)&b->poll, on_closed);
}

void srv_json_add_u64(cJSON *o, const char *key, uint64_t v) {
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)v);
    cJSON_AddRawToObject(o, key, text);
}

void srv_json_add_handle(cJSON *o, const char *key, uint64_t handle) {
    char text[24];
    snprintf(text, sizeof text, "0x%016llx", (unsigned long long)handle);
    cJSON_AddStringToObject(o, key, text);
}

void srv_json_add_client(cJSON *o, uint64_t client, int pid, unsigned uid) {
    srv_json_add_u64(o, "client", client);
    cJSON_AddNumberToObject(o, "pid", pid);
    cJSON_AddNumberToObject(o, "uid", uid);
}

cJSON *srv_bus_event(const srv_bus *b, const char *name) {
    if (!b || nn_get_statistic(b->pub, NN_STAT_CURRENT_CONNECTIONS) == 0) return NULL;
    cJSON *ev = cJSON_CreateObject();
    if (!ev) return NULL;
    cJSON_AddStringToObject(ev, "event", name);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    srv_json_add_u64(ev, "time_ns", (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
    return ev;
}

void srv_bus_publish(srv_bus *b, cJSON *event) {
    if (b && event) {
        srv_json_add_u64(event, "seq", atomic_fetch_add(&b->seq, 1) + 1);
        char *text = cJSON_PrintUnformatted(event);
        if (text && nn_send(b->pub, text, strlen(text), NN_DONTWAIT) < 0)
            srv_log_debug("event dropped: %s", nn_strerror(nn_errno()));
        free(text);
    }
    cJSON_Delete(event);
}
