/* SPDX-License-Identifier: Apache-2.0 */
/* conformance_local: runs conformance cases through the engine in this process, without
 * a daemon: the fast loop for kernel work, and the oracle the daemon path is compared to.
 * A case that expects failure passes when the engine refuses it at conversion, supported
 * operations, prepare or execution (case_judge.h); an endless loop when its loop timeout
 * stops it in time (tool_case_judge_endless). Constants the vectors mark
 * wasConstantReference come from a memory pool (case_pool.h).
 * With --exact, 8-bit outputs must match to the bit (the vectors allow one step): for
 * expected outputs that came from TensorFlow Lite's reference kernels; --steps N allows N
 * steps instead.
 * With --compare, nothing is judged against the files' outputs: each case's model runs on
 * the reference kernels and on the fast paths, whole and operation by operation
 * (compare_local.h), and a case fails when an operation alone drifts past --max-steps
 * (default 1) 8-bit steps.
 * --guard-pages: every input, constant and output ends where an inaccessible page begins,
 * with nothing readable past it (eng_io.readable_past 0; case_guard.h), so that a kernel's
 * read or write past a tensor faults instead of passing unseen.
 * Usage: nnd-conformance-local [--verbose] [--guard-pages] [--exact | --steps N | --compare
 *        [--max-steps N]] PATH...
 * Exit 0 only when nothing failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/conformance/compare_local.h"
#include "tools/conformance/conformance.h"
#include "daemon/wire/convert.h"
#include "engine/engine.h"

static bool verbose, compare, steps_set;
static double max_steps = 1, steps;
static bool guard_pages;

/* Memory for a tensor of n bytes: at a guard page in --guard-pages mode, else with room to
 * spare. Zeroed. */
static void *tensor_alloc(size_t n) {
    return guard_pages ? tool_guard_alloc(n) : calloc(1, n + 64);
}

static void tensor_free(void *p) {
    if (guard_pages)
        tool_guard_free(p);
    else
        free(p);
}

static const char *unsupported_op(const tool_case *c, const bool *supported) {
    for (size_t k = 0; k < c->model->main->n_operations; k++)
        if (!supported[k]) return schema_operation_name(c->model->main->operations[k]->type);
    return NULL;
}

/* The example's inputs into ins; in --guard-pages mode copied to guarded memory, which
 * copies[] (n_in entries) records for the caller to free with tensor_free(). */
static bool input_io(const tool_case_example *ex, eng_io *ins, void **copies, size_t n_in) {
    for (size_t i = 0; i < ex->n_inputs; i++) {
        const tool_case_tensor *t = &ex->inputs[i];
        if (t->index >= n_in) return false;
        eng_io *io = &ins[t->index];
        memset(io, 0, sizeof *io);
        if (!t->data && t->count == 0) {
            io->has_no_value = true;
            continue;
        }
        io->data = t->data;
        if (guard_pages) {
            tensor_free(copies[t->index]);
            if (!(copies[t->index] = io->data = tensor_alloc(t->bytes))) return false;
            memcpy(io->data, t->data, t->bytes);
        }
        io->length = t->bytes;
        io->rank = t->rank;
        memcpy(io->dims, t->dims, sizeof(uint32_t) * t->rank);
    }
    return true;
}

/* Runs one example and judges its outputs (not for a case that expects failure); *status
 * is the execution's. */
