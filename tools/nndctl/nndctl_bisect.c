/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl_bisect.c: where two devices part on a model. See nndctl_bisect.h. */
#include "tools/nndctl/nndctl_bisect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "nnd/nnd_wire.h"
#include "schema/hal_names.h"
#include "tools/conformance/case_pool.h"
#include "tools/conformance/case_probe.h"

#define ALIGN 64

static size_t align_up(size_t n) {
    return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

/* Prepares m on device dev and executes it once with in[i] (in_bytes[i]) as input i;
 * outs[j] (malloc'd here) receives output j. fds: m's constant pools. 0, or -1 with err. */
static int exec_on(nnd_client *cl, const char *dev, const Nnd__Model *m, const int *fds,
                   size_t n_fds, void *const *in, const size_t *in_bytes, void **outs, char *err,
                   size_t errlen) {
    const Nnd__Subgraph *g = m->main;
    size_t nin = g->n_input_indexes, nout = g->n_output_indexes, total = 0;
    size_t *off = calloc(nin + nout + 1, sizeof *off), *len = calloc(nin + nout + 1, sizeof *len);
    Nnd__RequestArgument *args = calloc(nin + nout + 1, sizeof *args);
    Nnd__RequestArgument **in_p = calloc(nin + 1, sizeof *in_p),
                         **out_p = calloc(nout + 1, sizeof *out_p);
    Nnd__DataLocation *locs = calloc(nin + nout + 1, sizeof *locs);
    Nnd__Reply *reply = NULL;
    uint8_t *map = NULL;
    int fd = -1, rc = -1;
    uint64_t handle = 0;
    bool prepared = false;
    if (!off || !len || !args || !in_p || !out_p || !locs) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nin + nout; i++) {
        len[i] = i < nin ? in_bytes[i] : tool_probe_bytes(g->operands[g->output_indexes[i - nin]]);
        off[i] = total;
        total += align_up(len[i] ? len[i] : 1);
    }
    int st = nnd_client_prepare_on(cl, &dev, 1, m, fds, n_fds,
                                   NND__EXECUTION_PREFERENCE__PREFER_FAST_SINGLE_ANSWER,
                                   NND__PRIORITY__PRIORITY_MEDIUM, 0, &handle, err, errlen);
    if (st != 0) goto out;
    prepared = true;
    if ((fd = nnd_memfd_create("nndctl-bisect", total, (void **)&map)) < 0) {
        snprintf(err, errlen, "memfd: %s", strerror(-fd));
        goto out;
    }
    Nnd__MemoryPool pool = NND__MEMORY_POOL__INIT, *pools[1] = {&pool};
    pool.kind = NND__POOL_KIND__POOL_MEMFD;
    pool.size = total;
    Nnd__ExecutionRequest req = NND__EXECUTION_REQUEST__INIT;
    req.n_inputs = nin, req.inputs = in_p;
    req.n_outputs = nout, req.outputs = out_p;
    req.n_pools = 1, req.pools = pools;
    for (size_t i = 0; i < nin + nout; i++) {
        nnd__request_argument__init(&args[i]);
        nnd__data_location__init(&locs[i]);
        locs[i].offset = off[i];
        locs[i].length = len[i];
        args[i].location = &locs[i];
        if (i < nin) {
            in_p[i] = &args[i];
            memcpy(map + off[i], in[i], len[i]);
        } else {
            out_p[i - nin] = &args[i];
        }
    }
    st = nnd_client_execute_opts(cl, handle, &req, &fd, 1, NULL, &reply, err, errlen);
    if (st != 0) goto out;
    for (size_t j = 0; j < nout; j++) {
        outs[j] = malloc(len[nin + j] + 1);
        if (!outs[j]) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        memcpy(outs[j], map + off[nin + j], len[nin + j]);
    }
    rc = 0;
out:
    if (prepared) nnd_client_release(cl, handle);
    if (reply) nnd__reply__free_unpacked(reply, NULL);
    if (map) munmap(map, total);
    if (fd >= 0) close(fd);
    free(off), free(len), free(args), free(in_p), free(out_p), free(locs);
    return rc;
}

