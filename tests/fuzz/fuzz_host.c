/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_host: the driver host's protocol (driverhost/wire*.h), both directions, in process.
 * The input is u8 kind (modulo FH_KINDS), then:
 *   FH_HELLO .. FH_COPY (the host's replies as the daemon's proxy reads them, the direction
 *     a compromised driver controls): the reply body (status, message, the call's part);
 *     FH_SUPPORTED first takes u16 the model's count of operations, FH_EXECUTE u8 its
 *     count of outputs (modulo FH_MAX_OUTPUTS + 1);
 *   FH_MODEL: a partition (dh_get_model, as the host reads a prepare or supported_operations
 *     message), constants resolved in three real shared memfd regions (ids 1 to 3);
 *   FH_DATAGRAM: u8 count of memfds (modulo 4) sent with the datagram, u16 their size, then
 *     the datagram itself (header and inline body) through a socketpair into dh_recv();
 *   FH_REGIONS: dh_region_intro entries (DH_MSG_REGIONS), each mapped from a memfd of
 *     FH_REGION_BYTES by the host's region table, resolved at an offset and length the
 *     entry's own bytes give, and forgotten;
 *   FH_PREPARE_REQ .. FH_SAVE_REQ (the proxy's calls as the host reads them,
 *     wire_request.h): the body; FH_PREPARE_REQ first takes u8 (bit 0: cache_load) and
 *     reads the partition after the head as FH_MODEL does; FH_EXEC_REQ resolves each
 *     argument as the host places it, in the regions or a real staging memfd of
 *     FH_REGION_BYTES.
 * Every value a reader accepts is written again by its writer and read back: it must read
 * as the same value. Nothing may crash, read past the body, or leak memory or an fd. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "driverhost/host.h"
#include "driverhost/wire.h"
#include "driverhost/wire_reply.h"
#include "tests/fuzz/fuzz_target.h"

enum {
    FH_HELLO,
    FH_SUPPORTED,
    FH_PREPARED,
    FH_EXECUTE,
    FH_ALLOCATE,
    FH_SAVED,
    FH_COPY,
    FH_MODEL,
    FH_DATAGRAM,
    FH_REGIONS,
    FH_PREPARE_REQ,
    FH_ALLOCATE_REQ,
    FH_EXEC_REQ,
    FH_COPY_REQ,
    FH_SAVE_REQ,
    FH_KINDS
};
#define FH_MAX_OUTPUTS  32u
#define FH_REGION_BYTES 8192u
#define FH_N_REGIONS    3u

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_host: %s:%d: %s\n", __FILE__, __LINE__, #c);                     \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static dh_rbuf rbuf(const dh_wbuf *w) {
    CHECK(!w->oom);
    return (dh_rbuf){w->p, w->len, 0, false};
}

/* ---- replies (wire_reply.h) ---- */

