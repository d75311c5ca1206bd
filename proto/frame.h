/* SPDX-License-Identifier: Apache-2.0 */
/* frame: one protobuf message per SOCK_SEQPACKET datagram, file descriptors as SCM_RIGHTS.
 *
 * Contract:
 * - proto_frame_pack() serializes a Request or Reply; past PROTO_FRAME_INLINE_MAX bytes the
 *   message goes into a sealed memfd appended to the fds, and the datagram carries only a
 *   SpillFrame naming it. Caller fds are borrowed, never closed by pack or send.
 * - proto_frame_recv() receives one datagram with MSG_CMSG_CLOEXEC, rejects truncated data or
 *   control messages (closing every fd that arrived), follows a spill, and returns the
 *   unpacked message with the fds it carried. The receiver owns those fds: take the ones it
 *   keeps with proto_frame_take_fd(), and proto_frame_in_clear() closes the rest.
 * - Before unpacking, every message's wire bytes are walked once (the wire budget, below):
 *   one that would unpack into too much memory or too many allocations is refused as
 *   malformed, with the limit named, so decoding stays linear and bounded. Spills are at
 *   most PROTO_FRAME_SPILL_MAX bytes.
 * - The wire budget, judged on the wire bytes before protobuf-c allocates anything: the walk
 *   follows the descriptors into nested messages, field by field, and adds up what
 *   protobuf-c's unpack would allocate: each message's struct, each repeated field's array,
 *   each string or bytes value, each unknown field kept. It refuses, with a message naming
 *   the limit, a message that would allocate more than PROTO_WIRE_MAX_DECODED bytes, hold more
 *   than PROTO_WIRE_MAX_MESSAGES nested messages, strings and bytes values (every one is an
 *   allocation and a pass of its own), or nest deeper than PROTO_WIRE_MAX_DEPTH. It is linear
 *   in the bytes it reads and stops at the first limit crossed, so a hostile message costs
 *   at most a pass over its first PROTO_WIRE_MAX_MESSAGES fields; malformed wire data is left
 *   for protobuf-c to refuse (the walk only stops early). No state, no allocation.
 * - Every error fills `err` with a sentence naming what was wrong.
 */
#ifndef PROTO_FRAME_H
#define PROTO_FRAME_H

#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>

#include "nnd.pb-c.h"

#define PROTO_PROTOCOL_VERSION 1
#define PROTO_FRAME_INLINE_MAX (48 * 1024)   /* bytes of protobuf sent inline */
#define PROTO_FRAME_MAX_FDS    32            /* fds in one datagram, spill memfd included */
#define PROTO_FRAME_SPILL_MAX  (64ull << 20) /* largest spilled message accepted */
#define PROTO_FRAME_RECV_BUF   (PROTO_FRAME_INLINE_MAX + 1024)

#define PROTO_WIRE_MAX_DECODED  (128ull << 20) /* bytes an unpacked message may take */
#define PROTO_WIRE_MAX_MESSAGES (1u << 18)     /* nested messages, strings and bytes values */
#define PROTO_WIRE_MAX_DEPTH    32

#define PROTO_FRAME_SMALL 512 /* packed messages up to this size need no allocation */

typedef struct proto_packed {
    uint8_t *heap; /* the payload when it outgrew `small` (malloc'd); NULL: it is in `small` */
    size_t len;
    int fds[PROTO_FRAME_MAX_FDS]; /* borrowed caller fds, then the spill memfd if any */
    size_t nfds;
    int spill_fd; /* owned: closed by proto_packed_clear(); -1 when inline */
    uint8_t small[PROTO_FRAME_SMALL];
} proto_packed;

/* The datagram payload (len bytes). The struct may be copied; only one copy is cleared. */
static inline const uint8_t *proto_packed_bytes(const proto_packed *p) {
    return p->heap ? p->heap : p->small;
}

struct proto_arena;

typedef struct proto_frame_in {
    ProtobufCMessage *msg;     /* unpacked Request or Reply, NULL when nothing arrived */
    struct proto_arena *arena; /* where msg lives; NULL: malloc */
    int fds[PROTO_FRAME_MAX_FDS];
    size_t nfds;
    uint64_t bytes; /* msg's packed size (a spilled message's spill size) */
    uint32_t noted; /* what the receiver noted of msg where it unpacked it; 0 when nothing */
} proto_frame_in;

