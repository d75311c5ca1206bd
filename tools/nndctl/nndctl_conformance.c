/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl_conformance.c: `nndctl conformance`, the conformance vectors run through the daemon.
 *
 * Each case: GetSupportedOperations (any false: skipped), PrepareModel with the constants
 * inline, except those the vectors mark wasConstantReference, which go in a memfd pool
 * (case_pool.h); then per example one memfd pool holding every input and output at 64-byte
 * aligned offsets, Execute, and tool_case_judge on every output with the dimensions the
 * daemon reported. An endless loop (infinite_loop_timeout) runs with
 * TOOL_CASE_LOOP_TIMEOUT_NS as its loop timeout, its time judged by tool_case_judge_endless.
 * Dynamic-output-shape cases also run each example with every output one element too small and must
 * get OUTPUT_INSUFFICIENT_SIZE with the needed dimensions. A case that expects failure passes when
 * the daemon answers GetSupportedOperations, PrepareModel or an Execute with an error status
 * (case_judge.h); a lost connection is never a pass. Cases run on --jobs threads, each with its own
 * connection; results print in case order. With --device NAME every model is prepared for
 * that one device (nnd_client_prepare_on, as the NDK's createForDevices); a name the daemon
 * does not have is refused before anything runs. --exact demands 8-bit outputs equal to the
 * bit (the vectors allow one step). With --bisect and two --device names,
 * nothing is judged: nndctl_bisect.h says where the two devices part on each case. */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tools/conformance/conformance.h"
#include "nnd/nnd_wire.h"
#include "tools/nndctl/nndctl.h"
#include "tools/nndctl/nndctl_bisect.h"

#define ALIGN   64
#define MSG_LEN 512

enum verdict { PENDING, PASS, FAIL, SKIP };

typedef struct runner {
    const nndctl_opts *o;
    const char *device; /* NULL, or prepare for this device alone */
    const tool_case *cases;
    size_t n;
    bool verbose;
    atomic_size_t next;   /* next case to claim */
    pthread_mutex_t lock; /* guards everything below */
    enum verdict *verdicts;
    char (*messages)[MSG_LEN];
    size_t printed; /* results print in case order: [0, printed) are out */
    size_t passed, failed, skipped;
} runner;

/* An outcome of one step: a verdict, whether the connection is still usable, and the
 * error status the daemon refused the step with (0: not refused). */
typedef struct outcome {
    enum verdict v;
    bool broken;
    int refusal;
} outcome;

static outcome fail(bool broken, char *msg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static outcome fail(bool broken, char *msg, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, MSG_LEN, fmt, ap);
    va_end(ap);
    return (outcome){FAIL, broken, 0};
}

static size_t align_up(size_t n) {
    return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

static const tool_case_tensor *find_tensor(const tool_case_tensor *v, size_t n, uint32_t index) {
    for (size_t i = 0; i < n; i++)
        if (v[i].index == index) return &v[i];
    return NULL;
}

/* The buffer an output gets: its exact size (zero-sized outputs get one element, as the
 * upstream harness gives them), or one element less when shrinking. */
static size_t output_size(const tool_case_tensor *t, bool shrink) {
    size_t es = schema_hal_element_size(t->type);
    if (!t->bytes) return es;
    return shrink ? t->bytes - es : t->bytes;
}

/* Runs one example; with shrink, every non-empty output is one element short and the
 * daemon must say so. */
static outcome run_example(nnd_client *cl, const tool_case *c, uint64_t handle, size_t exi,
                           bool shrink, char *msg) {
    const tool_case_example *ex = &c->examples[exi];
    const Nnd__Subgraph *g = c->model->main;
    size_t nin = g->n_input_indexes, nout = g->n_output_indexes;
    const char *step = shrink ? " (outputs one element short)" : "";

    /* Layout: inputs then outputs, each at a 64-byte aligned offset of one pool. */
    size_t total = 0;
    size_t *off = calloc(nin + nout, sizeof *off);
    Nnd__RequestArgument *args = calloc(nin + nout, sizeof *args);
    Nnd__RequestArgument **in_p = calloc(nin + 1, sizeof *in_p);
    Nnd__RequestArgument **out_p = calloc(nout + 1, sizeof *out_p);
    Nnd__DataLocation *locs = calloc(nin + nout, sizeof *locs);
    outcome res = {PASS, false, 0};
    int fd = -1;
    uint8_t *map = NULL;
    Nnd__Reply *reply = NULL;
    if (!off || !args || !in_p || !out_p || !locs) {
        res = fail(false, msg, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nin + nout; i++) {
        bool is_in = i < nin;
        const tool_case_tensor *t =
            is_in ? find_tensor(ex->inputs, ex->n_inputs, (uint32_t)i)
                  : find_tensor(ex->outputs, ex->n_outputs, (uint32_t)(i - nin));
        if (!t) {
            res = fail(false, msg, "example %zu has no %s %zu", exi, is_in ? "input" : "output",
                       is_in ? i : i - nin);
            goto out;
        }
        off[i] = total;
        total += align_up(is_in ? t->bytes : output_size(t, shrink));
    }
    if (!total) total = ALIGN;
    if ((fd = nnd_memfd_create("nndctl-conformance", total, (void **)&map)) < 0) {
        res = fail(false, msg, "memfd: %s", strerror(-fd));
        goto out;
    }
    Nnd__MemoryPool pool = NND__MEMORY_POOL__INIT, *pools[1] = {&pool};
    pool.kind = NND__POOL_KIND__POOL_MEMFD;
    pool.size = total;
    Nnd__ExecutionRequest req = NND__EXECUTION_REQUEST__INIT;
    req.n_inputs = nin;
    req.inputs = in_p;
    req.n_outputs = nout;
    req.outputs = out_p;
    req.n_pools = 1;
    req.pools = pools;
    for (size_t i = 0; i < nin + nout; i++) {
        bool is_in = i < nin;
        const tool_case_tensor *t =
            is_in ? find_tensor(ex->inputs, ex->n_inputs, (uint32_t)i)
                  : find_tensor(ex->outputs, ex->n_outputs, (uint32_t)(i - nin));
        Nnd__RequestArgument *a = &args[i];
        nnd__request_argument__init(a);
        (is_in ? in_p : out_p)[is_in ? i : i - nin] = a;
        if (is_in && !t->count) { /* an omitted optional input */
            a->has_no_value = true;
            continue;
        }
        nnd__data_location__init(&locs[i]);
        locs[i].offset = off[i];
        locs[i].length = is_in ? t->bytes : output_size(t, shrink);
        a->location = &locs[i];
        if (is_in) {
            memcpy(map + off[i], t->data, t->bytes);
            a->n_dimensions = t->rank;
            a->dimensions = (uint32_t *)t->dims;
        } else {
            /* Not zero: stale zeros must not pass for results (0xff is NaN in floats). */
            memset(map + off[i], 0xff, locs[i].length);
        }
    }
    char err[MSG_LEN - 64];
    /* An endless loop runs with a short loop timeout and is judged by how it ends. */
    nnd_exec_opts opts = {.loop_timeout_ns =
                              c->infinite_loop_timeout ? TOOL_CASE_LOOP_TIMEOUT_NS : 0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int st = nnd_client_execute_opts(cl, handle, &req, &fd, 1, &opts, &reply, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (st < 0) {
        res = fail(true, msg, "example %zu%s: Execute: %s", exi, step, err);
        goto out;
    }
    if (c->infinite_loop_timeout) {
        uint64_t ns = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000ull + (uint64_t)t1.tv_nsec -
                      (uint64_t)t0.tv_nsec;
        bool missed = st == NND__ERROR_STATUS__MISSED_DEADLINE_TRANSIENT ||
                      st == NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT;
        char why[MSG_LEN - 64];
        bool ok = tool_case_judge_endless(missed, ns, TOOL_CASE_LOOP_TIMEOUT_NS, why, sizeof why);
        res = fail(false, msg, "example %zu: %s", exi, ok ? err : why);
        res.refusal = ok ? st : 0; /* in time: a refusal for judge_expected_failure */
        goto out;
    }
    size_t nshapes = reply->executed ? reply->executed->n_output_shapes : 0;
    Nnd__OutputShape **shapes = reply->executed ? reply->executed->output_shapes : NULL;
    if (shrink && st != NND__ERROR_STATUS__OUTPUT_INSUFFICIENT_SIZE) {
        res = fail(false, msg,
                   "example %zu%s: Execute answered %s, expected "
                   "OUTPUT_INSUFFICIENT_SIZE",
                   exi, step, st ? err : "NONE");
        goto out;
    }
    if (!shrink && st != NND__ERROR_STATUS__NONE) {
        res = fail(false, msg, "example %zu: Execute: %s", exi, err);
        res.refusal = st;
        goto out;
    }
    if (c->expect_failure) goto out; /* its outputs mean nothing */
    if (nshapes != nout) {
        res = fail(false, msg, "example %zu%s: Execute reported %zu output shapes for %zu outputs",
                   exi, step, nshapes, nout);
        goto out;
    }
    for (size_t k = 0; k < nout; k++) {
        const tool_case_tensor *t = find_tensor(ex->outputs, ex->n_outputs, (uint32_t)k);
        const Nnd__OutputShape *s = shapes[k];
        if (shrink) {
            if (!t->bytes) continue; /* not shrunk */
            bool dims_ok = s->n_dimensions == t->rank &&
                           !memcmp(s->dimensions, t->dims, t->rank * sizeof *t->dims);
            if (s->is_sufficient || !dims_ok) {
                res =
                    fail(false, msg, "example %zu%s: output %zu reported %s with %zu dimensions%s",
                         exi, step, k, s->is_sufficient ? "sufficient" : "insufficient",
                         s->n_dimensions, dims_ok ? "" : " (not the expected ones)");
                goto out;
            }
            continue;
        }
        char why[MSG_LEN - 64];
        if (!tool_case_judge(c, t, map + off[nin + k], output_size(t, false), s->dimensions,
                             (uint32_t)s->n_dimensions, why, sizeof why)) {
            res = fail(false, msg, "example %zu: %s", exi, why);
            goto out;
        }
    }
out:
    if (reply) nnd__reply__free_unpacked(reply, NULL);
    if (map) munmap(map, total);
    if (fd >= 0) close(fd);
    free(off);
    free(args);
    free(in_p);
    free(out_p);
    free(locs);
    return res;
}

static bool any_shrinkable(const tool_case_example *ex) {
    for (size_t i = 0; i < ex->n_outputs; i++)
        if (ex->outputs[i].bytes) return true;
    return false;
}

/* The constants the vectors mark wasConstantReference go in a memfd pool, as a client's
 * weights would: *pooled (to free) is the model naming them, *fd its pool or -1. Returns
 * -1 when out of memory. */
static int pool_constants(const tool_case *c, Nnd__Model **pooled, int *fd) {
    uint8_t *bytes, *map;
    size_t len;
    *fd = -1;
    *pooled = tool_case_pooled_model(c, &bytes, &len);
    if (!*pooled) return c->n_pooled ? -1 : 0;
    *fd = nnd_memfd_create("nndctl-conformance-constants", len, (void **)&map);
    if (*fd >= 0) {
        memcpy(map, bytes, len);
        munmap(map, len);
    }
    free(bytes);
    return *fd >= 0 ? 0 : -1;
}

static outcome run_model(const runner *r, nnd_client *cl, const tool_case *c,
                         const Nnd__Model *model, const int *fds, size_t n_fds, char *msg);

static outcome run_case(const runner *r, nnd_client *cl, const tool_case *c, char *msg) {
    Nnd__Model *pooled;
    int fd;
    outcome res;
    if (pool_constants(c, &pooled, &fd) < 0)
        res = fail(false, msg, "out of memory putting constants in a pool");
    else
        res = run_model(r, cl, c, pooled ? pooled : c->model, &fd, fd >= 0, msg);
    if (fd >= 0) close(fd);
    if (pooled) nnd__model__free_unpacked(pooled, NULL);
    return res;
}

static outcome run_model(const runner *r, nnd_client *cl, const tool_case *c,
                         const Nnd__Model *model, const int *fds, size_t n_fds, char *msg) {
    const Nnd__Subgraph *g = model->main;
    size_t n_ops = g->n_operations;
    bool *supported = calloc(n_ops + 1, sizeof *supported);
    char err[MSG_LEN - 64];
    if (!supported) return fail(false, msg, "out of memory");
    int st =
        nnd_client_supported_operations(cl, model, fds, n_fds, supported, n_ops, err, sizeof err);
    if (st != 0) {
        free(supported);
        outcome res = fail(st < 0, msg, "GetSupportedOperations: %s", err);
        res.refusal = st > 0 ? st : 0;
        return res;
    }
    for (size_t i = 0; i < n_ops; i++) {
        if (supported[i]) continue;
        const char *name = schema_hal_operation_name(g->operations[i]->type);
        snprintf(msg, MSG_LEN, "unsupported %s", name ? name : "operation");
        free(supported);
        return (outcome){SKIP, false, 0};
    }
    free(supported);
    uint64_t handle;
    int pref = NND__EXECUTION_PREFERENCE__PREFER_FAST_SINGLE_ANSWER;
    int prio = NND__PRIORITY__PRIORITY_MEDIUM;
    if (r->device)
        st = nnd_client_prepare_on(cl, &r->device, 1, model, fds, n_fds, pref, prio, 0, &handle,
                                   err, sizeof err);
    else
        st = nnd_client_prepare(cl, model, fds, n_fds, pref, prio, 0, &handle, err, sizeof err);
    if (st != 0) {
        outcome res = fail(st < 0, msg, "PrepareModel: %s", err);
        res.refusal = st > 0 ? st : 0;
        return res;
    }
    outcome res = {PASS, false, 0};
    for (size_t i = 0; i < c->n_examples && res.v == PASS; i++) {
        res = run_example(cl, c, handle, i, false, msg);
        if (res.v == PASS && c->dynamic_output_shape && !c->expect_failure &&
            any_shrinkable(&c->examples[i]))
            res = run_example(cl, c, handle, i, true, msg);
    }
    if (!res.broken) nnd_client_release(cl, handle);
    return res;
}

/* A case that expects failure: a refusal is judged, a success fails. */
static outcome judge_expected_failure(const tool_case *c, outcome res, char *msg) {
    if (!c->expect_failure || res.v == SKIP) return res;
    if (res.refusal) {
        bool deadline = res.refusal == NND__ERROR_STATUS__MISSED_DEADLINE_TRANSIENT ||
                        res.refusal == NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT;
        char why[128];
        if (tool_case_refusal_passes(c, deadline, why, sizeof why)) {
            res.v = PASS;
            return res;
        }
        size_t at = strlen(msg);
        snprintf(msg + at, MSG_LEN - at, " (%s)", why);
        return res;
    }
    if (res.v == PASS)
        return fail(res.broken, msg, "expected a refusal; PrepareModel and %zu examples succeeded",
                    c->n_examples);
    return res;
}

/* Records a result and prints every result that is now next in case order. */
static void report(runner *r, size_t i, enum verdict v, const char *msg) {
    pthread_mutex_lock(&r->lock);
    r->verdicts[i] = v;
    snprintf(r->messages[i], MSG_LEN, "%s", msg);
    for (; r->printed < r->n && r->verdicts[r->printed] != PENDING; r->printed++) {
        size_t k = r->printed;
        const tool_case *c = &r->cases[k];
        switch (r->verdicts[k]) {
        case PASS:
            r->passed++;
            if (r->verbose) printf("PASS %s:%s\n", c->file, c->name);
            break;
        case FAIL:
            r->failed++;
            printf("FAIL %s:%s: %s\n", c->file, c->name, r->messages[k]);
            break;
        case SKIP:
            r->skipped++;
            printf("SKIP %s: %s\n", c->name, r->messages[k]);
            break;
        case PENDING: break;
        }
    }
    fflush(stdout);
    pthread_mutex_unlock(&r->lock);
}

static void *worker(void *arg) {
    runner *r = arg;
    nnd_client *cl = NULL;
    char msg[MSG_LEN];
    for (;;) {
        size_t i = atomic_fetch_add(&r->next, 1);
        if (i >= r->n) break;
        msg[0] = 0;
        outcome res;
        if (!cl) cl = nnd_client_connect(r->o->socket_path, "nndctl-conformance", msg, MSG_LEN);
        if (!cl)
            res = (outcome){FAIL, false, 0};
        else
            res = judge_expected_failure(&r->cases[i], run_case(r, cl, &r->cases[i], msg), msg);
        if (res.broken) { /* the next case reconnects */
            nnd_client_close(cl);
            cl = NULL;
        }
        report(r, i, res.v, msg);
    }
    nnd_client_close(cl);
    return NULL;
}

/* Whether the daemon has a device named name; false with a message naming those it has
 * when it has not (or cannot be reached). */
static bool have_device(const nndctl_opts *o, const char *name) {
    char err[512];
    nnd_client *cl = nnd_client_connect(o->socket_path, "nndctl-conformance", err, sizeof err);
    if (!cl) {
        fprintf(stderr, "nndctl conformance: %s\n", err);
        return false;
    }
    Nnd__DevicesReply *list = NULL;
    bool found = false;
    if (nnd_client_get_devices(cl, &list, err, sizeof err) != 0) {
        fprintf(stderr, "nndctl conformance: --device: %s\n", err);
    } else {
        char names[512] = "";
        size_t at = 0;
        for (size_t i = 0; i < list->n_devices; i++) {
            found |= !strcmp(list->devices[i]->name, name);
            int k = snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
                             list->devices[i]->name);
            if (k > 0 && (size_t)k < sizeof names - at) at += (size_t)k;
        }
        if (!found)
            fprintf(stderr,
                    "nndctl conformance: --device: no device named \"%s\": the daemon has %s\n",
                    name, names);
        nnd__devices_reply__free_unpacked(list, NULL);
    }
    nnd_client_close(cl);
    return found;
}

int nndctl_conformance(const nndctl_opts *o, int argc, char **argv) {
    long jobs = sysconf(_SC_NPROCESSORS_ONLN);
    bool verbose = false, bisect = false, exact = false;
    const char *device = NULL, *other = NULL;
    tool_case *cases = NULL;
    size_t n = 0, npaths = 0, unreadable = 0;
    int rc = 2;
    char err[1024];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--jobs") && i + 1 < argc) {
            char *end;
            jobs = strtol(argv[++i], &end, 10);
            if (*end || jobs < 1) {
                fprintf(stderr, "nndctl conformance: bad --jobs %s\n", argv[i]);
                goto out;
            }
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            if (device)
                other = argv[++i];
            else
                device = argv[++i];
        } else if (!strcmp(argv[i], "--bisect")) {
            bisect = true;
        } else if (!strcmp(argv[i], "--exact")) {
            exact = true;
        } else if (!strcmp(argv[i], "--verbose") || !strcmp(argv[i], "-v")) {
            verbose = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "nndctl conformance: unknown option %s\n", argv[i]);
            goto out;
        } else {
            npaths++;
            if (tool_cases_load(argv[i], &cases, &n, tool_case_report_unreadable, &unreadable, err,
                                sizeof err) < 0) {
                fprintf(stderr, "nndctl conformance: %s\n", err);
                goto out;
            }
        }
    }
    if (!npaths || (bisect && !other) || (other && !bisect)) {
        fprintf(
            stderr,
            "usage: nndctl conformance [--jobs N] [--device NAME] [--exact] [--verbose] PATH...\n"
            "       nndctl conformance --bisect --device A --device B [--verbose] "
            "PATH...\n");
        goto out;
    }
    if (device && !have_device(o, device)) goto out;
    if (other && !have_device(o, other)) goto out;
    if (bisect) {
        rc = nndctl_bisect(o, device, other, cases, n, verbose);
        goto out;
    }
    for (size_t i = 0; exact && i < n; i++)
        cases[i].quant_steps_set = true, cases[i].quant_steps = 0;
    if (jobs < 1) jobs = 1;
    if ((size_t)jobs > n) jobs = n ? (long)n : 1;
    runner r = {.o = o, .device = device, .cases = cases, .n = n, .verbose = verbose};
    atomic_init(&r.next, 0);
    pthread_mutex_init(&r.lock, NULL);
    r.verdicts = calloc(n + 1, sizeof *r.verdicts);
    r.messages = calloc(n + 1, sizeof *r.messages);
    pthread_t *threads = calloc((size_t)jobs, sizeof *threads);
    if (!r.verdicts || !r.messages || !threads) {
        fprintf(stderr, "nndctl conformance: out of memory\n");
        rc = 1;
    } else {
        long started = 0;
        for (; started < jobs; started++)
            if (pthread_create(&threads[started], NULL, worker, &r) != 0) break;
        if (!started) worker(&r);
        for (long t = 0; t < started; t++)
            pthread_join(threads[t], NULL);
        r.failed += unreadable;
        printf("conformance: %zu passed, %zu failed, %zu skipped\n", r.passed, r.failed, r.skipped);
        rc = r.failed ? 1 : 0;
    }
    free(threads);
    free(r.verdicts);
    free(r.messages);
    pthread_mutex_destroy(&r.lock);
out:
    tool_cases_free(cases, n);
    return rc;
}
