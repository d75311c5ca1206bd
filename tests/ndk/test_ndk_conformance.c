/* SPDX-License-Identifier: Apache-2.0 */
/* test_ndk_conformance (integration): the conformance vectors run a second way, through
 * the NNAPI NDK API of libnnd. Each case's wire model is rebuilt with
 * ANeuralNetworksModel_* calls, checked with getSupportedOperationsForDevices (any
 * unsupported operation: skipped, as nndctl does), compiled, and every example runs with
 * plain setInput/setOutput buffers and is judged with tool_case_judge. Dynamic-shape cases
 * also run with every output one element short (one byte for one-element outputs) and
 * must report OUTPUT_INSUFFICIENT_SIZE with the needed dimensions. A case that expects
 * failure passes when a model, compilation or compute call refuses it with an error code
 * (case_judge.h). A third argument names the device every compilation is made for
 * (nnd-reference in `make test`), or several joined by '+' ("nnd-example+nnd-cpu": the
 * example driver's operations on it, the rest falling back; a device other than the
 * built-ins makes the daemon load this build's drivers: NND_TEST_DRIVERS_DIR in the environment
 * names another directory, as build/drivers-opencl for "nnd-opencl+nnd-cpu", and
 * NND_TEST_DRIVER_PROBE a plugin whose devices are asked first: none on this machine (no
 * OpenCL platform) skips the test, 77). Referenced subgraphs become models of
 * their own (setOperandValueFromModel), constants the vectors mark wasConstantReference come from a
 * memory (setOperandValueFromMemory), and an endless loop runs with a short loop timeout,
 * judged by its status and time. Cases run on two threads that share the library's one
 * connection.
 * Usage: test_ndk_conformance VECTORS[:VECTORS...] FLOOR  (fails below FLOOR passes, or on
 * any failure). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tools/conformance/conformance.h"
#include "tests/support/driver_probe.h"
#include "tests/support/harness.h"
#include "nnd/NeuralNetworks.h"
#include "nnd/nnd_wire.h"

#define JOBS    2
#define MSG_LEN 512

/* REFUSED*: the library returned an error code for the model, its compilation or a
 * compute (a pass only for a case that expects failure), judged by judge_refusal(). */
enum verdict { PASS, FAIL, SKIP, REFUSED, REFUSED_DEADLINE };

typedef struct runner {
    const tool_case *cases;
    size_t n;
    atomic_size_t next;
    enum verdict *verdicts;
    char (*messages)[MSG_LEN];
} runner;

static enum verdict fail(char *msg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static enum verdict fail(char *msg, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, MSG_LEN, fmt, ap);
    va_end(ap);
    return FAIL;
}

static enum verdict refused(int rc, char *msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static enum verdict refused(int rc, char *msg, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, MSG_LEN, fmt, ap);
    va_end(ap);
    bool deadline = rc == ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT ||
                    rc == ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT;
    return deadline ? REFUSED_DEADLINE : REFUSED;
}

static const tool_case_tensor *find_tensor(const tool_case_tensor *v, size_t n, uint32_t index) {
    for (size_t i = 0; i < n; i++)
        if (v[i].index == index) return &v[i];
    return NULL;
}

/* The NDK models of a case: [0] the main model, r + 1 referenced subgraph r, and the memory
 * holding the constants the vectors mark wasConstantReference. */
typedef struct built {
    ANeuralNetworksModel **models;
    size_t n;
    ANeuralNetworksMemory *pool;
} built;

static void built_free(built *b) {
    for (size_t i = 0; b->models && i < b->n; i++)
        ANeuralNetworksModel_free(b->models[i]);
    free(b->models);
    ANeuralNetworksMemory_free(b->pool);
}

/* One graph g of the wire model w, rebuilt through the NDK calls into *out; the models of
 * the subgraphs it references are in b, finished. A call's error code is a refusal. */
