/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_frame: frame decoding, protobuf and file descriptors, through proto_frame_recv() on a
 * SOCK_SEQPACKET socketpair as the daemon and the client receive. The input is
 *   u8 flags: bit 0 decodes a Reply instead of a Request; bits 1-7 pick fds to take
 *   u8 fd count (% 41: past PROTO_FRAME_MAX_FDS the control data is truncated)
 *   u8 per fd: its kind (% 6): 0 a sealed memfd, 1 an unsealed memfd, 2 a memfd sealed
 *     against writes only, 3 a pipe, 4 /dev/null, 5 a sealed memfd one byte longer
 *   section: the datagram
 *   one section per memfd, in fd order: its contents (a spilled message)
 * After a frame is received, some fds are taken as a handler would, the message is packed
 * again, sent and received (the round trip must give the same bytes), and every fd is
 * closed. No fd opened in an iteration may stay open after it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/arena.h"
#include "proto/frame.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_target.h"

#define MAX_SEND_FDS 40
#define FD_SET_MAX   4096

static int sv[2] = {-1, -1};
static uint8_t fds_before[FD_SET_MAX], fds_after[FD_SET_MAX];
static uint8_t rbuf[PROTO_FRAME_RECV_BUF];

/* Marks every open fd below FD_SET_MAX in set; returns how many are open. */
static int open_fds(uint8_t *set) {
    memset(set, 0, FD_SET_MAX);
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int self = dirfd(d), n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == self || fd >= FD_SET_MAX) continue;
        set[fd] = 1;
        n++;
    }
    closedir(d);
    return n;
}

static int make_fd(uint8_t kind, fz_in *in) {
    kind %= 6;
    if (kind == 3) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) return -1;
        close(p[1]);
        return p[0];
    }
    if (kind == 4) return open("/dev/null", O_RDONLY | O_CLOEXEC);
    fz_in s = fz_section(in);
    int fd = memfd_create("fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    if (s.len && write(fd, s.p, s.len) != (ssize_t)s.len) {
        close(fd);
        return -1;
    }
    if (kind == 5 && write(fd, "", 1) != 1) {
        close(fd);
        return -1;
    }
    int seals = kind == 1   ? 0
                : kind == 2 ? F_SEAL_WRITE
                            : F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
    if (seals) fcntl(fd, F_ADD_SEALS, seals);
    return fd;
}

static int send_raw(const fz_in *dgram, const int *fds, size_t nfds) {
    return proto_frame_send_bytes(sv[0], dgram->p, dgram->len, fds, nfds, MSG_DONTWAIT) < 0 ? -1
                                                                                            : 0;
}

/* Packs msg, sends it with no fds, receives it back and compares the packed bytes. */
static void round_trip(const ProtobufCMessage *msg) {
    char err[256];
    proto_packed a;
    /* An empty message packs to an empty datagram, which reads as end of file. */
    if (protobuf_c_message_get_packed_size(msg) == 0) return;
    if (proto_frame_pack(msg, NULL, 0, &a, err, sizeof err) < 0) return;
    if (proto_frame_sendmsg(sv[0], &a, MSG_DONTWAIT) < 0) {
        proto_packed_clear(&a);
        return; /* too large for the socket buffer: nothing was queued */
    }
    proto_frame_in back;
    int rc = proto_frame_recv(sv[1], msg->descriptor, rbuf, &back, err, sizeof err);
    if (rc == -EPROTO) {
        /* protobuf-c keeps unknown fields it should have refused (field number 0 in a
         * multi-byte tag) and packs them canonically, which it then refuses: not ours. */
        proto_packed_clear(&a);
        return;
    }
    if (rc != 1) {
        fprintf(stderr, "fuzz_frame: a packed frame did not come back: %d %s\n", rc, err);
        abort();
    }
    size_t n1 = protobuf_c_message_get_packed_size(msg);
    size_t n2 = protobuf_c_message_get_packed_size(back.msg);
    uint8_t *b1 = malloc(n1 + 1), *b2 = malloc(n2 + 1);
    if (b1 && b2) {
        protobuf_c_message_pack(msg, b1);
        protobuf_c_message_pack(back.msg, b2);
        if (n1 != n2 || memcmp(b1, b2, n1) != 0) {
            fprintf(stderr, "fuzz_frame: round trip changed the message\n");
            abort();
        }
    }
    free(b1);
    free(b2);
    proto_frame_in_clear(&back);
    proto_packed_clear(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (sv[0] < 0) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) abort();
        int big = 4 << 20;
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
        setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    }
    /* Per iteration: libFuzzer and the sanitizers open fds of their own between runs. */
    open_fds(fds_before);
    fz_in in = {data, size};
    uint8_t flags = fz_u8(&in);
    size_t nfds = fz_u8(&in) % (MAX_SEND_FDS + 1);
    uint8_t kinds[MAX_SEND_FDS];
    fz_bytes(&in, kinds, nfds);
    fz_in dgram = fz_section(&in);
    int fds[MAX_SEND_FDS];
    size_t made = 0;
    for (; made < nfds; made++)
        if ((fds[made] = make_fd(kinds[made], &in)) < 0) break;
    int sent = made == nfds ? send_raw(&dgram, fds, nfds) : -1;
    for (size_t i = 0; i < made; i++)
        close(fds[i]);
    if (sent == 0) {
        const ProtobufCMessageDescriptor *desc =
            flags & 1 ? &nnd__reply__descriptor : &nnd__request__descriptor;
        proto_frame_in f;
        char err[256];
        /* Requests as the daemon takes them (into an arena), replies as libnnd does. */
        static proto_arena arena;
        if (!arena.block && proto_arena_init(&arena, 4096) < 0) abort();
        int rc = flags & 1 ? proto_frame_recv(sv[1], desc, rbuf, &f, err, sizeof err)
                           : proto_frame_recv_arena(sv[1], desc, rbuf, &arena, &f, err, sizeof err);
        if (rc == 1) {
            for (uint32_t i = 0; i < 7; i++)
                if (flags & (2u << i)) {
                    int fd = proto_frame_take_fd(&f, i);
                    if (fd >= 0) close(fd);
                }
            round_trip(f.msg);
            proto_frame_in_clear(&f);
        } else if (f.msg || f.nfds) {
            fprintf(stderr, "fuzz_frame: a refused frame kept a message or fds\n");
            abort();
        }
    }
    /* Nothing may stay queued, and no fd may stay open. */
    uint8_t drain[16];
    while (recv(sv[1], drain, sizeof drain, MSG_DONTWAIT) >= 0) {
    }
    open_fds(fds_after);
    for (int fd = 0; fd < FD_SET_MAX; fd++)
        if (fds_after[fd] && !fds_before[fd]) {
            char link[64], target[256] = "?";
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(link, target, sizeof target - 1);
            if (n > 0) target[n] = 0;
            fprintf(stderr, "fuzz_frame: fd %d (%s) is still open after an iteration\n", fd,
                    target);
            abort();
        }
    return 0;
}
