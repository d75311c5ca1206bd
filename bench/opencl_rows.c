/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_rows.c: the opencl rows of `make bench`. See opencl_rows.h. */
#include "bench/opencl_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/opencl_nnapi.h"
#include "bench/opencl_plain.h"
#include "nnd/NeuralNetworks.h"
#include "schema/codes.h"
#include "tests/support/harness.h"
#include "tests/support/timing.h"
#ifdef BENCH_HAVE_CLBLAST
#include <clblast_c.h>
#endif

#define ROUNDS     8
#define PER_ROUND  2
#define CACHE_HITS 3
#define FC_B       128
#define FC_IN      2048
#define FC_UNITS   2048

int bench_opencl_daemon(tst_daemon *d) {
    const char *args[] = {"--drivers-dir", BENCH_OPENCL_DRIVERS_DIR, NULL};
    setenv("NND_OPENCL_CPU", "1", 1);
    if (tst_daemon_start(d, args) != 0) {
        fprintf(stderr, "bench: opencl: cannot start the daemon\n");
        return -1;
    }
    /* libnnd's NNAPI layer reaches the daemon that $NND_SOCKET names. */
    setenv("NND_SOCKET", d->socket_path, 1);
    return 0;
}

static double max_diff(const float *a, const float *b, size_t n) {
    double d = 0;
    for (size_t i = 0; i < n; i++)
        d = fmax(d, fabs((double)a[i] - (double)b[i]));
    return d;
}

/* ---- mnet_f32_opencl, mnet_opencl_cpu ------------------------------------------------- */

static int mnet_rows(ocl_device *dev, bench_opencl *out) {
    bench_net net;
    if (bench_net_init(&net, SCHEMA_TENSOR_FLOAT32)) return -1;
    static om_model m;
    om_init(&m, 7);
    om_mobilenet(&m, &net);
    bench_net_free(&net);
    size_t n_out = om_elems(&m, m.outputs[0]);
    float *plain_out = calloc(n_out, sizeof(float));
    bench_ocl_plain *same = NULL, *other = NULL;
    bench_om_nnapi ocl = {.fd = -1}, cpu = {.fd = -1};
    int rc = plain_out ? 0 : -1;
    if (!rc)
        rc = bench_om_nnapi_open(&ocl, &m, "nnd-opencl", ANEURALNETWORKS_PRIORITY_MEDIUM, NULL,
                                 NULL);
    if (!rc)
        rc = bench_om_nnapi_open(&cpu, &m, "nnd-cpu", ANEURALNETWORKS_PRIORITY_MEDIUM, NULL, NULL);
    if (!rc && !(same = bench_ocl_plain_open(dev, &m, plain_out, out->cmdbuf))) rc = -1;
    if (!rc)
        rc = bench_alternate(bench_om_nnapi_run, &ocl, bench_ocl_plain_run, same, NULL, ROUNDS,
                             PER_ROUND, &out->mnet);
    if (!rc) out->mnet_diff = max_diff(bench_om_nnapi_output(&ocl), plain_out, n_out);
    out->mnet_same = out->mnet;
    /* The plain program the other way too (plain enqueues or a command buffer, where the
     * device has both): the row is against the faster of the two. */
    bench_pair o = {0};
    if (!rc && bench_ocl_has_cmdbuf(dev) &&
        (other = bench_ocl_plain_open(dev, &m, plain_out, !out->cmdbuf)) &&
        bench_alternate(bench_om_nnapi_run, &ocl, bench_ocl_plain_run, other, NULL, ROUNDS,
                        PER_ROUND, &o) == 0) {
        out->mnet_other = o;
        if (o.b_ns < out->mnet.b_ns) out->mnet = o;
    }
    if (!rc)
        rc = bench_alternate(bench_om_nnapi_run, &ocl, bench_om_nnapi_run, &cpu, NULL, ROUNDS,
                             PER_ROUND, &out->mnet_cpu);
    out->mnet.shape = out->mnet_cpu.shape = "MobileNet v1 1.0 224x224 FLOAT32 (30 operations)";
    bench_ocl_plain_close(same);
    bench_ocl_plain_close(other);
    bench_om_nnapi_close(&ocl);
    bench_om_nnapi_close(&cpu);
    free(plain_out);
    om_free(&m);
    return rc;
}

/* ---- fc_opencl ---------------------------------------------------------------------- */