static enum verdict build_graph(const Nnd__Model *w, const Nnd__Subgraph *g, const built *b,
                                bool main, ANeuralNetworksModel **out, char *msg) {
    ANeuralNetworksModel *m;
    int rc;
    if ((rc = ANeuralNetworksModel_create(&m))) return fail(msg, "Model_create: %d", rc);
    *out = m;
    for (size_t i = 0; i < g->n_operands; i++) {
        const Nnd__Operand *o = g->operands[i];
        ANeuralNetworksOperandType t = {.type = o->type,
                                        .dimensionCount = (uint32_t)o->n_dimensions,
                                        .dimensions = o->n_dimensions ? o->dimensions : NULL,
                                        .scale = o->scale,
                                        .zeroPoint = o->zero_point};
        if ((rc = ANeuralNetworksModel_addOperand(m, &t)))
            return refused(rc, msg, "addOperand %zu: %d", i, rc);
    }
    for (size_t i = 0; i < g->n_operands; i++) {
        const Nnd__Operand *o = g->operands[i];
        const Nnd__DataLocation *l = o->location;
        int32_t idx = (int32_t)i;
        if (o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_COPY) {
            rc = ANeuralNetworksModel_setOperandValue(m, idx, w->operand_values.data + l->offset,
                                                      l->length);
        } else if (o->lifetime == NND__OPERAND_LIFE_TIME__NO_VALUE) {
            rc = ANeuralNetworksModel_setOperandValue(m, idx, NULL, 0);
        } else if (o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE) {
            rc = ANeuralNetworksModel_setOperandValueFromMemory(m, idx, b->pool, l->offset,
                                                                l->length);
        } else if (o->lifetime == NND__OPERAND_LIFE_TIME__SUBGRAPH) {
            rc = ANeuralNetworksModel_setOperandValueFromModel(m, idx, b->models[l->offset + 1]);
        } else {
            rc = 0;
        }
        if (rc) return refused(rc, msg, "setOperandValue %zu: %d", i, rc);
        if (o->extra_params_case == NND__OPERAND__EXTRA_PARAMS_CHANNEL_QUANT) {
            ANeuralNetworksSymmPerChannelQuantParams q = {
                .channelDim = o->channel_quant->channel_dim,
                .scaleCount = (uint32_t)o->channel_quant->n_scales,
                .scales = o->channel_quant->scales};
            if ((rc = ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(m, idx, &q)))
                return refused(rc, msg, "setOperandSymmPerChannelQuantParams %zu: %d", i, rc);
        }
    }
    for (size_t k = 0; k < g->n_operations; k++) {
        const Nnd__Operation *op = g->operations[k];
        if ((rc = ANeuralNetworksModel_addOperation(m, op->type, (uint32_t)op->n_inputs, op->inputs,
                                                    (uint32_t)op->n_outputs, op->outputs)))
            return refused(rc, msg, "addOperation %zu (%s): %d", k,
                           schema_hal_operation_name(op->type), rc);
    }
    static const uint32_t none[1];
    rc = ANeuralNetworksModel_identifyInputsAndOutputs(
        m, (uint32_t)g->n_input_indexes, g->n_input_indexes ? g->input_indexes : none,
        (uint32_t)g->n_output_indexes, g->n_output_indexes ? g->output_indexes : none);
    if (rc) return refused(rc, msg, "identifyInputsAndOutputs: %d", rc);
    if (main && w->relax_computation_float32_to_float16 &&
        (rc = ANeuralNetworksModel_relaxComputationFloat32toFloat16(m, true)))
        return refused(rc, msg, "relaxComputationFloat32toFloat16: %d", rc);
    if ((rc = ANeuralNetworksModel_finish(m))) return refused(rc, msg, "Model_finish: %d", rc);
    return PASS;
}

/* Whether every subgraph g references has its model in b already. */
static bool callees_built(const Nnd__Subgraph *g, const built *b) {
    for (size_t i = 0; i < g->n_operands; i++) {
        const Nnd__Operand *o = g->operands[i];
        if (o->lifetime != NND__OPERAND_LIFE_TIME__SUBGRAPH) continue;
        if (!o->location || o->location->offset + 1 >= b->n || !b->models[o->location->offset + 1])
            return false;
    }
    return true;
}

/* The wire model w (pooled constants in pool_fd), rebuilt through the NDK calls: each
 * referenced subgraph a model of its own, finished before the models that reference it. */
