/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_device.c: device discovery and the program build with its cache (ocl_device.h). */
#include "ocl_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CL/cl_ext.h>

#include "ocl_cache.h"
#include "ocl_plan.h"

#define BASE_OPTIONS "-cl-std=CL1.2"

static bool has_ext(cl_device_id id, const char *name) {
    size_t n = 0;
    if (clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, 0, NULL, &n) || !n) return false;
    char *s = malloc(n + 1);
    if (!s) return false;
    bool found = false;
    if (!clGetDeviceInfo(id, CL_DEVICE_EXTENSIONS, n, s, NULL)) {
        s[n] = 0;
        size_t len = strlen(name);
        for (char *q = strstr(s, name); q && !found; q = strstr(q + 1, name))
            found = (q == s || q[-1] == ' ') && (q[len] == ' ' || q[len] == 0);
    }
    free(s);
    return found;
}

static cl_command_queue make_queue(ocl_device *d, cl_uint priority) {
    cl_int e;
    cl_queue_properties props[3] = {0, 0, 0};
    if (priority) props[0] = CL_QUEUE_PRIORITY_KHR, props[1] = priority;
    cl_command_queue q = clCreateCommandQueueWithProperties(d->ctx, d->id, props, &e);
    if (!q && !priority) q = clCreateCommandQueue(d->ctx, d->id, 0, &e); /* a 1.2 loader */
    return q;
}

static int open_one(ocl_device *d, cl_platform_id pf, cl_device_id id) {
    memset(d, 0, sizeof *d);
    d->platform = pf, d->id = id;
    cl_device_type type = 0;
    clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    d->is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
    clGetPlatformInfo(pf, CL_PLATFORM_NAME, sizeof d->platform_name - 1, d->platform_name, NULL);
    clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof d->device_name - 1, d->device_name, NULL);
    clGetDeviceInfo(id, CL_DRIVER_VERSION, sizeof d->driver_version - 1, d->driver_version, NULL);
    const char *as = getenv("NND_OPENCL_TEST_DRIVER_VERSION"); /* a test hook: another driver */
    if (as && *as) snprintf(d->driver_version, sizeof d->driver_version, "%s", as);
    d->has_fp16 = has_ext(id, "cl_khr_fp16");
    d->has_cmdbuf = has_ext(id, "cl_khr_command_buffer");
    d->has_priority = has_ext(id, "cl_khr_priority_hints");
    cl_int e;
    d->ctx = clCreateContext(NULL, 1, &id, NULL, NULL, &e);
    if (!d->ctx) return -1;
    if (d->has_priority) {
        d->prio[0] = make_queue(d, CL_QUEUE_PRIORITY_LOW_KHR);
        d->prio[1] = make_queue(d, CL_QUEUE_PRIORITY_MED_KHR);
        d->prio[2] = make_queue(d, CL_QUEUE_PRIORITY_HIGH_KHR);
        if (!d->prio[0] || !d->prio[1] || !d->prio[2]) {
            for (int i = 0; i < 3; i++)
                if (d->prio[i]) clReleaseCommandQueue(d->prio[i]), d->prio[i] = NULL;
            d->has_priority = false;
        }
    }
    if (d->has_priority) {
        d->queue = d->prio[1];
        d->has_cmdbuf = false; /* a command buffer records for one queue */
    } else if (!(d->queue = make_queue(d, 0))) {
        clReleaseContext(d->ctx);
        return -1;
    }
    pthread_mutex_init(&d->build_lock, NULL);
    return 0;
}