#ifdef BENCH_HAVE_CLBLAST
typedef struct clblast_side {
    ocl_device *dev;
    cl_mem a, b, c;
    const float *input;
    float *output;
} clblast_side;

static double clblast_run(void *ctx) {
    clblast_side *s = ctx;
    cl_command_queue q = s->dev->queue;
    uint64_t t0 = bench_now_ns();
    cl_int e = clEnqueueWriteBuffer(q, s->a, CL_FALSE, 0, sizeof(float) * FC_B * FC_IN, s->input, 0,
                                    NULL, NULL);
    CLBlastStatusCode st = CLBlastSuccess;
    if (!e)
        st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeYes, FC_B,
                          FC_UNITS, FC_IN, 1.f, s->a, 0, FC_IN, s->b, 0, FC_IN, 0.f, s->c, 0,
                          FC_UNITS, &q, NULL);
    if (!e && st == CLBlastSuccess)
        e = clEnqueueReadBuffer(q, s->c, CL_TRUE, 0, sizeof(float) * FC_B * FC_UNITS, s->output, 0,
                                NULL, NULL);
    double t = (double)(bench_now_ns() - t0);
    if (e || st != CLBlastSuccess) fprintf(stderr, "bench: CLBlast SGEMM: %d, %d\n", e, st);
    return e || st != CLBlastSuccess ? -1 : t;
}

static int fc_row(ocl_device *dev, bench_opencl *out) {
    static om_model m;
    om_init(&m, 5);
    uint32_t x = om_input(&m, 2, (uint32_t[]){FC_B, FC_IN});
    uint32_t w = om_const_f32(&m, 2, (uint32_t[]){FC_UNITS, FC_IN}, NULL, 0.04f);
    float *zeros = calloc(FC_UNITS, sizeof(float));
    float *output = malloc(sizeof(float) * FC_B * FC_UNITS);
    if (!zeros || !output) return -1;
    uint32_t bias = om_const_f32(&m, 1, (uint32_t[]){FC_UNITS}, zeros, 0);
    uint32_t y = om_tensor(&m, SCHEMA_TENSOR_FLOAT32, 2, (uint32_t[]){FC_B, FC_UNITS});
    om_op(&m, SCHEMA_OP_FULLY_CONNECTED, 4, (uint32_t[]){x, w, bias, om_i32(&m, 0)}, y);
    om_output(&m, y);
    clblast_side s = {.dev = dev, .input = m.input_data[0], .output = output};
    cl_int e = CL_SUCCESS;
    s.a = clCreateBuffer(dev->ctx, CL_MEM_READ_ONLY, sizeof(float) * FC_B * FC_IN, NULL, &e);
    if (!e)
        s.b = clCreateBuffer(dev->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             sizeof(float) * FC_UNITS * FC_IN, m.values + m.operands[w].offset, &e);
    if (!e)
        s.c =
            clCreateBuffer(dev->ctx, CL_MEM_WRITE_ONLY, sizeof(float) * FC_B * FC_UNITS, NULL, &e);
    bench_om_nnapi r = {.fd = -1};
    int rc =
        e ? -1
          : bench_om_nnapi_open(&r, &m, "nnd-opencl", ANEURALNETWORKS_PRIORITY_MEDIUM, NULL, NULL);
    if (!rc)
        rc = bench_alternate(bench_om_nnapi_run, &r, clblast_run, &s, NULL, ROUNDS / 2, PER_ROUND,
                             &out->fc);
    if (!rc) out->fc_diff = max_diff(bench_om_nnapi_output(&r), output, (size_t)FC_B * FC_UNITS);
    out->fc.flops = 2.0 * FC_B * FC_IN * FC_UNITS;
    out->fc.shape = "FULLY_CONNECTED [128, 2048] x [2048, 2048]";
    bench_om_nnapi_close(&r);
    if (s.a) clReleaseMemObject(s.a);
    if (s.b) clReleaseMemObject(s.b);
    if (s.c) clReleaseMemObject(s.c);
    free(zeros), free(output);
    om_free(&m);
    return rc;
}
#endif

/* ---- opencl_cache ------------------------------------------------------------------- */

/* A variable's value to put back with env_restore() (NULL: it was unset). */
static char *env_save(const char *name) {
    const char *v = getenv(name);
    return v ? strdup(v) : NULL;
}

/* Puts name back as env_save() found it, and frees what it kept. */
static void env_restore(const char *name, char *saved) {
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
    free(saved);
}