static void fuzz_reply(int kind, const uint8_t *p, size_t n) {
    uint32_t n_ops = 0, n_outputs = 0;
    if (kind == FH_SUPPORTED && n >= 2)
        n_ops = (uint32_t)p[0] | (uint32_t)p[1] << 8, p += 2, n -= 2;
    if (kind == FH_EXECUTE && n >= 1) n_outputs = p[0] % (FH_MAX_OUTPUTS + 1), p++, n--;
    dh_rbuf r = {p, n, 0, false};
    int status = 0;
    char err[DH_ERR_MAX];
    if (dh_reply_head_get(&r, &status, err, sizeof err) < 0) return;
    CHECK(strlen(err) < DH_ERR_MAX);
    dh_wbuf w = {0};
    dh_reply_head_put(&w, status, err);
    dh_rbuf rt = rbuf(&w);
    int status2 = 0;
    char err2[DH_ERR_MAX];
    CHECK(dh_reply_head_get(&rt, &status2, err2, sizeof err2) == 0);
    CHECK(status2 == status && strcmp(err, err2) == 0 && rt.pos == rt.len);
    dh_wbuf_free(&w);

    switch (kind) {
    case FH_HELLO: {
        static dh_hello a, b;
        if (dh_hello_get(&r, &a) < 0) break;
        CHECK(a.n_devices <= NND_DRIVER_MAX_DEVICES);
        for (uint32_t i = 0; i < a.n_devices; i++)
            CHECK(strlen(a.devices[i].name) <= NND_DRIVER_MAX_NAME &&
                  strlen(a.devices[i].version) < sizeof a.devices[i].version);
        dh_hello_put(&w, &a);
        rt = rbuf(&w);
        CHECK(dh_hello_get(&rt, &b) == 0 && rt.pos == rt.len);
        CHECK(a.has == b.has && a.n_devices == b.n_devices);
        CHECK(memcmp(a.devices, b.devices, sizeof a.devices[0] * a.n_devices) == 0);
        break;
    }
    case FH_SUPPORTED: {
        bool *a = malloc(n_ops ? n_ops : 1), *b = malloc(n_ops ? n_ops : 1);
        CHECK(a && b);
        if (dh_supported_get(&r, n_ops, a) == 0) {
            dh_supported_put(&w, a, n_ops);
            rt = rbuf(&w);
            CHECK(dh_supported_get(&rt, n_ops, b) == 0 && rt.pos == rt.len);
            CHECK(memcmp(a, b, n_ops) == 0);
        }
        free(a);
        free(b);
        break;
    }
    case FH_PREPARED: {
        uint64_t remote, held, remote2, held2;
        if (dh_prepared_get(&r, &remote, &held) < 0) break;
        CHECK(remote != 0);
        dh_prepared_put(&w, remote, held);
        rt = rbuf(&w);
        CHECK(dh_prepared_get(&rt, &remote2, &held2) == 0);
        CHECK(remote == remote2 && held == held2 && rt.pos == rt.len);
        break;
    }
    case FH_EXECUTE: {
        /* Exactly n_outputs records: a reader writing past them is an ASan report. */
        size_t k = n_outputs ? n_outputs : 1;
        nnd_driver_arg *a = calloc(k, sizeof *a), *b = calloc(k, sizeof *b);
        CHECK(a && b);
        uint64_t dev, drv, dev2, drv2;
        if (dh_exec_reply_get(&r, &dev, &drv, a, n_outputs) == 0) {
            for (uint32_t i = 0; i < n_outputs; i++)
                CHECK(a[i].rank <= NND_DRIVER_MAX_RANK);
            dh_exec_reply_put(&w, dev, drv, a, n_outputs);
            rt = rbuf(&w);
            CHECK(dh_exec_reply_get(&rt, &dev2, &drv2, b, n_outputs) == 0 && rt.pos == rt.len);
            CHECK(dev == dev2 && drv == drv2);
            for (uint32_t i = 0; i < n_outputs; i++)
                CHECK(a[i].rank == b[i].rank && !memcmp(a[i].dims, b[i].dims, sizeof a[i].dims));
        }
        free(a);
        free(b);
        break;
    }
    case FH_ALLOCATE:
    case FH_SAVED: {
        bool alloc = kind == FH_ALLOCATE;
        uint64_t v, v2;
        if ((alloc ? dh_allocated_get(&r, &v) : dh_saved_get(&r, &v)) < 0) break;
        CHECK(!alloc || v != 0);
        if (alloc)
            dh_allocated_put(&w, v);
        else
            dh_saved_put(&w, v);
        rt = rbuf(&w);
        CHECK((alloc ? dh_allocated_get(&rt, &v2) : dh_saved_get(&rt, &v2)) == 0);
        CHECK(v == v2 && rt.pos == rt.len);
        break;
    }
    default: break; /* FH_COPY: a memory copy's reply is the head alone */
    }
    dh_wbuf_free(&w);
}

/* ---- partitions (wire_model.c), constants in shared regions ---- */

static uint8_t *g_region_base[FH_N_REGIONS + 1];

/* Regions 1 to 3: FH_REGION_BYTES memfds (from file offsets 0, 4096 + 16 and 1), mapped
 * by the host's own region table as the proxy's DH_MSG_REGIONS would have them. */
