/* SPDX-License-Identifier: Apache-2.0 */
/* wire.c: raw-protocol test helpers. See wire.h. */
#include "tests/support/wire.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proto/frame.h"

int wire_send(int sock, const Nnd__Request *req, const int *fds, size_t nfds) {
    static const int no_fds[1] = {-1}; /* frame.c memcpy()s from fds even when nfds is 0 */
    char err[256];
    int rc = proto_frame_send(sock, &req->base, nfds ? fds : no_fds, nfds, err, sizeof err);
    if (rc < 0) fprintf(stderr, "wire_send: %s\n", err);
    return rc;
}

Nnd__Reply *wire_recv(int sock, int timeout_ms) {
    struct pollfd pfd = {.fd = sock, .events = POLLIN};
    int n;
    do
        n = poll(&pfd, 1, timeout_ms);
    while (n < 0 && errno == EINTR);
    if (n <= 0) {
        fprintf(stderr, "wire_recv: no reply within %d ms\n", timeout_ms);
        return NULL;
    }
    static _Thread_local uint8_t buf[PROTO_FRAME_RECV_BUF]; /* threads may each have a socket */
    char err[256] = "";
    proto_frame_in in;
    int rc = proto_frame_recv(sock, &nnd__reply__descriptor, buf, &in, err, sizeof err);
    if (rc <= 0) {
        fprintf(stderr, "wire_recv: %s\n",
                rc == 0         ? "connection closed"
                : rc == -EPROTO ? err
                                : strerror(-rc));
        return NULL;
    }
    Nnd__Reply *r = (Nnd__Reply *)in.msg;
    in.msg = NULL;
    proto_frame_in_clear(&in);
    return r;
}

Nnd__Reply *wire_call(int sock, const Nnd__Request *req, const int *fds, size_t nfds) {
    if (wire_send(sock, req, fds, nfds) < 0) return NULL;
    return wire_recv(sock, WIRE_TIMEOUT_MS);
}

void wire_free(Nnd__Reply *r) {
    if (r) nnd__reply__free_unpacked(r, NULL);
}

int wire_hello(int sock, uint64_t id) {
    Nnd__Hello h = NND__HELLO__INIT;
    h.protocol_version = PROTO_PROTOCOL_VERSION;
    h.client_name = "wire-test";
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = id;
    req.call_case = NND__REQUEST__CALL_HELLO;
    req.hello = &h;
    Nnd__Reply *r = wire_call(sock, &req, NULL, 0);
    int ok = r && r->id == id && r->status == NND__ERROR_STATUS__NONE &&
             r->result_case == NND__REPLY__RESULT_HELLO &&
             r->hello->protocol_version == PROTO_PROTOCOL_VERSION;
    if (r && !ok)
        fprintf(stderr, "wire_hello: status %d message \"%s\"\n", (int)r->status, r->message);
    wire_free(r);
    return ok ? 0 : -1;
}

int wire_hello_fresh(const tst_daemon *d) {
    int sock = tst_connect_raw(d);
    if (sock < 0) return -1;
    int rc = wire_hello(sock, 99);
    close(sock);
    return rc;
}

int wire_memfd(const void *data, size_t len, size_t size) {
    int fd = memfd_create("wire-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)size) < 0 || (len && pwrite(fd, data, len, 0) != (ssize_t)len)) {
        close(fd);
        return -1;
    }
    return fd;
}

