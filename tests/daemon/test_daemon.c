/* SPDX-License-Identifier: Apache-2.0 */
/* test_daemon: the calls built so far against a real daemon, end to end over the raw
 * protocol, plus the admin and event sockets of the bus. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>
#include <nanomsg/nn.h>
#include <nanomsg/pubsub.h>
#include <nanomsg/reqrep.h>

#include "proto/frame.h"
#include "tests/support/harness.h"
#include "proto/paths.h"
#include "tests/support/wire.h"

static tst_daemon *const dmn = &tst_group_daemon;

static Nnd__Reply *call(int s, Nnd__Request *req) {
    Nnd__Reply *r = wire_call(s, req, NULL, 0);
    assert_non_null(r);
    assert_int_equal(r->id, req->id);
    return r;
}

static void test_device_queries(void **state) {
    (void)state;
    int s = tst_connect_raw(dmn);
    assert_true(s >= 0);
    assert_int_equal(wire_hello(s, 1), 0);

    Nnd__Request req = NND__REQUEST__INIT;
    Nnd__GetVersionString gv = NND__GET_VERSION_STRING__INIT;
    req.id = 2;
    req.call_case = NND__REQUEST__CALL_GET_VERSION_STRING;
    req.get_version_string = &gv;
    Nnd__Reply *r = call(s, &req);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_VERSION_STRING);
    assert_true(strncmp(r->version_string->version, "nnd ", 4) == 0);
    wire_free(r);

    Nnd__GetType gt = NND__GET_TYPE__INIT;
    req.id = 3;
    req.call_case = NND__REQUEST__CALL_GET_TYPE;
    req.get_type = &gt;
    r = call(s, &req);
    assert_int_equal(r->type->type, NND__DEVICE_TYPE__DEVICE_CPU);
    wire_free(r);

    Nnd__GetCapabilities gc = NND__GET_CAPABILITIES__INIT;
    req.id = 4;
    req.call_case = NND__REQUEST__CALL_GET_CAPABILITIES;
    req.get_capabilities = &gc;
    r = call(s, &req);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_CAPABILITIES);
    assert_true(r->capabilities->n_operand_performance >= 14);
    for (size_t i = 0; i < r->capabilities->n_operand_performance; i++) {
        assert_int_equal(r->capabilities->operand_performance[i]->type, (int)i);
        assert_true(r->capabilities->operand_performance[i]->info->exec_time > 0);
    }
    assert_non_null(r->capabilities->relaxed_float32_to_float16_tensor);
    wire_free(r);

    Nnd__GetNumberOfCacheFilesNeeded gn = NND__GET_NUMBER_OF_CACHE_FILES_NEEDED__INIT;
    req.id = 5;
    req.call_case = NND__REQUEST__CALL_GET_NUMBER_OF_CACHE_FILES_NEEDED;
    req.get_number_of_cache_files_needed = &gn;
    r = call(s, &req);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_CACHE_FILES);
    wire_free(r);
    close(s);
}

static void test_supported_operations(void **state) {
    (void)state;
    int s = tst_connect_raw(dmn);
    wire_add_model m;
    wire_add_model_init(&m, -1);
    Nnd__GetSupportedOperations g = NND__GET_SUPPORTED_OPERATIONS__INIT;
    g.model = &m.model;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 6;
    req.call_case = NND__REQUEST__CALL_GET_SUPPORTED_OPERATIONS;
    req.get_supported_operations = &g;
    Nnd__Reply *r = call(s, &req);
    assert_int_equal(r->status, NND__ERROR_STATUS__NONE);
    assert_int_equal(r->supported_operations->n_supported, 1);
    assert_true(r->supported_operations->supported[0]);
    wire_free(r);
    /* An operation type nobody knows is valid to ask about, and unsupported. */
    m.op.type = 9999;
    r = call(s, &req);
    if (r->status == NND__ERROR_STATUS__NONE) {
        assert_int_equal(r->supported_operations->n_supported, 1);
        assert_false(r->supported_operations->supported[0]);
    } else {
        assert_int_equal(r->status, NND__ERROR_STATUS__INVALID_ARGUMENT);
    }
    wire_free(r);
    close(s);
}