static void regions_once(void) {
    static bool done;
    if (done) return;
    done = true;
    for (uint32_t id = 1; id <= FH_N_REGIONS; id++) {
        uint64_t file_offset = id == 2 ? 4096u + 16u : id == 3 ? 1u : 0u;
        int fd = memfd_create("fuzz-host-region", MFD_CLOEXEC);
        CHECK(fd >= 0 && ftruncate(fd, (off_t)(file_offset + FH_REGION_BYTES)) == 0);
        dh_region_intro in = {
            .id = id, .writable = id != 3, .file_offset = file_offset, .length = FH_REGION_BYTES};
        CHECK(dhh_region_add(&in, fd) == 0);
        g_region_base[id] = dhh_region_resolve(NULL, id, 0, FH_REGION_BYTES);
        CHECK(g_region_base[id]);
    }
}

/* The proxy's side of a constant: in which region it lies, as proxy_prepared.c places it. */
static bool place(void *ctx, const void *data, size_t length, uint32_t *region, uint64_t *offset) {
    (void)ctx;
    const uint8_t *d = data;
    for (uint32_t id = 1; id <= FH_N_REGIONS; id++) {
        const uint8_t *b = g_region_base[id];
        if (d >= b && d <= b + FH_REGION_BYTES && length <= (size_t)(b + FH_REGION_BYTES - d)) {
            *region = id, *offset = (uint64_t)(d - b);
            return true;
        }
    }
    return false;
}

static void check_same_model(const nnd_driver_model *a, const nnd_driver_model *b) {
    CHECK(a->n_operands == b->n_operands && a->n_operations == b->n_operations);
    for (uint32_t i = 0; i < a->n_operands; i++) {
        const nnd_driver_operand *x = &a->operands[i], *y = &b->operands[i];
        CHECK(x->type == y->type && x->rank == y->rank && x->rank <= NND_DRIVER_MAX_RANK);
        CHECK(!memcmp(x->dims, y->dims, sizeof x->dims) && !memcmp(&x->scale, &y->scale, 4));
        CHECK(x->zero_point == y->zero_point && x->channel_dim == y->channel_dim);
        uint32_t ns = x->channel_scales ? x->n_channel_scales : 0;
        CHECK(ns == (y->channel_scales ? y->n_channel_scales : 0));
        CHECK(!ns || !memcmp(x->channel_scales, y->channel_scales, 4u * ns));
        CHECK(x->lifetime == y->lifetime && !x->data == !y->data);
        /* A region constant is the same bytes; an inline one equal bytes. The length of an
         * operand without data is not carried. */
        if (x->data) CHECK(x->length == y->length);
        if (x->data && place(NULL, x->data, x->length, &(uint32_t){0}, &(uint64_t){0}))
            CHECK(x->data == y->data);
        else if (x->data && x->length)
            CHECK(!memcmp(x->data, y->data, x->length));
    }
    for (uint32_t i = 0; i < a->n_operations; i++) {
        const nnd_driver_operation *x = &a->operations[i], *y = &b->operations[i];
        CHECK(x->type == y->type && x->index == y->index);
        CHECK(x->n_inputs == y->n_inputs && x->n_outputs == y->n_outputs);
        for (uint32_t k = 0; k < x->n_inputs; k++)
            CHECK(x->inputs[k] == y->inputs[k] && x->inputs[k] < a->n_operands);
        for (uint32_t k = 0; k < x->n_outputs; k++)
            CHECK(x->outputs[k] == y->outputs[k] && x->outputs[k] < a->n_operands);
    }
    CHECK(a->n_inputs == b->n_inputs && a->n_outputs == b->n_outputs && a->relaxed == b->relaxed);
    for (uint32_t k = 0; k < a->n_inputs; k++)
        CHECK(a->inputs[k] == b->inputs[k] && a->inputs[k] < a->n_operands);
    for (uint32_t k = 0; k < a->n_outputs; k++)
        CHECK(a->outputs[k] == b->outputs[k] && a->outputs[k] < a->n_operands);
}