static bool run_example(const tool_case *c, eng_exec *e, const eng_prepared *p,
                        const tool_case_example *ex, schema_status *status, char *why,
                        size_t whylen) {
    uint32_t n_in = eng_prepared_num_inputs(p), n_out = eng_prepared_num_outputs(p);
    eng_io *ins = calloc(n_in, sizeof *ins), *outs = calloc(n_out, sizeof *outs);
    eng_output_shape *shapes = calloc(n_out, sizeof *shapes);
    void **bufs = calloc(n_out, sizeof(void *)), **copies = calloc(n_in + 1, sizeof(void *));
    bool ok = ins && outs && shapes && bufs && copies && input_io(ex, ins, copies, n_in);
    if (!ok) snprintf(why, whylen, "bad example");
    for (size_t i = 0; ok && i < ex->n_outputs; i++) {
        const tool_case_tensor *t = &ex->outputs[i];
        bufs[t->index] = tensor_alloc(t->bytes);
        outs[t->index].data = bufs[t->index];
        outs[t->index].length = t->bytes;
    }
    char err[SCHEMA_ERR_LEN] = "";
    *status = SCHEMA_OK;
    if (ok) {
        schema_status s = *status = eng_exec_run(e, ins, outs, shapes, NULL, err, sizeof err);
        if (s) {
            snprintf(why, whylen, "execute: %s: %s", schema_engine_status_name(s), err);
            ok = false;
        }
    }
    if (c->expect_failure) ok = false; /* nothing to judge */
    for (size_t i = 0; ok && i < ex->n_outputs; i++) {
        const tool_case_tensor *t = &ex->outputs[i];
        ok = tool_case_judge(c, t, bufs[t->index], t->bytes, shapes[t->index].dims,
                             shapes[t->index].rank, why, whylen);
    }
    /* Dynamic shapes: a buffer one element short must give OUTPUT_INSUFFICIENT_SIZE. */
    for (size_t i = 0; ok && c->dynamic_output_shape && i < ex->n_outputs; i++) {
        const tool_case_tensor *t = &ex->outputs[i];
        if (t->bytes == 0) continue;
        size_t saved = outs[t->index].length;
        outs[t->index].length = t->bytes - schema_hal_element_size(t->type);
        schema_status s = eng_exec_run(e, ins, outs, shapes, NULL, err, sizeof err);
        outs[t->index].length = saved;
        if (s != SCHEMA_OUTPUT_INSUFFICIENT_SIZE || shapes[t->index].sufficient) {
            snprintf(why, whylen, "output %u one element short: got %s, sufficient=%d", t->index,
                     schema_engine_status_name(s), shapes[t->index].sufficient);
            ok = false;
        } else if (shapes[t->index].rank != t->rank ||
                   memcmp(shapes[t->index].dims, t->dims, sizeof(uint32_t) * t->rank)) {
            snprintf(why, whylen, "output %u one element short: wrong needed dimensions", t->index);
            ok = false;
        }
    }
    for (uint32_t i = 0; bufs && i < n_out; i++)
        tensor_free(bufs[i]);
    for (uint32_t i = 0; copies && i < n_in; i++)
        tensor_free(copies[i]);
    free(bufs), free(copies), free(ins), free(outs), free(shapes);
    return ok;
}

/* The engine refused the case at `step` with s: a pass only for a case that expects it.
 * Returns 0 pass, 1 fail. */
static int refused(const tool_case *c, const char *step, schema_status s, const char *err) {
    char why[160] = "";
    bool deadline = s == SCHEMA_MISSED_DEADLINE_TRANSIENT || s == SCHEMA_MISSED_DEADLINE_PERSISTENT;
    if (c->expect_failure && tool_case_refusal_passes(c, deadline, why, sizeof why)) {
        if (verbose) printf("PASS %s:%s: refused at %s: %s\n", c->file, c->name, step, err);
        return 0;
    }
    printf("FAIL %s:%s: %s: %s: %s%s%s\n", c->file, c->name, step, schema_engine_status_name(s),
           err, *why ? ": " : "", why);
    return 1;
}

/* An endless loop (infinite_loop_timeout): its first example under a short loop timeout,
 * judged by its status and the time it took. Returns 0 pass, 1 fail. */
