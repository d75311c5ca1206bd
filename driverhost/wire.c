/* SPDX-License-Identifier: Apache-2.0 */
/* wire: datagrams with fds between the driver proxy and a driver host (wire.h). */
#include "driverhost/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DH_MAX_FDS  (DH_MAX_REGIONS_MSG + 2)
#define DH_BODY_MAX (1ull << 32) /* a body in a memfd: 4 GiB at most */

uint64_t dh_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int body_memfd(const void *body, size_t len) {
    int fd = memfd_create("nnd-dh-body", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -errno;
    const uint8_t *p = body;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, p + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            return -e;
        }
        done += (size_t)n;
    }
    /* The reader trusts its size: no one may change it in flight. */
    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    return fd;
}

int dh_send(int sock, const dh_msg_header *h, const void *body, size_t body_len, const int *fds,
            uint32_t n_fds, int staging_fd, uint64_t deadline_ns) {
    if (n_fds > DH_MAX_REGIONS_MSG) return -E2BIG;
    dh_msg_header hd = *h;
    hd.body_len = body_len;
    hd.flags &= ~(DH_FLAG_BODY_FD | DH_FLAG_STAGING);
    int all[DH_MAX_FDS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < n_fds; i++)
        all[n++] = fds[i];
    if (staging_fd >= 0) all[n++] = staging_fd, hd.flags |= DH_FLAG_STAGING;
    int body_fd = -1;
    if (body_len > DH_INLINE_MAX) {
        body_fd = body_memfd(body, body_len);
        if (body_fd < 0) return body_fd;
        all[n++] = body_fd;
        hd.flags |= DH_FLAG_BODY_FD;
    }
    struct iovec iov[2] = {{&hd, sizeof hd}, {(void *)body, body_fd < 0 ? body_len : 0}};
    union {
        char buf[CMSG_SPACE(sizeof(int) * DH_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
    if (n) {
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * n);
        memcpy(CMSG_DATA(c), all, sizeof(int) * n);
    }
    int rc = 0;
    for (;;) {
        ssize_t s = sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (s >= 0) break;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) {
            rc = -errno;
            break;
        }
        /* The host is not reading: wait, but never past the caller's bound. */
        int wait_ms = -1;
        if (deadline_ns) {
            uint64_t now = dh_now_ns();
            if (now >= deadline_ns) {
                rc = -ETIMEDOUT;
                break;
            }
            wait_ms = (int)((deadline_ns - now) / 1000000u) + 1;
        }
        struct pollfd p = {.fd = sock, .events = POLLOUT};
        if (poll(&p, 1, wait_ms) == 0) {
            rc = -ETIMEDOUT;
            break;
        }
    }
    if (body_fd >= 0) close(body_fd);
    return rc;
}

static void close_fds(int *fds, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]), fds[i] = -1;
}

