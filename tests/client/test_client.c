/* SPDX-License-Identifier: Apache-2.0 */
/* test_client: libnnd against a real daemon started by the harness: prepare and execute,
 * large (spilled) models, two clients at once, a client that leaves with a request in
 * flight, and calls after the daemon is gone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/frame.h"
#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"

#define CODE_TENSOR_FLOAT32 3
#define CODE_INT32          1
#define CODE_ADD            0

/* ADD(a, b, NONE) on two [n] float inputs; with constant_b, b is a CONSTANT_COPY operand
 * whose values ride inline (large enough ones make the message spill). */
typedef struct add_model {
    Nnd__Model model;
    Nnd__Subgraph sg;
    Nnd__Operand operands[4];
    Nnd__Operand *operand_ptrs[4];
    Nnd__DataLocation act_loc, b_loc;
    Nnd__Operation op;
    Nnd__Operation *op_ptrs[1];
    uint32_t dims[1], op_in[3], op_out[1], ins[2], outs[1];
    uint8_t *values;
} add_model;

static void add_model_init(add_model *m, uint32_t n, const float *constant_b) {
    memset(m, 0, sizeof *m);
    nnd__model__init(&m->model);
    nnd__subgraph__init(&m->sg);
    m->dims[0] = n;
    size_t vlen = 4 + (constant_b ? n * sizeof(float) : 0);
    m->values = calloc(1, vlen); /* activation NONE (0), then b's values */
    if (constant_b) memcpy(m->values + 4, constant_b, n * sizeof(float));
    for (int i = 0; i < 4; i++) {
        Nnd__Operand *o = &m->operands[i];
        nnd__operand__init(o);
        o->type = CODE_TENSOR_FLOAT32;
        o->n_dimensions = 1;
        o->dimensions = m->dims;
        m->operand_ptrs[i] = o;
    }
    m->operands[0].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    m->operands[1].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    if (constant_b) {
        m->operands[1].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_COPY;
        nnd__data_location__init(&m->b_loc);
        m->b_loc.offset = 4;
        m->b_loc.length = n * sizeof(float);
        m->operands[1].location = &m->b_loc;
    }
    m->operands[2].type = CODE_INT32;
    m->operands[2].n_dimensions = 0;
    m->operands[2].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_COPY;
    nnd__data_location__init(&m->act_loc);
    m->act_loc.length = 4;
    m->operands[2].location = &m->act_loc;
    m->operands[3].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    nnd__operation__init(&m->op);
    m->op.type = CODE_ADD;
    m->op_in[0] = 0, m->op_in[1] = 1, m->op_in[2] = 2, m->op_out[0] = 3;
    m->op.n_inputs = 3;
    m->op.inputs = m->op_in;
    m->op.n_outputs = 1;
    m->op.outputs = m->op_out;
    m->op_ptrs[0] = &m->op;
    m->ins[0] = 0, m->ins[1] = 1, m->outs[0] = 3;
    m->sg.n_operands = 4;
    m->sg.operands = m->operand_ptrs;
    m->sg.n_operations = 1;
    m->sg.operations = m->op_ptrs;
    m->sg.n_input_indexes = constant_b ? 1 : 2;
    m->sg.input_indexes = m->ins;
    m->sg.n_output_indexes = 1;
    m->sg.output_indexes = m->outs;
    m->model.main = &m->sg;
    m->model.operand_values.data = m->values;
    m->model.operand_values.len = vlen;
}

static void add_model_clear(add_model *m) {
    free(m->values);
}

static size_t align64(size_t n) {
    return (n + 63) & ~(size_t)63;
}

/* Executes an ADD model on a, b (b NULL when constant) into out; returns the status and,
 * with shapes, checks the single reported output shape is [n]. */
