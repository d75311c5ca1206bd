/* SPDX-License-Identifier: Apache-2.0 */
/* frame.c: datagram framing with fd passing and memfd spill, and the walk that bounds what
 * unpacking a received message costs. See frame.h. */
#include "proto/frame.h"

#include "proto/arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPILL_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- the wire budget: what unpacking a message would cost, judged on its wire bytes
 * before protobuf-c allocates anything (frame.h) ---- */

typedef struct walk {
    uint64_t decoded;  /* bytes unpack would allocate so far */
    uint64_t messages; /* nested messages, strings and bytes values so far */
    char *err;
    size_t errlen;
} walk;

enum { WT_VARINT = 0, WT_64BIT = 1, WT_LENGTH = 2, WT_32BIT = 5 };

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v) {
    uint64_t x = 0;
    for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return true;
        }
    }
    return false;
}

static int over(walk *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (w->err && w->errlen) vsnprintf(w->err, w->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int charge(walk *w, uint64_t bytes, uint64_t messages) {
    w->decoded += bytes;
    w->messages += messages;
    if (w->decoded > PROTO_WIRE_MAX_DECODED)
        return over(w, "message would take more than %llu bytes unpacked (frame limit)",
                    (unsigned long long)PROTO_WIRE_MAX_DECODED);
    if (w->messages > PROTO_WIRE_MAX_MESSAGES)
        return over(w,
                    "message holds more than %u nested messages, strings and bytes values "
                    "(frame limit)",
                    PROTO_WIRE_MAX_MESSAGES);
    return 0;
}

/* The bytes one element of a field takes in its unpacked struct or array. */
static size_t element_size(const ProtobufCFieldDescriptor *f) {
    switch (f->type) {
    case PROTOBUF_C_TYPE_INT64:
    case PROTOBUF_C_TYPE_SINT64:
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_UINT64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE: return 8;
    case PROTOBUF_C_TYPE_STRING:
    case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
    case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
    default: return 4; /* 32-bit scalars, enums, protobuf_c_boolean */
    }
}

/* Elements in a packed repeated field's payload. */
static uint64_t packed_count(const ProtobufCFieldDescriptor *f, const uint8_t *p, uint64_t len) {
    switch (f->type) {
    case PROTOBUF_C_TYPE_SFIXED32:
    case PROTOBUF_C_TYPE_FIXED32:
    case PROTOBUF_C_TYPE_FLOAT: return len / 4;
    case PROTOBUF_C_TYPE_SFIXED64:
    case PROTOBUF_C_TYPE_FIXED64:
    case PROTOBUF_C_TYPE_DOUBLE: return len / 8;
    default: {
        uint64_t n = 0;
        for (uint64_t i = 0; i < len; i++)
            n += !(p[i] & 0x80);
        return n;
    }
    }
}

static int walk_message(walk *w, const ProtobufCMessageDescriptor *desc, const uint8_t *p,
                        const uint8_t *end, unsigned depth) {
    if (depth > PROTO_WIRE_MAX_DEPTH)
        return over(w, "message nests deeper than %d levels (frame limit)", PROTO_WIRE_MAX_DEPTH);
    if (charge(w, desc->sizeof_message, 1)) return -1;
    while (p < end) {
        uint64_t tag, v;
        if (!read_varint(&p, end, &tag)) return 0;
        unsigned wt = (unsigned)(tag & 7);
        const ProtobufCFieldDescriptor *f =
            tag >> 3 <= UINT32_MAX
                ? protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3))
                : NULL;
        const uint8_t *value = p;
        uint64_t len = 0;
        switch (wt) {
        case WT_VARINT:
            if (!read_varint(&p, end, &v)) return 0;
            len = (uint64_t)(p - value);
            break;
        case WT_64BIT: len = 8; break;
        case WT_32BIT: len = 4; break;
        case WT_LENGTH:
            if (!read_varint(&p, end, &len)) return 0;
            value = p;
            break;
        default: return 0; /* groups and worse: protobuf-c refuses them */
        }
        if (len > (uint64_t)(end - value)) return 0;
        p = value + len;
        if (!f) { /* kept as an unknown field: a record and a copy of the bytes */
            if (charge(w, sizeof(ProtobufCMessageUnknownField) + len, 1)) return -1;
            continue;
        }
        bool repeated = f->label == PROTOBUF_C_LABEL_REPEATED;
        if (repeated && wt == WT_LENGTH && f->type != PROTOBUF_C_TYPE_MESSAGE &&
            f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_BYTES) {
            if (charge(w, packed_count(f, value, len) * element_size(f), 0)) return -1;
            continue;
        }
        if (repeated && charge(w, element_size(f), 0)) return -1;
        switch (f->type) {
        case PROTOBUF_C_TYPE_MESSAGE:
            if (wt == WT_LENGTH &&
                walk_message(w, f->descriptor, value, value + len, depth + 1) < 0)
                return -1;
            break;
        case PROTOBUF_C_TYPE_STRING:
        case PROTOBUF_C_TYPE_BYTES:
            if (charge(w, len + 1, 1)) return -1;
            break;
        default: break;
        }
    }
    return 0;
}