static enum verdict build_model(const Nnd__Model *w, int pool_fd, built *b, char *msg) {
    memset(b, 0, sizeof *b);
    b->n = w->n_referenced + 1;
    if (!(b->models = calloc(b->n, sizeof *b->models))) return fail(msg, "out of memory");
    int rc;
    if (pool_fd >= 0 && (rc = ANeuralNetworksMemory_createFromFd((size_t)w->pools[0]->size,
                                                                 PROT_READ, pool_fd, 0, &b->pool)))
        return fail(msg, "Memory_createFromFd: %d", rc);
    for (size_t left = w->n_referenced, pass = 0; left; pass++) {
        if (pass > w->n_referenced) return fail(msg, "referenced subgraphs reference each other");
        for (size_t r = 0; r < w->n_referenced; r++) {
            if (b->models[r + 1] || !callees_built(w->referenced[r], b)) continue;
            enum verdict v = build_graph(w, w->referenced[r], b, false, &b->models[r + 1], msg);
            if (v != PASS) return v;
            left--;
        }
    }
    return build_graph(w, w->main, b, true, &b->models[0], msg);
}

/* The buffer an output gets: its exact size (zero-sized outputs one element), or when
 * shrinking one element less; a one-element output loses a byte instead (the NDK takes
 * no empty buffer), and a one-byte output cannot shrink. */
static size_t output_size(const tool_case_tensor *t, bool shrink) {
    size_t es = schema_hal_element_size(t->type);
    if (!t->bytes) return es;
    if (!shrink) return t->bytes;
    return t->bytes > es ? t->bytes - es : t->bytes > 1 ? t->bytes - 1 : t->bytes;
}

static bool shrinks(const tool_case_tensor *t) {
    return output_size(t, true) < t->bytes;
}