static int run_add(nnd_client *c, uint64_t handle, uint32_t n, const float *a, const float *b,
                   float *out) {
    size_t sz = align64(n * sizeof(float)), total = 3 * sz;
    void *map;
    int fd = nnd_memfd_create("test-add", total, &map);
    assert_true(fd >= 0);
    uint8_t *base = map;
    memcpy(base, a, n * sizeof(float));
    if (b) memcpy(base + sz, b, n * sizeof(float));
    Nnd__DataLocation loc[3];
    Nnd__RequestArgument args[3], *in_p[2] = {&args[0], &args[1]}, *out_p[1] = {&args[2]};
    for (int i = 0; i < 3; i++) {
        nnd__data_location__init(&loc[i]);
        loc[i].offset = (uint64_t)i * sz;
        loc[i].length = n * sizeof(float);
        nnd__request_argument__init(&args[i]);
        args[i].location = &loc[i];
    }
    if (!b) out_p[0] = &args[2], in_p[1] = NULL;
    Nnd__MemoryPool pool = NND__MEMORY_POOL__INIT, *pools[1] = {&pool};
    pool.kind = NND__POOL_KIND__POOL_MEMFD;
    pool.size = total;
    Nnd__ExecutionRequest req = NND__EXECUTION_REQUEST__INIT;
    req.n_inputs = b ? 2 : 1;
    req.inputs = in_p;
    req.n_outputs = 1;
    req.outputs = out_p;
    req.n_pools = 1;
    req.pools = pools;
    Nnd__Reply *reply = NULL;
    char err[256];
    int st = nnd_client_execute(c, handle, &req, &fd, 1, true, 0, &reply, err, sizeof err);
    if (st == 0) {
        assert_non_null(reply->executed);
        assert_int_equal(reply->executed->n_output_shapes, 1);
        assert_int_equal(reply->executed->output_shapes[0]->n_dimensions, 1);
        assert_int_equal(reply->executed->output_shapes[0]->dimensions[0], n);
        memcpy(out, base + 2 * sz, n * sizeof(float));
    } else if (st < 0) {
        print_message("execute: %s\n", err);
    }
    if (reply) nnd__reply__free_unpacked(reply, NULL);
    munmap(map, total);
    close(fd);
    return st;
}

static void test_connect_refused(void **state) {
    (void)state;
    char err[256] = "";
    nnd_client *c = nnd_client_connect("/nonexistent/nnd.sock", "t", err, sizeof err);
    assert_null(c);
    assert_non_null(strstr(err, "/nonexistent/nnd.sock"));
}

