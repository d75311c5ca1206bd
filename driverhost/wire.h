/* SPDX-License-Identifier: Apache-2.0 */
/* wire: the messages between the daemon's driver proxy (proxy.c) and a driver host
 * (host_main.c), over one SOCK_SEQPACKET socketpair.
 *
 * Contract:
 * - A message is one datagram: a dh_msg_header, then its body. A body longer than
 *   DH_INLINE_MAX travels in a sealed memfd (DH_FLAG_BODY_FD) instead, so a prepare with
 *   large copied constants never meets the socket's datagram limit. A staging memfd
 *   (DH_FLAG_STAGING) carries the tensors of a call that lie in no registered region.
 *   Region introductions (DH_MSG_REGIONS) carry one fd each, in the order of the entries.
 * - dh_send() never blocks past its deadline (CLOCK_MONOTONIC ns, 0: no bound); it
 *   returns 0, -ETIMEDOUT or -errno. dh_recv() blocks; it returns 1 for a message, 0 at
 *   EOF, -errno on error (a malformed datagram is -EPROTO); the fds received are
 *   close-on-exec and owned by the message (dh_msg_free closes those not taken).
 * - Bodies are read with dh_rbuf, which never reads past the end: a short or malformed
 *   body sets `bad` and yields zeros. Both ends run the same build (the host is started
 *   from this build's path), so fields go in host byte order.
 * - Models (nnd_driver_model) go through dh_put_model/dh_get_model: a constant is placed
 *   by the sender's callback (in a region: region id and offset; else copied inline) and
 *   resolved by the receiver's; the model read points into the body, which must outlive it.
 */
#ifndef DH_WIRE_H
#define DH_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd/driver.h"

enum {
    DH_MSG_HELLO = 1,     /* host: open()'s result, the devices, what the driver has */
    DH_MSG_REGIONS,       /* proxy: shared regions the host maps (one fd each) */
    DH_MSG_FORGET_REGION, /* proxy: a region is gone */
    DH_MSG_SUPPORTED,     /* proxy: supported_operations() */
    DH_MSG_PREPARE,       /* proxy: prepare() */
    DH_MSG_CACHE_LOAD,    /* proxy: cache_load() */
    DH_MSG_RELEASE,       /* proxy: release() (no reply) */
    DH_MSG_EXECUTE,       /* proxy: execute() or start() */
    DH_MSG_CANCEL,        /* proxy: cancel() of a started execution (no reply) */
    DH_MSG_ALLOCATE,      /* proxy: allocate() */
    DH_MSG_MEM_FREE,      /* proxy: memory_free() (no reply) */
    DH_MSG_MEM_READ,      /* proxy: memory_read() */
    DH_MSG_MEM_WRITE,     /* proxy: memory_write() */
    DH_MSG_CACHE_SAVE,    /* proxy: cache_save() */
    DH_MSG_REPLY,         /* host: the answer to call `call` */
};

#define DH_FLAG_BODY_FD    1u
#define DH_FLAG_STAGING    2u
#define DH_INLINE_MAX      (48u * 1024u)
#define DH_MAX_REGIONS_MSG 64u
#define DH_REGION_NONE     0u          /* device memory: no bytes here */
#define DH_REGION_STAGING  0xffffffffu /* in the call's staging memfd */
#define DH_REGION_INLINE   0xfffffffeu /* a model constant copied into the body */
#define DH_ERR_MAX         256u

/* What a driver has (DH_MSG_HELLO). */
#define DH_HAS_EXECUTE 1u
#define DH_HAS_START   2u
#define DH_HAS_MEMORY  4u
#define DH_HAS_CACHE   8u

typedef struct dh_msg_header {
    uint32_t type, call, flags, reserved;
    uint64_t body_len;
} dh_msg_header;

typedef struct dh_region_intro {
    uint32_t id, writable;
    uint64_t file_offset, length;
} dh_region_intro;

/* One input or output of an execution, or the buffer of a device-memory copy. */
typedef struct dh_arg {
    uint32_t region; /* a region id, DH_REGION_STAGING, or DH_REGION_NONE (device memory) */
    uint32_t rank;
    uint64_t offset, length, memory;
    uint32_t dims[NND_DRIVER_MAX_RANK];
} dh_arg;

/* The body of DH_MSG_EXECUTE: this, then n_inputs + n_outputs dh_arg. Its reply: status,
 * message, then time_on_device, time_in_driver and each output's rank and dims. */
typedef struct dh_exec_head {
    uint64_t prepared; /* the host's id of the prepared partition */
    uint32_t n_inputs, n_outputs;
    int32_t priority;
    uint32_t measure;
    uint64_t deadline_ns;
} dh_exec_head;

typedef struct dh_msg {
    dh_msg_header h;
    uint8_t *body;
    size_t body_len;
    int fds[DH_MAX_REGIONS_MSG + 2];
    uint32_t n_fds;
    int staging_fd; /* -1 when none */
} dh_msg;

int dh_send(int sock, const dh_msg_header *h, const void *body, size_t body_len, const int *fds,
            uint32_t n_fds, int staging_fd, uint64_t deadline_ns);
int dh_recv(int sock, dh_msg *out);
void dh_msg_free(dh_msg *m);
uint64_t dh_now_ns(void);

/* ---- bodies ---- */
typedef struct dh_wbuf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} dh_wbuf;
void dh_put(dh_wbuf *w, const void *src, size_t n);
/* Zero bytes up to the next multiple of DH_DATA_ALIGN of the body: tensor data put after
 * it lies as aligned in the receiver's body (which starts aligned) as any element needs. */
#define DH_DATA_ALIGN 16u
void dh_put_align(dh_wbuf *w);
void dh_put_u32(dh_wbuf *w, uint32_t v);
void dh_put_u64(dh_wbuf *w, uint64_t v);
void dh_put_str(dh_wbuf *w, const char *s); /* length, then bytes (no NUL) */
void dh_wbuf_free(dh_wbuf *w);

typedef struct dh_rbuf {
    const uint8_t *p;
    size_t len, pos;
    bool bad;
} dh_rbuf;
const void *dh_take(dh_rbuf *r, size_t n); /* NULL (and bad) when short */
/* dh_take() of data the sender put after dh_put_align(). */
const void *dh_take_aligned(dh_rbuf *r, size_t n);
void dh_get(dh_rbuf *r, void *dst, size_t n);
uint32_t dh_get_u32(dh_rbuf *r);
uint64_t dh_get_u64(dh_rbuf *r);
void dh_get_str(dh_rbuf *r, char *dst, size_t cap); /* NUL-terminated, cut to cap */

/* ---- models ---- */
/* Where a constant's bytes are: *region and *offset, or false to copy them inline. */
typedef bool (*dh_place_fn)(void *ctx, const void *data, size_t length, uint32_t *region,
                            uint64_t *offset);
/* The receiver's address of [offset, offset + length) of a region, or NULL. */
typedef void *(*dh_resolve_fn)(void *ctx, uint32_t region, uint64_t offset, uint64_t length);

void dh_put_model(dh_wbuf *w, const nnd_driver_model *m, dh_place_fn place, void *ctx);
/* The arrays are one malloc'd block (*block, free it when done); 0 or -EPROTO/-ENOMEM with
 * err naming what was wrong. */
int dh_get_model(dh_rbuf *r, nnd_driver_model *m, void **block, dh_resolve_fn resolve, void *ctx,
                 char *err, size_t errlen);

#endif