static enum verdict run_example(const tool_case *c, ANeuralNetworksCompilation *comp, size_t exi,
                                bool shrink, char *msg) {
    const tool_case_example *ex = &c->examples[exi];
    const Nnd__Subgraph *g = c->model->main;
    size_t nin = g->n_input_indexes, nout = g->n_output_indexes;
    const char *step = shrink ? " (outputs one element short)" : "";
    ANeuralNetworksExecution *e = NULL;
    void **bufs = calloc(nout + 1, sizeof *bufs);
    enum verdict v = PASS;
    int rc;
    if (!bufs) return fail(msg, "out of memory");
    if ((rc = ANeuralNetworksExecution_create(comp, &e))) {
        v = fail(msg, "Execution_create: %d", rc);
        goto out;
    }
    for (size_t i = 0; i < nin && v == PASS; i++) {
        const tool_case_tensor *t = find_tensor(ex->inputs, ex->n_inputs, (uint32_t)i);
        const Nnd__Operand *o = g->operands[g->input_indexes[i]];
        if (!t) {
            v = fail(msg, "example %zu has no input %zu", exi, i);
        } else if (!t->count) { /* an omitted optional input */
            if ((rc = ANeuralNetworksExecution_setInput(e, (int32_t)i, NULL, NULL, 0)))
                v = fail(msg, "example %zu: setInput %zu (omitted): %d", exi, i, rc);
        } else {
            ANeuralNetworksOperandType type = {.type = o->type,
                                               .dimensionCount = t->rank,
                                               .dimensions = t->rank ? t->dims : NULL,
                                               .scale = o->scale,
                                               .zeroPoint = o->zero_point};
            if ((rc = ANeuralNetworksExecution_setInput(e, (int32_t)i, t->rank ? &type : NULL,
                                                        t->data, t->bytes)))
                v = fail(msg, "example %zu: setInput %zu: %d", exi, i, rc);
        }
    }
    for (size_t k = 0; k < nout && v == PASS; k++) {
        const tool_case_tensor *t = find_tensor(ex->outputs, ex->n_outputs, (uint32_t)k);
        if (!t) {
            v = fail(msg, "example %zu has no output %zu", exi, k);
            break;
        }
        size_t size = output_size(t, shrink);
        if (!(bufs[k] = malloc(size))) {
            v = fail(msg, "out of memory");
            break;
        }
        memset(bufs[k], 0xff, size); /* stale zeros must not pass for results */
        if ((rc = ANeuralNetworksExecution_setOutput(e, (int32_t)k, NULL, bufs[k], size)))
            v = fail(msg, "example %zu%s: setOutput %zu: %d", exi, step, k, rc);
    }
    if (v != PASS) goto out;
    if (c->infinite_loop_timeout) { /* judged by its status and the time it took */
        char why[MSG_LEN - 64];
        if ((rc = ANeuralNetworksExecution_setLoopTimeout(e, TOOL_CASE_LOOP_TIMEOUT_NS))) {
            v = fail(msg, "setLoopTimeout: %d", rc);
            goto out;
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = ANeuralNetworksExecution_compute(e);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        uint64_t ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t1.tv_nsec -
                      (uint64_t)t0.tv_nsec;
        bool missed = rc == ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT ||
                      rc == ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT;
        if (tool_case_judge_endless(missed, ns, TOOL_CASE_LOOP_TIMEOUT_NS, why, sizeof why))
            v = refused(rc, msg, "example %zu: the loop timeout stopped it", exi);
        else
            v = fail(msg, "example %zu: compute returned %d: %s", exi, rc, why);
        goto out;
    }
    rc = ANeuralNetworksExecution_compute(e);
    int want = shrink ? ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE : ANEURALNETWORKS_NO_ERROR;
    if (rc != want && !shrink) {
        v = refused(rc, msg, "example %zu: compute returned %d", exi, rc);
        goto out;
    }
    if (rc != want) {
        v = fail(msg, "example %zu%s: compute returned %d, expected %d", exi, step, rc, want);
        goto out;
    }
    if (c->expect_failure) goto out; /* its outputs mean nothing */
    for (size_t k = 0; k < nout; k++) {
        const tool_case_tensor *t = find_tensor(ex->outputs, ex->n_outputs, (uint32_t)k);
        uint32_t rank = 0, dims[16] = {0};
        int rr = ANeuralNetworksExecution_getOutputOperandRank(e, (int32_t)k, &rank);
        int rd = rank && rank <= 16
                     ? ANeuralNetworksExecution_getOutputOperandDimensions(e, (int32_t)k, dims)
                     : rr;
        if (shrink) {
            if (!shrinks(t)) continue;
            bool dims_ok = rank == t->rank && !memcmp(dims, t->dims, rank * sizeof *dims);
            if (rr != ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE ||
                rd != ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE || !dims_ok) {
                v = fail(msg, "example %zu%s: output %zu: rank %d, dimensions %d%s", exi, step, k,
                         rr, rd, dims_ok ? "" : " (not the expected ones)");
                goto out;
            }
            continue;
        }
        if (rr || rd || rank > 16) {
            v = fail(msg, "example %zu: output %zu: getOutputOperandRank %d, Dimensions %d", exi, k,
                     rr, rd);
            goto out;
        }
        char why[MSG_LEN - 64];
        if (!tool_case_judge(c, t, bufs[k], output_size(t, false), dims, rank, why, sizeof why)) {
            v = fail(msg, "example %zu: %s", exi, why);
            goto out;
        }
    }
out:
    ANeuralNetworksExecution_free(e);
    for (size_t k = 0; k < nout; k++)
        free(bufs[k]);
    free(bufs);
    return v;
}

static bool any_shrinkable(const tool_case_example *ex) {
    for (size_t i = 0; i < ex->n_outputs; i++)
        if (shrinks(&ex->outputs[i])) return true;
    return false;
}

/* The constants the vectors mark wasConstantReference in a memfd, as an app's weights
 * file would be: *pooled (to free) is the model naming them, *fd the memfd (-1: none). */
static enum verdict pool_constants(const tool_case *c, Nnd__Model **pooled, int *fd, char *msg) {
    uint8_t *bytes, *map;
    size_t len;
    *fd = -1;
    if (!(*pooled = tool_case_pooled_model(c, &bytes, &len)))
        return c->n_pooled ? fail(msg, "out of memory") : PASS;
    *fd = nnd_memfd_create("ndk-conformance-constants", len, (void **)&map);
    if (*fd >= 0) {
        memcpy(map, bytes, len);
        munmap(map, len);
    }
    free(bytes);
    return *fd >= 0 ? PASS : fail(msg, "memfd: %d", *fd);
}

/* The devices every compilation is made for (argv[3], '+' between names); none: device 0,
 * every other compilation by createForDevices and the rest by create. */
#define MAX_NAMED 4
static const char *g_device_names[MAX_NAMED];
static uint32_t g_n_named;

static int find_one(const char *want, const ANeuralNetworksDevice **dev) {
    uint32_t n = 0;
    int rc = ANeuralNetworks_getDeviceCount(&n);
    for (uint32_t i = 0; !rc && i < n; i++) {
        const char *name;
        ANeuralNetworksDevice *d;
        if ((rc = ANeuralNetworks_getDevice(i, &d)) ||
            (rc = ANeuralNetworksDevice_getName(d, &name)))
            break;
        *dev = d;
        if (!strcmp(name, want)) return ANEURALNETWORKS_NO_ERROR;
    }
    return rc ? rc : ANEURALNETWORKS_BAD_DATA;
}

/* The devices to compile for into devs; how many in *n. */
static int find_devices(const ANeuralNetworksDevice **devs, uint32_t *n) {
    *n = g_n_named ? g_n_named : 1;
    if (!g_n_named) return ANeuralNetworks_getDevice(0, (ANeuralNetworksDevice **)&devs[0]);
    int rc = 0;
    for (uint32_t i = 0; i < g_n_named && !rc; i++)
        rc = find_one(g_device_names[i], &devs[i]);
    return rc;
}

static enum verdict run_case(const tool_case *c, size_t index, char *msg) {
    built b = {0};
    ANeuralNetworksModel *m = NULL;
    ANeuralNetworksCompilation *comp = NULL;
    const ANeuralNetworksDevice *devs[MAX_NAMED] = {NULL};
    uint32_t n_devs = 0;
    size_t n_ops = c->model->main->n_operations;
    bool *sup = calloc(n_ops + 1, sizeof *sup);
    Nnd__Model *pooled = NULL;
    int rc, fd = -1;
    enum verdict v = sup ? pool_constants(c, &pooled, &fd, msg) : fail(msg, "out of memory");
    if (v == PASS) v = build_model(pooled ? pooled : c->model, fd, &b, msg);
    m = b.models ? b.models[0] : NULL;
    if (v == PASS && (rc = find_devices(devs, &n_devs))) v = fail(msg, "getDevice: %d", rc);
    if (v == PASS) {
        if ((rc = ANeuralNetworksModel_getSupportedOperationsForDevices(m, devs, n_devs, sup)))
            v = refused(rc, msg, "getSupportedOperationsForDevices: %d", rc);
        for (size_t k = 0; k < n_ops && v == PASS; k++)
            if (!sup[k]) {
                const char *name = schema_hal_operation_name(c->model->main->operations[k]->type);
                snprintf(msg, MSG_LEN, "unsupported %s", name ? name : "operation");
                v = SKIP;
            }
    }
    /* Alternate the two ways of making a compilation. */
    if (v == PASS) {
        rc = index % 2 && !g_n_named
                 ? ANeuralNetworksCompilation_create(m, &comp)
                 : ANeuralNetworksCompilation_createForDevices(m, devs, n_devs, &comp);
        if (rc) v = refused(rc, msg, "Compilation_create: %d", rc);
    }
    if (v == PASS && (rc = ANeuralNetworksCompilation_finish(comp)))
        v = refused(rc, msg, "Compilation_finish: %d", rc);
    for (size_t i = 0; i < c->n_examples && v == PASS; i++) {
        v = run_example(c, comp, i, false, msg);
        if (v == PASS && c->dynamic_output_shape && !c->expect_failure &&
            any_shrinkable(&c->examples[i]))
            v = run_example(c, comp, i, true, msg);
    }
    ANeuralNetworksCompilation_free(comp);
    built_free(&b);
    if (fd >= 0) close(fd);
    if (pooled) nnd__model__free_unpacked(pooled, NULL);
    free(sup);
    return v;
}

/* The verdict once a case ran: a refusal passes only where the case expects one, and a
 * case that expects one fails when everything succeeded. */
static enum verdict judge_refusal(const tool_case *c, enum verdict v, char *msg) {
    if (v == PASS && c->expect_failure)
        return fail(msg, "expected a refusal; compilation and %zu examples succeeded",
                    c->n_examples);
    if (v != REFUSED && v != REFUSED_DEADLINE) return v;
    char why[128];
    if (tool_case_refusal_passes(c, v == REFUSED_DEADLINE, why, sizeof why)) return PASS;
    size_t at = strlen(msg);
    snprintf(msg + at, MSG_LEN - at, " (%s)", why);
    return FAIL;
}

static void *worker(void *arg) {
    runner *r = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&r->next, 1);
        if (i >= r->n) return NULL;
        r->verdicts[i] =
            judge_refusal(&r->cases[i], run_case(&r->cases[i], i, r->messages[i]), r->messages[i]);
    }
}