static void run_add(int s, wire_exec *e, int pool, bool timing) {
    e->exec.measure_timing = timing;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 77;
    req.call_case = NND__REQUEST__CALL_EXECUTE;
    req.execute = &e->exec;
    Nnd__Reply *r = wire_call(s, &req, &pool, 1);
    assert_non_null(r);
    if (r->status != NND__ERROR_STATUS__NONE) fail_msg("execute: %d %s", r->status, r->message);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_EXECUTED);
    assert_int_equal(r->executed->n_output_shapes, 1);
    assert_int_equal(r->executed->output_shapes[0]->n_dimensions, 1);
    assert_int_equal(r->executed->output_shapes[0]->dimensions[0], 2);
    assert_true(r->executed->output_shapes[0]->is_sufficient);
    const Nnd__Timing *t = r->executed->timing;
    assert_non_null(t);
    if (timing) {
        assert_true(t->time_on_device_ns != UINT64_MAX);
        assert_true(t->time_in_driver_ns >= t->time_on_device_ns);
    } else {
        assert_true(t->time_on_device_ns == UINT64_MAX && t->time_in_driver_ns == UINT64_MAX);
    }
    wire_free(r);
}

static void test_prepare_execute_release(void **state) {
    (void)state;
    int s = tst_connect_raw(dmn);
    wire_add_model m;
    wire_add_model_init(&m, -1);
    uint64_t h = wire_prepare(s, &m.model, NULL, 0);
    assert_true(h != 0);
    uint64_t h2 = wire_prepare(s, &m.model, NULL, 0);
    assert_true(h2 != 0 && h2 != h);

    float io[6] = {1.5f, -2.0f, 0.25f, 4.0f, 0, 0};
    int pool = wire_memfd(io, sizeof io, 4096);
    wire_exec e;
    wire_exec_init(&e, h, 2, 4096);
    for (int i = 0; i < 3; i++) { /* the execution state is reused */
        run_add(s, &e, pool, i == 1);
        float out[2];
        assert_int_equal(pread(pool, out, sizeof out, 16), (ssize_t)sizeof out);
        assert_true(out[0] == 1.75f && out[1] == 2.0f);
    }

    /* An output too small: OUTPUT_INSUFFICIENT_SIZE with the shape it needs. */
    e.locs[2].length = 4;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 78;
    req.call_case = NND__REQUEST__CALL_EXECUTE;
    req.execute = &e.exec;
    Nnd__Reply *r = wire_call(s, &req, &pool, 1);
    assert_non_null(r);
    assert_int_equal(r->status, NND__ERROR_STATUS__OUTPUT_INSUFFICIENT_SIZE);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_EXECUTED);
    assert_int_equal(r->executed->n_output_shapes, 1);
    assert_false(r->executed->output_shapes[0]->is_sufficient);
    assert_int_equal(r->executed->output_shapes[0]->dimensions[0], 2);
    wire_free(r);
    e.locs[2].length = 8;

    /* A deadline in the past. */
    e.exec.deadline_ns = 1;
    r = wire_call(s, &req, &pool, 1);
    assert_non_null(r);
    assert_int_equal(r->status, NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT);
    wire_free(r);
    e.exec.deadline_ns = 0;

    Nnd__Release rel = NND__RELEASE__INIT;
    rel.handle = h;
    req.id = 79;
    req.call_case = NND__REQUEST__CALL_RELEASE;
    req.release = &rel;
    r = call(s, &req);
    assert_int_equal(r->status, NND__ERROR_STATUS__NONE);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_DONE);
    wire_free(r);
    r = call(s, &req);
    assert_int_equal(r->status, NND__ERROR_STATUS__INVALID_ARGUMENT);
    wire_free(r);

    req.id = 80;
    req.call_case = NND__REQUEST__CALL_EXECUTE;
    req.execute = &e.exec;
    r = wire_call(s, &req, &pool, 1);
    assert_non_null(r);
    assert_int_equal(r->status, NND__ERROR_STATUS__INVALID_ARGUMENT);
    wire_free(r);
    close(pool);
    close(s); /* h2 is released with the connection */
}

static void test_big_model_spills(void **state) {
    (void)state;
    int s = tst_connect_raw(dmn);
    wire_add_model m;
    wire_add_model_init(&m, -1);
    /* 1 MiB of padding in operand_values forces the request through a memfd. */
    size_t len = 1u << 20;
    uint8_t *values = calloc(1, len);
    m.model.operand_values.data = values;
    m.model.operand_values.len = len;
    uint64_t h = wire_prepare(s, &m.model, NULL, 0);
    free(values);
    assert_true(h != 0);
    close(s);
}

