/* SPDX-License-Identifier: Apache-2.0 */
/* test_opencl (unit): the nnd-opencl driver plugin (drivers/opencl/) driven through the
 * driver ABI 2 directly, dlopen'd as the daemon's driver host does, with NND_OPENCL_CPU=1
 * so that PoCL's CPU device serves (skipped, 77, when no OpenCL device is there).
 * - Every operation family in random forms (opencl_cases.h), a chain and a feed-forward
 *   block with temporaries, MobileNet v1 and v2 FLOAT32 (tests/mobilenet.h) as one
 *   partition each: supported_operations() says yes to each operation, prepare() takes the
 *   partition, execute() and start() give the reference kernels' results within 1e-4
 *   relative over max(1, |reference|) (float32 sums in another order differ by a few ulp
 *   of the partial sums; the transcendental functions are within 4 ulp in OpenCL C),
 *   complete() exactly once per start().
 * - supported_operations() says no to what the kernels do not run (FLOAT16 without
 *   cl_khr_fp16, unknown shapes, a non-constant activation, a rank 5 ADD).
 * - Device memory: buffers from allocate() as an execution's input and output, two
 *   executions chained through them, read back; zeroed at allocation, reads past the end
 *   refused.
 * - Priority: one HIGH execution started behind LOW ones completes before the last LOW.
 *   LOW executions of a 6-launch chain started just after a HIGH one yield (run in pieces,
 *   ocl_exec.h) and give the reference's results.
 *   cancel() of a queued execution completes it once with a failure.
 * - The program cache: a second open loads the program from disk (timed against the cold
 *   build); a corrupt cached binary is refused and the program built again; a build
 *   failure (a bad option through NND_OPENCL_BUILD_OPTIONS) fails that preparation with a
 *   message and the next preparation works.
 * - Cache blobs: a partition's one blob (cache_save) loads through cache_load on its own
 *   device; with its device or driver version name changed, or cut short, it is refused
 *   with a message saying what it was made for. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/mobilenet.h"
#include "tests/drivers/opencl_cases.h"
#include "tests/drivers/opencl_models.h"

#define SKIP      77
#define TOLERANCE 1e-4
#define CASES     40 /* per family */

static const nnd_driver *drv;
static nnd_driver_device_info dev;
static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int open_driver(void) {
    nnd_driver_device_info devs[NND_DRIVER_MAX_DEVICES];
    char err[256] = "";
    int n = drv->open(devs, NND_DRIVER_MAX_DEVICES, err, sizeof err);
    if (n > 0) dev = devs[0];
    return n;
}

/* Completion of started executions. */
typedef struct waiter {
    pthread_mutex_t lock;
    pthread_cond_t cv;
    int completions, status, order;
} waiter;
static waiter w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

typedef struct job {
    nnd_driver_execution x;
    int completions, status, finished_as; /* the order it completed in */
    char err[200];
} job;

static void on_complete(nnd_driver_execution *x, int status) {
    job *j = (job *)x; /* x is the first member */
    pthread_mutex_lock(&w.lock);
    j->completions++;
    j->status = status;
    j->finished_as = w.order++;
    w.completions++;
    pthread_cond_broadcast(&w.cv);
    pthread_mutex_unlock(&w.lock);
}

static void wait_completions(int n) {
    pthread_mutex_lock(&w.lock);
    while (w.completions < n)
        pthread_cond_wait(&w.cv, &w.lock);
    pthread_mutex_unlock(&w.lock);
}

/* An execution of prepared with m's inputs, into outs. */
static void setup(job *j, void *prepared, om_model *m, nnd_driver_arg *in, nnd_driver_arg *out,
                  float **outs, int32_t priority) {
    memset(j, 0, sizeof *j);
    for (uint32_t i = 0; i < m->n_inputs; i++)
        in[i] = (nnd_driver_arg){.data = m->input_data[i],
                                 .length = om_elems(m, m->inputs[i]) * sizeof(float)};
    for (uint32_t i = 0; i < m->n_outputs; i++)
        out[i] =
            (nnd_driver_arg){.data = outs[i], .length = om_elems(m, m->outputs[i]) * sizeof(float)};
    j->x = (nnd_driver_execution){.prepared = prepared,
                                  .n_inputs = m->n_inputs,
                                  .n_outputs = m->n_outputs,
                                  .inputs = in,
                                  .outputs = out,
                                  .priority = priority,
                                  .err = j->err,
                                  .errlen = sizeof j->err,
                                  .complete = on_complete};
}