/* A fresh daemon with an empty PoCL kernel cache (its own POCL_CACHE_DIR) compiles MobileNet
 * for nnd-opencl with the cache directory scratch/nnapi and runs it once; how long the
 * compilation and that first run took, or -1. The nnd-opencl program cache is
 * scratch/program throughout (NND_OPENCL_CACHE_DIR, set by the caller). */
static double cache_trial(const om_model *m, const char *scratch, int trial) {
    char pocl[512], nnapi[512];
    snprintf(pocl, sizeof pocl, "%s/pocl-%d", scratch, trial);
    snprintf(nnapi, sizeof nnapi, "%s/nnapi", scratch);
    char *saved = env_save("POCL_CACHE_DIR");
    setenv("POCL_CACHE_DIR", pocl, 1);
    tst_daemon d;
    double t = -1;
    if (bench_opencl_daemon(&d) == 0) {
        static const uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN] = {7, 1, 7};
        bench_om_nnapi r = {.fd = -1};
        double run = -1;
        if (bench_om_nnapi_open(&r, m, "nnd-opencl", ANEURALNETWORKS_PRIORITY_MEDIUM, nnapi,
                                token) == 0 &&
            (run = bench_om_nnapi_run(&r)) > 0)
            t = r.compile_ns + run;
        bench_om_nnapi_close(&r);
        tst_daemon_stop(&d);
    }
    env_restore("POCL_CACHE_DIR", saved);
    return t;
}

static int cache_row(const char *scratch, bench_opencl *out) {
    bench_net net;
    if (bench_net_init(&net, SCHEMA_TENSOR_FLOAT32)) return -1;
    static om_model m;
    om_init(&m, 7);
    om_mobilenet(&m, &net);
    bench_net_free(&net);
    int rc = (out->cache_cold_ns = cache_trial(&m, scratch, 0)) > 0 ? 0 : -1;
    for (int i = 0; !rc && i < CACHE_HITS; i++)
        if ((out->cache_hit_runs[i] = cache_trial(&m, scratch, i + 1)) < 0) rc = -1;
    if (!rc) out->cache_hit_ns = bench_median(out->cache_hit_runs, CACHE_HITS);
    om_free(&m);
    return rc;
}

/* ---- the rows ------------------------------------------------------------------------- */

static void remove_tree(const char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "bench: opencl: could not remove %s\n", dir);
}

int bench_opencl_rows(bench_opencl *out, bool mnet, bool fc, bool cache, bool qos) {
    memset(out, 0, sizeof *out);
    if (access(BENCH_OPENCL_DRIVERS_DIR "/libnnd_opencl.so", R_OK) != 0) {
        snprintf(out->skip, sizeof out->skip, "nnd-opencl was not built");
        return 0;
    }
    ocl_device *dev = bench_ocl_device_open(out->skip, sizeof out->skip);
    if (!dev) return 0;
    snprintf(out->device, sizeof out->device, "%s, %s, driver %s", dev->platform_name,
             dev->device_name, dev->driver_version);
    const char *v = getenv("NND_OPENCL_COMMAND_BUFFER");
    out->cmdbuf = !dev->has_priority && bench_ocl_has_cmdbuf(dev) && !(v && !strcmp(v, "0"));
    /* The driver's program cache, in process and in every daemon: the bench's own. */
    char scratch[] = "/tmp/nnd-bench-opencl-XXXXXX", program[600];
    if (!mkdtemp(scratch)) {
        bench_ocl_device_close(dev);
        return -1;
    }
    snprintf(program, sizeof program, "%s/program", scratch);
    char *saved = env_save("NND_OPENCL_CACHE_DIR");
    setenv("NND_OPENCL_CACHE_DIR", program, 1);
    int rc = cache ? cache_row(scratch, out) : 0;
    tst_daemon d;
    if (!rc && (mnet || fc || qos)) {
        rc = bench_opencl_daemon(&d);
        if (!rc && qos) rc = bench_opencl_qos(&out->qos);
        if (!rc && mnet) rc = mnet_rows(dev, out);
#ifdef BENCH_HAVE_CLBLAST
        if (!rc && fc) rc = fc_row(dev, out);
#else
        snprintf(out->fc_skip, sizeof out->fc_skip, "the bench was built without CLBlast");
#endif
        tst_daemon_stop(&d);
    }
    env_restore("NND_OPENCL_CACHE_DIR", saved);
    remove_tree(scratch);
    bench_ocl_device_close(dev);
    return rc;
}
