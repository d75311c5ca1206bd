/* SPDX-License-Identifier: Apache-2.0 */
/* test_opencl_conformance (unit): the conformance folders' cases that nnd-opencl takes
 * whole, through the driver ABI in process (the daemon's ABI 2 loader not needed), on
 * PoCL's CPU device (NND_OPENCL_CPU=1; skipped, 77, without an OpenCL device). Each case's
 * model goes to supported_operations(); one that the driver takes whole (every operation:
 * its FLOAT32 cases of the operations docs/opencl.md lists, shapes known) is prepared as
 * one partition, and each example executed and judged by the vectors' own criteria
 * (tool_case_judge: the README's float32 tolerances). Cases it does not take whole are
 * counted, not run (the CPU would take them). Fails on any failed case, or when no case at
 * all was taken (the driver would then say no to everything).
 * Usage: test_opencl_conformance DRIVER.so FOLDER... */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/wire/convert.h"
#include "engine/engine.h"
#include "nnd/driver.h"
#include "tools/conformance/case_judge.h"
#include "tools/conformance/case_load.h"

#define SKIP 77

static const nnd_driver *drv;
static void *device;

/* The engine's description of a model as the ABI gives it; false for what it cannot
 * carry (subgraphs). */
static bool to_driver(const eng_model_desc *d, nnd_driver_operand *ops, nnd_driver_operation *opn,
                      nnd_driver_model *out) {
    if (d->n_referenced) return false;
    for (uint32_t i = 0; i < d->n_operands; i++) {
        const eng_operand_desc *o = &d->operands[i];
        nnd_driver_operand *t = &ops[i];
        *t = (nnd_driver_operand){
            .type = o->type, .rank = o->rank, .scale = o->scale, .zero_point = o->zero_point};
        memcpy(t->dims, o->dims, sizeof(uint32_t) * (o->rank > 16 ? 16 : o->rank));
        switch (o->lifetime) {
        case SCHEMA_MODEL_INPUT: t->lifetime = NND_DRIVER_INPUT; break;
        case SCHEMA_MODEL_OUTPUT: t->lifetime = NND_DRIVER_OUTPUT; break;
        case SCHEMA_CONSTANT_COPY:
            t->lifetime = NND_DRIVER_CONSTANT;
            t->data = d->operand_values + o->offset, t->length = o->length;
            break;
        case SCHEMA_CONSTANT_REFERENCE:
            t->lifetime = NND_DRIVER_CONSTANT;
            t->data = d->pools[o->pool].base + o->offset, t->length = o->length;
            break;
        case SCHEMA_NO_VALUE: t->lifetime = NND_DRIVER_OMITTED; break;
        case SCHEMA_TEMPORARY: t->lifetime = NND_DRIVER_TEMPORARY; break;
        default: return false;
        }
    }
    for (uint32_t k = 0; k < d->n_operations; k++) {
        const eng_operation_desc *o = &d->operations[k];
        opn[k] = (nnd_driver_operation){.type = o->type,
                                        .n_inputs = o->n_inputs,
                                        .n_outputs = o->n_outputs,
                                        .inputs = o->inputs,
                                        .outputs = o->outputs,
                                        .index = k};
    }
    *out = (nnd_driver_model){.n_operands = d->n_operands,
                              .operands = ops,
                              .n_operations = d->n_operations,
                              .operations = opn,
                              .n_inputs = d->n_inputs,
                              .inputs = d->inputs,
                              .n_outputs = d->n_outputs,
                              .outputs = d->outputs,
                              .relaxed = d->relaxed};
    return true;
}

/* Runs every example of a prepared case; 0 pass, 1 fail. */
static int run_examples(const tool_case *c, void *prepared, uint32_t n_in, uint32_t n_out) {
    nnd_driver_arg *in = calloc(n_in + 1, sizeof *in), *out = calloc(n_out + 1, sizeof *out);
    int rc = 0;
    for (size_t x = 0; x < c->n_examples && !rc; x++) {
        const tool_case_example *ex = &c->examples[x];
        for (size_t i = 0; i < ex->n_inputs && ex->inputs[i].index < n_in; i++) {
            const tool_case_tensor *t = &ex->inputs[i];
            in[t->index] = (nnd_driver_arg){.data = t->data, .length = t->bytes, .rank = t->rank};
            memcpy(in[t->index].dims, t->dims, sizeof(uint32_t) * t->rank);
        }
        for (size_t i = 0; i < ex->n_outputs && ex->outputs[i].index < n_out; i++) {
            const tool_case_tensor *t = &ex->outputs[i];
            out[t->index] = (nnd_driver_arg){.data = calloc(1, t->bytes + 4), .length = t->bytes};
        }
        char err[256] = "";
        nnd_driver_execution e = {.prepared = prepared,
                                  .n_inputs = n_in,
                                  .n_outputs = n_out,
                                  .inputs = in,
                                  .outputs = out,
                                  .priority = NND_DRIVER_PRIORITY_MEDIUM,
                                  .err = err,
                                  .errlen = sizeof err};
        int s = drv->execute(&e);
        if (s) {
            printf("FAIL %s:%s: example %zu: execute %d: %s\n", c->file, c->name, x, s, err);
            rc = 1;
        }
        for (size_t i = 0; i < ex->n_outputs && !rc; i++) {
            const tool_case_tensor *t = &ex->outputs[i];
            char why[512] = "";
            if (!tool_case_judge(c, t, out[t->index].data, t->bytes, out[t->index].dims,
                                 out[t->index].rank, why, sizeof why)) {
                printf("FAIL %s:%s: example %zu output %u: %s\n", c->file, c->name, x, t->index,
                       why);
                rc = 1;
            }
        }
        for (uint32_t i = 0; i < n_out; i++)
            free(out[i].data), out[i].data = NULL;
    }
    free(in);
    free(out);
    return rc;
}

