/* SPDX-License-Identifier: Apache-2.0 */
/* test_hostile: a real daemon facing broken and malicious clients. After every attack the
 * daemon must still answer a well-behaved client, leak no fds, and at the end stop with
 * exit status 0 and remove its socket.
 *
 * Status choices: a frame that does not parse (garbage, truncated protobuf, too many
 * fds) is INVALID_ARGUMENT with id 0; an unknown handle is INVALID_ARGUMENT; a pool or a
 * location outside its memory is INVALID_ARGUMENT (the HAL leaves this open; a bad
 * request is the client's fault); a call not built yet is GENERAL_FAILURE. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/frame.h"
#include "tests/support/harness.h"
#include "tests/support/wire.h"

static tst_daemon *const daemon_under_test = &tst_group_daemon;

static int connect_ok(void) {
    int s = tst_connect_raw(daemon_under_test);
    assert_true(s >= 0);
    return s;
}

static void assert_still_serving(void) {
    assert_int_equal(wire_hello_fresh(daemon_under_test), 0);
}

/* The daemon closes a frame's leftover fds just after replying: give it a moment. */
/* The daemon's fd count once it holds still: a prepare queues a content-cache store
 * whose file stays open for as long as its fsync takes (seconds on a busy disk). */
static int settled_daemon_fds(void) {
    int n = wire_count_fds(daemon_under_test->pid);
    for (int i = 0, same = 0; i < 1000 && same < 5; i++) {
        usleep(10000);
        int m = wire_count_fds(daemon_under_test->pid);
        same = m == n ? same + 1 : 0;
        n = m;
    }
    return n;
}

static void assert_daemon_fds(int expected) {
    int n = -1;
    for (int i = 0; i < 1000 && n != expected; i++) {
        n = wire_count_fds(daemon_under_test->pid);
        if (n != expected) usleep(10000);
    }
    assert_int_equal(n, expected);
}

static void assert_contains(const char *s, const char *needle) {
    if (!s || !strstr(s, needle)) fail_msg("\"%s\" does not contain \"%s\"", s ? s : "", needle);
}

/* Expects one reply with this id and status whose message mentions needle. */
static void expect_reply(int sock, uint64_t id, Nnd__ErrorStatus st, const char *needle) {
    Nnd__Reply *r = wire_recv(sock, WIRE_TIMEOUT_MS);
    assert_non_null(r);
    assert_int_equal(r->id, id);
    if (r->status != st) fail_msg("status %d (\"%s\"), expected %d", r->status, r->message, st);
    if (needle) assert_contains(r->message, needle);
    wire_free(r);
}

static void send_raw(int sock, const void *bytes, size_t len, const int *fds, size_t nfds) {
    assert_int_equal(proto_frame_send_bytes(sock, bytes, len, fds, nfds, 0), (ssize_t)len);
}

static void test_garbage_bytes(void **state) {
    (void)state;
    int s = connect_ok();
    static const uint8_t junk[] = {0xff, 0xfe, 0xfd, 0xfc, 0x0b, 0x0e, 0xad, 0xbe, 0xef};
    send_raw(s, junk, sizeof junk, NULL, 0);
    expect_reply(s, 0, NND__ERROR_STATUS__INVALID_ARGUMENT, "protobuf");
    /* Datagrams keep their boundaries: the same connection goes on working. */
    assert_int_equal(wire_hello(s, 2), 0);
    close(s);
    assert_still_serving();
}

static void test_truncated_protobuf(void **state) {
    (void)state;
    int s = connect_ok();
    char name[200];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    Nnd__Hello h = NND__HELLO__INIT;
    h.client_name = name;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 77;
    req.call_case = NND__REQUEST__CALL_HELLO;
    req.hello = &h;
    uint8_t bytes[512];
    size_t len = nnd__request__pack(&req, bytes);
    send_raw(s, bytes, len / 2, NULL, 0);
    expect_reply(s, 0, NND__ERROR_STATUS__INVALID_ARGUMENT, "protobuf");
    close(s);
    assert_still_serving();
}