static void free_all(void **v, size_t n) {
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

static void print_diff(const char *lead, size_t k, int32_t type, const Nnd__Operand *o,
                       const tool_probe_diff *d, const char *a, const char *b) {
    const char *name = schema_hal_operation_name(type);
    printf("  %soperation %zu (%s) differs: max %g %s at element %zu (%s %g, %s %g), %zu of %zu "
           "elements differ\n",
           lead, k, name ? name : "?", d->max, tool_probe_is_quant(o) ? "steps" : "absolute", d->at,
           a, d->a, b, d->b, d->differ, d->count);
}

/* Operation k alone on both devices, fed a's tensors (or the example's inputs). */
static void alone(nnd_client *cl, const tool_case *c, const Nnd__Model *m, const Nnd__Model *probe,
                  void *const *ra, const int *fds, size_t n_fds, size_t k, const char *a,
                  const char *b) {
    uint32_t *from = NULL;
    Nnd__Model *one = tool_probe_op(m, k, &from);
    if (!one) return;
    const Nnd__Subgraph *g = one->main, *pg = probe->main;
    size_t nin = g->n_input_indexes, nout = g->n_output_indexes;
    void **in = calloc(nin + 1, sizeof(void *)), **oa = calloc(nout + 1, sizeof(void *)),
         **ob = calloc(nout + 1, sizeof(void *));
    size_t *in_bytes = calloc(nin + 1, sizeof(size_t));
    char err[512] = "cannot find its inputs";
    bool ok = in && oa && ob && in_bytes;
    for (size_t i = 0; ok && i < nin; i++) {
        in_bytes[i] = tool_probe_bytes(g->operands[g->input_indexes[i]]);
        for (size_t j = 0; j < pg->n_output_indexes && !in[i]; j++)
            if (pg->output_indexes[j] == from[i]) in[i] = ra[j];
        for (size_t j = 0; j < pg->n_input_indexes && !in[i]; j++)
            if (pg->input_indexes[j] == from[i])
                for (size_t t = 0; t < c->examples[0].n_inputs; t++)
                    if (c->examples[0].inputs[t].index == j) in[i] = c->examples[0].inputs[t].data;
        ok = in[i] != NULL;
    }
    ok = ok && exec_on(cl, a, one, fds, n_fds, in, in_bytes, oa, err, sizeof err) == 0 &&
         exec_on(cl, b, one, fds, n_fds, in, in_bytes, ob, err, sizeof err) == 0;
    if (!ok) printf("  alone: cannot run operation %zu: %s\n", k, err);
    for (size_t j = 0; ok && j < nout; j++) {
        const Nnd__Operand *o = g->operands[g->output_indexes[j]];
        tool_probe_diff d;
        tool_probe_compare(o, oa[j], ob[j], tool_probe_bytes(o) / schema_hal_element_size(o->type),
                           &d);
        if (d.differ)
            print_diff("alone, fed the same inputs: ", k, g->operations[0]->type, o, &d, a, b);
        else
            printf("  alone, fed the same inputs: operation %zu gives the same on both: the "
                   "difference comes from upstream\n",
                   k);
    }
    free_all(oa, nout), free_all(ob, nout);
    free(in), free(in_bytes), free(from);
    nnd__model__free_unpacked(one, NULL);
}

/* One case: 0 agree, 1 part, 2 cannot run. */
static int bisect_case(nnd_client *cl, const tool_case *c, const char *a, const char *b,
                       bool verbose) {
    printf("%s:%s:\n", c->file, c->name);
    if (!c->n_examples || c->expect_failure || c->dynamic_output_shape) {
        printf("  not compared: no example to run\n");
        return 2;
    }
    uint8_t *bytes = NULL, *map = NULL;
    size_t len = 0;
    int fd = -1;
    Nnd__Model *pooled = tool_case_pooled_model(c, &bytes, &len);
    if (pooled && (fd = nnd_memfd_create("nndctl-bisect-constants", len, (void **)&map)) >= 0) {
        memcpy(map, bytes, len);
        munmap(map, len);
    }
    free(bytes);
    const Nnd__Model *m = pooled ? pooled : c->model;
    uint32_t *writer = NULL;
    Nnd__Model *probe = tool_probe_all(m, &writer);
    size_t nin = m->main->n_input_indexes, nout = probe ? probe->main->n_output_indexes : 0;
    void **in = calloc(nin + 1, sizeof(void *)), **ra = calloc(nout + 1, sizeof(void *)),
         **rb = calloc(nout + 1, sizeof(void *));
    size_t *in_bytes = calloc(nin + 1, sizeof(size_t));
    int rc = 2;
    char err[512] = "out of memory";
    const tool_case_example *ex = &c->examples[0];
    for (size_t t = 0; in && in_bytes && t < ex->n_inputs; t++)
        if (ex->inputs[t].index < nin) {
            in[ex->inputs[t].index] = ex->inputs[t].data;
            in_bytes[ex->inputs[t].index] = ex->inputs[t].bytes;
        }
    for (size_t j = 0; probe && j < nout; j++)
        if (!tool_probe_bytes(probe->main->operands[probe->main->output_indexes[j]])) {
            printf("  not compared: a tensor of unknown shape\n");
            goto done;
        }
    if ((pooled && fd < 0) || !probe || !in || !ra || !rb || !in_bytes ||
        exec_on(cl, a, probe, &fd, fd >= 0, in, in_bytes, ra, err, sizeof err) ||
        exec_on(cl, b, probe, &fd, fd >= 0, in, in_bytes, rb, err, sizeof err)) {
        printf("  not compared: %s\n", err);
        goto done;
    }
    const Nnd__Subgraph *g = probe->main;
    size_t first = SIZE_MAX;
    for (size_t k = 0; k < g->n_operations; k++)
        for (size_t j = 0; j < nout; j++) {
            if (writer[j] != k) continue;
            const Nnd__Operand *o = g->operands[g->output_indexes[j]];
            tool_probe_diff d;
            tool_probe_compare(o, ra[j], rb[j],
                               tool_probe_bytes(o) / schema_hal_element_size(o->type), &d);
            if (!d.differ || (first != SIZE_MAX && !verbose)) continue;
            print_diff(first == SIZE_MAX ? "first: " : "", k, g->operations[k]->type, o, &d, a, b);
            if (first == SIZE_MAX) first = k;
        }
    if (first == SIZE_MAX) {
        printf("  every intermediate tensor agrees on %s and %s\n", a, b);
        rc = 0;
    } else {
        alone(cl, c, m, probe, ra, &fd, fd >= 0, first, a, b);
        rc = 1;
    }
done:
    free_all(ra, nout), free_all(rb, nout);
    free(in), free(in_bytes), free(writer);
    if (probe) nnd__model__free_unpacked(probe, NULL);
    if (pooled) nnd__model__free_unpacked(pooled, NULL);
    if (fd >= 0) close(fd);
    return rc;
}

int nndctl_bisect(const nndctl_opts *o, const char *a, const char *b, const tool_case *cases,
                  size_t n, bool verbose) {
    char err[512];
    nnd_client *cl = nnd_client_connect(o->socket_path, "nndctl-bisect", err, sizeof err);
    if (!cl) {
        fprintf(stderr, "nndctl conformance --bisect: %s\n", err);
        return 2;
    }
    int worst = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = bisect_case(cl, &cases[i], a, b, verbose);
        if (rc > worst) worst = rc;
    }
    nnd_client_close(cl);
    return worst;
}