int ocl_devices_open(ocl_device **devs, uint32_t max, uint32_t *n, char *err, size_t errlen) {
    *n = 0;
    cl_uint np = 0;
    if (clGetPlatformIDs(0, NULL, &np) != CL_SUCCESS || !np) return 0; /* no platform */
    cl_platform_id pfs[16];
    if (np > 16) np = 16;
    if (clGetPlatformIDs(np, pfs, NULL) != CL_SUCCESS) return 0;
    const char *cpu = getenv("NND_OPENCL_CPU");
    cl_device_type want = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR;
    if (cpu && !strcmp(cpu, "1")) want |= CL_DEVICE_TYPE_CPU;
    for (cl_uint p = 0; p < np && *n < max; p++) {
        cl_device_id ids[16];
        cl_uint nd = 0;
        if (clGetDeviceIDs(pfs[p], want, 16, ids, &nd) != CL_SUCCESS) continue;
        for (cl_uint i = 0; i < nd && i < 16 && *n < max; i++) {
            ocl_device *d = calloc(1, sizeof *d);
            if (!d) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            if (open_one(d, pfs[p], ids[i])) {
                free(d);
                continue;
            }
            devs[(*n)++] = d;
        }
    }
    return 0;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void build_log(ocl_device *d, cl_program prog, cl_int e) {
    char log[200] = "";
    clGetProgramBuildInfo(prog, d->id, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    snprintf(d->build_err, sizeof d->build_err, "OpenCL program build failed (%d): %s", e, log);
}

/* Loads the cached binary for key; NULL when there is none that builds. */
static cl_program from_cache(ocl_device *d, const char *key, const char *opts) {
    size_t size = 0;
    unsigned char *bin = ocl_cache_load(key, &size);
    if (!bin) return NULL;
    cl_int e, st;
    const unsigned char *bins[1] = {bin};
    cl_program prog = clCreateProgramWithBinary(d->ctx, 1, &d->id, &size, bins, &st, &e);
    free(bin);
    if (prog && (e || st || clBuildProgram(prog, 1, &d->id, opts, NULL, NULL))) {
        clReleaseProgram(prog);
        prog = NULL;
    }
    return prog;
}

static void to_cache(ocl_device *d, cl_program prog, const char *key) {
    size_t size = 0;
    if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) || !size) return;
    unsigned char *bin = malloc(size);
    unsigned char *bins[1] = {bin};
    if (bin && !clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL))
        ocl_cache_store(key, bin, size);
    free(bin);
    (void)d;
}

/* Launches every kernel once with all-zero shapes (each returns at its bound check) and
 * the driver's work-group sizes, so that a device compiling a kernel per work-group size
 * at its first launch (PoCL) has done so before the binary is taken for the cache. */
static void warm_up(ocl_device *d, cl_program prog) {
    cl_int e;
    cl_mem dummy = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 64, NULL, &e);
    if (!dummy) return;
    static const cl_int zeros[4] = {0, 0, 0, 0};
    for (int k = 0; k < OCL_K_COUNT; k++) {
        cl_kernel kern = clCreateKernel(prog, ocl_kernel_names[k], &e);
        if (!kern) continue;
        const char *sig = ocl_kernel_signatures[k];
        cl_uint a = 0;
        for (; sig[a] && sig[a] != ' ' && !e; a++) {
            size_t size = sig[a] == 'B'                    ? sizeof(cl_mem)
                          : sig[a] == '4'                  ? 16
                          : sig[a] == '2' || sig[a] == 'F' ? 8
                                                           : 4;
            e = clSetKernelArg(kern, a, size, sig[a] == 'B' ? (const void *)&dummy : zeros);
        }
        cl_uint dims = (cl_uint)(sig[a + 1] - '0');
        size_t local[3] = {ocl_local_size0(dims), 1, 1};
        if (!e) clEnqueueNDRangeKernel(d->queue, kern, dims, NULL, local, local, 0, NULL, NULL);
        clReleaseKernel(kern);
        e = CL_SUCCESS;
    }
    clFinish(d->queue);
    clReleaseMemObject(dummy);
}

/* The build options: the base, NND_OPENCL_BUILD_OPTIONS, and while the test hook
 * NND_OPENCL_TEST_FAIL_BUILDS=N has builds left to fail, an option no compiler knows. */
static void build_options(char *opts, size_t cap, bool count_failure) {
    static unsigned failed;
    const char *extra = getenv("NND_OPENCL_BUILD_OPTIONS");
    const char *fail = getenv("NND_OPENCL_TEST_FAIL_BUILDS");
    bool bad = fail && failed < (unsigned)strtoul(fail, NULL, 10);
    if (bad && count_failure) failed++;
    snprintf(opts, cap, "%s %s%s", BASE_OPTIONS, extra ? extra : "",
             bad ? " -cl-nnd-test-invalid-option" : "");
}

static void key_for(ocl_device *d, const char *opts, char key[OCL_CACHE_KEY_HEX]) {
    const char *parts[] = {ocl_kernels_source, opts, d->platform_name, d->device_name,
                           d->driver_version};
    ocl_cache_key(parts, sizeof parts / sizeof parts[0], key);
}