static void test_empty_datagram(void **state) {
    (void)state;
    int s = connect_ok();
    send_raw(s, "", 0, NULL, 0);
    expect_reply(s, 0, NND__ERROR_STATUS__INVALID_ARGUMENT, "names no call");
    assert_int_equal(wire_hello(s, 3), 0);
    close(s);
}

static void test_request_without_call(void **state) {
    (void)state;
    int s = connect_ok();
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 123;
    assert_int_equal(wire_send(s, &req, NULL, 0), 0);
    expect_reply(s, 123, NND__ERROR_STATUS__INVALID_ARGUMENT, "names no call");
    close(s);
}

static void test_too_many_fds(void **state) {
    (void)state;
    int s = connect_ok();
    assert_int_equal(wire_hello(s, 1), 0);
    int before = settled_daemon_fds();
    int fds[40];
    for (int i = 0; i < 40; i++)
        fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    Nnd__Hello h = NND__HELLO__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 9;
    req.call_case = NND__REQUEST__CALL_HELLO;
    req.hello = &h;
    uint8_t bytes[64];
    size_t len = nnd__request__pack(&req, bytes);
    send_raw(s, bytes, len, fds, 40);
    for (int i = 0; i < 40; i++)
        close(fds[i]);
    expect_reply(s, 0, NND__ERROR_STATUS__INVALID_ARGUMENT, "more than 32 in one message");
    /* Every fd that arrived was closed again. */
    assert_daemon_fds(before);
    close(s);
    assert_still_serving();
}

static void test_fds_with_every_call_are_closed(void **state) {
    (void)state;
    int s = connect_ok();
    assert_int_equal(wire_hello(s, 1), 0);
    int before = settled_daemon_fds();
    int fds[8];
    for (int i = 0; i < 8; i++)
        fds[i] = wire_memfd(NULL, 0, 4096);
    Nnd__Hello h = NND__HELLO__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 10;
    req.call_case = NND__REQUEST__CALL_HELLO;
    req.hello = &h;
    Nnd__Reply *r = wire_call(s, &req, fds, 8);
    assert_non_null(r);
    assert_int_equal(r->status, NND__ERROR_STATUS__NONE);
    wire_free(r);
    for (int i = 0; i < 8; i++)
        close(fds[i]);
    assert_daemon_fds(before);
    close(s);
}

static void execute_expect(int s, wire_exec *e, const int *fds, size_t nfds, Nnd__ErrorStatus st,
                           const char *needle) {
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 555;
    req.call_case = NND__REQUEST__CALL_EXECUTE;
    req.execute = &e->exec;
    assert_int_equal(wire_send(s, &req, fds, nfds), 0);
    expect_reply(s, 555, st, needle);
}

static void test_execute_unknown_handle(void **state) {
    (void)state;
    int s = connect_ok();
    int pool = wire_memfd(NULL, 0, 4096);
    wire_exec e;
    wire_exec_init(&e, 0x1234567890abcdefull, 2, 4096);
    execute_expect(s, &e, &pool, 1, NND__ERROR_STATUS__INVALID_ARGUMENT,
                   "unknown prepared model handle 0x1234567890abcdef");
    close(pool);
    close(s);
    assert_still_serving();
}

static void test_handle_of_another_connection(void **state) {
    (void)state;
    int owner = connect_ok(), thief = connect_ok();
    wire_add_model m;
    wire_add_model_init(&m, -1);
    uint64_t h = wire_prepare(owner, &m.model, NULL, 0);
    assert_true(h != 0);
    int pool = wire_memfd(NULL, 0, 4096);
    wire_exec e;
    wire_exec_init(&e, h, 2, 4096);
    execute_expect(thief, &e, &pool, 1, NND__ERROR_STATUS__INVALID_ARGUMENT,
                   "unknown prepared model handle");
    Nnd__Release rel = NND__RELEASE__INIT;
    rel.handle = h;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 8;
    req.call_case = NND__REQUEST__CALL_RELEASE;
    req.release = &rel;
    assert_int_equal(wire_send(thief, &req, NULL, 0), 0);
    expect_reply(thief, 8, NND__ERROR_STATUS__INVALID_ARGUMENT, "unknown handle");
    /* The owner still has it. */
    execute_expect(owner, &e, &pool, 1, NND__ERROR_STATUS__NONE, NULL);
    close(pool);
    close(thief);
    close(owner);
}

