/* test_ndk_conformance (integration): the conformance vectors run a second way, through
 * the NNAPI NDK API of libnnd. Each case's wire model is rebuilt with
 * ANeuralNetworksModel_* calls, checked with getSupportedOperationsForDevices (any
 * unsupported operation: skipped, as nndctl does), compiled, and every example runs with
 * plain setInput/setOutput buffers and is judged with nnd_case_judge. Dynamic-shape cases
 * also run with every output one element short (one byte for one-element outputs) and
 * must report OUTPUT_INSUFFICIENT_SIZE with the needed dimensions. A case that expects
 * failure passes when a model, compilation or compute call refuses it with an error code
 * (case_judge.h). Cases run on two threads that share the library's one connection.
 * Usage: test_ndk_conformance VECTORS_DIR FLOOR  (fails below FLOOR passes, or on any
 * failure). */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "harness.h"
#include "nnd/NeuralNetworks.h"

#define JOBS    2
#define MSG_LEN 512

/* REFUSED*: the library returned an error code for the model, its compilation or a
 * compute (a pass only for a case that expects failure), judged by judge_refusal(). */
enum verdict { PASS, FAIL, SKIP, REFUSED, REFUSED_DEADLINE };

typedef struct runner {
    const nnd_case *cases;
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

static const nnd_case_tensor *find_tensor(const nnd_case_tensor *v, size_t n, uint32_t index) {
    for (size_t i = 0; i < n; i++)
        if (v[i].index == index) return &v[i];
    return NULL;
}

/* The wire model, rebuilt through the NDK calls. */
static enum verdict build_model(const Nnd__Model *w, ANeuralNetworksModel **out, char *msg) {
    const Nnd__Subgraph *g = w->main;
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
        int32_t idx = (int32_t)i;
        if (o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_COPY) {
            const Nnd__DataLocation *l = o->location;
            rc = ANeuralNetworksModel_setOperandValue(m, idx, w->operand_values.data + l->offset,
                                                      l->length);
        } else if (o->lifetime == NND__OPERAND_LIFE_TIME__NO_VALUE) {
            rc = ANeuralNetworksModel_setOperandValue(m, idx, NULL, 0);
        } else if (o->lifetime == NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE) {
            return fail(msg, "operand %zu: constant in a pool (not made by the loader)", i);
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
                           nnd_case_operation_name(op->type), rc);
    }
    static const uint32_t none[1];
    rc = ANeuralNetworksModel_identifyInputsAndOutputs(
        m, (uint32_t)g->n_input_indexes, g->n_input_indexes ? g->input_indexes : none,
        (uint32_t)g->n_output_indexes, g->n_output_indexes ? g->output_indexes : none);
    if (rc) return refused(rc, msg, "identifyInputsAndOutputs: %d", rc);
    if (w->relax_computation_float32_to_float16 &&
        (rc = ANeuralNetworksModel_relaxComputationFloat32toFloat16(m, true)))
        return refused(rc, msg, "relaxComputationFloat32toFloat16: %d", rc);
    if ((rc = ANeuralNetworksModel_finish(m))) return refused(rc, msg, "Model_finish: %d", rc);
    return PASS;
}

/* The buffer an output gets: its exact size (zero-sized outputs one element), or when
 * shrinking one element less; a one-element output loses a byte instead (the NDK takes
 * no empty buffer), and a one-byte output cannot shrink. */
static size_t output_size(const nnd_case_tensor *t, bool shrink) {
    size_t es = nnd_case_element_size(t->type);
    if (!t->bytes) return es;
    if (!shrink) return t->bytes;
    return t->bytes > es ? t->bytes - es : t->bytes > 1 ? t->bytes - 1 : t->bytes;
}

static bool shrinks(const nnd_case_tensor *t) {
    return output_size(t, true) < t->bytes;
}