/* A chain of 60000 ADDs: the request and the reply (60000 bools) both spill. */
static void test_big_reply_spills(void **state) {
    (void)state;
    enum { N = 60000 };
    int s = tst_connect_raw(dmn);
    wire_add_model base;
    wire_add_model_init(&base, -1);
    /* operands: 0 = in0, 1 = in1, 2 = activation, 3.. = t1..tN (tN is the output) */
    Nnd__Operand *operands = calloc(N + 3, sizeof *operands);
    Nnd__Operand **operand_ptrs = calloc(N + 3, sizeof *operand_ptrs);
    Nnd__Operation *ops = calloc(N, sizeof *ops);
    Nnd__Operation **op_ptrs = calloc(N, sizeof *op_ptrs);
    uint32_t *ins = calloc(3 * (size_t)N, sizeof *ins);
    uint32_t *outs = calloc(N, sizeof *outs);
    assert_true(operands && operand_ptrs && ops && op_ptrs && ins && outs);
    for (uint32_t i = 0; i < N + 3; i++) {
        operands[i] = i < 3 ? base.operands[i] : base.operands[0];
        if (i >= 3) operands[i].lifetime = NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE;
        operand_ptrs[i] = &operands[i];
    }
    operands[N + 2].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    for (uint32_t k = 0; k < N; k++) {
        nnd__operation__init(&ops[k]);
        ins[3 * k] = k == 0 ? 0 : k + 2;
        ins[3 * k + 1] = 1;
        ins[3 * k + 2] = 2;
        outs[k] = k + 3;
        ops[k].n_inputs = 3;
        ops[k].inputs = &ins[3 * k];
        ops[k].n_outputs = 1;
        ops[k].outputs = &outs[k];
        op_ptrs[k] = &ops[k];
    }
    uint32_t out_index = N + 2;
    base.main.n_operands = N + 3;
    base.main.operands = operand_ptrs;
    base.main.n_operations = N;
    base.main.operations = op_ptrs;
    base.main.n_output_indexes = 1;
    base.main.output_indexes = &out_index;
    Nnd__GetSupportedOperations g = NND__GET_SUPPORTED_OPERATIONS__INIT;
    g.model = &base.model;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 61;
    req.call_case = NND__REQUEST__CALL_GET_SUPPORTED_OPERATIONS;
    req.get_supported_operations = &g;
    assert_true(protobuf_c_message_get_packed_size(&req.base) > PROTO_FRAME_INLINE_MAX);
    Nnd__Reply *r = wire_call(s, &req, NULL, 0);
    free(operands);
    free(operand_ptrs);
    free(ops);
    free(op_ptrs);
    free(ins);
    free(outs);
    assert_non_null(r);
    if (r->status != NND__ERROR_STATUS__NONE) fail_msg("%d: %s", r->status, r->message);
    assert_int_equal(r->supported_operations->n_supported, N);
    for (size_t i = 0; i < N; i++)
        assert_true(r->supported_operations->supported[i]);
    wire_free(r);
    close(s);
}

static cJSON *admin(const char *cmd) {
    cJSON *reply = tst_admin(dmn->state_dir, cmd);
    assert_non_null(reply);
    return reply;
}

static void test_admin_status(void **state) {
    (void)state;
    int s = tst_connect_raw(dmn);
    assert_int_equal(wire_hello(s, 1), 0);
    wire_add_model m;
    wire_add_model_init(&m, -1);
    assert_true(wire_prepare(s, &m.model, NULL, 0) != 0);

    cJSON *st = admin("status");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(st, "ok")));
    assert_int_equal(cJSON_GetObjectItem(st, "pid")->valueint, dmn->pid);
    assert_true(cJSON_GetObjectItem(st, "connections")->valueint >= 1);
    assert_true(cJSON_GetObjectItem(st, "prepared_models")->valueint >= 1);
    assert_string_equal(cJSON_GetObjectItem(st, "socket")->valuestring, dmn->socket_path);
    assert_non_null(cJSON_GetObjectItem(st, "executions"));
    assert_non_null(cJSON_GetObjectItem(st, "uptime_s"));
    /* Every HAL 1.0 operation at least has a kernel. */
    assert_true(cJSON_GetObjectItem(st, "supported_operation_types")->valueint >= 29);
    const cJSON *clients = cJSON_GetObjectItem(st, "clients");
    bool found = false;
    const cJSON *c;
    cJSON_ArrayForEach(c, clients) {
        if (cJSON_GetObjectItem(c, "pid")->valueint == getpid() &&
            strcmp(cJSON_GetObjectItem(c, "name")->valuestring, "wire-test") == 0) {
            found = true;
            assert_int_equal(cJSON_GetObjectItem(c, "prepared_models")->valueint, 1);
            assert_int_equal(cJSON_GetObjectItem(c, "uid")->valueint, (int)getuid());
        }
    }
    assert_true(found);
    cJSON_Delete(st);

    cJSON *bad = admin("frobnicate");
    assert_false(cJSON_IsTrue(cJSON_GetObjectItem(bad, "ok")));
    assert_string_equal(cJSON_GetObjectItem(bad, "error")->valuestring,
                        "unknown command frobnicate");
    cJSON_Delete(bad);

    /* The bus sockets are private. */
    char path[512];
    struct stat sb;
    snprintf(path, sizeof path, "%s/admin.ipc", dmn->state_dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    snprintf(path, sizeof path, "%s/events.ipc", dmn->state_dir);
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    close(s);
}