static void test_pool_past_end_of_memfd(void **state) {
    (void)state;
    int s = connect_ok();
    wire_add_model m;
    wire_add_model_init(&m, -1);
    uint64_t h = wire_prepare(s, &m.model, NULL, 0);
    assert_true(h != 0);
    int before = settled_daemon_fds();
    int pool = wire_memfd(NULL, 0, 4096);
    wire_exec e;

    /* The pool itself runs past the end of its memfd. */
    wire_exec_init(&e, h, 2, 200);
    e.pool.offset = 4000;
    execute_expect(s, &e, &pool, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "past the end");
    /* offset + size wraps around. */
    wire_exec_init(&e, h, 2, 64);
    e.pool.offset = UINT64_MAX - 10;
    execute_expect(s, &e, &pool, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "past the end");
    /* The pool fits, a location inside it does not. */
    wire_exec_init(&e, h, 2, 4096);
    e.locs[2].offset = 4092;
    execute_expect(s, &e, &pool, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "past the end");
    /* An fd index the message does not carry. */
    wire_exec_init(&e, h, 2, 4096);
    e.pool.fd_index = 3;
    execute_expect(s, &e, &pool, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "fd");
    /* An empty pool. */
    wire_exec_init(&e, h, 2, 0);
    execute_expect(s, &e, &pool, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "size 0");
    /* An fd that cannot be mapped: GENERAL_FAILURE, as the HAL asks. */
    int pfd[2];
    assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
    wire_exec_init(&e, h, 2, 4096);
    execute_expect(s, &e, &pfd[0], 1, NND__ERROR_STATUS__GENERAL_FAILURE, "cannot be mapped");
    close(pfd[0]);
    close(pfd[1]);
    /* An output into a read-only fd. */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", pool);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    assert_true(ro >= 0);
    wire_exec_init(&e, h, 2, 4096);
    execute_expect(s, &e, &ro, 1, NND__ERROR_STATUS__INVALID_ARGUMENT, "read-only");
    close(ro);
    /* And the well-formed request works. */
    wire_exec_init(&e, h, 2, 4096);
    execute_expect(s, &e, &pool, 1, NND__ERROR_STATUS__NONE, NULL);
    close(pool);
    assert_daemon_fds(before);
    close(s);
    assert_still_serving();
}

/* Prepares the constant-pool ADD on d, runs it, shrinks the weights, runs it again and
 * expects `after` (with the right sums when NONE). */
static void truncate_weights_after_prepare(const tst_daemon *d, Nnd__ErrorStatus after) {
    int s = tst_connect_raw(d);
    assert_true(s >= 0);
    float b[2] = {10.0f, 20.0f};
    int cpool = wire_memfd(b, sizeof b, sizeof b);
    wire_add_model m;
    wire_add_model_init(&m, 0);
    uint64_t h = wire_prepare(s, &m.model, &cpool, 1);
    assert_true(h != 0);
    float io[6] = {1.0f, 2.0f, 0, 0, 0, 0};
    int pool = wire_memfd(io, sizeof io, 4096);
    wire_exec e;
    wire_exec_init(&e, h, 1, 4096);
    e.locs[2].offset = 8; /* one input: the output follows it */
    execute_expect(s, &e, &pool, 1, NND__ERROR_STATUS__NONE, NULL);
    float out[2];
    assert_int_equal(pread(pool, out, sizeof out, 8), (ssize_t)sizeof out);
    assert_true(out[0] == 11.0f && out[1] == 22.0f);

    /* The client shrinks the weights under the daemon: no SIGBUS death. */
    assert_int_equal(ftruncate(cpool, 0), 0);
    memset(out, 0, sizeof out);
    assert_int_equal(pwrite(pool, out, sizeof out, 8), (ssize_t)sizeof out);
    execute_expect(s, &e, &pool, 1, after, after ? "shrank" : NULL);
    if (after == NND__ERROR_STATUS__NONE) {
        assert_int_equal(pread(pool, out, sizeof out, 8), (ssize_t)sizeof out);
        assert_true(out[0] == 11.0f && out[1] == 22.0f);
    }
    /* Once shrunk, the prepared model stays unusable: every later execution fails too,
     * never a sum computed from the zero pages standing where the weights were. */
    for (int k = 0; after != NND__ERROR_STATUS__NONE && k < 4; k++)
        execute_expect(s, &e, &pool, 1, after, "prepare the model again");
    close(cpool);
    close(pool);
    close(s);
}