static enum verdict run_example(const nnd_case *c, ANeuralNetworksCompilation *comp, size_t exi,
                                bool shrink, char *msg) {
    const nnd_case_example *ex = &c->examples[exi];
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
        const nnd_case_tensor *t = find_tensor(ex->inputs, ex->n_inputs, (uint32_t)i);
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
        const nnd_case_tensor *t = find_tensor(ex->outputs, ex->n_outputs, (uint32_t)k);
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
        const nnd_case_tensor *t = find_tensor(ex->outputs, ex->n_outputs, (uint32_t)k);
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
        if (!nnd_case_judge(c, t, bufs[k], output_size(t, false), dims, rank, why, sizeof why)) {
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

static bool any_shrinkable(const nnd_case_example *ex) {
    for (size_t i = 0; i < ex->n_outputs; i++)
        if (shrinks(&ex->outputs[i])) return true;
    return false;
}

static enum verdict run_case(const nnd_case *c, size_t index, char *msg) {
    ANeuralNetworksModel *m = NULL;
    ANeuralNetworksCompilation *comp = NULL;
    ANeuralNetworksDevice *dev = NULL;
    size_t n_ops = c->model->main->n_operations;
    bool *sup = calloc(n_ops + 1, sizeof *sup);
    int rc;
    enum verdict v = sup ? build_model(c->model, &m, msg) : fail(msg, "out of memory");
    if (v == PASS && (rc = ANeuralNetworks_getDevice(0, &dev))) v = fail(msg, "getDevice: %d", rc);
    if (v == PASS) {
        const ANeuralNetworksDevice *devs[1] = {dev};
        if ((rc = ANeuralNetworksModel_getSupportedOperationsForDevices(m, devs, 1, sup)))
            v = refused(rc, msg, "getSupportedOperationsForDevices: %d", rc);
        for (size_t k = 0; k < n_ops && v == PASS; k++)
            if (!sup[k]) {
                const char *name = nnd_case_operation_name(c->model->main->operations[k]->type);
                snprintf(msg, MSG_LEN, "unsupported %s", name ? name : "operation");
                v = SKIP;
            }
    }
    /* Alternate the two ways of making a compilation. */
    if (v == PASS) {
        const ANeuralNetworksDevice *devs[1] = {dev};
        rc = index % 2 ? ANeuralNetworksCompilation_create(m, &comp)
                       : ANeuralNetworksCompilation_createForDevices(m, devs, 1, &comp);
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
    ANeuralNetworksModel_free(m);
    free(sup);
    return v;
}

/* The verdict once a case ran: a refusal passes only where the case expects one, and a
 * case that expects one fails when everything succeeded. */
static enum verdict judge_refusal(const nnd_case *c, enum verdict v, char *msg) {
    if (v == PASS && c->expect_failure)
        return fail(msg, "expected a refusal; compilation and %zu examples succeeded",
                    c->n_examples);
    if (v != REFUSED && v != REFUSED_DEADLINE) return v;
    char why[128];
    if (nnd_case_refusal_passes(c, v == REFUSED_DEADLINE, why, sizeof why)) return PASS;
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

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: test_ndk_conformance VECTORS_DIR FLOOR\n");
        return 2;
    }
    long floor = strtol(argv[2], NULL, 10);
    nnd_case *cases = NULL;
    size_t n = 0;
    char err[1024];
    if (nnd_cases_load(argv[1], &cases, &n, note_skip, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "test_ndk_conformance: %s\n", err);
        nnd_cases_free(cases, n);
        return 2;
    }
    nnd_test_daemon d;
    const char *const args[] = {"--log-level", "warn", NULL};
    if (nnd_test_daemon_start(&d, args) < 0) {
        nnd_cases_free(cases, n);
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
    free(r.verdicts);
    free(r.messages);
    nnd_cases_free(cases, n);
    int status = nnd_test_daemon_stop(&d);
    return failed || (long)passed < floor || status != 0 ? 1 : 0;
}