/* Reads events until one named `name` arrives; returns it or fails. */
static cJSON *next_event(int sub, const char *name) {
    for (int i = 0; i < 100; i++) {
        char *buf = NULL;
        int n = nn_recv(sub, &buf, NN_MSG, 0);
        if (n < 0) fail_msg("no \"%s\" event: %s", name, nn_strerror(nn_errno()));
        cJSON *ev = cJSON_ParseWithLength(buf, (size_t)n);
        nn_freemsg(buf);
        assert_non_null(ev);
        if (strcmp(cJSON_GetObjectItem(ev, "event")->valuestring, name) == 0) return ev;
        cJSON_Delete(ev);
    }
    fail_msg("no \"%s\" event", name);
    return NULL;
}

static void test_events(void **state) {
    (void)state;
    char url[512];
    proto_events_url(dmn->state_dir, url, sizeof url);
    int sub = nn_socket(AF_SP, NN_SUB);
    assert_true(sub >= 0);
    nn_setsockopt(sub, NN_SUB, NN_SUB_SUBSCRIBE, "", 0);
    int timeout = 100;
    nn_setsockopt(sub, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout, sizeof timeout);
    assert_true(nn_connect(sub, url) >= 0);
    /* A subscription takes a moment to reach the publisher: poke the daemon with
     * connections until their events start arriving. */
    bool synced = false;
    for (int i = 0; i < 100 && !synced; i++) {
        close(tst_connect_raw(dmn));
        char *buf = NULL;
        int n = nn_recv(sub, &buf, NN_MSG, 0);
        if (n >= 0) {
            nn_freemsg(buf);
            synced = true;
        }
    }
    assert_true(synced);
    timeout = 10000;
    nn_setsockopt(sub, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout, sizeof timeout);

    int s = tst_connect_raw(dmn);
    wire_add_model m;
    wire_add_model_init(&m, -1);
    uint64_t h = wire_prepare(s, &m.model, NULL, 0);
    assert_true(h != 0);
    float io[6] = {1, 2, 3, 4, 0, 0};
    int pool = wire_memfd(io, sizeof io, 4096);
    wire_exec e;
    wire_exec_init(&e, h, 2, 4096);
    run_add(s, &e, pool, false);
    close(pool);
    close(s);

    cJSON *ev = next_event(sub, "connect");
    assert_int_equal(cJSON_GetObjectItem(ev, "pid")->valueint, getpid());
    assert_non_null(cJSON_GetObjectItem(ev, "time_ns"));
    assert_non_null(cJSON_GetObjectItem(ev, "exe"));
    cJSON_Delete(ev);
    char hex[24];
    snprintf(hex, sizeof hex, "0x%016llx", (unsigned long long)h);
    ev = next_event(sub, "prepared");
    assert_string_equal(cJSON_GetObjectItem(ev, "handle")->valuestring, hex);
    assert_int_equal(cJSON_GetObjectItem(ev, "operations")->valueint, 1);
    assert_non_null(cJSON_GetObjectItem(ev, "prepare_ns"));
    cJSON_Delete(ev);
    ev = next_event(sub, "executed");
    assert_string_equal(cJSON_GetObjectItem(ev, "handle")->valuestring, hex);
    assert_string_equal(cJSON_GetObjectItem(ev, "status")->valuestring, "NONE");
    assert_non_null(cJSON_GetObjectItem(ev, "latency_ns"));
    cJSON_Delete(ev);
    ev = next_event(sub, "disconnect");
    cJSON_Delete(ev);
    nn_close(sub);
}

/* Last: a clean stop (exit status 0; under ASan that also means no leaks). */
static void test_clean_stop(void **state) {
    (void)state;
    assert_int_equal(tst_daemon_stop(dmn), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_queries),
        cmocka_unit_test(test_supported_operations),
        cmocka_unit_test(test_prepare_execute_release),
        cmocka_unit_test(test_big_model_spills),
        cmocka_unit_test(test_big_reply_spills),
        cmocka_unit_test(test_admin_status),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_clean_stop),
    };
    return cmocka_run_group_tests(tests, tst_group_setup, tst_group_teardown);
}