static void *prepare(om_model *m, const char *what, double *ms) {
    nnd_driver_model d;
    om_driver_model(m, &d);
    bool supported[OM_MAX_OPS];
    char err[256] = "";
    CHECK(drv->supported_operations(dev.device, &d, supported, err, sizeof err) == 0,
          "%s: supported_operations: %s", what, err);
    for (uint32_t k = 0; k < m->n_ops; k++)
        CHECK(supported[k], "%s: operation %u (%s) not supported", what, k,
              schema_operation_name(m->ops[k].type));
    nnd_driver_prepare_args args = {.priority = NND_DRIVER_PRIORITY_MEDIUM};
    nnd_driver_prepared_info info = {0};
    double t0 = now_ms();
    int s = drv->prepare(dev.device, &d, &args, &info, err, sizeof err);
    if (ms) *ms = now_ms() - t0;
    CHECK(s == NND_DRIVER_OK, "%s: prepare: %d %s", what, s, err);
    return s == NND_DRIVER_OK ? info.prepared : NULL;
}

/* Runs m on the reference and on the driver (execute, then start); the worst difference. */
static double run_both(om_model *m, const char *what) {
    float *want[OM_MAX_IO], *got[OM_MAX_IO], *got2[OM_MAX_IO];
    for (uint32_t i = 0; i < m->n_outputs; i++) {
        size_t n = om_elems(m, m->outputs[i]) * sizeof(float);
        want[i] = calloc(1, n), got[i] = calloc(1, n), got2[i] = calloc(1, n);
    }
    char err[256] = "";
    double worst = -1;
    if (!om_reference(m, want, err, sizeof err)) {
        CHECK(false, "%s: the reference refused the model: %s", what, err);
        goto out;
    }
    void *p = prepare(m, what, NULL);
    if (!p) goto out;
    nnd_driver_arg in[OM_MAX_IO], out[OM_MAX_IO], out2[OM_MAX_IO];
    job j, j2;
    setup(&j, p, m, in, out, got, NND_DRIVER_PRIORITY_MEDIUM);
    int s = drv->execute(&j.x);
    CHECK(s == NND_DRIVER_OK, "%s: execute: %d %s", what, s, j.err);
    setup(&j2, p, m, in, out2, got2, NND_DRIVER_PRIORITY_MEDIUM);
    int before = w.completions;
    s = drv->start(&j2.x);
    CHECK(s == NND_DRIVER_STARTED, "%s: start: %d %s", what, s, j2.err);
    if (s == NND_DRIVER_STARTED) {
        wait_completions(before + 1);
        CHECK(j2.completions == 1 && j2.status == NND_DRIVER_OK, "%s: complete %d times, %d", what,
              j2.completions, j2.status);
    }
    worst = 0;
    for (uint32_t i = 0; i < m->n_outputs; i++) {
        size_t n = om_elems(m, m->outputs[i]);
        double d = om_compare(got[i], want[i], n), d2 = om_compare(got2[i], want[i], n);
        worst = d > worst ? d : worst;
        worst = d2 > worst ? d2 : worst;
        CHECK(out[i].rank == m->operands[m->outputs[i]].rank, "%s: output rank", what);
    }
    CHECK(worst <= TOLERANCE, "%s: differs from the reference by %g", what, worst);
    drv->release(p);
out:
    for (uint32_t i = 0; i < m->n_outputs; i++)
        free(want[i]), free(got[i]), free(got2[i]);
    return worst;
}

static om_model model; /* large: not on the stack */