static int read_body_fd(int fd, uint64_t len, uint8_t **out) {
    struct stat st;
    if (len > DH_BODY_MAX || fstat(fd, &st) < 0 || (uint64_t)st.st_size < len) return -EPROTO;
    uint8_t *p = malloc(len ? len : 1);
    if (!p) return -ENOMEM;
    size_t done = 0;
    while (done < len) {
        ssize_t n = pread(fd, p + done, len - done, (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            free(p);
            return -EPROTO;
        }
        done += (size_t)n;
    }
    *out = p;
    return 0;
}

int dh_recv(int sock, dh_msg *out) {
    memset(out, 0, sizeof *out);
    out->staging_fd = -1;
    uint8_t *buf = malloc(sizeof(dh_msg_header) + DH_INLINE_MAX);
    if (!buf) return -ENOMEM;
    union {
        char b[CMSG_SPACE(sizeof(int) * DH_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, sizeof(dh_msg_header) + DH_INLINE_MAX};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b, .msg_controllen = sizeof ctl.b};
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        free(buf);
        return -errno;
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        uint32_t k = (uint32_t)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        for (uint32_t i = 0; i < k && out->n_fds < DH_MAX_FDS; i++)
            memcpy(&out->fds[out->n_fds++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
    }
    if (n == 0) { /* the end, or an empty datagram: fds sent with it are not kept open */
        free(buf);
        close_fds(out->fds, out->n_fds);
        out->n_fds = 0;
        return 0;
    }
    int rc = -EPROTO;
    if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || (size_t)n < sizeof(dh_msg_header)) goto bad;
    memcpy(&out->h, buf, sizeof out->h);
    uint32_t need =
        (out->h.flags & DH_FLAG_STAGING ? 1u : 0u) + (out->h.flags & DH_FLAG_BODY_FD ? 1u : 0u);
    if (out->n_fds < need) goto bad;
    if (out->h.flags & DH_FLAG_BODY_FD) {
        int fd = out->fds[--out->n_fds];
        rc = read_body_fd(fd, out->h.body_len, &out->body);
        close(fd);
        if (rc < 0) goto bad;
        free(buf);
    } else {
        if ((size_t)n - sizeof(dh_msg_header) != out->h.body_len) goto bad;
        memmove(buf, buf + sizeof(dh_msg_header), (size_t)out->h.body_len);
        out->body = buf;
    }
    out->body_len = (size_t)out->h.body_len;
    if (out->h.flags & DH_FLAG_STAGING) out->staging_fd = out->fds[--out->n_fds];
    return 1;
bad:
    free(buf);
    close_fds(out->fds, out->n_fds);
    out->n_fds = 0;
    return rc;
}

void dh_msg_free(dh_msg *m) {
    free(m->body);
    m->body = NULL;
    close_fds(m->fds, m->n_fds);
    m->n_fds = 0;
    if (m->staging_fd >= 0) close(m->staging_fd);
    m->staging_fd = -1;
}

/* ---- bodies ---- */

void dh_put(dh_wbuf *w, const void *src, size_t n) {
    if (w->oom) return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 256;
        while (cap < w->len + n)
            cap *= 2;
        uint8_t *p = realloc(w->p, cap);
        if (!p) {
            w->oom = true;
            return;
        }
        w->p = p, w->cap = cap;
    }
    if (n) memcpy(w->p + w->len, src, n);
    w->len += n;
}
void dh_put_u32(dh_wbuf *w, uint32_t v) {
    dh_put(w, &v, sizeof v);
}
void dh_put_u64(dh_wbuf *w, uint64_t v) {
    dh_put(w, &v, sizeof v);
}
void dh_put_str(dh_wbuf *w, const char *s) {
    size_t n = s ? strnlen(s, DH_ERR_MAX - 1) : 0;
    dh_put_u32(w, (uint32_t)n);
    dh_put(w, s, n);
}
void dh_wbuf_free(dh_wbuf *w) {
    free(w->p);
    memset(w, 0, sizeof *w);
}

void dh_put_align(dh_wbuf *w) {
    static const uint8_t zeros[DH_DATA_ALIGN];
    dh_put(w, zeros, (DH_DATA_ALIGN - w->len % DH_DATA_ALIGN) % DH_DATA_ALIGN);
}

const void *dh_take_aligned(dh_rbuf *r, size_t n) {
    size_t pad = (DH_DATA_ALIGN - r->pos % DH_DATA_ALIGN) % DH_DATA_ALIGN;
    return dh_take(r, pad) || !pad ? dh_take(r, n) : NULL;
}

const void *dh_take(dh_rbuf *r, size_t n) {
    if (r->bad || n > r->len - r->pos) {
        r->bad = true;
        return NULL;
    }
    const void *p = r->p + r->pos;
    r->pos += n;
    return p;
}
void dh_get(dh_rbuf *r, void *dst, size_t n) {
    const void *p = dh_take(r, n);
    if (p)
        memcpy(dst, p, n);
    else
        memset(dst, 0, n);
}
uint32_t dh_get_u32(dh_rbuf *r) {
    uint32_t v;
    dh_get(r, &v, sizeof v);
    return v;
}
uint64_t dh_get_u64(dh_rbuf *r) {
    uint64_t v;
    dh_get(r, &v, sizeof v);
    return v;
}
void dh_get_str(dh_rbuf *r, char *dst, size_t cap) {
    uint32_t n = dh_get_u32(r);
    const char *s = dh_take(r, n);
    size_t k = s ? (n < cap ? n : cap - 1) : 0;
    if (k) memcpy(dst, s, k);
    if (cap) dst[k] = '\0';
}
