/* SPDX-License-Identifier: Apache-2.0 */
/* memory_common.c: the daemon, requests and expectations of the memory tests. See
 * memory_common.h. */
#include "tests/client/memory_common.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

tst_daemon *const dmn = &tst_group_daemon;

int memory_group_setup(void **state) {
    /* No content cache: constants are used in place, straight from the client's pages. */
    static const char *const no_cache[] = {"--cache-max-bytes", "0", NULL};
    tst_group_args = no_cache;
    return tst_group_setup(state);
}

nnd_client *connect_client(const char *name) {
    char err[256];
    nnd_client *c = nnd_client_connect(dmn->socket_path, name, err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    return c;
}

/* ---- a model: out = a + b on TENSOR_FLOAT32 [n] (wire_add_model_init_n) -------------- */

uint64_t prepare(nnd_client *c, const wire_add_model *m, const int *fds, size_t nfds) {
    char err[512];
    uint64_t h = 0;
    int st = nnd_client_prepare(c, &m->model, fds, nfds, 0, 0, 0, &h, err, sizeof err);
    if (st != 0) fail_msg("prepare: %s", err);
    return h;
}

/* Prepares b = ones: out = in + 1, b from a sealed memfd. */
uint64_t prepare_plus_one(nnd_client *c, uint32_t n) {
    float ones[N];
    for (int i = 0; i < N; i++)
        ones[i] = 1.0f;
    int fd = nnd_memfd_create("ones", n * 4, NULL);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, ones, n * 4, 0), (ssize_t)(n * 4));
    wire_add_model m;
    wire_add_model_init_n(&m, n, 0);
    uint64_t h = prepare(c, &m, &fd, 1);
    close(fd);
    return h;
}

/* ---- an execution request ------------------------------------------------------------ */

void req_init(req *q) {
    memset(q, 0, sizeof *q);
    nnd__execution_request__init(&q->r);
    q->r.inputs = q->in;
    q->r.outputs = q->out;
    q->r.pools = q->poolp;
}

/* Adds a pool; returns its index. fd pools name fd index `fd_index`. */
uint32_t req_pool(req *q, int kind, uint32_t fd_index, uint64_t offset, uint64_t size,
                  uint64_t token) {
    uint32_t i = (uint32_t)q->r.n_pools++;
    nnd__memory_pool__init(&q->pools[i]);
    q->pools[i].kind = (Nnd__PoolKind)kind;
    q->pools[i].fd_index = fd_index;
    q->pools[i].offset = offset;
    q->pools[i].size = size;
    q->pools[i].token = token;
    q->poolp[i] = &q->pools[i];
    return i;
}

uint32_t req_buffer(req *q, uint64_t token) {
    return req_pool(q, NND__POOL_KIND__POOL_DRIVER_BUFFER, 0, 0, 0, token);
}

void req_arg(req *q, bool output, uint32_t pool, uint64_t offset, uint64_t length, uint32_t *dims,
             size_t rank) {
    size_t k = q->r.n_inputs + q->r.n_outputs;
    Nnd__RequestArgument *a = &q->args[k];
    nnd__request_argument__init(a);
    nnd__data_location__init(&q->locs[k]);
    q->locs[k].pool_index = pool;
    q->locs[k].offset = offset;
    q->locs[k].length = length;
    a->location = &q->locs[k];
    a->n_dimensions = rank;
    a->dimensions = dims;
    if (output)
        q->out[q->r.n_outputs++] = a;
    else
        q->in[q->r.n_inputs++] = a;
}

/* Executes and expects `want`, with `needle` in the message when given. Returns the
 * reply's first output shape's first dimension (0 when none). */
uint32_t execute_expect(nnd_client *c, uint64_t h, const req *q, const int *fds, size_t nfds,
                        int want, const char *needle) {
    char err[512] = "";
    Nnd__Reply *r = NULL;
    int st = nnd_client_execute(c, h, &q->r, fds, nfds, false, 0, &r, err, sizeof err);
    if (st != want) fail_msg("execute: status %d (%s), wanted %d", st, err, want);
    if (needle && !strstr(err, needle)) fail_msg("execute: \"%s\" lacks \"%s\"", err, needle);
    uint32_t d0 = 0;
    if (r && r->result_case == NND__REPLY__RESULT_EXECUTED && r->executed->n_output_shapes &&
        r->executed->output_shapes[0]->n_dimensions)
        d0 = r->executed->output_shapes[0]->dimensions[0];
    if (r) nnd__reply__free_unpacked(r, NULL);
    return d0;
}

void expect_status(int st, const char *err, int want, const char *needle, const char *what) {
    if (st != want) fail_msg("%s: status %d (%s), wanted %d", what, st, err, want);
    if (needle && !strstr(err, needle)) fail_msg("%s: \"%s\" lacks \"%s\"", what, err, needle);
}

uint64_t allocate_ok(nnd_client *c, const uint64_t *models, size_t n_models,
                     const nnd_buffer_role *in, size_t n_in, const nnd_buffer_role *out,
                     size_t n_out, uint64_t *token) {
    char err[512];
    uint64_t b = 0;
    int st = nnd_client_allocate(c, NULL, 0, models, n_models, in, n_in, out, n_out, &b, token, err,
                                 sizeof err);
    if (st != 0) fail_msg("allocate: %s", err);
    assert_true(b != 0 && *token != 0);
    return b;
}

/* A memfd holding n floats v[i] = base + i * step. */
int float_memfd(uint32_t n, float base, float step) {
    float *p;
    int fd = nnd_memfd_create("floats", (size_t)n * 4, (void **)&p);
    assert_true(fd >= 0);
    for (uint32_t i = 0; i < n; i++)
        p[i] = base + (float)i * step;
    munmap(p, (size_t)n * 4);
    return fd;
}

void expect_floats(int fd, uint64_t offset, uint32_t n, float base, float step) {
    float v[N * 2];
    assert_true(n <= N * 2);
    assert_int_equal(pread(fd, v, (size_t)n * 4, (off_t)offset), (ssize_t)(n * 4));
    for (uint32_t i = 0; i < n; i++)
        if (v[i] != base + (float)i * step)
            fail_msg("element %u is %g, wanted %g", i, (double)v[i], (double)(base + i * step));
}

/* ---- admin status ---------------------------------------------------------------------- */

cJSON *status(void) {
    return tst_admin_status(dmn);
}

double status_number(const char *key) {
    cJSON *s = status();
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, key);
    assert_true(cJSON_IsNumber(v));
    double d = v->valuedouble;
    cJSON_Delete(s);
    return d;
}

/* Waits up to 10 s for the daemon to hold `count` buffers. */
void wait_buffers(double count) {
    for (int i = 0; i < 1000; i++) {
        if (status_number("buffers") == count) return;
        usleep(10000);
    }
    fail_msg("the daemon holds %g buffers, wanted %g", status_number("buffers"), count);
}

/* Last: a clean exit, no sanitizer report, nothing leaked at shutdown. A test, because
 * cmocka does not fail the run when a group teardown fails. */
void test_clean_stop(void **state) {
    (void)state;
    assert_int_equal(tst_daemon_stop(dmn), 0);
}