static void families(void) {
    for (size_t f = 0; f < oc_n_families; f++) {
        double worst = 0;
        for (unsigned c = 0; c < CASES; c++) {
            om_init(&model, (unsigned)(f * 1000 + c + 1));
            oc_families[f].build(&model);
            char what[96];
            snprintf(what, sizeof what, "%s case %u", oc_families[f].name, c);
            double d = run_both(&model, what);
            worst = d > worst ? d : worst;
            om_free(&model);
        }
        printf("%-20s %d cases, largest difference %.3g\n", oc_families[f].name, CASES, worst);
    }
}

static void mobilenets(void) {
    for (int v = 1; v <= 2; v++) {
        bench_net net;
        CHECK((v == 1 ? bench_net_init : bench_net_init_v2)(&net, SCHEMA_TENSOR_FLOAT32) == 0,
              "MobileNet v%d", v);
        om_init(&model, 7);
        om_mobilenet(&model, &net);
        char what[32];
        snprintf(what, sizeof what, "MobileNet v%d FLOAT32", v);
        double t0 = now_ms();
        double d = run_both(&model, what);
        printf("%s: %u operations as one partition, largest difference %.3g (%.0f ms both "
               "ways)\n",
               what, model.n_ops, d, now_ms() - t0);
        om_free(&model);
        bench_net_free(&net);
    }
}

/* A small model to time the program build with. */
static double timed_prepare(const char *what, int *status, char *err, size_t errlen) {
    om_init(&model, 3);
    oc_families[0].build(&model);
    nnd_driver_model d;
    om_driver_model(&model, &d);
    nnd_driver_prepare_args args = {.priority = NND_DRIVER_PRIORITY_MEDIUM};
    nnd_driver_prepared_info info = {0};
    double t0 = now_ms();
    *status = drv->prepare(dev.device, &d, &args, &info, err, errlen);
    double ms = now_ms() - t0;
    if (*status == NND_DRIVER_OK) drv->release(info.prepared);
    om_free(&model);
    (void)what;
    return ms;
}

/* The one cached binary's path in dir, and its size; 0 when there is not exactly one. */
static long cached_binary(const char *dir, char *path, size_t cap) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s/*.bin 2>/dev/null", dir);
    FILE *f = popen(cmd, "r");
    int found = 0;
    char line[400];
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        snprintf(path, cap, "%s", line);
        found++;
    }
    if (f) pclose(f);
    if (found != 1) return 0;
    FILE *b = fopen(path, "rb");
    if (!b) return 0;
    fseek(b, 0, SEEK_END);
    long size = ftell(b);
    fclose(b);
    return size;
}

static void reopen(void) {
    drv->close();
    CHECK(open_driver() > 0, "the driver opens again");
}

static void cache_checks(const char *dir) {
    char err[256] = "", path[600];
    int s;
    double cold = timed_prepare("cold", &s, err, sizeof err);
    CHECK(s == NND_DRIVER_OK, "cold prepare: %s", err);
    long size = cached_binary(dir, path, sizeof path);
    CHECK(size > 0, "one program binary cached in %s", dir);
    reopen();
    double warm = timed_prepare("cached", &s, err, sizeof err);
    CHECK(s == NND_DRIVER_OK, "prepare from the cache: %s", err);
    printf("program: cold build and first prepare %.1f ms, from the disk cache %.1f ms (%.3f)\n",
           cold, warm, warm / cold);
    /* A corrupt binary is refused: the program is built again and the binary replaced. */
    FILE *f = fopen(path, "wb");
    if (f) fputs("not a program binary", f), fclose(f);
    reopen();
    timed_prepare("corrupt", &s, err, sizeof err);
    CHECK(s == NND_DRIVER_OK, "prepare with a corrupt cached binary: %s", err);
    CHECK(cached_binary(dir, path, sizeof path) == size, "the corrupt binary was replaced");
    /* A build failure fails the preparation with a message; the device stays usable. */
    setenv("NND_OPENCL_BUILD_OPTIONS", "-no-such-option", 1);
    reopen();
    err[0] = 0;
    timed_prepare("bad option", &s, err, sizeof err);
    CHECK(s == NND_DRIVER_GENERAL_FAILURE && strstr(err, "build"),
          "a failed build fails the preparation: %d %s", s, err);
    unsetenv("NND_OPENCL_BUILD_OPTIONS");
    timed_prepare("after", &s, err, sizeof err);
    CHECK(s == NND_DRIVER_OK, "prepare after a failed build: %s", err);
}

