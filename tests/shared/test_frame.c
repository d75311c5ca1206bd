/* SPDX-License-Identifier: Apache-2.0 */
/* test_frame: datagram framing over a socketpair: fds ride along and stay usable, big
 * messages spill through a sealed memfd, and malformed frames are refused without
 * leaking a single fd. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/arena.h"
#include "proto/frame.h"
#include "tests/support/wire.h"

typedef struct pair {
    int a, b;
    uint8_t buf[PROTO_FRAME_RECV_BUF];
} pair;

static int setup(void **state) {
    pair *p = calloc(1, sizeof *p);
    int sv[2];
    if (!p || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return -1;
    p->a = sv[0];
    p->b = sv[1];
    *state = p;
    return 0;
}

static int teardown(void **state) {
    pair *p = *state;
    close(p->a);
    close(p->b);
    free(p);
    return 0;
}

static void hello_request(Nnd__Request *req, Nnd__Hello *h, uint64_t id, char *name) {
    nnd__request__init(req);
    nnd__hello__init(h);
    h->protocol_version = PROTO_PROTOCOL_VERSION;
    h->client_name = name;
    req->id = id;
    req->call_case = NND__REQUEST__CALL_HELLO;
    req->hello = h;
}

static void test_round_trip_with_fds(void **state) {
    pair *p = *state;
    int before = wire_count_fds(0);
    int memfd = wire_memfd("abc", 3, 4096);
    int pfd[2];
    assert_true(memfd >= 0);
    assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
    Nnd__Request req;
    Nnd__Hello h;
    hello_request(&req, &h, 42, "round-trip");
    int fds[2] = {memfd, pfd[1]};
    char err[256];
    assert_int_equal(proto_frame_send(p->a, &req.base, fds, 2, err, sizeof err), 0);

    proto_frame_in in;
    assert_int_equal(
        proto_frame_recv(p->b, &nnd__request__descriptor, p->buf, &in, err, sizeof err), 1);
    const Nnd__Request *got = (const Nnd__Request *)in.msg;
    assert_int_equal(got->id, 42);
    assert_int_equal(got->call_case, NND__REQUEST__CALL_HELLO);
    assert_string_equal(got->hello->client_name, "round-trip");
    assert_int_equal(in.nfds, 2);
    /* The memfd is the same file: its bytes are visible through the received fd. */
    char three[3];
    assert_int_equal(pread(in.fds[0], three, 3, 0), 3);
    assert_memory_equal(three, "abc", 3);
    assert_true(fcntl(in.fds[0], F_GETFD) & FD_CLOEXEC);
    /* The pipe's write end works from the receiving side. */
    assert_int_equal(write(in.fds[1], "x", 1), 1);
    char x;
    assert_int_equal(read(pfd[0], &x, 1), 1);
    assert_int_equal(x, 'x');
    /* A taken fd is ours; the rest close with the frame. */
    int kept = proto_frame_take_fd(&in, 0);
    assert_true(kept >= 0);
    assert_int_equal(proto_frame_take_fd(&in, 0), -1);
    assert_int_equal(proto_frame_take_fd(&in, 7), -1);
    proto_frame_in_clear(&in);
    close(kept);
    close(memfd);
    close(pfd[0]);
    close(pfd[1]);
    assert_int_equal(wire_count_fds(0), before);
}

/* A 1 MiB message spills, and arrives whole; through an arena too small for it (its
 * bytes then come from malloc) twice, so the reset in between must leave it usable. */
static void spill_over_one_mib(pair *p, proto_arena *arena) {
    int before = wire_count_fds(0);
    size_t len = (1u << 20) + 12345;
    uint8_t *big = malloc(len);
    assert_non_null(big);
    for (size_t i = 0; i < len; i++)
        big[i] = (uint8_t)(i * 7 + i / 251);
    Nnd__Model model = NND__MODEL__INIT;
    model.operand_values.data = big;
    model.operand_values.len = len;
    Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
    pm.model = &model;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 7;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &pm;

    proto_packed pk;
    char err[256];
    int no_fds[1] = {-1};
    assert_int_equal(proto_frame_pack(&req.base, no_fds, 0, &pk, err, sizeof err), 0);
    assert_true(pk.spill_fd >= 0);
    assert_true(pk.len < 64);
    assert_int_equal(proto_frame_sendmsg(p->a, &pk, 0), 0);
    proto_packed_clear(&pk);

    proto_frame_in in;
    assert_int_equal(
        arena ? proto_frame_recv_arena(p->b, &nnd__request__descriptor, p->buf, arena, &in, err,
                                       sizeof err)
              : proto_frame_recv(p->b, &nnd__request__descriptor, p->buf, &in, err, sizeof err),
        1);
    const Nnd__Request *got = (const Nnd__Request *)in.msg;
    assert_int_equal(got->id, 7);
    assert_int_equal(got->call_case, NND__REQUEST__CALL_PREPARE_MODEL);
    assert_int_equal(got->prepare_model->model->operand_values.len, len);
    assert_memory_equal(got->prepare_model->model->operand_values.data, big, len);
    proto_frame_in_clear(&in);
    if (arena) assert_int_equal(arena->used, 0);
    free(big);
    assert_int_equal(wire_count_fds(0), before);
}

static void test_spill_over_one_mib(void **state) {
    spill_over_one_mib(*state, NULL);
}

static void test_spill_into_arena(void **state) {
    proto_arena arena;
    assert_int_equal(proto_arena_init(&arena, 4096), 0);
    spill_over_one_mib(*state, &arena);
    spill_over_one_mib(*state, &arena);
    proto_arena_free(&arena);
}