/* The host reads a body dh_recv() malloc'd: aligned, and exactly n bytes long. */
static uint8_t *body_of(const uint8_t *p, size_t n) {
    uint8_t *body = malloc(n ? n : 1);
    CHECK(body);
    if (n) memcpy(body, p, n);
    return body;
}

/* The partition at r's position, as the host reads it, and round-tripped. */
static void model_at(dh_rbuf r) {
    regions_once();
    nnd_driver_model m, m2;
    void *block = NULL, *block2 = NULL;
    char err[DH_ERR_MAX];
    if (dh_get_model(&r, &m, &block, dhh_region_resolve, NULL, err, sizeof err) == 0) {
        /* What a driver reads of it: every constant's bytes, every index. */
        volatile uint8_t sum = 0;
        for (uint32_t i = 0; i < m.n_operands; i++)
            for (size_t k = 0; m.operands[i].data && k < m.operands[i].length; k += 61)
                sum ^= ((const uint8_t *)m.operands[i].data)[k];
        (void)sum;
        dh_wbuf w = {0};
        dh_put_model(&w, &m, place, NULL);
        CHECK(!w.oom);
        /* Inline constants must stay aligned: the copy starts aligned as dh_recv's does. */
        uint8_t *again = malloc(w.len ? w.len : 1);
        CHECK(again);
        if (w.len) memcpy(again, w.p, w.len);
        dh_rbuf rt = {again, w.len, 0, false};
        CHECK(dh_get_model(&rt, &m2, &block2, dhh_region_resolve, NULL, err, sizeof err) == 0);
        CHECK(rt.pos == rt.len);
        check_same_model(&m, &m2);
        free(block2);
        free(again);
        dh_wbuf_free(&w);
        free(block);
    } else {
        CHECK(!block && strlen(err) < sizeof err);
    }
}

static void fuzz_model(const uint8_t *p, size_t n) {
    uint8_t *body = body_of(p, n);
    model_at((dh_rbuf){body, n, 0, false});
    free(body);
}

/* ---- the proxy's calls as the host reads them (wire_request.h) ---- */

static void fuzz_prepare_req(const uint8_t *p, size_t n) {
    if (n < 1) return;
    bool load = p[0] & 1;
    uint8_t *body = body_of(p + 1, n - 1);
    dh_rbuf r = {body, n - 1, 0, false};
    uint32_t dev, dev2, nb, nb2;
    nnd_driver_prepare_args args, args2;
    nnd_driver_blob blobs[DH_MAX_BLOBS], blobs2[DH_MAX_BLOBS];
    if (dh_prepare_req_get(&r, load, &dev, &args, blobs, &nb) == 0) {
        CHECK(nb <= DH_MAX_BLOBS);
        dh_wbuf w = {0};
        dh_prepare_req_put(&w, dev, &args, load, blobs, nb);
        dh_rbuf rt = rbuf(&w);
        CHECK(dh_prepare_req_get(&rt, load, &dev2, &args2, blobs2, &nb2) == 0 && rt.pos == rt.len);
        CHECK(dev == dev2 && !memcmp(&args, &args2, sizeof args) && nb == nb2);
        for (uint32_t i = 0; i < nb; i++)
            CHECK(blobs[i].size == blobs2[i].size &&
                  (!blobs[i].size || !memcmp(blobs[i].data, blobs2[i].data, blobs[i].size)));
        dh_wbuf_free(&w);
        model_at(r);
    }
    free(body);
}

static void fuzz_allocate_req(const uint8_t *p, size_t n) {
    dh_rbuf r = {p, n, 0, false};
    uint32_t dev, dev2;
    nnd_driver_buffer_desc d, d2;
    uint64_t *ids = NULL, *ids2 = NULL;
    if (dh_allocate_req_get(&r, &dev, &d, &ids) < 0) {
        CHECK(!ids && !d.roles);
        return;
    }
    CHECK(d.operand.rank <= NND_DRIVER_MAX_RANK);
    dh_wbuf w = {0};
    dh_allocate_req_put(&w, dev, &d, ids);
    dh_rbuf rt = rbuf(&w);
    CHECK(dh_allocate_req_get(&rt, &dev2, &d2, &ids2) == 0 && rt.pos == rt.len);
    CHECK(dev == dev2 && d.bytes == d2.bytes && d.n_roles == d2.n_roles);
    CHECK(!memcmp(&d.operand, &d2.operand, sizeof d.operand));
    for (uint32_t i = 0; i < d.n_roles; i++) {
        const nnd_driver_buffer_role *x = &d.roles[i], *y = &d2.roles[i];
        CHECK(ids[i] == ids2[i] && x->is_output == y->is_output && x->index == y->index);
        CHECK(!memcmp(&x->frequency, &y->frequency, sizeof x->frequency));
    }
    dh_wbuf_free(&w);
    free((void *)d.roles);
    free((void *)d2.roles);
    free(ids);
    free(ids2);
}