void ocl_device_key(ocl_device *d, char key[OCL_CACHE_KEY_HEX]) {
    char opts[512];
    build_options(opts, sizeof opts, false);
    key_for(d, opts, key);
}

static cl_program build(ocl_device *d) {
    char opts[512];
    build_options(opts, sizeof opts, true);
    char key[OCL_CACHE_KEY_HEX];
    key_for(d, opts, key);
    double t0 = now_ms();
    cl_program prog = from_cache(d, key, opts);
    if (prog) {
        d->from_cache = true;
        d->build_ms = now_ms() - t0;
        fprintf(stderr, "nnd-opencl: %s: program from the program cache in %.0f ms\n",
                d->device_name, d->build_ms);
        return prog;
    }
    cl_int e;
    const char *src = ocl_kernels_source;
    prog = clCreateProgramWithSource(d->ctx, 1, &src, NULL, &e);
    if (!prog) {
        snprintf(d->build_err, sizeof d->build_err, "clCreateProgramWithSource failed (%d)", e);
        return NULL;
    }
    if ((e = clBuildProgram(prog, 1, &d->id, opts, NULL, NULL)) != CL_SUCCESS) {
        build_log(d, prog, e);
        clReleaseProgram(prog);
        fprintf(stderr, "nnd-opencl: %s: %s\n", d->device_name, d->build_err);
        return NULL;
    }
    warm_up(d, prog);
    d->build_ms = now_ms() - t0;
    fprintf(stderr, "nnd-opencl: %s: program built from source in %.0f ms\n", d->device_name,
            d->build_ms);
    to_cache(d, prog, key);
    return prog;
}

cl_program ocl_device_program(ocl_device *d, char *err, size_t errlen) {
    pthread_mutex_lock(&d->build_lock);
    if (!d->program) d->program = build(d); /* a failure is tried again next time */
    cl_program p = d->program;
    if (!p) snprintf(err, errlen, "%s", d->build_err);
    pthread_mutex_unlock(&d->build_lock);
    return p;
}

int ocl_device_adopt_binary(ocl_device *d, const unsigned char *bin, size_t size, char *err,
                            size_t errlen) {
    pthread_mutex_lock(&d->build_lock);
    int rc = 0;
    if (!d->program) {
        char opts[512];
        build_options(opts, sizeof opts, false);
        double t0 = now_ms();
        cl_int e = CL_SUCCESS, st = CL_SUCCESS;
        cl_program prog = clCreateProgramWithBinary(d->ctx, 1, &d->id, &size, &bin, &st, &e);
        /* A binary is only linked for the device (OpenCL asks for the call); no compiler. */
        if (prog && !e && !st) e = clBuildProgram(prog, 1, &d->id, opts, NULL, NULL);
        if (!prog || e || st) {
            snprintf(err, errlen, "the cache blob's program does not load on %s (%d, %d)",
                     d->device_name, e, st);
            if (prog) clReleaseProgram(prog);
            rc = -1;
        } else {
            d->program = prog;
            d->build_ms = now_ms() - t0;
            fprintf(stderr, "nnd-opencl: %s: program from a cache blob in %.0f ms\n",
                    d->device_name, d->build_ms);
        }
    }
    pthread_mutex_unlock(&d->build_lock);
    return rc;
}

unsigned char *ocl_device_binary(ocl_device *d, size_t *size) {
    pthread_mutex_lock(&d->build_lock);
    unsigned char *bin = NULL;
    *size = 0;
    if (d->program &&
        !clGetProgramInfo(d->program, CL_PROGRAM_BINARY_SIZES, sizeof *size, size, NULL) && *size &&
        (bin = malloc(*size))) {
        unsigned char *bins[1] = {bin};
        if (clGetProgramInfo(d->program, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL))
            free(bin), bin = NULL;
    }
    pthread_mutex_unlock(&d->build_lock);
    return bin;
}

void ocl_device_close(ocl_device *d) {
    if (d->program) clReleaseProgram(d->program);
    if (d->has_priority) {
        for (int i = 0; i < 3; i++)
            clReleaseCommandQueue(d->prio[i]);
    } else if (d->queue) {
        clReleaseCommandQueue(d->queue);
    }
    clReleaseContext(d->ctx);
    pthread_mutex_destroy(&d->build_lock);
    free(d);
}