static void send_raw(int sock, const void *bytes, size_t len, const int *fds, size_t nfds) {
    assert_int_equal(proto_frame_send_bytes(sock, bytes, len, fds, nfds, 0), (ssize_t)len);
}

static void expect_eproto(pair *p, const char *needle) {
    proto_frame_in in;
    char err[256] = "";
    assert_int_equal(
        proto_frame_recv(p->b, &nnd__request__descriptor, p->buf, &in, err, sizeof err), -EPROTO);
    assert_null(in.msg);
    assert_int_equal(in.nfds, 0);
    if (!strstr(err, needle)) fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
}

static void test_garbage_is_eproto(void **state) {
    pair *p = *state;
    static const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x07, 0x01, 0x02};
    send_raw(p->a, junk, sizeof junk, NULL, 0);
    expect_eproto(p, "protobuf");
}

static void test_oversized_datagram_is_eproto(void **state) {
    pair *p = *state;
    int sz = 1 << 20;
    setsockopt(p->a, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    size_t len = PROTO_FRAME_RECV_BUF + 100;
    uint8_t *bytes = calloc(1, len);
    assert_non_null(bytes);
    send_raw(p->a, bytes, len, NULL, 0);
    free(bytes);
    expect_eproto(p, "larger");
}

static void test_too_many_fds_closes_all(void **state) {
    pair *p = *state;
    int fds[40];
    for (int i = 0; i < 40; i++)
        fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    /* A valid Hello, so only the fd count is wrong. */
    Nnd__Request req;
    Nnd__Hello h;
    hello_request(&req, &h, 1, "fds");
    uint8_t bytes[64];
    size_t len = nnd__request__pack(&req, bytes);
    send_raw(p->a, bytes, len, fds, 40);
    for (int i = 0; i < 40; i++)
        close(fds[i]);
    int before = wire_count_fds(0);
    expect_eproto(p, "more than 32 in one message");
    assert_int_equal(wire_count_fds(0), before);
}

/* A SpillFrame naming fd 0 as a spill of `size` bytes. */
static size_t spill_frame(uint8_t *out, uint64_t size) {
    Nnd__Spill spill = NND__SPILL__INIT;
    spill.fd_index = 0;
    spill.size = size;
    Nnd__SpillFrame f = NND__SPILL_FRAME__INIT;
    f.id = 5;
    f.spill = &spill;
    return nnd__spill_frame__pack(&f, out);
}

static int packed_hello_memfd(size_t *len, bool seal) {
    Nnd__Request req;
    Nnd__Hello h;
    hello_request(&req, &h, 5, "spilled");
    uint8_t bytes[64];
    *len = nnd__request__pack(&req, bytes);
    int fd = wire_memfd(bytes, *len, *len);
    assert_true(fd >= 0);
    if (seal)
        assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE), 0);
    return fd;
}

static void test_unsealed_spill_rejected(void **state) {
    pair *p = *state;
    size_t len;
    int fd = packed_hello_memfd(&len, false);
    uint8_t frame[32];
    send_raw(p->a, frame, spill_frame(frame, len), &fd, 1);
    close(fd);
    int before = wire_count_fds(0);
    expect_eproto(p, "sealed");
    assert_int_equal(wire_count_fds(0), before);
}

static void test_spill_size_mismatch_rejected(void **state) {
    pair *p = *state;
    size_t len;
    int fd = packed_hello_memfd(&len, true);
    uint8_t frame[32];
    send_raw(p->a, frame, spill_frame(frame, len + 1), &fd, 1);
    close(fd);
    int before = wire_count_fds(0);
    expect_eproto(p, "bytes");
    assert_int_equal(wire_count_fds(0), before);

    /* The same memfd with the right size goes through: the rejection was the size. */
    fd = packed_hello_memfd(&len, true);
    send_raw(p->a, frame, spill_frame(frame, len), &fd, 1);
    close(fd);
    proto_frame_in in;
    char err[256];
    assert_int_equal(
        proto_frame_recv(p->b, &nnd__request__descriptor, p->buf, &in, err, sizeof err), 1);
    assert_string_equal(((Nnd__Request *)in.msg)->hello->client_name, "spilled");
    proto_frame_in_clear(&in);
}

static void test_spill_fd_missing_rejected(void **state) {
    pair *p = *state;
    uint8_t frame[32];
    send_raw(p->a, frame, spill_frame(frame, 10), NULL, 0);
    expect_eproto(p, "fd");
}

static void test_eof_and_eagain(void **state) {
    pair *p = *state;
    proto_frame_in in;
    char err[256];
    assert_int_equal(
        proto_frame_recv(p->b, &nnd__request__descriptor, p->buf, &in, err, sizeof err), -EAGAIN);
    close(p->a);
    p->a = -1;
    assert_int_equal(
        proto_frame_recv(p->b, &nnd__request__descriptor, p->buf, &in, err, sizeof err), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip_with_fds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spill_over_one_mib, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spill_into_arena, setup, teardown),
        cmocka_unit_test_setup_teardown(test_garbage_is_eproto, setup, teardown),
        cmocka_unit_test_setup_teardown(test_oversized_datagram_is_eproto, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_many_fds_closes_all, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unsealed_spill_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spill_size_mismatch_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spill_fd_missing_rejected, setup, teardown),
        cmocka_unit_test_setup_teardown(test_eof_and_eagain, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
