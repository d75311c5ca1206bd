/* SPDX-License-Identifier: Apache-2.0 */
/* estimate.c: throughput probes through the engine and per-operation estimates; a window of
 * recent run times, trimmed mean and tail; log-linear latency buckets. See estimate.h. */
#include "sched/estimate.h"

#include <stdlib.h>
#include <string.h>

#include "engine/base/clock.h"

/* ---- the cost model ---- */

#define CHAIN   32        /* ADDs in the overhead probe */
#define BIG     (1 << 20) /* elements of the memory probe: 12 MB moved, past the caches */
#define FC_IN   256       /* the arithmetic probe: [FC_ROWS, FC_IN] x [FC_IN, FC_OUT] */
#define FC_OUT  256
#define FC_ROWS 8
#define REPS    5

static eng_operand_desc tensor(uint32_t lifetime, uint32_t d0, uint32_t d1) {
    eng_operand_desc o;
    memset(&o, 0, sizeof o);
    o.type = SCHEMA_TENSOR_FLOAT32;
    o.rank = d1 ? 2 : 1;
    o.dims[0] = d0;
    o.dims[1] = d1;
    o.lifetime = lifetime;
    return o;
}

/* Prepares m, runs it once to warm up, then reps times; the fastest run in ns, or 0. */
static uint64_t time_model(const eng_model_desc *m, float *in, size_t in_len, float *out,
                           size_t out_len, int reps, eng_cost *total) {
    eng_prepared *p = NULL;
    char err[SCHEMA_ERR_LEN];
    if (eng_prepare(m, &p, err, sizeof err) != SCHEMA_OK) return 0;
    memset(total, 0, sizeof *total);
    for (uint32_t k = 0; k < eng_prepared_num_operations(p); k++) {
        eng_cost c = eng_prepared_step_cost(p, k);
        total->flops += c.flops;
        total->bytes += c.bytes;
    }
    eng_exec *e = eng_exec_create(p);
    uint64_t best = 0;
    uint32_t ni = eng_prepared_num_inputs(p);
    eng_io io_in[2], io_out[1];
    memset(io_in, 0, sizeof io_in);
    memset(io_out, 0, sizeof io_out);
    for (uint32_t i = 0; i < ni; i++) {
        io_in[i].data = in;
        io_in[i].length = in_len * sizeof(float);
    }
    io_out[0].data = out;
    io_out[0].length = out_len * sizeof(float);
    for (int r = 0; e && r <= reps; r++) {
        uint64_t t0 = eng_now_ns();
        if (eng_exec_run(e, io_in, io_out, NULL, NULL, err, sizeof err) != SCHEMA_OK) {
            best = 0;
            break;
        }
        uint64_t t = eng_now_ns() - t0;
        if (r > 0 && (!best || t < best)) best = t ? t : 1;
    }
    eng_exec_free(e);
    eng_prepared_free(p);
    return best;
}

/* CHAIN ADDs of [4]: t0 = a + b, t1 = t0 + b, ..., out = t30 + b. */
static uint64_t probe_chain(float *buf, eng_cost *c) {
    enum { N = CHAIN + 3 };
    eng_operand_desc ops[N];
    eng_operation_desc opn[CHAIN];
    uint32_t in_lists[CHAIN][3], out_lists[CHAIN][1];
    int32_t act = 0;
    ops[0] = tensor(SCHEMA_MODEL_INPUT, 4, 0);
    ops[1] = tensor(SCHEMA_MODEL_INPUT, 4, 0);
    memset(&ops[2], 0, sizeof ops[2]);
    ops[2].type = SCHEMA_INT32;
    ops[2].lifetime = SCHEMA_CONSTANT_COPY;
    ops[2].length = 4;
    for (uint32_t k = 0; k < CHAIN; k++) {
        uint32_t out = 3 + k;
        ops[out] = tensor(k + 1 == CHAIN ? SCHEMA_MODEL_OUTPUT : SCHEMA_TEMPORARY, 4, 0);
        in_lists[k][0] = k == 0 ? 0 : out - 1;
        in_lists[k][1] = 1;
        in_lists[k][2] = 2;
        out_lists[k][0] = out;
        opn[k] = (eng_operation_desc){SCHEMA_OP_ADD, 3, in_lists[k], 1, out_lists[k]};
    }
    uint32_t inputs[2] = {0, 1}, outputs[1] = {N - 1};
    eng_model_desc m = {.n_operands = N,
                        .operands = ops,
                        .n_operations = CHAIN,
                        .operations = opn,
                        .n_inputs = 2,
                        .inputs = inputs,
                        .n_outputs = 1,
                        .outputs = outputs,
                        .operand_values = (const uint8_t *)&act,
                        .operand_values_len = 4};
    return time_model(&m, buf, 4, buf + 64, 4, REPS, c);
}