static void test_prepare_execute_add(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[512], version[128];
    nnd_client *c = nnd_client_connect(d.socket_path, "test_client", err, sizeof err);
    assert_non_null(c);
    assert_int_equal(nnd_client_version_string(c, version, sizeof version, err, sizeof err), 0);
    assert_true(version[0] != 0);
    int type = -1;
    assert_int_equal(nnd_client_get_type(c, &type, err, sizeof err), 0);
    Nnd__Capabilities *caps = NULL;
    assert_int_equal(nnd_client_get_capabilities(c, &caps, err, sizeof err), 0);
    assert_non_null(caps);
    nnd__capabilities__free_unpacked(caps, NULL);

    add_model m;
    add_model_init(&m, 4, NULL);
    bool supported[1] = {false};
    assert_int_equal(
        nnd_client_supported_operations(c, &m.model, NULL, 0, supported, 1, err, sizeof err), 0);
    assert_true(supported[0]);
    uint64_t h = 0;
    int st = nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err);
    if (st) print_message("prepare: %s\n", err);
    assert_int_equal(st, 0);
    assert_true(h != 0);
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40.5f}, out[4] = {0};
    assert_int_equal(run_add(c, h, 4, a, b, out), 0);
    for (int i = 0; i < 4; i++)
        assert_true(out[i] == a[i] + b[i]);

    /* A broken model is INVALID_ARGUMENT with a message; the connection stays usable. */
    m.op_in[1] = 9;
    uint64_t h2 = 0;
    st = nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h2, err, sizeof err);
    assert_int_equal(st, NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_true(strlen(err) > 0);
    m.op_in[1] = 1;

    /* After release the handle is no longer valid. */
    assert_int_equal(nnd_client_release(c, h), 0);
    assert_true(run_add(c, h, 4, a, b, out) > 0);
    add_model_clear(&m);
    nnd_client_close(c);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* A model of more than PROTO_FRAME_INLINE_MAX bytes travels as a spilled memfd. */
static void test_large_model(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[512];
    nnd_client *c = nnd_client_connect(d.socket_path, "test_client", err, sizeof err);
    assert_non_null(c);
    enum { N = 32 * 1024 }; /* 128 KiB of constants */
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *out = malloc(N * sizeof *b);
    for (int i = 0; i < N; i++)
        a[i] = (float)i, b[i] = 0.5f * (float)i;
    add_model m;
    add_model_init(&m, N, b);
    uint64_t h;
    int st = nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err);
    if (st) print_message("prepare: %s\n", err);
    assert_int_equal(st, 0);
    assert_int_equal(run_add(c, h, N, a, NULL, out), 0);
    for (int i = 0; i < N; i++)
        assert_true(out[i] == 1.5f * (float)i);
    add_model_clear(&m);
    free(a);
    free(b);
    free(out);
    nnd_client_close(c);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

typedef struct worker_arg {
    const char *socket_path;
    float base;
    int ok; /* executions that came back right */
} worker_arg;

static void *two_clients_worker(void *p) {
    worker_arg *w = p;
    char err[256];
    nnd_client *c = nnd_client_connect(w->socket_path, "worker", err, sizeof err);
    if (!c) return NULL;
    add_model m;
    add_model_init(&m, 8, NULL);
    uint64_t h;
    if (nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err) == 0) {
        for (int k = 0; k < 200; k++) {
            float a[8], b[8], out[8];
            for (int i = 0; i < 8; i++)
                a[i] = w->base + (float)k, b[i] = (float)i;
            if (run_add(c, h, 8, a, b, out) != 0) break;
            bool right = true;
            for (int i = 0; i < 8; i++)
                right &= out[i] == a[i] + b[i];
            if (!right) break;
            w->ok++;
        }
    }
    add_model_clear(&m);
    nnd_client_close(c);
    return NULL;
}