/* Packs msg (an Nnd__Request or Nnd__Reply) with fds. Returns 0, or -1 with err set. */
int proto_frame_pack(const ProtobufCMessage *msg, const int *fds, size_t nfds, proto_packed *out,
                     char *err, size_t errlen);
void proto_packed_clear(proto_packed *p);

/* One sendmsg of a packed frame. Returns 0, or -errno (-EAGAIN on a full non-blocking
 * socket: nothing was sent, try again later). */
int proto_frame_sendmsg(int sock, const proto_packed *p, int flags);
/* One datagram of any bytes with nfds fds (at most 253, the kernel's limit): what
 * proto_frame_sendmsg() sends, and what tests and fuzzers use for malformed frames. Returns
 * the bytes sent, or -errno (-EAGAIN when a non-blocking send would block). */
ssize_t proto_frame_send_bytes(int sock, const void *bytes, size_t len, const int *fds, size_t nfds,
                               int flags);

/* Pack and send in one step on a blocking socket. Returns 0 or -errno / -EPROTO. */
int proto_frame_send(int sock, const ProtobufCMessage *msg, const int *fds, size_t nfds, char *err,
                     size_t errlen);

/* Receives one frame of type desc without waiting. Returns 1 with *in filled, 0 on
 * orderly EOF, -EAGAIN when nothing is there, -EPROTO on a malformed frame (err says why;
 * the connection should be dropped or answered), or another -errno. buf holds
 * PROTO_FRAME_RECV_BUF bytes. */
int proto_frame_recv(int sock, const ProtobufCMessageDescriptor *desc, uint8_t *buf,
                     proto_frame_in *in, char *err, size_t errlen);
/* The same, unpacking into arena (arena.h): proto_frame_in_clear() then resets the arena
 * instead of freeing the message field by field. */
int proto_frame_recv_arena(int sock, const ProtobufCMessageDescriptor *desc, uint8_t *buf,
                           struct proto_arena *arena, proto_frame_in *in, char *err, size_t errlen);
/* A spilled message received and not yet read (proto_frame_recv_deferred()). */
typedef struct proto_frame_spill {
    int fd; /* the sealed memfd, owned by the holder */
    uint64_t size;
} proto_frame_spill;
/* As proto_frame_recv_arena(), except that a spilled message is left unread: it returns 2
 * with *spill holding its memfd, in->msg NULL and in->arena NULL (the arena is free again),
 * and in->fds the datagram's other fds. Read it with proto_frame_unspill(), on any thread. */
int proto_frame_recv_deferred(int sock, const ProtobufCMessageDescriptor *desc, uint8_t *buf,
                              struct proto_arena *arena, proto_frame_in *in,
                              proto_frame_spill *spill, char *err, size_t errlen);
/* Checks and unpacks (with malloc) a spilled message; closes spill->fd. NULL with err set
 * when it is malformed or over a limit. Touches no shared state. */
ProtobufCMessage *proto_frame_unspill(const ProtobufCMessageDescriptor *desc,
                                      proto_frame_spill *spill, char *err, size_t errlen);
/* The same as proto_frame_recv, but waits for a frame (up to the socket's SO_RCVTIMEO, then
 * -EAGAIN): one system call where poll() and a non-blocking receive would take two. */
int proto_frame_recv_wait(int sock, const ProtobufCMessageDescriptor *desc, uint8_t *buf,
                          proto_frame_in *in, char *err, size_t errlen);

/* Takes ownership of fds[index]; returns -1 when the index is out of range or taken. */
int proto_frame_take_fd(proto_frame_in *in, uint32_t index);

/* Hands a malloc'd message (from proto_frame_recv() or proto_frame_unspill(), not an
 * arena's: NULL then) to the caller, who frees it with protobuf_c_message_free_unpacked();
 * in keeps its fds. */
ProtobufCMessage *proto_frame_take_msg(proto_frame_in *in);

/* Closes every fd not taken now, the message kept (in may be NULL): a receiver that answers
 * before it clears the frame holds nothing of it then but what it took. */
void proto_frame_close_untaken(proto_frame_in *in);

/* Frees the message and closes every fd not taken. */
void proto_frame_in_clear(proto_frame_in *in);

#endif