/* out = a + b over BIG floats. */
static uint64_t probe_add(float *buf, eng_cost *c) {
    eng_operand_desc ops[4] = {tensor(SCHEMA_MODEL_INPUT, BIG, 0),
                               tensor(SCHEMA_MODEL_INPUT, BIG, 0),
                               {0},
                               tensor(SCHEMA_MODEL_OUTPUT, BIG, 0)};
    ops[2].type = SCHEMA_INT32;
    ops[2].lifetime = SCHEMA_CONSTANT_COPY;
    ops[2].length = 4;
    int32_t act = 0;
    uint32_t in_list[3] = {0, 1, 2}, out_list[1] = {3}, inputs[2] = {0, 1}, outputs[1] = {3};
    eng_operation_desc op = {SCHEMA_OP_ADD, 3, in_list, 1, out_list};
    eng_model_desc m = {.n_operands = 4,
                        .operands = ops,
                        .n_operations = 1,
                        .operations = &op,
                        .n_inputs = 2,
                        .inputs = inputs,
                        .n_outputs = 1,
                        .outputs = outputs,
                        .operand_values = (const uint8_t *)&act,
                        .operand_values_len = 4};
    return time_model(&m, buf, BIG, buf + BIG, BIG, 2, c);
}

/* out = FULLY_CONNECTED(x [FC_ROWS, FC_IN], w [FC_OUT, FC_IN], bias [FC_OUT]). */
static uint64_t probe_fc(float *buf, eng_cost *c) {
    size_t w_bytes = sizeof(float) * FC_OUT * FC_IN, b_bytes = sizeof(float) * FC_OUT;
    uint8_t *values = calloc(1, w_bytes + b_bytes + 4);
    if (!values) return 0;
    float *w = (float *)values;
    for (size_t i = 0; i < (size_t)FC_OUT * FC_IN; i++)
        w[i] = (float)(i % 7) * 0.01f;
    eng_operand_desc ops[5] = {tensor(SCHEMA_MODEL_INPUT, FC_ROWS, FC_IN),
                               tensor(SCHEMA_CONSTANT_COPY, FC_OUT, FC_IN),
                               tensor(SCHEMA_CONSTANT_COPY, FC_OUT, 0),
                               {0},
                               tensor(SCHEMA_MODEL_OUTPUT, FC_ROWS, FC_OUT)};
    ops[1].length = w_bytes;
    ops[2].offset = w_bytes;
    ops[2].length = b_bytes;
    ops[3].type = SCHEMA_INT32;
    ops[3].lifetime = SCHEMA_CONSTANT_COPY;
    ops[3].offset = w_bytes + b_bytes;
    ops[3].length = 4;
    uint32_t in_list[4] = {0, 1, 2, 3}, out_list[1] = {4}, inputs[1] = {0}, outputs[1] = {4};
    eng_operation_desc op = {SCHEMA_OP_FULLY_CONNECTED, 4, in_list, 1, out_list};
    eng_model_desc m = {.n_operands = 5,
                        .operands = ops,
                        .n_operations = 1,
                        .operations = &op,
                        .n_inputs = 1,
                        .inputs = inputs,
                        .n_outputs = 1,
                        .outputs = outputs,
                        .operand_values = values,
                        .operand_values_len = w_bytes + b_bytes + 4};
    uint64_t t =
        time_model(&m, buf, FC_ROWS * FC_IN, buf + FC_ROWS * FC_IN, FC_ROWS * FC_OUT, REPS, c);
    free(values);
    return t;
}

void qos_throughput_measure(qos_throughput *t) {
    /* Defaults: a slow machine, so that a failed probe errs toward refusing. */
    t->flops_per_ns = 0.5;
    t->bytes_per_ns = 2.0;
    t->op_ns = 2000;
    t->took_ns = 0;
    float *buf = calloc(2 * BIG + 64, sizeof(float));
    if (buf) {
        for (size_t i = 0; i < 2 * BIG; i++)
            buf[i] = (float)(i % 13);
        eng_cost c;
        probe_chain(buf, &c); /* the engine's one-time start (kernel libraries) is not timed */
        uint64_t t0 = eng_now_ns();
        uint64_t ns = probe_chain(buf, &c);
        if (ns) t->op_ns = (double)ns / CHAIN;
        ns = probe_add(buf, &c);
        if (ns && (double)ns > t->op_ns) t->bytes_per_ns = c.bytes / ((double)ns - t->op_ns);
        ns = probe_fc(buf, &c);
        if (ns) {
            double left = (double)ns - t->op_ns - c.bytes / t->bytes_per_ns;
            if (left < (double)ns / 10) left = (double)ns / 10;
            t->flops_per_ns = c.flops / left;
        }
        t->took_ns = eng_now_ns() - t0;
        free(buf);
    }
}