static void test_two_clients(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    worker_arg w[2] = {{d.socket_path, 1000.0f, 0}, {d.socket_path, -5000.0f, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, two_clients_worker, &w[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    assert_int_equal(w[0].ok, 200);
    assert_int_equal(w[1].ok, 200);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* One raw call on a bare socket: send, then receive the reply. */
static Nnd__Reply *raw_call(int sock, Nnd__Request *req, const int *fds, size_t nfds) {
    char err[256];
    static const int no_fds[1] = {-1};
    assert_int_equal(proto_frame_send(sock, &req->base, fds ? fds : no_fds, nfds, err, sizeof err),
                     0);
    static uint8_t buf[PROTO_FRAME_RECV_BUF];
    proto_frame_in in;
    for (;;) {
        int rc = proto_frame_recv(sock, &nnd__reply__descriptor, buf, &in, err, sizeof err);
        if (rc == -EAGAIN) {
            usleep(1000);
            continue;
        }
        assert_int_equal(rc, 1);
        break;
    }
    Nnd__Reply *r = (Nnd__Reply *)in.msg;
    in.msg = NULL;
    proto_frame_in_clear(&in);
    return r;
}

/* Runs nndctl with args; returns its exit status. */
static int nndctl(const char *const *args) {
    pid_t pid = fork();
    if (pid == 0) {
        const char *argv[16] = {NNDCTL_PATH};
        for (int i = 0; args[i] && i < 14; i++)
            argv[i + 1] = args[i];
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execv(NNDCTL_PATH, (char **)argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void test_disconnect_in_flight(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    int sock = tst_connect_raw(&d);
    assert_true(sock >= 0);
    Nnd__Hello hello = NND__HELLO__INIT;
    hello.protocol_version = PROTO_PROTOCOL_VERSION;
    hello.client_name = "leaver";
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 1;
    req.call_case = NND__REQUEST__CALL_HELLO;
    req.hello = &hello;
    Nnd__Reply *r = raw_call(sock, &req, NULL, 0);
    assert_int_equal(r->status, 0);
    nnd__reply__free_unpacked(r, NULL);

    enum { N = 256 * 1024 };
    add_model m;
    add_model_init(&m, N, NULL);
    Nnd__PrepareModel prep = NND__PREPARE_MODEL__INIT;
    prep.model = &m.model;
    req.id = 2;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &prep;
    r = raw_call(sock, &req, NULL, 0);
    assert_int_equal(r->status, 0);
    uint64_t h = r->prepared->handle;
    nnd__reply__free_unpacked(r, NULL);

    /* Several executions sent back to back, then the connection closes unread. */
    size_t sz = align64(N * sizeof(float)), total = 3 * sz;
    int fd = nnd_memfd_create("leaver", total, NULL);
    assert_true(fd >= 0);
    Nnd__DataLocation loc[3];
    Nnd__RequestArgument args[3], *in_p[2] = {&args[0], &args[1]}, *out_p[1] = {&args[2]};
    for (int i = 0; i < 3; i++) {
        nnd__data_location__init(&loc[i]);
        loc[i].offset = (uint64_t)i * sz;
        loc[i].length = N * sizeof(float);
        nnd__request_argument__init(&args[i]);
        args[i].location = &loc[i];
    }
    Nnd__MemoryPool pool = NND__MEMORY_POOL__INIT, *pools[1] = {&pool};
    pool.size = total;
    Nnd__ExecutionRequest er = NND__EXECUTION_REQUEST__INIT;
    er.n_inputs = 2, er.inputs = in_p, er.n_outputs = 1, er.outputs = out_p;
    er.n_pools = 1, er.pools = pools;
    Nnd__Execute ex = NND__EXECUTE__INIT;
    ex.prepared_model = h;
    ex.request = &er;
    req.call_case = NND__REQUEST__CALL_EXECUTE;
    req.execute = &ex;
    char err[256];
    for (int i = 0; i < 4; i++) {
        req.id = 10 + (uint64_t)i;
        assert_int_equal(proto_frame_send(sock, &req.base, &fd, 1, err, sizeof err), 0);
    }
    close(sock);
    close(fd);
    add_model_clear(&m);

    /* The daemon goes on serving: a new client executes, and status answers. */
    nnd_client *c = nnd_client_connect(d.socket_path, "after", err, sizeof err);
    assert_non_null(c);
    add_model small;
    add_model_init(&small, 2, NULL);
    uint64_t h2;
    assert_int_equal(nnd_client_prepare(c, &small.model, NULL, 0, 0, 0, 0, &h2, err, sizeof err),
                     0);
    float a[2] = {1, 2}, b[2] = {3, 4}, out[2];
    assert_int_equal(run_add(c, h2, 2, a, b, out), 0);
    assert_true(out[0] == 4 && out[1] == 6);
    add_model_clear(&small);
    nnd_client_close(c);
    const char *status_args[] = {"--state-dir", d.state_dir, "status", NULL};
    assert_int_equal(nndctl(status_args), 0);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

static void test_daemon_gone(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[256], version[64];
    nnd_client *c = nnd_client_connect(d.socket_path, "orphan", err, sizeof err);
    assert_non_null(c);
    assert_int_equal(nnd_client_version_string(c, version, sizeof version, err, sizeof err), 0);
    /* A client still connected does not keep the daemon from a clean shutdown. */
    assert_int_equal(tst_daemon_stop(&d), 0);
    err[0] = 0;
    int rc = nnd_client_version_string(c, version, sizeof version, err, sizeof err);
    assert_true(rc < 0);
    assert_true(err[0] != 0);
    /* The client is dead now: later calls fail fast with -ENOTCONN. */
    int type;
    assert_int_equal(nnd_client_get_type(c, &type, err, sizeof err), -ENOTCONN);
    nnd_client_close(c);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_connect_refused),      cmocka_unit_test(test_prepare_execute_add),
        cmocka_unit_test(test_large_model),          cmocka_unit_test(test_two_clients),
        cmocka_unit_test(test_disconnect_in_flight), cmocka_unit_test(test_daemon_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