/* Where the blob names its device and driver version (ocl_blob.h: magic, key, platform). */
#define BLOB_DEVICE_AT (8 + 65 + 96)
#define BLOB_DRIVER_AT (BLOB_DEVICE_AT + 96)

static int load_blob(nnd_driver_model *d, const uint8_t *blob, size_t size, char *err,
                     size_t errlen) {
    nnd_driver_prepare_args args = {.priority = NND_DRIVER_PRIORITY_MEDIUM};
    nnd_driver_prepared_info info = {0};
    nnd_driver_blob b = {.data = blob, .size = size};
    int s = drv->cache_load(dev.device, d, &args, &b, 1, &info, err, errlen);
    if (s == NND_DRIVER_OK) drv->release(info.prepared);
    return s;
}

/* A partition's cache blob loads on its own device; one naming another device or driver
 * version, or cut short, is refused with a message. */
static void blob_checks(void) {
    om_init(&model, 3);
    oc_families[0].build(&model);
    nnd_driver_model d;
    om_driver_model(&model, &d);
    void *p = prepare(&model, "blob", NULL);
    size_t size = p ? drv->cache_save(p, 0, NULL, 0) : 0;
    uint8_t *blob = size ? malloc(size) : NULL;
    CHECK(dev.caps.cache_blobs == 1 && blob && drv->cache_save(p, 0, blob, size) == size &&
              drv->cache_save(p, 1, NULL, 0) == 0,
          "one cache blob of %zu bytes", size);
    if (p) drv->release(p);
    char err[256] = "";
    if (blob) {
        CHECK(load_blob(&d, blob, size, err, sizeof err) == NND_DRIVER_OK, "blob loads: %s", err);
        const size_t at[2] = {BLOB_DEVICE_AT, BLOB_DRIVER_AT};
        for (int i = 0; i < 2; i++) {
            blob[at[i]] ^= 1;
            err[0] = 0;
            int s = load_blob(&d, blob, size, err, sizeof err);
            printf("blob with its %s name changed: %d, %s\n", i ? "driver" : "device", s, err);
            CHECK(s != NND_DRIVER_OK && strstr(err, "made for"), "a tampered blob is refused");
            blob[at[i]] ^= 1;
        }
        CHECK(load_blob(&d, blob, 40, err, sizeof err) != NND_DRIVER_OK, "a short blob loads");
    }
    free(blob);
    om_free(&model);
}

static void remove_cache(const char *dir) {
    char path[600];
    while (cached_binary(dir, path, sizeof path) > 0)
        unlink(path);
    rmdir(dir);
}

/* One ADD model, changed by `how` in its driver form; whether the driver says yes. */
static bool add_supported(int how) {
    om_init(&model, 5);
    uint32_t d[5] = {2, 3, 4, 5, 2}, rank = how == 3 ? 5 : 4;
    uint32_t in[3] = {om_input(&model, rank, d), om_input(&model, rank, d), om_i32(&model, 0)};
    uint32_t y = om_tensor(&model, SCHEMA_TENSOR_FLOAT32, rank, d);
    om_op(&model, SCHEMA_OP_ADD, 3, in, y);
    om_output(&model, y);
    nnd_driver_model dm;
    om_driver_model(&model, &dm);
    nnd_driver_operand *ops = model.d_operands;
    if (how == 0)
        for (int i = 0; i < 2; i++)
            ops[in[i]].type = NND_DRIVER_TENSOR_FLOAT16;
    if (how == 1) ops[y].dims[1] = 0; /* not known yet */
    if (how == 2) ops[in[2]].lifetime = NND_DRIVER_INPUT, ops[in[2]].data = NULL;
    if (how == 4)
        for (int i = 0; i < 2; i++)
            ops[in[i]].type = NND_DRIVER_TENSOR_QUANT8_ASYMM, ops[in[i]].scale = 0.1f;
    bool yes = true;
    char err[200] = "";
    CHECK(drv->supported_operations(dev.device, &dm, &yes, err, sizeof err) == 0,
          "supported_operations: %s", err);
    om_free(&model);
    return yes;
}