double qos_cost_step_ns(const qos_throughput *t, const eng_prepared *p, uint32_t k) {
    eng_cost c = eng_prepared_step_cost(p, k);
    return t->op_ns + c.flops / t->flops_per_ns + c.bytes / t->bytes_per_ns;
}

/* ---- the estimate ---- */

void qos_est_init(qos_estimator *e, uint64_t seed_ns) {
    memset(e, 0, sizeof *e);
    e->seed_ns = seed_ns ? seed_ns : 1;
    e->typical_ns = e->seed_ns;
    e->tail_ns = e->max_ns = 2 * e->seed_ns;
}

/* Index of the first sorted sample >= ns. */
static uint32_t lower_bound(const uint64_t *v, uint32_t n, uint64_t ns) {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        if (v[mid] < ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void qos_est_add(qos_estimator *e, uint64_t ns) {
    if (!ns) ns = 1;
    uint64_t *v = e->sorted;
    if (e->n == QOS_EST_WINDOW) { /* the oldest sample leaves the sorted copy */
        uint32_t at = lower_bound(v, e->n, e->window[e->next]);
        memmove(&v[at], &v[at + 1], sizeof v[0] * (e->n - at - 1));
        e->n--;
    }
    uint32_t at = lower_bound(v, e->n, ns);
    memmove(&v[at + 1], &v[at], sizeof v[0] * (e->n - at));
    v[at] = ns;
    e->n++;
    e->window[e->next] = ns;
    e->next = (e->next + 1) % QOS_EST_WINDOW;
    e->runs++;
    uint32_t keep = e->n - e->n / 10;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < keep; i++)
        sum += v[i];
    e->typical_ns = sum / keep;
    uint32_t rank = e->n < 20 ? e->n : (e->n * 95 + 99) / 100; /* nearest rank */
    e->tail_ns = v[rank - 1] > e->typical_ns ? v[rank - 1] : e->typical_ns;
    e->max_ns = v[e->n - 1];
}

/* ---- latency histograms ---- */

static unsigned bucket(uint64_t ns) {
    uint64_t us = ns / 1000;
    if (us < QOS_HIST_SUB) return (unsigned)us;        /* the first octaves are exact */
    unsigned oct = 63 - (unsigned)__builtin_clzll(us); /* us in [2^oct, 2^(oct+1)) */
    unsigned sub = (unsigned)((us >> (oct - 4)) & (QOS_HIST_SUB - 1));
    unsigned b = (oct - 3) * QOS_HIST_SUB + sub;
    return b < QOS_HIST_BUCKETS ? b : QOS_HIST_BUCKETS - 1;
}

/* Upper edge of bucket b, in ns. */
static uint64_t edge(unsigned b) {
    if (b < QOS_HIST_SUB) return (uint64_t)(b + 1) * 1000;
    unsigned oct = b / QOS_HIST_SUB + 3, sub = b % QOS_HIST_SUB;
    return (((uint64_t)(QOS_HIST_SUB + sub + 1)) << (oct - 4)) * 1000;
}

void qos_hist_add(qos_hist *h, uint64_t ns) {
    h->b[bucket(ns)]++;
    h->count++;
    h->sum_ns += ns;
}

uint64_t qos_hist_count_below(const qos_hist *h, uint64_t bound_ns) {
    uint64_t n = 0;
    for (unsigned b = 0; b < QOS_HIST_BUCKETS && edge(b) <= bound_ns; b++)
        n += h->b[b];
    return n;
}

uint64_t qos_hist_quantile(const qos_hist *h, double q) {
    if (!h->count) return 0;
    uint64_t want = (uint64_t)(q * (double)h->count + 0.999999);
    if (want < 1) want = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < QOS_HIST_BUCKETS; b++) {
        seen += h->b[b];
        if (seen >= want) return edge(b);
    }
    return edge(QOS_HIST_BUCKETS - 1);
}