static void test_constant_pool_truncated_after_prepare(void **state) {
    (void)state;
    /* By default a small model is prepared from the daemon's own copy of its constants
     * (the content cache): the client's memory no longer matters. */
    truncate_weights_after_prepare(daemon_under_test, NND__ERROR_STATUS__NONE);
    assert_still_serving();
    /* Without the content cache constants are used in place: a failure, not a crash. */
    tst_daemon in_place;
    const char *args[] = {"--cache-max-bytes", "0", NULL};
    assert_int_equal(tst_daemon_start(&in_place, args), 0);
    truncate_weights_after_prepare(&in_place, NND__ERROR_STATUS__GENERAL_FAILURE);
    assert_int_equal(wire_hello_fresh(&in_place), 0);
    assert_int_equal(tst_daemon_stop(&in_place), 0);
}

/* An Allocate with nothing in it. */
static void test_empty_allocate(void **state) {
    (void)state;
    int s = connect_ok();
    Nnd__Allocate a = NND__ALLOCATE__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 31;
    req.call_case = NND__REQUEST__CALL_ALLOCATE;
    req.allocate = &a;
    assert_int_equal(wire_send(s, &req, NULL, 0), 0);
    expect_reply(s, 31, NND__ERROR_STATUS__INVALID_ARGUMENT, "no prepared model");
    close(s);
    assert_still_serving();
}

static void test_bad_model(void **state) {
    (void)state;
    int s = connect_ok();
    wire_add_model m;
    wire_add_model_init(&m, -1);
    m.op_inputs[1] = 99; /* no such operand */
    Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
    pm.model = &m.model;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 41;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &pm;
    assert_int_equal(wire_send(s, &req, NULL, 0), 0);
    expect_reply(s, 41, NND__ERROR_STATUS__INVALID_ARGUMENT, NULL);
    /* A constant pool naming an fd that was never sent. */
    wire_add_model_init(&m, 0);
    assert_int_equal(wire_send(s, &req, NULL, 0), 0);
    expect_reply(s, 41, NND__ERROR_STATUS__INVALID_ARGUMENT, "fd");
    close(s);
    assert_still_serving();
}