static void declines(void) {
    CHECK(add_supported(-1), "a FLOAT32 ADD is supported");
    CHECK(!add_supported(0), "a FLOAT16 ADD is declined (no cl_khr_fp16 kernels)");
    CHECK(!add_supported(1), "an ADD of unknown shape is declined");
    CHECK(!add_supported(2), "an ADD whose activation is not constant is declined");
    CHECK(!add_supported(3), "a rank 5 ADD is declined");
    CHECK(!add_supported(4), "a QUANT8 ADD is declined");
}

static void chains(void) {
    om_init(&model, 11);
    oc_chain(&model);
    printf("chain: largest difference %.3g\n", run_both(&model, "chain"));
    om_free(&model);
    om_init(&model, 12);
    oc_feed_forward(&model);
    printf("feed-forward: largest difference %.3g\n", run_both(&model, "feed-forward"));
    om_free(&model);
}

/* Device memory: an ADD's input and output in the driver's buffers, chained twice
 * (output of the first as input of the second) without host copies between, read back. */
static void device_memory(void) {
    om_init(&model, 17);
    uint32_t d[3] = {2, 3, 4}, four = 4;
    uint32_t in[3] = {om_input(&model, 3, d), om_const_f32(&model, 1, &four, NULL, 1.f),
                      om_i32(&model, 0)};
    uint32_t y = om_tensor(&model, SCHEMA_TENSOR_FLOAT32, 3, d);
    om_op(&model, SCHEMA_OP_ADD, 3, in, y);
    om_output(&model, y);
    void *p = prepare(&model, "device memory", NULL);
    const float *c = (const float *)(model.values + model.operands[in[1]].offset);
    nnd_driver_buffer_desc desc = {.bytes = 24 * sizeof(float)};
    uint64_t a = 0, b = 0;
    char err[200] = "";
    CHECK(drv->allocate(dev.device, &desc, &a, err, sizeof err) == 0 && a, "allocate: %s", err);
    CHECK(drv->allocate(dev.device, &desc, &b, err, sizeof err) == 0 && b && b != a, "allocate: %s",
          err);
    float got[24], zero[24];
    CHECK(drv->memory_read(dev.device, b, 0, zero, sizeof zero) == 0, "read a new buffer");
    for (int i = 0; i < 24; i++)
        CHECK(zero[i] == 0.f, "a new buffer is zeroed");
    CHECK(drv->memory_write(dev.device, a, 0, model.input_data[0], sizeof got) == 0, "write");
    CHECK(drv->memory_read(dev.device, a, 4, got, sizeof got) != 0, "a read past the end fails");
    for (int round = 0; round < 2 && p; round++) {
        nnd_driver_arg ia = {.memory = round ? b : a, .length = sizeof got, .rank = 3};
        nnd_driver_arg oa = {.memory = round ? a : b, .length = sizeof got};
        memcpy(ia.dims, d, sizeof d);
        job j;
        memset(&j, 0, sizeof j);
        j.x = (nnd_driver_execution){.prepared = p,
                                     .n_inputs = 1,
                                     .n_outputs = 1,
                                     .inputs = &ia,
                                     .outputs = &oa,
                                     .priority = NND_DRIVER_PRIORITY_MEDIUM,
                                     .err = j.err,
                                     .errlen = sizeof j.err};
        int s = drv->execute(&j.x);
        CHECK(s == NND_DRIVER_OK, "execute on device buffers: %d %s", s, j.err);
    }
    CHECK(drv->memory_read(dev.device, a, 0, got, sizeof got) == 0, "read back");
    double worst = 0;
    for (int i = 0; i < 24; i++) {
        double want = (double)model.input_data[0][i] + 2.0 * (double)c[i % 4];
        double diff = fabs(got[i] - want);
        worst = diff > worst ? diff : worst;
    }
    CHECK(worst < 1e-5, "chained on device buffers: off by %g", worst);
    printf("device memory: two chained executions on device buffers, off by %.3g\n", worst);
    drv->memory_free(dev.device, a);
    drv->memory_free(dev.device, b);
    if (p) drv->release(p);
    om_free(&model);
}