/* 0 when data (len bytes, a desc message) fits the limits (frame.h); -1 with err naming the
 * limit. */
static int wire_budget_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                             size_t len, char *err, size_t errlen) {
    walk w = {.err = err, .errlen = errlen};
    return walk_message(&w, desc, data, data + len, 0);
}

/* ---- frames ---- */

static void close_fds(int *fds, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0) close(fds[i]);
}

void proto_packed_clear(proto_packed *p) {
    free(p->heap);
    p->heap = NULL;
    if (p->spill_fd >= 0) close(p->spill_fd);
    p->spill_fd = -1;
    p->nfds = 0;
}

static int write_all(int fd, const uint8_t *b, size_t n) {
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static uint64_t message_id(const ProtobufCMessage *msg) {
    if (msg->descriptor == &nnd__request__descriptor) return ((const Nnd__Request *)msg)->id;
    return ((const Nnd__Reply *)msg)->id;
}

int proto_frame_pack(const ProtobufCMessage *msg, const int *fds, size_t nfds, proto_packed *out,
                     char *err, size_t errlen) {
    out->heap = NULL; /* `small` is left as it is: a memset of it per message is waste */
    out->len = out->nfds = 0;
    out->spill_fd = -1;
    if (nfds + 1 > PROTO_FRAME_MAX_FDS) {
        set_err(err, errlen, "too many file descriptors in one message (%zu, limit %d)", nfds,
                PROTO_FRAME_MAX_FDS - 1);
        return -1;
    }
    if (nfds) memcpy(out->fds, fds, nfds * sizeof(int));
    out->nfds = nfds;
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *bytes = len <= sizeof out->small ? out->small : malloc(len);
    if (!bytes) {
        set_err(err, errlen, "out of memory packing a %zu-byte message", len);
        return -1;
    }
    protobuf_c_message_pack(msg, bytes);
    if (len <= PROTO_FRAME_INLINE_MAX) {
        if (bytes != out->small) out->heap = bytes;
        out->len = len;
        return 0;
    }
    /* Spill: write the whole message into a sealed memfd, send a SpillFrame naming it. */
    int mfd = memfd_create("nnd-spill", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int rc = mfd < 0 ? -errno : write_all(mfd, bytes, len);
    free(bytes); /* never `small`: len is over PROTO_FRAME_INLINE_MAX */
    if (rc == 0 && fcntl(mfd, F_ADD_SEALS, SPILL_SEALS) < 0) rc = -errno;
    if (rc < 0) {
        if (mfd >= 0) close(mfd);
        set_err(err, errlen, "cannot spill a %zu-byte message into a memfd: %s", len,
                strerror(-rc));
        return -1;
    }
    Nnd__Spill spill = NND__SPILL__INIT;
    spill.fd_index = (uint32_t)nfds;
    spill.size = len;
    Nnd__SpillFrame frame = NND__SPILL_FRAME__INIT;
    frame.id = message_id(msg);
    frame.spill = &spill;
    out->len = nnd__spill_frame__pack(&frame, out->small); /* a few bytes: fits `small` */
    out->spill_fd = mfd;
    out->fds[out->nfds++] = mfd;
    return 0;
}

ssize_t proto_frame_send_bytes(int sock, const void *bytes, size_t len, const int *fds, size_t nfds,
                               int flags) {
    enum { MAX_FDS = 253 }; /* SCM_MAX_FD */
    if (nfds > MAX_FDS) return -EINVAL;
    struct iovec iov = {.iov_base = (void *)bytes, .iov_len = len};
    union {
        char buf[CMSG_SPACE(sizeof(int) * MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds) {
        memset(ctl.buf, 0, CMSG_SPACE(sizeof(int) * nfds));
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    for (;;) {
        ssize_t n = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        return errno == EWOULDBLOCK ? -EAGAIN : -errno;
    }
}

int proto_frame_sendmsg(int sock, const proto_packed *p, int flags) {
    ssize_t n = proto_frame_send_bytes(sock, proto_packed_bytes(p), p->len, p->fds, p->nfds, flags);
    return n < 0 ? (int)n : 0;
}

int proto_frame_send(int sock, const ProtobufCMessage *msg, const int *fds, size_t nfds, char *err,
                     size_t errlen) {
    proto_packed p;
    if (proto_frame_pack(msg, fds, nfds, &p, err, errlen) < 0) return -EPROTO;
    int rc = proto_frame_sendmsg(sock, &p, 0);
    if (rc < 0) set_err(err, errlen, "send failed: %s", strerror(-rc));
    proto_packed_clear(&p);
    return rc;
}

int proto_frame_take_fd(proto_frame_in *in, uint32_t index) {
    if (index >= in->nfds) return -1;
    int fd = in->fds[index];
    in->fds[index] = -1;
    return fd;
}

ProtobufCMessage *proto_frame_take_msg(proto_frame_in *in) {
    if (in->arena) return NULL; /* it goes with the arena's next reset */
    ProtobufCMessage *msg = in->msg;
    in->msg = NULL;
    return msg;
}

void proto_frame_close_untaken(proto_frame_in *in) {
    if (!in) return;
    close_fds(in->fds, in->nfds);
    for (size_t i = 0; i < in->nfds; i++)
        in->fds[i] = -1;
}

void proto_frame_in_clear(proto_frame_in *in) {
    if (in->arena)
        proto_arena_reset(in->arena);
    else if (in->msg)
        protobuf_c_message_free_unpacked(in->msg, NULL);
    in->msg = NULL;
    in->noted = 0;
    close_fds(in->fds, in->nfds);
    in->nfds = 0;
}

/* Checks and unpacks a spilled message from its memfd (closed here). */
static ProtobufCMessage *unspill_fd(const ProtobufCMessageDescriptor *desc,
                                    ProtobufCAllocator *alloc, int fd, uint64_t size, char *err,
                                    size_t errlen) {
    ProtobufCMessage *msg = NULL;
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)) !=
                         (F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW)) {
        set_err(err, errlen, "spill fd is not a sealed memfd");
    } else if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != size) {
        set_err(err, errlen, "spill memfd holds %lld bytes, frame says %llu", (long long)st.st_size,
                (unsigned long long)size);
    } else if (size == 0 || size > PROTO_FRAME_SPILL_MAX) {
        set_err(err, errlen, "spill size %llu out of range (frame limit %llu bytes)",
                (unsigned long long)size, (unsigned long long)PROTO_FRAME_SPILL_MAX);
    } else {
        void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            set_err(err, errlen, "cannot map spill memfd: %s", strerror(errno));
        } else {
            if (wire_budget_check(desc, p, size, err, errlen) == 0) {
                msg = protobuf_c_message_unpack(desc, alloc, size, p);
                if (!msg)
                    set_err(err, errlen, "spilled %s is not valid protobuf", desc->short_name);
            }
            munmap(p, size);
        }
    }
    close(fd);
    return msg;
}