static int run_endless(const tool_case *c, eng_exec *e, const eng_prepared *p) {
    uint32_t n_in = eng_prepared_num_inputs(p), n_out = eng_prepared_num_outputs(p);
    eng_io *ins = calloc(n_in + 1, sizeof *ins), *outs = calloc(n_out + 1, sizeof *outs);
    void **bufs = calloc(n_out + 1, sizeof(void *)), **copies = calloc(n_in + 1, sizeof(void *));
    const tool_case_example *ex = &c->examples[0];
    char err[SCHEMA_ERR_LEN] = "", why[160] = "bad example";
    bool ok = ins && outs && bufs && copies && input_io(ex, ins, copies, n_in);
    for (size_t i = 0; ok && i < ex->n_outputs; i++) {
        const tool_case_tensor *t = &ex->outputs[i];
        ok = t->index < n_out && (bufs[t->index] = tensor_alloc(t->bytes));
        if (ok) outs[t->index] = (eng_io){.data = bufs[t->index], .length = t->bytes};
    }
    schema_status s = SCHEMA_OK;
    if (ok) {
        eng_checkpoint cp = {.loop_timeout_ns = TOOL_CASE_LOOP_TIMEOUT_NS};
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        s = eng_exec_run(e, ins, outs, NULL, &cp, err, sizeof err);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        uint64_t ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t1.tv_nsec -
                      (uint64_t)t0.tv_nsec;
        bool missed =
            s == SCHEMA_MISSED_DEADLINE_TRANSIENT || s == SCHEMA_MISSED_DEADLINE_PERSISTENT;
        ok = tool_case_judge_endless(missed, ns, TOOL_CASE_LOOP_TIMEOUT_NS, why, sizeof why);
    }
    if (!ok)
        printf("FAIL %s:%s: %s (%s: %s)\n", c->file, c->name, why, schema_engine_status_name(s),
               err);
    for (uint32_t i = 0; bufs && i < n_out; i++)
        tensor_free(bufs[i]);
    for (uint32_t i = 0; copies && i < n_in; i++)
        tensor_free(copies[i]);
    free(bufs), free(copies), free(ins), free(outs);
    return ok ? 0 : 1;
}

/* A converted case: supported operations, prepare (which takes the pool views on success,
 * *owned then set), each example. Returns 0 pass, 1 fail, 2 skip. */
static int run_desc(const tool_case *c, eng_model_desc *d, bool *owned) {
    char err[SCHEMA_ERR_LEN] = "", why[512] = "";
    bool *supported = calloc(d->n_operations + 1, sizeof(bool));
    schema_status s = eng_supported_operations(d, supported, err, sizeof err);
    const char *missing = s ? NULL : unsupported_op(c, supported);
    free(supported);
    if (s) return refused(c, "supported operations", s, err);
    if (missing) {
        if (verbose) printf("SKIP %s:%s: unsupported %s\n", c->file, c->name, missing);
        return 2;
    }
    eng_prepared *p = NULL;
    s = eng_prepare(d, &p, err, sizeof err);
    if (s) return refused(c, "prepare", s, err);
    *owned = true;
    eng_exec *e = eng_exec_create(p);
    if (c->infinite_loop_timeout && c->n_examples) {
        int rc = run_endless(c, e, p);
        eng_exec_free(e);
        eng_prepared_free(p);
        return rc;
    }
    int rc = 0;
    bool refusal = false;
    for (size_t x = 0; x < c->n_examples && rc == 0 && !refusal; x++) {
        schema_status st;
        bool ok = run_example(c, e, p, &c->examples[x], &st, why, sizeof why);
        if (c->expect_failure && st) {
            rc = refused(c, "execute", st, why);
            refusal = true;
        } else if (!ok && !c->expect_failure) {
            printf("FAIL %s:%s: example %zu: %s\n", c->file, c->name, x, why);
            rc = 1;
        }
    }
    if (c->expect_failure && !refusal) {
        printf("FAIL %s:%s: expected a refusal; prepare and %zu examples succeeded\n", c->file,
               c->name, c->n_examples);
        rc = 1;
    }
    eng_exec_free(e);
    eng_prepared_free(p);
    return rc;
}

/* A case in --guard-pages mode: every constant in a guarded pool of its own. Returns 0
 * pass, 1 fail, 2 skip. */
