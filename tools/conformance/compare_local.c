/* SPDX-License-Identifier: Apache-2.0 */
/* compare_local.c: the reference kernels against the fast paths, operation by operation.
 * See compare_local.h. */
#include "tools/conformance/compare_local.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/wire/convert.h"
#include "engine/engine.h"
#include "schema/hal_names.h"
#include "tools/conformance/case_pool.h"
#include "tools/conformance/case_probe.h"

typedef struct pool_ref {
    const uint8_t *base;
    size_t len;
} pool_ref;

/* Runs m once on one kernel set; outs[j] (malloc'd here) receives output j. in[i] holds
 * input i (in_bytes[i] bytes). Returns 0, or -1 with err. */
static int run_model(const Nnd__Model *m, pool_ref pool, bool reference, void *const *in,
                     const size_t *in_bytes, void **outs, char *err, size_t errlen) {
    setenv("NND_REFERENCE_KERNELS", reference ? "1" : "0", 1);
    const Nnd__Subgraph *g = m->main;
    eng_memory_view view = {.base = pool.base, .size = pool.len};
    eng_model_desc d;
    eng_prepared *p = NULL;
    eng_exec *e = NULL;
    eng_io *ins = calloc(g->n_input_indexes + 1, sizeof *ins);
    eng_io *os = calloc(g->n_output_indexes + 1, sizeof *os);
    int rc = -1;
    schema_status s =
        srv_model_from_proto(m, pool.base ? &view : NULL, pool.base ? 1 : 0, &d, err, errlen);
    if (s) {
        free(ins), free(os);
        unsetenv("NND_REFERENCE_KERNELS");
        return -1;
    }
    if (!ins || !os || eng_prepare(&d, &p, err, errlen) != SCHEMA_OK) goto done;
    for (size_t i = 0; i < g->n_input_indexes; i++)
        ins[i] = (eng_io){.data = in[i], .length = in_bytes[i]};
    for (size_t j = 0; j < g->n_output_indexes; j++) {
        size_t n = tool_probe_bytes(g->operands[g->output_indexes[j]]);
        outs[j] = calloc(1, n + 64);
        if (!outs[j]) goto done;
        os[j] = (eng_io){.data = outs[j], .length = n};
    }
    e = eng_exec_create(p);
    if (e && eng_exec_run(e, ins, os, NULL, NULL, err, errlen) == SCHEMA_OK) rc = 0;
done:
    if (e) eng_exec_free(e);
    if (p) eng_prepared_free(p);
    srv_model_desc_clear(&d);
    free(ins), free(os);
    unsetenv("NND_REFERENCE_KERNELS");
    return rc;
}