/* A client that sends and never reads is cut off once its outbox is full. */
static void test_client_that_never_reads(void **state) {
    (void)state;
    int s = connect_ok();
    Nnd__GetCapabilities g = NND__GET_CAPABILITIES__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_CAPABILITIES;
    req.get_capabilities = &g;
    uint8_t bytes[64];
    size_t len = nnd__request__pack(&req, bytes);
    time_t end = time(NULL) + 20;
    bool dropped = false;
    for (long i = 0; !dropped && time(NULL) < end; i++) {
        ssize_t n = send(s, bytes, len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
            dropped = true;
        else if (n < 0 && errno == EAGAIN)
            usleep(1000);
        else
            assert_int_equal(n, (ssize_t)len);
    }
    assert_true(dropped);
    close(s);
    assert_still_serving();
}

/* Runs the daemon binary directly; returns its pid. */
static pid_t spawn_daemon(const char *sock, const char *state_dir) {
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDERR_FILENO);
        execl(TST_DAEMON_PATH, TST_DAEMON_PATH, "--socket", sock, "--state-dir", state_dir,
              (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int wait_status(pid_t pid, int timeout_s) {
    time_t end = time(NULL) + timeout_s;
    for (;;) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (time(NULL) > end) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return -1;
        }
        usleep(5000);
    }
}

static void test_second_daemon_refuses(void **state) {
    (void)state;
    char state_dir[400];
    snprintf(state_dir, sizeof state_dir, "%s/second-state", daemon_under_test->dir);
    pid_t pid = spawn_daemon(daemon_under_test->socket_path, state_dir);
    int st = wait_status(pid, 10);
    assert_true(st > 0);
    /* The first one kept its socket. */
    assert_still_serving();
}

static void test_stale_socket_replaced(void **state) {
    (void)state;
    char sock[300], state_dir[400];
    snprintf(sock, sizeof sock, "%s/stale.sock", daemon_under_test->dir);
    snprintf(state_dir, sizeof state_dir, "%s/stale-state", daemon_under_test->dir);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, sock);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    close(fd); /* leaves the socket file behind, as a crash would */
    pid_t pid = spawn_daemon(sock, state_dir);
    tst_daemon other = {.pid = pid};
    snprintf(other.socket_path, sizeof other.socket_path, "%s", sock);
    int ok = -1;
    for (int i = 0; i < 1000 && ok != 0; i++) {
        ok = wire_hello_fresh(&other);
        if (ok != 0) usleep(10000);
    }
    assert_int_equal(ok, 0);
    kill(pid, SIGTERM);
    assert_int_equal(wait_status(pid, 10), 0);
    assert_int_equal(access(sock, F_OK), -1);
}

static void test_not_a_socket_is_left_alone(void **state) {
    (void)state;
    char path[400], state_dir[400];
    snprintf(path, sizeof path, "%s/file.sock", daemon_under_test->dir);
    snprintf(state_dir, sizeof state_dir, "%s/file-state", daemon_under_test->dir);
    int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    close(fd);
    pid_t pid = spawn_daemon(path, state_dir);
    assert_true(wait_status(pid, 10) > 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
}

/* Last: SIGTERM stops the daemon with status 0 and its socket file goes away. */
static void test_clean_shutdown(void **state) {
    (void)state;
    int s = connect_ok(); /* a client still connected, with a prepared model */
    wire_add_model m;
    wire_add_model_init(&m, -1);
    assert_true(wire_prepare(s, &m.model, NULL, 0) != 0);
    assert_int_equal(kill(daemon_under_test->pid, SIGTERM), 0);
    assert_int_equal(wait_status(daemon_under_test->pid, 10), 0);
    daemon_under_test->pid = 0;
    assert_int_equal(access(daemon_under_test->socket_path, F_OK), -1);
    /* The client sees the connection end. */
    char b;
    assert_int_equal(recv(s, &b, 1, 0), 0);
    close(s);
    tst_daemon_stop(daemon_under_test); /* removes the directory */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_garbage_bytes),
        cmocka_unit_test(test_truncated_protobuf),
        cmocka_unit_test(test_empty_datagram),
        cmocka_unit_test(test_request_without_call),
        cmocka_unit_test(test_too_many_fds),
        cmocka_unit_test(test_fds_with_every_call_are_closed),
        cmocka_unit_test(test_execute_unknown_handle),
        cmocka_unit_test(test_handle_of_another_connection),
        cmocka_unit_test(test_pool_past_end_of_memfd),
        cmocka_unit_test(test_constant_pool_truncated_after_prepare),
        cmocka_unit_test(test_empty_allocate),
        cmocka_unit_test(test_bad_model),
        cmocka_unit_test(test_client_that_never_reads),
        cmocka_unit_test(test_second_daemon_refuses),
        cmocka_unit_test(test_stale_socket_replaced),
        cmocka_unit_test(test_not_a_socket_is_left_alone),
        cmocka_unit_test(test_clean_shutdown),
    };
    return cmocka_run_group_tests(tests, tst_group_setup, tst_group_teardown);
}