static int run_case_guarded(const tool_case *c) {
    char err[SCHEMA_ERR_LEN] = "";
    uint8_t **regions;
    size_t n;
    Nnd__Model *m = tool_case_guarded_model(c, &regions, &n);
    eng_memory_view *views = m ? calloc(n + 1, sizeof *views) : NULL;
    if (!views) {
        printf("FAIL %s:%s: out of memory\n", c->file, c->name);
        for (size_t k = 0; k < n; k++)
            tool_guard_free(regions[k]);
        free(regions);
        if (m) nnd__model__free_unpacked(m, NULL);
        return 1;
    }
    for (size_t k = 0; k < n; k++)
        views[k] = (eng_memory_view){.base = regions[k],
                                     .size = m->pools[k]->size,
                                     .release = tool_guard_free,
                                     .ctx = regions[k]};
    eng_model_desc d;
    schema_status s = srv_model_from_proto(m, views, n, &d, err, sizeof err);
    bool owned = false; /* the prepared model frees the regions */
    int rc = s ? refused(c, "convert", s, err) : run_desc(c, &d, &owned);
    srv_model_desc_clear(&d);
    for (size_t k = 0; !owned && k < n; k++)
        tool_guard_free(regions[k]);
    free(regions), free(views);
    nnd__model__free_unpacked(m, NULL);
    return rc;
}

/* Returns 0 pass, 1 fail, 2 skip. */
static int run_case(const tool_case *c) {
    if (guard_pages) return run_case_guarded(c);
    char err[SCHEMA_ERR_LEN] = "";
    uint8_t *pool;
    size_t pool_len;
    Nnd__Model *pooled = tool_case_pooled_model(c, &pool, &pool_len);
    if (c->n_pooled && !pooled) {
        printf("FAIL %s:%s: out of memory\n", c->file, c->name);
        return 1;
    }
    eng_memory_view view = {.base = pool, .size = pool_len, .release = free, .ctx = pool};
    eng_model_desc d;
    schema_status s = srv_model_from_proto(pooled ? pooled : c->model, pooled ? &view : NULL,
                                           pooled ? 1 : 0, &d, err, sizeof err);
    bool owned = false; /* the prepared model frees the pool */
    int rc = s ? refused(c, "convert", s, err) : run_desc(c, &d, &owned);
    srv_model_desc_clear(&d);
    if (!owned) free(pool);
    if (pooled) nnd__model__free_unpacked(pooled, NULL);
    return rc;
}

int main(int argc, char **argv) {
    tool_case *cases = NULL;
    size_t n = 0;
    char err[512];
    int paths = 0;
    size_t counts[3] = {0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verbose") == 0) {
            verbose = true;
            continue;
        }
        if (strcmp(argv[i], "--exact") == 0) {
            steps_set = true, steps = 0;
            continue;
        }
        if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
            steps_set = true, steps = atof(argv[++i]);
            continue;
        }
        if (strcmp(argv[i], "--compare") == 0) {
            compare = true;
            continue;
        }
        if (strcmp(argv[i], "--max-steps") == 0 && i + 1 < argc) {
            max_steps = atof(argv[++i]);
            continue;
        }
        if (strcmp(argv[i], "--guard-pages") == 0) {
            guard_pages = true;
            continue;
        }
        paths++;
        if (tool_cases_load(argv[i], &cases, &n, tool_case_report_unreadable, &counts[1], err,
                            sizeof err) < 0) {
            fprintf(stderr, "nnd-conformance-local: %s\n", err);
            tool_cases_free(cases, n);
            return 2;
        }
    }
    if (!paths) {
        fprintf(stderr, "usage: nnd-conformance-local [--verbose] [--guard-pages] [--exact | "
                        "--steps N | --compare [--max-steps N]] PATH...\n");
        return 2;
    }
    for (size_t i = 0; i < n; i++) {
        cases[i].quant_steps_set = steps_set;
        cases[i].quant_steps = steps;
        if (compare) {
            int rc = tool_compare_local(&cases[i], max_steps, verbose);
            counts[rc == 0 ? 0 : rc == 1 ? 1 : 2]++;
        } else {
            counts[run_case(&cases[i])]++;
        }
    }
    printf("conformance: %zu passed, %zu failed, %zu skipped\n", counts[0], counts[1], counts[2]);
    tool_cases_free(cases, n);
    return counts[1] ? 1 : 0;
}
