/* SPDX-License-Identifier: Apache-2.0 */
/* http.c: one request per connection, one connection at a time. See http.h. */
#include "tools/exporter/http.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int exp_http_listen(const char *addr, char *err, size_t errlen) {
    char host[256];
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1] || (size_t)(colon - addr) >= sizeof host) {
        snprintf(err, errlen, "listen address %s: expected HOST:PORT", addr);
        return -1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = 0;
    char *h = host;
    size_t hl = strlen(h);
    if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') { /* [::1] */
        h[hl - 1] = 0;
        h++;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(*h ? h : NULL, colon + 1, &hints, &res);
    if (rc) {
        snprintf(err, errlen, "listen address %s: %s", addr, gai_strerror(rc));
        return -1;
    }
    int fd = -1, e = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, a->ai_addr, a->ai_addrlen) < 0 || listen(fd, 16) < 0) {
            e = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) snprintf(err, errlen, "cannot listen on %s: %s", addr, strerror(e));
    return fd;
}

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits for fd to become ready for ev until the deadline: true when it did. */
static bool wait_for(int fd, short ev, long long deadline) {
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) return false;
        struct pollfd p = {.fd = fd, .events = ev};
        int n = poll(&p, 1, (int)left);
        if (n > 0) return true;
        if (n < 0 && errno != EINTR) return false;
    }
}

static void send_all(int fd, const char *p, size_t n, long long deadline) {
    while (n > 0 && wait_for(fd, POLLOUT, deadline)) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (k <= 0) return;
        p += k;
        n -= (size_t)k;
    }
}

static void respond(int fd, int code, const char *reason, const char *type, const char *body,
                    bool with_body, long long deadline) {
    char head[256];
    size_t len = body ? strlen(body) : 0;
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n",
                     code, reason, type, len);
    send_all(fd, head, (size_t)n, deadline);
    if (with_body && len) send_all(fd, body, len, deadline);
}

#define TEXT "text/plain; charset=utf-8"

/* Reads the request head (up to the blank line) and answers it. */
static void answer(int fd, exp_page_fn page, void *ctx) {
    long long deadline = now_ms() + EXP_HTTP_TIMEOUT_MS;
    char req[EXP_HTTP_MAX_REQUEST + 1];
    size_t got = 0;
    while (!memmem(req, got, "\r\n\r\n", 4) && !memmem(req, got, "\n\n", 2)) {
        if (got == EXP_HTTP_MAX_REQUEST) {
            respond(fd, 431, "Request Header Fields Too Large", TEXT, "request over 8192 bytes\n",
                    true, deadline);
            return;
        }
        if (!wait_for(fd, POLLIN, deadline)) return; /* silent client: dropped */
        ssize_t k = recv(fd, req + got, EXP_HTTP_MAX_REQUEST - got, MSG_DONTWAIT);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (k <= 0) return;
        got += (size_t)k;
    }
    req[got] = 0;
    char method[16], target[1024], version[16];
    if (sscanf(req, "%15s %1023s %15s", method, target, version) != 3 ||
        strncmp(version, "HTTP/1.", 7)) {
        respond(fd, 400, "Bad Request", TEXT, "malformed request line\n", true, deadline);
        return;
    }
    bool head = !strcmp(method, "HEAD");
    if (strcmp(method, "GET") && !head) {
        respond(fd, 405, "Method Not Allowed", TEXT, "only GET and HEAD\n", true, deadline);
        return;
    }
    size_t path_len = strcspn(target, "?");
    if (path_len != 8 || strncmp(target, "/metrics", 8)) {
        respond(fd, 404, "Not Found", TEXT, "not found: the metrics are at /metrics\n", !head,
                deadline);
        return;
    }
    char err[768];
    char *text = page(ctx, err, sizeof err);
    if (!text) {
        char body[800];
        snprintf(body, sizeof body, "%s\n", err);
        respond(fd, 503, "Service Unavailable", TEXT, body, !head,
                now_ms() + EXP_HTTP_TIMEOUT_MS); /* the scrape took its own time */
        return;
    }
    respond(fd, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", text, !head,
            now_ms() + EXP_HTTP_TIMEOUT_MS);
    free(text);
}

int exp_http_serve(int listen_fd, exp_page_fn page, void *ctx, volatile sig_atomic_t *stop) {
    while (!*stop) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE ||
                errno == ENOBUFS || errno == ENOMEM) {
                if (errno != EINTR && errno != ECONNABORTED) usleep(100000);
                continue;
            }
            return -errno;
        }
        answer(fd, page, ctx);
        shutdown(fd, SHUT_WR);
        close(fd);
    }
    return 0;
}