/* 0 pass, 1 fail, 2 not taken whole. */
static int run_case(const tool_case *c) {
    if (c->expect_failure || c->infinite_loop_timeout) return 2;
    char err[512] = "";
    eng_model_desc d;
    if (srv_model_from_proto(c->model, NULL, 0, &d, err, sizeof err)) return 2;
    nnd_driver_operand *ops = calloc(d.n_operands + 1, sizeof *ops);
    nnd_driver_operation *opn = calloc(d.n_operations + 1, sizeof *opn);
    bool *supported = calloc(d.n_operations + 1, sizeof *supported);
    nnd_driver_model m;
    int rc = 2;
    if (ops && opn && supported && to_driver(&d, ops, opn, &m) &&
        !drv->supported_operations(device, &m, supported, err, sizeof err)) {
        bool whole = d.n_operations > 0;
        for (uint32_t k = 0; k < d.n_operations; k++)
            whole = whole && supported[k];
        if (!whole && getenv("NND_TEST_VERBOSE"))
            for (uint32_t k = 0; k < d.n_operations; k++)
                if (!supported[k]) {
                    printf("not taken %s:%s: operation %u (%s)\n", c->file, c->name, k,
                           schema_operation_name(d.operations[k].type));
                    break;
                }
        if (whole) {
            nnd_driver_prepare_args args = {.priority = NND_DRIVER_PRIORITY_MEDIUM};
            nnd_driver_prepared_info info = {0};
            int s = drv->prepare(device, &m, &args, &info, err, sizeof err);
            if (s) {
                printf("FAIL %s:%s: prepare %d: %s\n", c->file, c->name, s, err);
                rc = 1;
            } else {
                rc = run_examples(c, info.prepared, m.n_inputs, m.n_outputs);
                drv->release(info.prepared);
            }
        }
    }
    free(ops), free(opn), free(supported);
    srv_model_desc_clear(&d);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: test_opencl_conformance DRIVER.so FOLDER...\n");
        return 2;
    }
    setenv("NND_OPENCL_CPU", "1", 1);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    drv = h ? dlsym(h, NND_DRIVER_SYMBOL) : NULL;
    if (!drv) {
        fprintf(stderr, "test_opencl_conformance: %s\n", h ? "no descriptor" : dlerror());
        return 1;
    }
    nnd_driver_device_info devs[NND_DRIVER_MAX_DEVICES];
    char err[512] = "";
    if (drv->open(devs, NND_DRIVER_MAX_DEVICES, err, sizeof err) <= 0) {
        printf("SKIP: no OpenCL device (install pocl-opencl-icd for the CPU one)\n");
        return SKIP;
    }
    device = devs[0].device;
    size_t counts[3] = {0, 0, 0};
    for (int a = 2; a < argc; a++) {
        tool_case *cases = NULL;
        size_t n = 0;
        if (tool_cases_load(argv[a], &cases, &n, NULL, NULL, err, sizeof err)) {
            fprintf(stderr, "test_opencl_conformance: %s: %s\n", argv[a], err);
            return 1;
        }
        size_t folder[3] = {0, 0, 0};
        for (size_t i = 0; i < n; i++)
            folder[run_case(&cases[i])]++;
        printf("%s: %zu cases taken whole and passed, %zu failed, %zu not taken\n", argv[a],
               folder[0], folder[1], folder[2]);
        for (int k = 0; k < 3; k++)
            counts[k] += folder[k];
        tool_cases_free(cases, n);
    }
    drv->close();
    printf("all: %zu passed, %zu failed, %zu not taken\n", counts[0], counts[1], counts[2]);
    if (!counts[0]) printf("FAIL: the driver took no case whole\n");
    return counts[1] || !counts[0] ? 1 : 0;
}