#define FLOOD 6

/* FLOOD LOW executions then one HIGH: the HIGH one must not finish last. Then FLOOD LOW
 * executions, the last cancelled while it waits: it completes once, with a failure. */
static void priority_and_cancel(void) {
    om_init(&model, 13);
    uint32_t in[7] = {om_input(&model, 4, (uint32_t[]){1, 64, 64, 32}),
                      om_const_f32(&model, 4, (uint32_t[]){32, 3, 3, 32}, NULL, 0.2f),
                      om_const_f32(&model, 1, (uint32_t[]){32}, NULL, 0.2f),
                      om_i32(&model, 1),
                      om_i32(&model, 1),
                      om_i32(&model, 1),
                      om_i32(&model, 0)};
    uint32_t y = om_tensor(&model, SCHEMA_TENSOR_FLOAT32, 4, (uint32_t[]){1, 64, 64, 32});
    om_op(&model, SCHEMA_OP_CONV_2D, 7, in, y);
    om_output(&model, y);
    void *p = prepare(&model, "flood", NULL);
    if (!p) return om_free(&model);
    static job jobs[FLOOD + 1];
    static nnd_driver_arg args_in[FLOOD + 1][1], args_out[FLOOD + 1][1];
    float *outs[FLOOD + 1];
    for (int i = 0; i <= FLOOD; i++)
        outs[i] = malloc(om_elems(&model, y) * sizeof(float));
    for (int round = 0; round < 2; round++) {
        int base = w.completions, n = round == 0 ? FLOOD + 1 : FLOOD;
        for (int i = 0; i < n; i++) {
            int32_t prio = i == FLOOD ? NND_DRIVER_PRIORITY_HIGH : NND_DRIVER_PRIORITY_LOW;
            setup(&jobs[i], p, &model, args_in[i], args_out[i], &outs[i], prio);
            CHECK(drv->start(&jobs[i].x) == NND_DRIVER_STARTED, "start %d", i);
        }
        if (round == 1) drv->cancel(&jobs[FLOOD - 1].x);
        wait_completions(base + n);
        usleep(20000); /* a second complete() would show now */
        for (int i = 0; i < n; i++)
            CHECK(jobs[i].completions == 1, "execution %d completed %d times", i,
                  jobs[i].completions);
        if (round == 0) {
            CHECK(jobs[FLOOD].finished_as < jobs[FLOOD - 1].finished_as,
                  "the HIGH execution finished after the last LOW one");
            printf("priority: the HIGH execution, started last of %d, finished %d of %d\n", n,
                   jobs[FLOOD].finished_as - base + 1, n);
        } else {
            CHECK(jobs[FLOOD - 1].status == NND_DRIVER_GENERAL_FAILURE,
                  "the cancelled execution completed with %d", jobs[FLOOD - 1].status);
            for (int i = 0; i + 1 < FLOOD; i++)
                CHECK(jobs[i].status == NND_DRIVER_OK, "execution %d: %d", i, jobs[i].status);
        }
    }
    for (int i = 0; i <= FLOOD; i++)
        free(outs[i]);
    drv->release(p);
    om_free(&model);
}

#define YIELDERS 4

/* LOW executions of a 6-launch chain started right after a HIGH one: they yield, each run
 * in pieces with its context kept between them, and still give the reference's results.
 * Inputs alternate between two, so a context's buffers left from another execution
 * cannot pass for a result. */