ProtobufCMessage *proto_frame_unspill(const ProtobufCMessageDescriptor *desc,
                                      proto_frame_spill *spill, char *err, size_t errlen) {
    int fd = spill->fd;
    spill->fd = -1;
    return unspill_fd(desc, NULL, fd, spill->size, err, errlen);
}

/* Takes the memfd a SpillFrame names, or -1 with err set. */
static int spill_fd(proto_frame_in *in, const Nnd__Spill *spill, char *err, size_t errlen) {
    int fd = proto_frame_take_fd(in, spill->fd_index);
    if (fd < 0)
        set_err(err, errlen, "spill frame names fd %u but only %zu arrived", spill->fd_index,
                in->nfds);
    return fd;
}

/* Whether a datagram's top level has field 2 (Request.spill, Reply.spill) as a
 * length-delimited value: only then is it a SpillFrame worth unpacking. Unpacking every
 * datagram as a SpillFrame would copy the whole call into its unknown fields first.
 * Malformed bytes answer false: the real unpack refuses them. */
static bool has_spill_field(const uint8_t *p, size_t n) {
    const uint8_t *end = p + n;
    while (p < end) {
        uint64_t tag = 0, v = 0;
        for (int shift = 0;; shift += 7) {
            if (p >= end || shift > 63) return false;
            tag |= (uint64_t)(*p & 0x7f) << shift;
            if (!(*p++ & 0x80)) break;
        }
        unsigned type = (unsigned)(tag & 7);
        if (type == 0 || type == 2) {
            for (int shift = 0;; shift += 7) {
                if (p >= end || shift > 63) return false;
                v |= (uint64_t)(*p & 0x7f) << shift;
                if (!(*p++ & 0x80)) break;
            }
            if (type == 2) {
                if (tag >> 3 == 2) return true;
                if (v > (uint64_t)(end - p)) return false;
                p += v;
            }
        } else if (type == 1 || type == 5) {
            size_t skip = type == 1 ? 8 : 4;
            if (skip > (size_t)(end - p)) return false;
            p += skip;
        } else {
            return false;
        }
    }
    return false;
}

