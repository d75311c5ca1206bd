/* SPDX-License-Identifier: Apache-2.0 */
/* opencl_plain.c: the bench's plain OpenCL program. See opencl_plain.h. */
#include "bench/opencl_plain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl_ext.h>

#include "drivers/opencl/ocl_plan.h"
#include "tests/support/timing.h"

struct bench_ocl_plain {
    ocl_device *dev;
    nnd_driver_model model;
    ocl_plan plan;
    cl_mem *mems;       /* per plan buffer */
    cl_kernel *kernels; /* per launch */
    cl_command_buffer_khr cmdbuf;
    clEnqueueCommandBufferKHR_fn enqueue_cmdbuf;
    clReleaseCommandBufferKHR_fn release_cmdbuf;
    const float *input;
    float *output;
    uint32_t in_buf, out_buf;
    size_t in_bytes, out_bytes;
};

ocl_device *bench_ocl_device_open(char *why, size_t len) {
    setenv("NND_OPENCL_CPU", "1", 1);
    ocl_device *devs[8];
    uint32_t n = 0;
    cl_uint platforms = 0;
    if (clGetPlatformIDs(0, NULL, &platforms) != CL_SUCCESS || !platforms) {
        snprintf(why, len, "no OpenCL platform (no ICD installed)");
        return NULL;
    }
    if (ocl_devices_open(devs, 8, &n, why, len) || n == 0) {
        if (n == 0) snprintf(why, len, "no OpenCL device on %u platform(s)", platforms);
        return NULL;
    }
    for (uint32_t i = 1; i < n; i++)
        ocl_device_close(devs[i]);
    return devs[0];
}

void bench_ocl_device_close(ocl_device *d) {
    if (d) ocl_device_close(d);
}

bool bench_ocl_has_cmdbuf(const ocl_device *d) {
    return d->has_cmdbuf &&
           clGetExtensionFunctionAddressForPlatform(d->platform, "clCreateCommandBufferKHR");
}

static cl_int set_arg(cl_kernel k, cl_uint a, const ocl_arg *g, const cl_mem *mems) {
    switch (g->kind) {
    case OCL_ARG_BUF: return clSetKernelArg(k, a, sizeof(cl_mem), &mems[g->buf]);
    case OCL_ARG_INT: return clSetKernelArg(k, a, sizeof(cl_int), &g->i[0]);
    case OCL_ARG_INT2: {
        cl_int2 v = {{g->i[0], g->i[1]}};
        return clSetKernelArg(k, a, sizeof v, &v);
    }
    case OCL_ARG_INT4: {
        cl_int4 v = {{g->i[0], g->i[1], g->i[2], g->i[3]}};
        return clSetKernelArg(k, a, sizeof v, &v);
    }
    case OCL_ARG_FLOAT: return clSetKernelArg(k, a, sizeof(cl_float), &g->f[0]);
    case OCL_ARG_FLOAT2: {
        cl_float2 v = {{g->f[0], g->f[1]}};
        return clSetKernelArg(k, a, sizeof v, &v);
    }
    }
    return CL_INVALID_VALUE;
}

/* The launches, recorded once into a command buffer on the device's queue. */
static cl_int record(bench_ocl_plain *p) {
    cl_platform_id pf = p->dev->platform;
    clCreateCommandBufferKHR_fn create =
        (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
            pf, "clCreateCommandBufferKHR");
    clCommandNDRangeKernelKHR_fn ndrange =
        (clCommandNDRangeKernelKHR_fn)clGetExtensionFunctionAddressForPlatform(
            pf, "clCommandNDRangeKernelKHR");
    clFinalizeCommandBufferKHR_fn finalize =
        (clFinalizeCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
            pf, "clFinalizeCommandBufferKHR");
    p->enqueue_cmdbuf = (clEnqueueCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        pf, "clEnqueueCommandBufferKHR");
    p->release_cmdbuf = (clReleaseCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        pf, "clReleaseCommandBufferKHR");
    if (!create || !ndrange || !finalize || !p->enqueue_cmdbuf || !p->release_cmdbuf)
        return CL_INVALID_OPERATION;
    cl_int e = CL_SUCCESS;
    p->cmdbuf = create(1, &p->dev->queue, NULL, &e);
    for (uint32_t i = 0; p->cmdbuf && !e && i < p->plan.n_launches; i++) {
        const ocl_launch *l = &p->plan.launches[i];
        e = ndrange(p->cmdbuf, NULL, NULL, p->kernels[i], l->work_dim, NULL, l->global, l->local, 0,
                    NULL, NULL, NULL);
    }
    return e ? e : finalize(p->cmdbuf);
}