/* An argument as host_exec.c places it: covered by its file, then resolved; its bytes read. */
static void place_arg(const dh_arg *a, dhh_staging *st) {
    if (a->region == DH_REGION_NONE || a->length == 0) return;
    uint64_t size = 0;
    if (a->region != DH_REGION_STAGING &&
        !dhh_region_covers(a->region, a->offset, a->length, &size))
        return;
    const uint8_t *d = dhh_region_resolve(st, a->region, a->offset, a->length);
    if (!d) return;
    volatile uint8_t x = d[0] ^ d[a->length - 1];
    (void)x;
}

static void fuzz_exec_req(const uint8_t *p, size_t n) {
    regions_once();
    uint8_t *body = body_of(p, n);
    dh_rbuf r = {body, n, 0, false};
    dh_exec_head head;
    if (dh_exec_req_get(&r, &head) == 0) {
        uint64_t k = (uint64_t)head.n_inputs + head.n_outputs;
        CHECK(k * sizeof(dh_arg) == r.len - r.pos);
        int fd = memfd_create("fuzz-host-staging", MFD_CLOEXEC);
        CHECK(fd >= 0 && ftruncate(fd, FH_REGION_BYTES) == 0);
        dhh_staging st = {0};
        CHECK(dhh_staging_map(fd, &st) == 0);
        close(fd);
        for (uint64_t i = 0; i < k; i++) {
            dh_arg a;
            dh_get(&r, &a, sizeof a);
            CHECK(!r.bad);
            place_arg(&a, &st);
        }
        CHECK(r.pos == r.len);
        dhh_staging_unmap(&st);
    }
    free(body);
}

static void fuzz_copy_req(int kind, const uint8_t *p, size_t n) {
    dh_rbuf r = {p, n, 0, false};
    uint32_t u, u2;
    uint64_t x, y, x2, y2;
    dh_arg a, a2;
    dh_wbuf w = {0};
    if (kind == FH_COPY_REQ) {
        if (dh_copy_req_get(&r, &u, &x, &y, &a) < 0) return;
        dh_copy_req_put(&w, u, x, y, &a);
        dh_rbuf rt = rbuf(&w);
        CHECK(dh_copy_req_get(&rt, &u2, &x2, &y2, &a2) == 0 && rt.pos == rt.len);
    } else {
        if (dh_save_req_get(&r, &x, &u, &y, &a) < 0) return;
        dh_save_req_put(&w, x, u, y, &a);
        dh_rbuf rt = rbuf(&w);
        CHECK(dh_save_req_get(&rt, &x2, &u2, &y2, &a2) == 0 && rt.pos == rt.len);
    }
    CHECK(u == u2 && x == x2 && y == y2 && !memcmp(&a, &a2, sizeof a));
    dh_wbuf_free(&w);
}

/* ---- datagrams with fds (wire.c) and region introductions (host_region.c) ---- */

/* The lowest free fd: an fd leaked by the code under test takes it. */
static int lowest_free_fd(void) {
    int fd = dup(0);
    CHECK(fd >= 0);
    close(fd);
    return fd;
}

