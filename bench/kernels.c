/* SPDX-License-Identifier: Apache-2.0 */
/* kernels.c: see kernels.h. */
#include "bench/kernels.h"

#include <math.h>
#include <pthreadpool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xnnpack.h>

#include "schema/codes.h"
#include "bench/local.h"
#include "tests/support/mobilenet.h"
#include "nnd/nnd_wire.h"
#include "tests/support/timing.h"

#define ROUNDS 6 /* each round runs one side `per_round` times, then the other */

static int cpus(void) {
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

static float uniform(unsigned *seed, float limit) {
    return limit * (2.f * (float)rand_r(seed) / (float)RAND_MAX - 1.f);
}

/* ---- a FLOAT32 model as the wire carries it ---------------------------------------- */

#define PM_MAX_OPERANDS 256
#define PM_MAX_OPS      64

typedef struct pmodel {
    Nnd__Operand operands[PM_MAX_OPERANDS], *operand_ptrs[PM_MAX_OPERANDS];
    Nnd__DataLocation locations[PM_MAX_OPERANDS];
    uint32_t dims[PM_MAX_OPERANDS][4];
    size_t n_operands;
    Nnd__Operation ops[PM_MAX_OPS], *op_ptrs[PM_MAX_OPS];
    uint32_t op_in[PM_MAX_OPS][12], op_out[PM_MAX_OPS][1];
    size_t n_ops;
    uint8_t *values;
    size_t n_values, cap;
    uint32_t input, output;
    Nnd__Subgraph main;
    Nnd__Model model;
    unsigned seed;
} pmodel;

static uint32_t pm_operand(pmodel *m, int32_t type, uint32_t rank, const uint32_t *dims,
                           Nnd__OperandLifeTime lifetime) {
    size_t i = m->n_operands++;
    if (i >= PM_MAX_OPERANDS) abort();
    Nnd__Operand *o = &m->operands[i];
    nnd__operand__init(o);
    o->type = type;
    o->lifetime = lifetime;
    if (rank) memcpy(m->dims[i], dims, sizeof(uint32_t) * rank);
    o->n_dimensions = rank;
    o->dimensions = m->dims[i];
    m->operand_ptrs[i] = o;
    return (uint32_t)i;
}

/* Appends bytes to operand_values, 64-byte aligned, for a CONSTANT_COPY operand. */
static void pm_bind(pmodel *m, uint32_t i, const void *data, size_t len) {
    size_t at = (m->n_values + 63) & ~(size_t)63;
    if (at + len > m->cap) {
        m->cap = (at + len) * 2;
        m->values = realloc(m->values, m->cap);
        if (!m->values) abort();
    }
    memcpy(m->values + at, data, len);
    m->n_values = at + len;
    nnd__data_location__init(&m->locations[i]);
    m->locations[i].offset = at;
    m->locations[i].length = len;
    m->operands[i].location = &m->locations[i];
}

static uint32_t pm_i32(pmodel *m, int32_t v) {
    uint32_t i = pm_operand(m, SCHEMA_INT32, 0, NULL, NND__OPERAND_LIFE_TIME__CONSTANT_COPY);
    pm_bind(m, i, &v, sizeof v);
    return i;
}

static uint32_t pm_f32_scalar(pmodel *m, float v) {
    uint32_t i = pm_operand(m, SCHEMA_FLOAT32, 0, NULL, NND__OPERAND_LIFE_TIME__CONSTANT_COPY);
    pm_bind(m, i, &v, sizeof v);
    return i;
}

/* Random weights scaled by fan-in, so activations stay in range through many layers. */
static uint32_t pm_weights(pmodel *m, uint32_t rank, const uint32_t *dims, uint32_t fan_in) {
    uint32_t i =
        pm_operand(m, SCHEMA_TENSOR_FLOAT32, rank, dims, NND__OPERAND_LIFE_TIME__CONSTANT_COPY);
    size_t n = 1;
    for (uint32_t r = 0; r < rank; r++)
        n *= dims[r];
    float *w = malloc(n * sizeof *w);
    if (!w) abort();
    float limit = sqrtf(3.f / (float)fan_in);
    for (size_t k = 0; k < n; k++)
        w[k] = uniform(&m->seed, limit);
    pm_bind(m, i, w, n * sizeof *w);
    free(w);
    return i;
}

static uint32_t pm_op(pmodel *m, int32_t type, size_t n_in, const uint32_t *in, uint32_t out) {
    size_t k = m->n_ops++;
    if (k >= PM_MAX_OPS || n_in > 12) abort();
    Nnd__Operation *op = &m->ops[k];
    nnd__operation__init(op);
    op->type = type;
    memcpy(m->op_in[k], in, sizeof(uint32_t) * n_in);
    m->op_out[k][0] = out;
    op->n_inputs = n_in, op->inputs = m->op_in[k];
    op->n_outputs = 1, op->outputs = m->op_out[k];
    m->op_ptrs[k] = op;
    return out;
}

static void pm_init(pmodel *m) {
    memset(m, 0, sizeof *m);
    m->seed = 11;
}

static void pm_finish(pmodel *m, uint32_t input, uint32_t output) {
    m->input = input, m->output = output;
    m->operands[input].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    m->operands[output].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    nnd__subgraph__init(&m->main);
    m->main.n_operands = m->n_operands, m->main.operands = m->operand_ptrs;
    m->main.n_operations = m->n_ops, m->main.operations = m->op_ptrs;
    m->main.n_input_indexes = 1, m->main.input_indexes = &m->input;
    m->main.n_output_indexes = 1, m->main.output_indexes = &m->output;
    nnd__model__init(&m->model);
    m->model.main = &m->main;
    m->model.operand_values.data = m->values;
    m->model.operand_values.len = m->n_values;
}

static size_t pm_bytes(const pmodel *m, uint32_t i) {
    size_t n = 4;
    for (size_t r = 0; r < m->operands[i].n_dimensions; r++)
        n *= m->operands[i].dimensions[r];
    return n;
}

/* CONV_2D or DEPTHWISE_CONV_2D with SAME padding and a fused RELU6 (act) on an NHWC
 * temporary x of [1, h, w, in_c]; *h and *w become the output's. */
static uint32_t pm_conv(pmodel *m, uint32_t x, uint32_t *h, uint32_t *w, uint32_t in_c,
                        uint32_t out_c, uint32_t k, uint32_t stride, bool depthwise, int32_t act) {
    uint32_t fdims[4] = {depthwise ? 1 : out_c, k, k, depthwise ? out_c : in_c};
    uint32_t f = pm_weights(m, 4, fdims, depthwise ? k * k : k * k * in_c);
    uint32_t b = pm_weights(m, 1, (uint32_t[]){out_c}, 1000);
    *h = (*h + stride - 1) / stride, *w = (*w + stride - 1) / stride;
    uint32_t y = pm_operand(m, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){1, *h, *w, out_c},
                            NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t in[9] = {x,
                      f,
                      b,
                      pm_i32(m, SCHEMA_PADDING_SAME),
                      pm_i32(m, (int32_t)stride),
                      pm_i32(m, (int32_t)stride)};
    size_t n = 6;
    if (depthwise) in[n++] = pm_i32(m, 1);
    in[n++] = pm_i32(m, act);
    return pm_op(m, depthwise ? SCHEMA_OP_DEPTHWISE_CONV_2D : SCHEMA_OP_CONV_2D, n, in, y);
}

/* The bench's MobileNet v1 (mobilenet.h) in FLOAT32, built as the wire carries it: the
 * in-process side takes a wire model. */
static void mobilenet(pmodel *m) {
    pm_init(m);
    uint32_t h = 224, w = 224, c = 32;
    uint32_t x0 = pm_operand(m, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){1, h, w, 3},
                             NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t x = pm_conv(m, x0, &h, &w, 3, c, 3, 2, false, SCHEMA_FUSED_RELU6);
    for (size_t i = 0; i < BENCH_NET_BLOCKS; i++) {
        const struct bench_block *blk = &bench_net_blocks[i];
        x = pm_conv(m, x, &h, &w, c, c, 3, blk->stride, true, SCHEMA_FUSED_RELU6);
        x = pm_conv(m, x, &h, &w, c, blk->out_c, 1, 1, false, SCHEMA_FUSED_RELU6);
        c = blk->out_c;
    }
    uint32_t pooled = pm_operand(m, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){1, 1, 1, c},
                                 NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t pin[7] = {x,
                       pm_i32(m, SCHEMA_PADDING_VALID),
                       pm_i32(m, 1),
                       pm_i32(m, 1),
                       pm_i32(m, (int32_t)w),
                       pm_i32(m, (int32_t)h),
                       pm_i32(m, 0)};
    pm_op(m, SCHEMA_OP_AVERAGE_POOL_2D, 7, pin, pooled);
    uint32_t logits = pm_operand(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){1, 1000},
                                 NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t fin[4] = {pooled, pm_weights(m, 2, (uint32_t[]){1000, c}, c),
                       pm_weights(m, 1, (uint32_t[]){1000}, 1000), pm_i32(m, 0)};
    pm_op(m, SCHEMA_OP_FULLY_CONNECTED, 4, fin, logits);
    uint32_t probs = pm_operand(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){1, 1000},
                                NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    pm_op(m, SCHEMA_OP_SOFTMAX, 2, (uint32_t[]){logits, pm_f32_scalar(m, 1.f)}, probs);
    pm_finish(m, x0, probs);
}

/* ---- the two sides ------------------------------------------------------------------ */

/* A prepared model in the daemon with one memfd holding the input then the output. */
typedef struct remote {
    nnd_client *c;
    uint64_t handle;
    int fd;
    void *map;
    Nnd__DataLocation loc[2];
    Nnd__RequestArgument args[2], *inp[1], *outp[1];
    Nnd__MemoryPool pool, *poolp;
    Nnd__ExecutionRequest req;
} remote;

static int remote_open(remote *r, const tst_daemon *d, const pmodel *m, const void *input) {
    char err[256];
    memset(r, 0, sizeof *r);
    r->fd = -1;
    size_t in_bytes = pm_bytes(m, m->input), out_bytes = pm_bytes(m, m->output);
    size_t out_at = (in_bytes + 4095) & ~(size_t)4095, size = out_at + out_bytes;
    if (!(r->c = nnd_client_connect(d->socket_path, "nnd-bench", err, sizeof err)) ||
        nnd_client_prepare(r->c, &m->model, NULL, 0, 0, 0, 0, &r->handle, err, sizeof err) != 0 ||
        (r->fd = nnd_memfd_create("bench-kernels", size, &r->map)) < 0) {
        fprintf(stderr, "bench: daemon side: %s\n", err);
        return -1;
    }
    memcpy(r->map, input, in_bytes);
    for (int i = 0; i < 2; i++) {
        nnd__data_location__init(&r->loc[i]);
        nnd__request_argument__init(&r->args[i]);
        r->args[i].location = &r->loc[i];
    }
    r->loc[0].length = in_bytes;
    r->loc[1].offset = out_at, r->loc[1].length = out_bytes;
    r->inp[0] = &r->args[0], r->outp[0] = &r->args[1];
    nnd__memory_pool__init(&r->pool);
    r->pool.size = size;
    r->poolp = &r->pool;
    nnd__execution_request__init(&r->req);
    r->req.n_inputs = 1, r->req.inputs = r->inp;
    r->req.n_outputs = 1, r->req.outputs = r->outp;
    r->req.n_pools = 1, r->req.pools = &r->poolp;
    return 0;
}

static double remote_run(remote *r) {
    char err[256];
    Nnd__Reply *reply = NULL;
    uint64_t t0 = bench_now_ns();
    int s =
        nnd_client_execute(r->c, r->handle, &r->req, &r->fd, 1, false, 0, &reply, err, sizeof err);
    double t = (double)(bench_now_ns() - t0);
    if (reply) nnd__reply__free_unpacked(reply, NULL);
    if (s != 0) fprintf(stderr, "bench: execute through the daemon: %s\n", err);
    return s == 0 ? t : -1;
}

static void remote_close(remote *r) {
    if (r->c) {
        if (r->handle) nnd_client_release(r->c, r->handle);
        nnd_client_close(r->c);
    }
    if (r->fd >= 0) close(r->fd);
}

/* XNNPACK called directly: one operator, set up once, run on its own pthreadpool. */
typedef struct direct {
    xnn_operator_t op;
    pthreadpool_t pool;
} direct;

static void rest_task(void *ctx, size_t i) {
    (void)ctx, (void)i;
}

static double direct_run(direct *x) {
    uint64_t t0 = bench_now_ns();
    enum xnn_status s = xnn_run_operator(x->op, x->pool);
    double t = (double)(bench_now_ns() - t0);
    if (s != xnn_status_success) fprintf(stderr, "bench: xnn_run_operator: %d\n", (int)s);
    return s == xnn_status_success ? t : -1;
}

/* Between sides: the direct side's idle workers would otherwise spin into the next. */
static void direct_rest(direct *x) {
    pthreadpool_parallelize_1d(x->pool, rest_task, NULL, pthreadpool_get_threads_count(x->pool),
                               PTHREADPOOL_FLAG_YIELD_WORKERS);
}

int bench_alternate(bench_run_fn a, void *actx, bench_run_fn b, void *bctx, void (*b_rest)(void *),
                    int rounds, int per_round, bench_pair *out) {
    size_t n = (size_t)rounds * (size_t)per_round;
    double *ta = malloc(n * sizeof *ta), *tb = malloc(n * sizeof *tb);
    int rc = ta && tb ? 0 : -1;
    for (int w = 0; rc == 0 && w < 3; w++) /* warm-up: mappings, indirection, caches */
        if (a(actx) < 0 || b(bctx) < 0) rc = -1;
    for (size_t r = 0, at = 0; rc == 0 && r < (size_t)rounds; r++) {
        for (int i = 0; rc == 0 && i < per_round; i++)
            if ((ta[at + (size_t)i] = a(actx)) < 0) rc = -1;
        for (int i = 0; rc == 0 && i < per_round; i++)
            if ((tb[at + (size_t)i] = b(bctx)) < 0) rc = -1;
        if (b_rest) b_rest(bctx);
        at += (size_t)per_round;
    }
    if (rc == 0) {
        out->a_ns = bench_median(ta, n);
        out->b_ns = bench_median(tb, n);
    }
    free(ta), free(tb);
    return rc;
}

static double remote_run_v(void *r) {
    return remote_run(r);
}
static double local_run_v(void *l) {
    return bench_local_run(l);
}
static double direct_run_v(void *x) {
    return direct_run(x);
}
static void direct_rest_v(void *x) {
    direct_rest(x);
}

static float *random_floats(size_t n, unsigned seed) {
    float *v = malloc(n * sizeof *v + 64);
    for (size_t i = 0; v && i < n; i++)
        v[i] = uniform(&seed, 1.f);
    return v;
}

/* ---- rows ---------------------------------------------------------------------------- */

int bench_inproc(const tst_daemon *d, bench_pair *out) {
    pmodel *m = malloc(sizeof *m);
    if (!m) return -1;
    mobilenet(m);
    float *input = random_floats(pm_bytes(m, m->input) / 4, 7);
    void *output = malloc(pm_bytes(m, m->output));
    remote r = {.fd = -1};
    bench_local *l = NULL;
    int rc = input && output ? remote_open(&r, d, m, input) : -1;
    if (rc == 0 && !(l = bench_local_open(&m->model, input, pm_bytes(m, m->input), output,
                                          pm_bytes(m, m->output))))
        rc = -1;
    if (rc == 0) rc = bench_alternate(remote_run_v, &r, local_run_v, l, NULL, ROUNDS, 10, out);
    if (rc == 0 && memcmp(output, (uint8_t *)r.map + r.loc[1].offset, r.loc[1].length) != 0) {
        fprintf(stderr, "bench: inproc: the daemon and the engine disagree\n");
        rc = -1;
    }
    bench_local_close(l);
    remote_close(&r);
    out->flops = 0;
    out->shape = "MobileNet v1 1.0 224x224 FLOAT32 (30 ops)";
    free(m->values), free(m), free(input), free(output);
    return rc;
}

int bench_inproc_loaded(const tst_daemon *d, bench_pair *out, int *hogs) {
    *hogs = 2 * cpus();
    pid_t pid[64];
    int started = 0;
    for (; started < *hogs && started < 64; started++) {
        pid[started] = fork();
        if (pid[started] == 0) { /* a busy program at nice 0, on this process's CPUs */
            volatile unsigned long spin = 0;
            for (;;)
                spin++;
        }
        if (pid[started] < 0) break;
    }
    int rc = started == *hogs ? bench_inproc(d, out) : -1;
    for (int i = 0; i < started; i++)
        kill(pid[i], SIGKILL);
    for (int i = 0; i < started; i++)
        waitpid(pid[i], NULL, 0);
    return rc;
}

/* One FLOAT32 operation through the daemon against XNNPACK's own operator (made by
 * create) on the same shapes. */
static int one_op_vs_xnnpack(const tst_daemon *d, pmodel *m, direct *x, const float *input,
                             int per_round, bench_pair *out) {
    remote r = {.fd = -1};
    int rc = remote_open(&r, d, m, input);
    if (rc == 0)
        rc = bench_alternate(remote_run_v, &r, direct_run_v, x, direct_rest_v, ROUNDS, per_round,
                             out);
    remote_close(&r);
    return rc;
}

static int direct_init(direct *x) {
    memset(x, 0, sizeof *x);
    if (xnn_initialize(NULL) != xnn_status_success) return -1;
    int n = cpus();
    x->pool = n > 1 ? pthreadpool_create((size_t)n) : NULL;
    return 0;
}

static void direct_free(direct *x) {
    if (x->op) xnn_delete_operator(x->op);
    if (x->pool) pthreadpool_destroy(x->pool);
}

/* Weights and bias of a pmodel constant, as XNNPACK takes them. */
static const float *pm_data(const pmodel *m, uint32_t i) {
    return (const float *)(m->values + m->locations[i].offset);
}

int bench_conv_vs_xnnpack(const tst_daemon *d, bench_pair *out) {
    enum { N = 1, H = 56, W = 56, C = 256, K = 3 }; /* VGG-16 conv3 */
    pmodel *m = malloc(sizeof *m);
    if (!m) return -1;
    pm_init(m);
    uint32_t h = H, w = W;
    uint32_t x0 = pm_operand(m, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){N, H, W, C},
                             NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t y = pm_conv(m, x0, &h, &w, C, C, K, 1, false, SCHEMA_FUSED_NONE);
    pm_finish(m, x0, y);
    const uint32_t *in = m->op_in[0];
    float *input = random_floats((size_t)N * H * W * C, 3);
    float *output = malloc(sizeof(float) * N * H * W * C);
    direct x;
    int rc = input && output ? direct_init(&x) : -1;
    if (rc == 0 && xnn_create_convolution2d_nhwc_f32(
                       1, 1, 1, 1, K, K, 1, 1, 1, 1, 1, C, C, C, C, pm_data(m, in[1]),
                       pm_data(m, in[2]), -INFINITY, INFINITY, 0, &x.op) != xnn_status_success)
        rc = -1;
    if (rc == 0 && xnn_setup_convolution2d_nhwc_f32(x.op, N, H, W, input, output, x.pool) !=
                       xnn_status_success)
        rc = -1;
    if (rc == 0) rc = one_op_vs_xnnpack(d, m, &x, input, 10, out);
    direct_free(&x);
    out->flops = 2.0 * N * H * W * C * C * K * K;
    out->shape = "CONV_2D 1x56x56x256 -> 256, 3x3, stride 1, SAME";
    free(m->values), free(m), free(input), free(output);
    return rc;
}

int bench_fc_vs_xnnpack(const tst_daemon *d, bench_pair *out) {
    enum { B = 128, IN = 2048, UNITS = 2048 };
    pmodel *m = malloc(sizeof *m);
    if (!m) return -1;
    pm_init(m);
    uint32_t x0 = pm_operand(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){B, IN},
                             NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t y = pm_operand(m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){B, UNITS},
                            NND__OPERAND_LIFE_TIME__TEMPORARY_VARIABLE);
    uint32_t wt = pm_weights(m, 2, (uint32_t[]){UNITS, IN}, IN);
    uint32_t bias = pm_weights(m, 1, (uint32_t[]){UNITS}, 1000);
    pm_op(m, SCHEMA_OP_FULLY_CONNECTED, 4, (uint32_t[]){x0, wt, bias, pm_i32(m, SCHEMA_FUSED_NONE)},
          y);
    pm_finish(m, x0, y);
    float *input = random_floats((size_t)B * IN, 5);
    float *output = malloc(sizeof(float) * B * UNITS);
    direct x;
    int rc = input && output ? direct_init(&x) : -1;
    if (rc == 0 &&
        xnn_create_fully_connected_nc_f32(IN, UNITS, IN, UNITS, pm_data(m, wt), pm_data(m, bias),
                                          -INFINITY, INFINITY, 0, &x.op) != xnn_status_success)
        rc = -1;
    if (rc == 0 &&
        xnn_setup_fully_connected_nc_f32(x.op, B, input, output, x.pool) != xnn_status_success)
        rc = -1;
    if (rc == 0) rc = one_op_vs_xnnpack(d, m, &x, input, 20, out);
    direct_free(&x);
    out->flops = 2.0 * B * IN * UNITS;
    out->shape = "FULLY_CONNECTED [128, 2048] x [2048, 2048]";
    free(m->values), free(m), free(input), free(output);
    return rc;
}