int wire_count_fds(pid_t pid) {
    char path[64];
    snprintf(path, sizeof path, pid ? "/proc/%d/fd" : "/proc/self/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    closedir(d);
    return pid ? n : n - 1; /* our own count includes the DIR's fd */
}

void wire_add_model_init(wire_add_model *m, int const_b_pool) {
    wire_add_model_init_n(m, 2, const_b_pool);
}

void wire_add_model_init_n(wire_add_model *m, uint32_t n, int const_b_pool) {
    memset(m, 0, sizeof *m);
    nnd__model__init(&m->model);
    nnd__subgraph__init(&m->main);
    nnd__operation__init(&m->op);
    m->dims[0] = n;
    for (int i = 0; i < 4; i++) {
        nnd__operand__init(&m->operands[i]);
        nnd__data_location__init(&m->locs[i]);
        m->operand_ptrs[i] = &m->operands[i];
        m->operands[i].type = 3; /* TENSOR_FLOAT32 */
        m->operands[i].n_dimensions = 1;
        m->operands[i].dimensions = m->dims;
    }
    m->operands[0].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    m->operands[1].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    m->operands[2].type = 1; /* INT32: fused activation */
    m->operands[2].n_dimensions = 0;
    m->operands[2].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_COPY;
    m->operands[2].location = &m->locs[2];
    m->locs[2].length = 4;
    m->operands[3].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    m->op.type = 0; /* ADD */
    m->op_inputs[0] = 0, m->op_inputs[1] = 1, m->op_inputs[2] = 2;
    m->op_outputs[0] = 3;
    m->op.n_inputs = 3;
    m->op.inputs = m->op_inputs;
    m->op.n_outputs = 1;
    m->op.outputs = m->op_outputs;
    m->op_ptr = &m->op;
    m->inputs[0] = 0, m->inputs[1] = 1;
    m->outputs[0] = 3;
    m->main.n_operands = 4;
    m->main.operands = m->operand_ptrs;
    m->main.n_operations = 1;
    m->main.operations = &m->op_ptr;
    m->main.n_input_indexes = 2;
    m->main.input_indexes = m->inputs;
    m->main.n_output_indexes = 1;
    m->main.output_indexes = m->outputs;
    m->model.main = &m->main;
    m->model.operand_values.data = m->values;
    m->model.operand_values.len = sizeof m->values;
    if (const_b_pool >= 0) {
        m->operands[1].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE;
        m->operands[1].location = &m->locs[1];
        m->locs[1].pool_index = 0;
        m->locs[1].length = (uint64_t)n * 4;
        m->main.n_input_indexes = 1;
        nnd__memory_pool__init(&m->pool);
        m->pool.kind = NND__POOL_KIND__POOL_MEMFD;
        m->pool.fd_index = (uint32_t)const_b_pool;
        m->pool.size = (uint64_t)n * 4;
        m->pool_ptr = &m->pool;
        m->model.n_pools = 1;
        m->model.pools = &m->pool_ptr;
    }
}

uint64_t wire_prepare(int sock, const Nnd__Model *m, const int *fds, size_t nfds) {
    Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
    pm.model = (Nnd__Model *)m;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 1000;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &pm;
    Nnd__Reply *r = wire_call(sock, &req, fds, nfds);
    uint64_t h = 0;
    if (r && r->status == NND__ERROR_STATUS__NONE && r->result_case == NND__REPLY__RESULT_PREPARED)
        h = r->prepared->handle;
    else if (r)
        fprintf(stderr, "wire_prepare: status %d: %s\n", (int)r->status, r->message);
    wire_free(r);
    return h;
}

Nnd__Reply *wire_release(int sock, uint64_t id, uint64_t handle) {
    Nnd__Release rel = NND__RELEASE__INIT;
    rel.handle = handle;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = id;
    req.call_case = NND__REQUEST__CALL_RELEASE;
    req.release = &rel;
    return wire_call(sock, &req, NULL, 0);
}

void wire_exec_init(wire_exec *e, uint64_t handle, int n_inputs, uint64_t pool_size) {
    memset(e, 0, sizeof *e);
    nnd__execute__init(&e->exec);
    nnd__execution_request__init(&e->req);
    for (int i = 0; i < 3; i++) {
        nnd__request_argument__init(&e->args[i]);
        nnd__data_location__init(&e->locs[i]);
        e->args[i].location = &e->locs[i];
        e->locs[i].length = 8;
    }
    e->locs[0].offset = 0;
    e->locs[1].offset = 8;
    e->locs[2].offset = 16;
    e->in_ptrs[0] = &e->args[0];
    e->in_ptrs[1] = &e->args[1];
    e->out_ptrs[0] = &e->args[2];
    e->req.n_inputs = (size_t)n_inputs;
    e->req.inputs = e->in_ptrs;
    e->req.n_outputs = 1;
    e->req.outputs = e->out_ptrs;
    nnd__memory_pool__init(&e->pool);
    e->pool.kind = NND__POOL_KIND__POOL_MEMFD;
    e->pool.size = pool_size;
    e->pool_ptr = &e->pool;
    e->req.n_pools = 1;
    e->req.pools = &e->pool_ptr;
    e->exec.prepared_model = handle;
    e->exec.request = &e->req;
}