static int memfd_of(const uint8_t *p, size_t n, size_t size) {
    int fd = memfd_create("fuzz-host", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    CHECK(fd >= 0);
    size_t k = n < size ? n : size;
    CHECK(k == 0 || write(fd, p, k) == (ssize_t)k);
    CHECK(ftruncate(fd, (off_t)size) == 0);
    return fd;
}

static void fuzz_datagram(const uint8_t *p, size_t n) {
    if (n < 3) return;
    uint32_t n_fds = p[0] % 4u;
    size_t size = (size_t)p[1] | (size_t)p[2] << 8;
    p += 3, n -= 3;
    if (n > sizeof(dh_msg_header) + DH_INLINE_MAX) return; /* a datagram the socket refuses */
    int before = lowest_free_fd();
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    int fds[3];
    for (uint32_t i = 0; i < n_fds; i++)
        fds[i] = memfd_of(p + (n > sizeof(dh_msg_header) ? sizeof(dh_msg_header) : n),
                          n > sizeof(dh_msg_header) ? n - sizeof(dh_msg_header) : 0, size);
    struct iovec iov = {(void *)p, n};
    union {
        char buf[CMSG_SPACE(sizeof(int) * 3)];
        struct cmsghdr align;
    } ctl;
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (n_fds) {
        memset(&ctl, 0, sizeof ctl);
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
    }
    CHECK(sendmsg(sv[0], &mh, MSG_NOSIGNAL) == (ssize_t)n);
    for (uint32_t i = 0; i < n_fds; i++)
        close(fds[i]);
    close(sv[0]);
    dh_msg m;
    int rc = dh_recv(sv[1], &m);
    if (rc == 1) {
        CHECK(m.body_len == m.h.body_len && (m.body || !m.body_len));
        volatile uint8_t sum = 0;
        for (size_t k = 0; k < m.body_len; k += 61)
            sum ^= m.body[k];
        (void)sum;
        CHECK(m.n_fds + (m.staging_fd >= 0) <= n_fds);
        dh_msg_free(&m);
    } else {
        CHECK(rc <= 0);
    }
    close(sv[1]);
    CHECK(lowest_free_fd() == before);
}

static void fuzz_regions(const uint8_t *p, size_t n) {
    regions_once();
    int before = lowest_free_fd();
    uint32_t added[4], n_added = 0;
    for (size_t at = 0; at + sizeof(dh_region_intro) <= n && n_added < 4;
         at += sizeof(dh_region_intro)) {
        dh_region_intro in;
        memcpy(&in, p + at, sizeof in);
        /* A region the fuzzer asks for past what a memfd of this size maps reads as the
         * host's mapping would: mmap may give more than the file; only resolve is judged. */
        if (in.length > (1ull << 40)) in.length &= (1ull << 40) - 1;
        in.file_offset %= 3u * 4096u;
        int fd = memfd_of(p, n, FH_REGION_BYTES);
        if (dhh_region_add(&in, fd) < 0) continue;
        added[n_added++] = in.id;
        uint64_t size = 0, off = in.file_offset % 5000u, len = in.length % 5000u;
        bool covers = dhh_region_covers(in.id, off, len, &size);
        uint8_t *a = dhh_region_resolve(NULL, in.id, off, len);
        /* Resolved means inside the region as introduced; read it where the file is. */
        if (a) CHECK(off + len <= in.length);
        if (a && covers && len) {
            volatile uint8_t x = a[0] ^ a[len - 1];
            (void)x;
        }
    }
    for (uint32_t i = 0; i < n_added; i++)
        dhh_region_forget(added[i]);
    CHECK(lowest_free_fd() == before);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int kind = data[0] % FH_KINDS;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    if (kind <= FH_COPY)
        fuzz_reply(kind, p, n);
    else if (kind == FH_MODEL)
        fuzz_model(p, n);
    else if (kind == FH_DATAGRAM)
        fuzz_datagram(p, n);
    else if (kind == FH_REGIONS)
        fuzz_regions(p, n);
    else if (kind == FH_PREPARE_REQ)
        fuzz_prepare_req(p, n);
    else if (kind == FH_ALLOCATE_REQ)
        fuzz_allocate_req(p, n);
    else if (kind == FH_EXEC_REQ)
        fuzz_exec_req(p, n);
    else
        fuzz_copy_req(kind, p, n);
    return 0;
}