static bool lower(bench_ocl_plain *p, om_model *m) {
    om_driver_model(m, &p->model);
    if (p->model.n_inputs != 1 || p->model.n_outputs != 1 ||
        !ocl_plan_init(&p->plan, &p->model, false))
        return false;
    for (uint32_t i = 0; i < p->model.n_operations; i++)
        if (!ocl_lower(&p->plan, &p->model.operations[i])) {
            fprintf(stderr, "bench: plain OpenCL: operation %u: %s\n", i, p->plan.err);
            return false;
        }
    p->in_buf = p->plan.operand_buf[p->model.inputs[0]];
    p->out_buf = p->plan.operand_buf[p->model.outputs[0]];
    p->in_bytes = om_elems(m, m->inputs[0]) * sizeof(float);
    p->out_bytes = om_elems(m, m->outputs[0]) * sizeof(float);
    p->input = m->input_data[0];
    return p->in_buf != UINT32_MAX && p->out_buf != UINT32_MAX;
}

bench_ocl_plain *bench_ocl_plain_open(ocl_device *d, om_model *m, float *output, bool cmdbuf) {
    char err[256] = "out of memory";
    bench_ocl_plain *p = calloc(1, sizeof *p);
    cl_int e = CL_SUCCESS;
    if (!p || !lower(p, m)) goto fail;
    p->dev = d, p->output = output;
    cl_program prog = ocl_device_program(d, err, sizeof err);
    p->mems = calloc(p->plan.n_bufs + 1, sizeof(cl_mem));
    p->kernels = calloc(p->plan.n_launches + 1, sizeof(cl_kernel));
    if (!prog || !p->mems || !p->kernels) goto fail;
    for (uint32_t i = 0; i < p->plan.n_bufs && !e; i++) {
        const ocl_buffer *b = &p->plan.bufs[i];
        bool constant = b->kind == OCL_BUF_CONST;
        p->mems[i] = clCreateBuffer(
            d->ctx, constant ? CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR : CL_MEM_READ_WRITE,
            b->bytes ? b->bytes : 4, constant ? (void *)b->host : NULL, &e);
    }
    for (uint32_t i = 0; i < p->plan.n_launches && !e; i++) {
        const ocl_launch *l = &p->plan.launches[i];
        p->kernels[i] = clCreateKernel(prog, ocl_kernel_names[l->kernel], &e);
        for (uint32_t a = 0; a < l->n_args && !e; a++)
            e = set_arg(p->kernels[i], a, &l->args[a], p->mems);
    }
    if (!e && cmdbuf) e = record(p);
    if (e) {
        snprintf(err, sizeof err, "OpenCL error %d setting the model up", e);
        goto fail;
    }
    return p;
fail:
    fprintf(stderr, "bench: plain OpenCL: %s\n", err);
    bench_ocl_plain_close(p);
    return NULL;
}

double bench_ocl_plain_run(void *ctx) {
    bench_ocl_plain *p = ctx;
    cl_command_queue q = p->dev->queue;
    uint64_t t0 = bench_now_ns();
    cl_int e = clEnqueueWriteBuffer(q, p->mems[p->in_buf], CL_FALSE, 0, p->in_bytes, p->input, 0,
                                    NULL, NULL);
    if (!e && p->cmdbuf) e = p->enqueue_cmdbuf(0, NULL, p->cmdbuf, 0, NULL, NULL);
    for (uint32_t i = 0; !e && !p->cmdbuf && i < p->plan.n_launches; i++) {
        const ocl_launch *l = &p->plan.launches[i];
        e = clEnqueueNDRangeKernel(q, p->kernels[i], l->work_dim, NULL, l->global, l->local, 0,
                                   NULL, NULL);
    }
    if (!e)
        e = clEnqueueReadBuffer(q, p->mems[p->out_buf], CL_TRUE, 0, p->out_bytes, p->output, 0,
                                NULL, NULL);
    double t = (double)(bench_now_ns() - t0);
    if (e) fprintf(stderr, "bench: plain OpenCL run: error %d\n", e);
    return e ? -1 : t;
}

void bench_ocl_plain_close(bench_ocl_plain *p) {
    if (!p) return;
    if (p->cmdbuf) p->release_cmdbuf(p->cmdbuf);
    for (uint32_t i = 0; p->kernels && i < p->plan.n_launches; i++)
        if (p->kernels[i]) clReleaseKernel(p->kernels[i]);
    for (uint32_t i = 0; p->mems && i < p->plan.n_bufs; i++)
        if (p->mems[i]) clReleaseMemObject(p->mems[i]);
    free(p->kernels);
    free(p->mems);
    ocl_plan_free(&p->plan);
    free(p);
}