static void free_all(void **v, size_t n) {
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

static bool past_bound(const Nnd__Operand *o, const tool_probe_diff *d, double max_steps) {
    if (tool_probe_is_quant(o)) return d->max > max_steps;
    bool floating = o->type == SCHEMA_TENSOR_FLOAT32 || o->type == SCHEMA_TENSOR_FLOAT16 ||
                    o->type == SCHEMA_FLOAT32 || o->type == SCHEMA_FLOAT16;
    return floating ? d->max > 1e-4 * fmax(1.0, fabs(d->a)) : d->differ > 0;
}

static void print_diff(const char *what, size_t k, const Nnd__Operation *op, const Nnd__Operand *o,
                       const tool_probe_diff *d) {
    printf("  %s operation %zu (%s): max %g %s at element %zu (reference %g, fast %g), %zu of "
           "%zu elements differ\n",
           what, k, schema_hal_operation_name(op->type), d->max,
           tool_probe_is_quant(o) ? "steps" : "absolute", d->at, d->a, d->b, d->differ, d->count);
}

/* Both kernel sets with every intermediate tensor out: the first operation that parts (and
 * with verbose every one that differs there). ref receives the reference's outputs
 * (writer[j] wrote output j). */
static int chain(const Nnd__Model *probe, const uint32_t *writer, pool_ref pool, void *const *in,
                 const size_t *in_bytes, void **ref, void **fast, bool verbose) {
    char err[512] = "";
    if (run_model(probe, pool, true, in, in_bytes, ref, err, sizeof err) ||
        run_model(probe, pool, false, in, in_bytes, fast, err, sizeof err)) {
        printf("  cannot run the model: %s\n", err);
        return -1;
    }
    const Nnd__Subgraph *g = probe->main;
    bool first = true;
    for (size_t k = 0; k < g->n_operations; k++)
        for (size_t j = 0; j < g->n_output_indexes; j++) {
            if (writer[j] != k) continue;
            const Nnd__Operand *o = g->operands[g->output_indexes[j]];
            tool_probe_diff d;
            tool_probe_compare(o, ref[j], fast[j],
                               tool_probe_bytes(o) / schema_hal_element_size(o->type), &d);
            if (d.differ && (first || verbose))
                print_diff(first ? "whole model: first difference at" : "whole model:", k,
                           g->operations[k], o, &d);
            if (d.differ) first = false;
        }
    if (first) printf("  whole model: every intermediate tensor agrees\n");
    return 0;
}

/* The bytes operand o of the original model holds in the reference run: a model input's
 * from the example, another's from ref. */
static const void *operand_data(const tool_case *c, const Nnd__Model *probe, void *const *ref,
                                uint32_t o) {
    const Nnd__Subgraph *g = probe->main;
    for (size_t j = 0; j < g->n_output_indexes; j++)
        if (g->output_indexes[j] == o) return ref[j];
    for (size_t i = 0; i < g->n_input_indexes; i++)
        if (g->input_indexes[i] == o)
            for (size_t t = 0; t < c->examples[0].n_inputs; t++)
                if (c->examples[0].inputs[t].index == i) return c->examples[0].inputs[t].data;
    return NULL;
}

/* Operation k alone on both kernel sets, fed the reference's tensors. Returns 1 when it
 * drifts past the bounds, 0 when not, -1 when it cannot run. *worst takes the largest
 * quantized difference. */
static int one_op(const tool_case *c, const Nnd__Model *m, const Nnd__Model *probe,
                  void *const *ref, pool_ref pool, size_t k, double max_steps, bool verbose,
                  double *worst) {
    uint32_t *from = NULL;
    Nnd__Model *one = tool_probe_op(m, k, &from);
    if (!one) return 0; /* IF, WHILE: not compared alone */
    const Nnd__Subgraph *g = one->main;
    size_t n_in = g->n_input_indexes, n_out = g->n_output_indexes;
    void **in = calloc(n_in + 1, sizeof(void *)), **a = calloc(n_out + 1, sizeof(void *)),
         **b = calloc(n_out + 1, sizeof(void *));
    size_t *in_bytes = calloc(n_in + 1, sizeof(size_t));
    int rc = -1;
    char err[512] = "";
    for (size_t i = 0; in && in_bytes && i < n_in; i++) {
        in[i] = (void *)operand_data(c, probe, ref, from[i]);
        in_bytes[i] = tool_probe_bytes(g->operands[g->input_indexes[i]]);
        if (!in[i]) goto done;
    }
    if (!a || !b || run_model(one, pool, true, in, in_bytes, a, err, sizeof err) ||
        run_model(one, pool, false, in, in_bytes, b, err, sizeof err)) {
        printf("  operation %zu (%s): cannot run alone: %s\n", k,
               schema_hal_operation_name(g->operations[0]->type), err);
        goto done;
    }
    rc = 0;
    for (size_t j = 0; j < n_out; j++) {
        const Nnd__Operand *o = g->operands[g->output_indexes[j]];
        tool_probe_diff d;
        tool_probe_compare(o, a[j], b[j], tool_probe_bytes(o) / schema_hal_element_size(o->type),
                           &d);
        if (tool_probe_is_quant(o) && d.max > *worst) *worst = d.max;
        bool bad = past_bound(o, &d, max_steps);
        if (bad) rc = 1;
        if (bad || (verbose && d.differ))
            print_diff(bad ? "DRIFT alone:" : "alone:", k, g->operations[0], o, &d);
    }
done:
    free_all(a, n_out), free_all(b, n_out);
    free(in), free(in_bytes), free(from);
    nnd__model__free_unpacked(one, NULL);
    return rc;
}

int tool_compare_local(const tool_case *c, double max_steps, bool verbose) {
    printf("%s:%s:\n", c->file, c->name);
    if (!c->n_examples || c->expect_failure || c->dynamic_output_shape) {
        printf("  not compared: no example to run\n");
        return 2;
    }
    uint8_t *pool_bytes = NULL;
    size_t pool_len = 0;
    Nnd__Model *pooled = tool_case_pooled_model(c, &pool_bytes, &pool_len);
    const Nnd__Model *m = pooled ? pooled : c->model;
    pool_ref pool = {pool_bytes, pool_len};
    uint32_t *writer = NULL;
    Nnd__Model *probe = tool_probe_all(m, &writer);
    const tool_case_example *ex = &c->examples[0];
    size_t n_in = m->main->n_input_indexes;
    size_t n_out = probe ? probe->main->n_output_indexes : 0;
    void **in = calloc(n_in + 1, sizeof(void *)), **ref = calloc(n_out + 1, sizeof(void *)),
         **fast = calloc(n_out + 1, sizeof(void *));
    size_t *in_bytes = calloc(n_in + 1, sizeof(size_t));
    int rc = 2;
    for (size_t t = 0; in && in_bytes && t < ex->n_inputs; t++)
        if (ex->inputs[t].index < n_in) {
            in[ex->inputs[t].index] = ex->inputs[t].data;
            in_bytes[ex->inputs[t].index] = ex->inputs[t].bytes;
        }
    if (!probe || !in || !ref || !fast || !in_bytes) {
        printf("  not compared: out of memory or no operations\n");
        goto done;
    }
    for (size_t j = 0; j < n_out; j++)
        if (!tool_probe_bytes(probe->main->operands[probe->main->output_indexes[j]])) {
            printf("  not compared: a tensor of unknown shape\n");
            goto done;
        }
    if (chain(probe, writer, pool, in, in_bytes, ref, fast, verbose)) goto done;
    rc = 0;
    double worst = 0;
    size_t drifting = 0;
    for (size_t k = 0; k < m->main->n_operations; k++) {
        int r = one_op(c, m, probe, ref, pool, k, max_steps, verbose, &worst);
        if (r < 0) rc = 2;
        if (r > 0) drifting++;
    }
    if (drifting) rc = 1;
    printf("  operation by operation: largest 8-bit difference %g steps; %zu of %zu operations "
           "past the bound (%g steps)\n",
           worst, drifting, m->main->n_operations, max_steps);
done:
    free_all(ref, n_out), free_all(fast, n_out);
    free(in), free(in_bytes), free(writer);
    if (probe) nnd__model__free_unpacked(probe, NULL);
    if (pooled) nnd__model__free_unpacked(pooled, NULL);
    free(pool_bytes);
    return rc;
}