/* A case this build cannot read is not passed; the floor judges the count. */
static void note_skip(void *ctx, const char *file, const char *case_name, const char *reason) {
    (void)ctx;
    printf("FAIL %s%s%s: unreadable: %s\n", file, case_name ? ": case " : "",
           case_name ? case_name : "", reason);
}

/* What each device did, from the daemon's status: how many compilations it prepared work
 * of, and how many partitions. */
static void print_device_work(const tst_daemon *d) {
    cJSON *status = tst_admin_status(d), *dev;
    cJSON_ArrayForEach(dev, cJSON_GetObjectItemCaseSensitive(status, "devices")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(dev, "name");
        const cJSON *prepares = cJSON_GetObjectItemCaseSensitive(dev, "prepares");
        const cJSON *parts = cJSON_GetObjectItemCaseSensitive(dev, "partitions");
        const cJSON *execs = cJSON_GetObjectItemCaseSensitive(dev, "executions");
        if (cJSON_IsString(name) && cJSON_IsNumber(prepares) && cJSON_IsNumber(parts) &&
            cJSON_IsNumber(execs))
            printf("device %s: %.0f compilations, %.0f partitions, %.0f executions\n",
                   name->valuestring, prepares->valuedouble, parts->valuedouble,
                   execs->valuedouble);
    }
    cJSON_Delete(status);
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: test_ndk_conformance VECTORS[:VECTORS...] FLOOR [DEVICE]\n");
        return 2;
    }
    bool drivers = false;
    for (char *list = argc == 4 ? argv[3] : NULL, *name;
         list && g_n_named < MAX_NAMED && (name = strsep(&list, "+"));) {
        g_device_names[g_n_named++] = name;
        drivers |= strcmp(name, "nnd-cpu") && strcmp(name, "nnd-reference");
    }
    const char *probe = getenv("NND_TEST_DRIVER_PROBE"), *dir = getenv("NND_TEST_DRIVERS_DIR");
    int found = probe ? tst_driver_probe(probe) : 1;
    if (found <= 0) {
        printf("%s: %s\n", probe, found ? "cannot be probed" : "no device here: skipped");
        return found ? 1 : 77;
    }
    long floor = strtol(argv[2], NULL, 10);
    tool_case *cases = NULL;
    size_t n = 0;
    char err[1024];
    /* Several files or folders may be given, separated by colons. */
    for (char *list = argv[1], *path; (path = strsep(&list, ":"));) {
        if (!*path) continue;
        if (tool_cases_load(path, &cases, &n, note_skip, NULL, err, sizeof err) < 0) {
            fprintf(stderr, "test_ndk_conformance: %s\n", err);
            tool_cases_free(cases, n);
            return 2;
        }
    }
    tst_daemon d;
    const char *const args[] = {"--log-level", "warn", "--drivers-dir",
                                drivers ? dir && *dir ? dir : TST_DRIVERS_DIR : "/nonexistent",
                                NULL};
    if (tst_daemon_start(&d, args) < 0) {
        tool_cases_free(cases, n);
        return 2;
    }
    setenv("NND_SOCKET", d.socket_path, 1); /* before the library's first connection */
    runner r = {.cases = cases, .n = n};
    atomic_init(&r.next, 0);
    r.verdicts = calloc(n + 1, sizeof *r.verdicts);
    r.messages = calloc(n + 1, sizeof *r.messages);
    pthread_t t[JOBS];
    int started = 0;
    for (; started < JOBS && r.verdicts && r.messages; started++)
        if (pthread_create(&t[started], NULL, worker, &r)) break;
    if (!started) worker(&r);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    size_t passed = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        if (r.verdicts[i] == PASS) passed++;
        if (r.verdicts[i] == SKIP) skipped++;
        if (r.verdicts[i] != FAIL) continue;
        failed++;
        printf("FAIL %s:%s: %s\n", cases[i].file, cases[i].name, r.messages[i]);
    }
    printf("ndk conformance: %zu passed, %zu failed, %zu skipped (floor %ld)\n", passed, failed,
           skipped, floor);
    if (drivers) print_device_work(&d);
    free(r.verdicts);
    free(r.messages);
    tool_cases_free(cases, n);
    int status = tst_daemon_stop(&d);
    return failed || (long)passed < floor || status != 0 ? 1 : 0;
}