static int frame_recv(int sock, int flags, const ProtobufCMessageDescriptor *desc, uint8_t *buf,
                      proto_arena *arena, proto_frame_in *in, proto_frame_spill *defer, char *err,
                      size_t errlen) {
    memset(in, 0, sizeof *in);
    in->arena = arena;
    ProtobufCAllocator *alloc = arena ? &arena->pb : NULL;
    union {
        char buf[CMSG_SPACE(sizeof(int) * PROTO_FRAME_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {.iov_base = buf, .iov_len = PROTO_FRAME_RECV_BUF};
    struct msghdr mh = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl};
    ssize_t n;
    do
        n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | flags);
    while (n < 0 && errno == EINTR);
    if (n < 0) return errno == EWOULDBLOCK ? -EAGAIN : -errno;

    /* Collect every fd that arrived before judging the frame, so none leaks. */
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        int *cfds = (int *)CMSG_DATA(c);
        for (size_t i = 0; i < k; i++) {
            if (in->nfds < PROTO_FRAME_MAX_FDS)
                in->fds[in->nfds++] = cfds[i];
            else
                close(cfds[i]);
        }
    }
    if (mh.msg_flags & MSG_CTRUNC) {
        set_err(err, errlen,
                "file descriptors lost in transit: more than %d in one message, or the "
                "receiver is out of descriptors",
                PROTO_FRAME_MAX_FDS);
        proto_frame_in_clear(in);
        return -EPROTO;
    }
    if (n == 0 && in->nfds == 0) return 0;
    if (mh.msg_flags & MSG_TRUNC) {
        set_err(err, errlen, "datagram larger than %d bytes: large messages must spill",
                PROTO_FRAME_RECV_BUF);
        proto_frame_in_clear(in);
        return -EPROTO;
    }
    bool spilled = has_spill_field(buf, (size_t)n);
    Nnd__SpillFrame *sf = spilled ? nnd__spill_frame__unpack(alloc, (size_t)n, buf) : NULL;
    if (spilled && !sf) {
        set_err(err, errlen, "message is not valid protobuf (%zd bytes)", n);
        proto_frame_in_clear(in);
        return -EPROTO;
    }
    int deferred = 0;
    if (sf && sf->spill) {
        int fd = spill_fd(in, sf->spill, err, errlen);
        if (fd >= 0 && defer) {
            *defer = (proto_frame_spill){.fd = fd, .size = sf->spill->size};
            deferred = 1;
        } else if (fd >= 0) {
            in->msg = unspill_fd(desc, alloc, fd, sf->spill->size, err, errlen);
        }
    } else if (wire_budget_check(desc, buf, (size_t)n, err, errlen) == 0) {
        in->msg = protobuf_c_message_unpack(desc, alloc, (size_t)n, buf);
        if (!in->msg)
            set_err(err, errlen, "message is not valid protobuf (as a %s, %zd bytes)",
                    desc->short_name, n);
    }
    in->bytes = sf && sf->spill ? sf->spill->size : (uint64_t)n;
    if (sf && !arena) nnd__spill_frame__free_unpacked(sf, NULL); /* else with the arena */
    if (deferred) {
        /* The message will be unpacked elsewhere, with malloc: the arena is free again. */
        if (arena) proto_arena_reset(arena);
        in->arena = NULL;
        return 2;
    }
    if (!in->msg) {
        proto_frame_in_clear(in);
        return -EPROTO;
    }
    return 1;
}

int proto_frame_recv(int sock, const ProtobufCMessageDescriptor *desc, uint8_t *buf,
                     proto_frame_in *in, char *err, size_t errlen) {
    return frame_recv(sock, MSG_DONTWAIT, desc, buf, NULL, in, NULL, err, errlen);
}

int proto_frame_recv_arena(int sock, const ProtobufCMessageDescriptor *desc, uint8_t *buf,
                           proto_arena *arena, proto_frame_in *in, char *err, size_t errlen) {
    return frame_recv(sock, MSG_DONTWAIT, desc, buf, arena, in, NULL, err, errlen);
}

int proto_frame_recv_deferred(int sock, const ProtobufCMessageDescriptor *desc, uint8_t *buf,
                              proto_arena *arena, proto_frame_in *in, proto_frame_spill *spill,
                              char *err, size_t errlen) {
    return frame_recv(sock, MSG_DONTWAIT, desc, buf, arena, in, spill, err, errlen);
}

int proto_frame_recv_wait(int sock, const ProtobufCMessageDescriptor *desc, uint8_t *buf,
                          proto_frame_in *in, char *err, size_t errlen) {
    return frame_recv(sock, 0, desc, buf, NULL, in, NULL, err, errlen);
}