static void yielding(void) {
    om_init(&model, 17);
    uint32_t dims[4] = {1, 24, 24, 16}, x = om_input(&model, 4, dims);
    for (int l = 0; l < 6; l++) {
        uint32_t in[7] = {x,
                          om_const_f32(&model, 4, (uint32_t[]){16, 3, 3, 16}, NULL, 0.1f),
                          om_const_f32(&model, 1, (uint32_t[]){16}, NULL, 0.1f),
                          om_i32(&model, 1),
                          om_i32(&model, 1),
                          om_i32(&model, 1),
                          om_i32(&model, 1)};
        uint32_t y = om_tensor(&model, SCHEMA_TENSOR_FLOAT32, 4, dims);
        om_op(&model, SCHEMA_OP_CONV_2D, 7, in, y);
        x = y;
    }
    om_output(&model, x);
    size_t n = om_elems(&model, x), n_in = om_elems(&model, model.inputs[0]);
    float *want[2] = {malloc(n * sizeof(float)), malloc(n * sizeof(float))}, *outs[YIELDERS + 1];
    float *inputs[2] = {model.input_data[0], malloc(n_in * sizeof(float))};
    char err[256] = "";
    CHECK(want[0] && om_reference(&model, &want[0], err, sizeof err), "yielding: reference: %s",
          err);
    for (size_t k = 0; k < n_in; k++)
        inputs[1][k] = 0.5f - inputs[0][k];
    model.input_data[0] = inputs[1];
    CHECK(want[1] && om_reference(&model, &want[1], err, sizeof err), "yielding: reference: %s",
          err);
    model.input_data[0] = inputs[0];
    void *p = prepare(&model, "yielding", NULL);
    static job jobs[YIELDERS + 1];
    static nnd_driver_arg args_in[YIELDERS + 1][1], args_out[YIELDERS + 1][1];
    int base = w.completions;
    for (int i = 0; p && i <= YIELDERS; i++) {
        outs[i] = calloc(n, sizeof(float));
        setup(&jobs[i], p, &model, args_in[i], args_out[i], &outs[i],
              i == 0 ? NND_DRIVER_PRIORITY_HIGH : NND_DRIVER_PRIORITY_LOW);
        args_in[i][0].data = inputs[i % 2];
        CHECK(drv->start(&jobs[i].x) == NND_DRIVER_STARTED, "yielding: start %d", i);
    }
    if (p) wait_completions(base + YIELDERS + 1);
    double worst = 0;
    for (int i = 0; p && i <= YIELDERS; i++) {
        CHECK(jobs[i].completions == 1 && jobs[i].status == NND_DRIVER_OK,
              "yielding: execution %d completed %d times, status %d (%s)", i, jobs[i].completions,
              jobs[i].status, jobs[i].err);
        double d = om_compare(outs[i], want[i % 2], n);
        worst = d > worst ? d : worst;
        free(outs[i]);
    }
    CHECK(worst <= TOLERANCE, "yielding: a LOW execution run in pieces differs by %g", worst);
    if (p)
        printf("yielding: %d LOW executions in pieces behind a HIGH one, largest difference %.3g\n",
               YIELDERS, worst);
    if (p) drv->release(p);
    free(want[0]), free(want[1]), free(inputs[1]);
    om_free(&model);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_opencl PATH/libnnd_opencl.so\n");
        return 2;
    }
    setenv("NND_OPENCL_CPU", "1", 1);
    char cache[] = "/tmp/nnd-test-opencl-XXXXXX";
    if (!mkdtemp(cache)) return 1;
    setenv("NND_OPENCL_CACHE_DIR", cache, 1);
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "test_opencl: %s\n", dlerror());
        return 1;
    }
    drv = dlsym(h, NND_DRIVER_SYMBOL);
    if (!drv || drv->abi_version != NND_DRIVER_ABI_VERSION) return 1;
    int n = open_driver();
    if (n <= 0) {
        printf("SKIP: no OpenCL device (install pocl-opencl-icd for the CPU one)\n");
        rmdir(cache);
        return SKIP;
    }
    printf("device %s (%s): %d device(s)\n", dev.name, dev.version, n);
    CHECK(!strcmp(dev.name, "nnd-opencl") && dev.type == NND_DRIVER_TYPE_GPU, "device record");
    cache_checks(cache); /* first: it times the cold build */
    blob_checks();
    declines();
    families();
    chains();
    device_memory();
    priority_and_cancel();
    yielding();
    mobilenets();
    drv->close();
    remove_cache(cache);
    if (failures) fprintf(stderr, "test_opencl: %d failures\n", failures);
    return failures ? 1 : 0;
}
