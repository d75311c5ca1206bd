/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_prepared.c: a plan made device state, and its execution contexts (ocl_exec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CL/cl_ext.h>

#include "ocl_exec.h"

struct ocl_ctx {
    ocl_ctx *next;
    ocl_prepared *p;
    cl_mem *mems;       /* per plan buffer: p->consts' or one of slots */
    cl_mem *slots;      /* per slot (ocl_prepared.slot_of) */
    cl_kernel *kernels; /* per launch, arguments set */
    cl_command_buffer_khr cmdbuf;
};

/* cl_khr_command_buffer's entry points, from the platform. */
typedef struct cmdbuf_fns {
    clCreateCommandBufferKHR_fn create;
    clFinalizeCommandBufferKHR_fn finalize;
    clReleaseCommandBufferKHR_fn release;
    clCommandNDRangeKernelKHR_fn ndrange;
    clEnqueueCommandBufferKHR_fn enqueue;
} cmdbuf_fns;

static bool cmdbuf_fns_of(cl_platform_id pf, cmdbuf_fns *f) {
    f->create = (clCreateCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        pf, "clCreateCommandBufferKHR");
    f->finalize = (clFinalizeCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        pf, "clFinalizeCommandBufferKHR");
    f->release = (clReleaseCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        pf, "clReleaseCommandBufferKHR");
    f->ndrange = (clCommandNDRangeKernelKHR_fn)clGetExtensionFunctionAddressForPlatform(
        pf, "clCommandNDRangeKernelKHR");
    f->enqueue = (clEnqueueCommandBufferKHR_fn)clGetExtensionFunctionAddressForPlatform(
        pf, "clEnqueueCommandBufferKHR");
    return f->create && f->finalize && f->release && f->ndrange && f->enqueue;
}

/* Command buffers are used where the device has them, unless NND_OPENCL_COMMAND_BUFFER=0. */
static bool use_cmdbuf(const ocl_device *d, cmdbuf_fns *f) {
    const char *v = getenv("NND_OPENCL_COMMAND_BUFFER");
    return d->has_cmdbuf && !(v && !strcmp(v, "0")) && cmdbuf_fns_of(d->platform, f);
}

static cl_int set_args(cl_kernel k, const ocl_launch *l, const cl_mem *mems) {
    cl_int e = CL_SUCCESS;
    for (uint32_t a = 0; a < l->n_args && !e; a++) {
        const ocl_arg *g = &l->args[a];
        switch (g->kind) {
        case OCL_ARG_BUF: e = clSetKernelArg(k, a, sizeof(cl_mem), &mems[g->buf]); break;
        case OCL_ARG_INT: e = clSetKernelArg(k, a, sizeof(cl_int), &g->i[0]); break;
        case OCL_ARG_INT2: {
            cl_int2 v = {{g->i[0], g->i[1]}};
            e = clSetKernelArg(k, a, sizeof v, &v);
            break;
        }
        case OCL_ARG_INT4: {
            cl_int4 v = {{g->i[0], g->i[1], g->i[2], g->i[3]}};
            e = clSetKernelArg(k, a, sizeof v, &v);
            break;
        }
        case OCL_ARG_FLOAT: e = clSetKernelArg(k, a, sizeof(cl_float), &g->f[0]); break;
        case OCL_ARG_FLOAT2: {
            cl_float2 v = {{g->f[0], g->f[1]}};
            e = clSetKernelArg(k, a, sizeof v, &v);
            break;
        }
        }
    }
    return e;
}

void ocl_ctx_free(ocl_ctx *c) {
    if (!c) return;
    ocl_prepared *p = c->p;
    cmdbuf_fns f;
    if (c->cmdbuf && cmdbuf_fns_of(p->dev->platform, &f)) f.release(c->cmdbuf);
    for (uint32_t i = 0; c->kernels && i < p->plan.n_launches; i++)
        if (c->kernels[i]) clReleaseKernel(c->kernels[i]);
    for (uint32_t i = 0; c->slots && i < p->n_slots; i++)
        if (c->slots[i]) clReleaseMemObject(c->slots[i]);
    free(c->slots);
    free(c->kernels);
    free(c->mems);
    free(c);
}

static void record(ocl_ctx *c) {
    ocl_prepared *p = c->p;
    cmdbuf_fns f;
    if (!use_cmdbuf(p->dev, &f)) return;
    cl_int e;
    cl_command_buffer_khr cb = f.create(1, &p->dev->queue, NULL, &e);
    if (!cb) return;
    for (uint32_t i = 0; i < p->plan.n_launches && !e; i++) {
        const ocl_launch *l = &p->plan.launches[i];
        e = f.ndrange(cb, NULL, NULL, c->kernels[i], l->work_dim, NULL, l->global, l->local, 0,
                      NULL, NULL, NULL);
    }
    if (!e) e = f.finalize(cb);
    if (e)
        f.release(cb); /* plain enqueues then */
    else
        c->cmdbuf = cb;
}

ocl_ctx *ocl_ctx_make(ocl_prepared *p, char *err, size_t errlen) {
    ocl_device *d = p->dev;
    cl_program prog = ocl_device_program(d, err, errlen);
    if (!prog) return NULL;
    ocl_ctx *c = calloc(1, sizeof *c);
    if (c) {
        c->p = p;
        c->mems = calloc(p->plan.n_bufs ? p->plan.n_bufs : 1, sizeof(cl_mem));
        c->kernels = calloc(p->plan.n_launches ? p->plan.n_launches : 1, sizeof(cl_kernel));
        c->slots = calloc(p->n_slots + 1, sizeof(cl_mem));
    }
    if (!c || !c->mems || !c->kernels || !c->slots) {
        ocl_ctx_free(c);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    cl_int e = CL_SUCCESS;
    for (uint32_t s = 0; s < p->n_slots && !e; s++)
        c->slots[s] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, p->slot_bytes[s], NULL, &e);
    for (uint32_t i = 0; i < p->plan.n_bufs && !e; i++)
        c->mems[i] = p->plan.bufs[i].kind == OCL_BUF_CONST ? p->consts[i]
                     : p->slot_of[i] != UINT32_MAX         ? c->slots[p->slot_of[i]]
                                                           : NULL;
    if (e) {
        snprintf(err, errlen, "cannot allocate the partition's device buffers (%d)", e);
        ocl_ctx_free(c);
        return NULL;
    }
    for (uint32_t i = 0; i < p->plan.n_launches && !e; i++) {
        const ocl_launch *l = &p->plan.launches[i];
        c->kernels[i] = clCreateKernel(prog, ocl_kernel_names[l->kernel], &e);
        if (!e) e = set_args(c->kernels[i], l, c->mems);
    }
    if (e) {
        snprintf(err, errlen, "cannot set up the partition's kernels (%d)", e);
        ocl_ctx_free(c);
        return NULL;
    }
    record(c);
    return c;
}

cl_int ocl_ctx_enqueue(ocl_ctx *c, cl_command_queue q) {
    ocl_prepared *p = c->p;
    cmdbuf_fns f;
    if (c->cmdbuf && q == p->dev->queue && cmdbuf_fns_of(p->dev->platform, &f))
        return f.enqueue(0, NULL, c->cmdbuf, 0, NULL, NULL);
    return ocl_ctx_enqueue_range(c, q, 0, p->plan.n_launches);
}

cl_int ocl_ctx_enqueue_range(ocl_ctx *c, cl_command_queue q, uint32_t from, uint32_t to) {
    ocl_prepared *p = c->p;
    cl_int e = CL_SUCCESS;
    for (uint32_t i = from; i < to && i < p->plan.n_launches && !e; i++) {
        const ocl_launch *l = &p->plan.launches[i];
        e = clEnqueueNDRangeKernel(q, c->kernels[i], l->work_dim, NULL, l->global, l->local, 0,
                                   NULL, NULL);
    }
    return e;
}

cl_mem ocl_ctx_mem(ocl_ctx *c, uint32_t buf) {
    return c->mems[buf];
}
ocl_ctx **ocl_ctx_next(ocl_ctx *c) {
    return &c->next;
}

static bool io_of(ocl_prepared *p, const nnd_driver_model *m, bool output, uint32_t i, ocl_io *io) {
    uint32_t operand = output ? m->outputs[i] : m->inputs[i];
    const nnd_driver_operand *o = &m->operands[operand];
    io->buf = p->plan.operand_buf[operand];
    io->bytes = ocl_elems(o) * sizeof(float);
    io->rank = o->rank;
    memcpy(io->dims, o->dims, sizeof io->dims);
    if (io->buf == UINT32_MAX) { /* an input no kernel reads (RESHAPE's shape): ignored */
        io->bytes = 0;
        return !output;
    }
    return o->type == NND_DRIVER_TENSOR_FLOAT32;
}

/* Device buffers for the non-constant plan buffers: inputs and outputs one each; a
 * temporary takes a slot of temporaries whose last use came before its first (launches
 * run in order on one in-order queue), grown to its size when smaller. */
static bool plan_slots(ocl_prepared *p) {
    uint32_t n = p->plan.n_bufs;
    uint32_t *last = malloc(sizeof(uint32_t) * (n + 1)), *free_after = NULL;
    bool *temp_slot = NULL;
    p->slot_of = malloc(sizeof(uint32_t) * (n + 1));
    p->slot_bytes = malloc(sizeof(size_t) * (n + 1));
    free_after = malloc(sizeof(uint32_t) * (n + 1));
    temp_slot = malloc(sizeof(bool) * (n + 1));
    bool ok = last && p->slot_of && p->slot_bytes && free_after && temp_slot;
    for (uint32_t i = 0; ok && i < n; i++)
        p->slot_of[i] = UINT32_MAX, last[i] = 0;
    for (uint32_t l = 0; ok && l < p->plan.n_launches; l++)
        for (uint32_t a = 0; a < p->plan.launches[l].n_args; a++)
            if (p->plan.launches[l].args[a].kind == OCL_ARG_BUF)
                last[p->plan.launches[l].args[a].buf] = l;
    for (uint32_t l = 0; ok && l < p->plan.n_launches; l++)
        for (uint32_t a = 0; a < p->plan.launches[l].n_args; a++) {
            const ocl_arg *g = &p->plan.launches[l].args[a];
            if (g->kind != OCL_ARG_BUF || p->slot_of[g->buf] != UINT32_MAX) continue;
            const ocl_buffer *b = &p->plan.bufs[g->buf];
            if (b->kind == OCL_BUF_CONST) continue;
            bool temp = b->kind == OCL_BUF_TEMP;
            uint32_t s = UINT32_MAX;
            for (uint32_t k = 0; temp && k < p->n_slots; k++)
                if (temp_slot[k] && free_after[k] < l &&
                    (s == UINT32_MAX ||
                     (p->slot_bytes[k] >= b->bytes) > (p->slot_bytes[s] >= b->bytes)))
                    s = k;
            if (s == UINT32_MAX) {
                s = p->n_slots++;
                p->slot_bytes[s] = 0, temp_slot[s] = temp;
            }
            if (p->slot_bytes[s] < b->bytes) p->slot_bytes[s] = b->bytes;
            free_after[s] = temp ? last[g->buf] : UINT32_MAX;
            p->slot_of[g->buf] = s;
        }
    free(last);
    free(free_after);
    free(temp_slot);
    return ok;
}

int ocl_prepare(ocl_device *d, const nnd_driver_model *m, ocl_plan *plan, ocl_prepared **out,
                char *err, size_t errlen) {
    ocl_prepared *p = calloc(1, sizeof *p);
    if (!p) {
        ocl_plan_free(plan);
        snprintf(err, errlen, "out of memory");
        return NND_DRIVER_GENERAL_FAILURE;
    }
    p->dev = d;
    p->plan = *plan;
    memset(plan, 0, sizeof *plan);
    p->n_in = m->n_inputs, p->n_out = m->n_outputs;
    p->in = calloc(m->n_inputs + 1, sizeof(ocl_io));
    p->out = calloc(m->n_outputs + 1, sizeof(ocl_io));
    p->consts = calloc(p->plan.n_bufs + 1, sizeof(cl_mem));
    int status = NND_DRIVER_GENERAL_FAILURE;
    if (!p->in || !p->out || !p->consts) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < p->n_in; i++)
        if (!io_of(p, m, false, i, &p->in[i])) {
            snprintf(err, errlen, "partition input %u is not a TENSOR_FLOAT32", i);
            goto fail;
        }
    for (uint32_t i = 0; i < p->n_out; i++)
        if (!io_of(p, m, true, i, &p->out[i])) {
            snprintf(err, errlen, "partition output %u is not made by its operations", i);
            goto fail;
        }
    for (uint32_t i = 0; i < p->plan.n_bufs; i++) {
        ocl_buffer *b = &p->plan.bufs[i];
        if (b->kind != OCL_BUF_CONST) continue;
        cl_int e;
        p->consts[i] = clCreateBuffer(d->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, b->bytes,
                                      (void *)b->host, &e);
        if (!p->consts[i]) {
            snprintf(err, errlen, "cannot upload %zu bytes of weights (%d)", b->bytes, e);
            status = NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
            goto fail;
        }
        p->device_bytes += b->bytes;
        free(b->owned); /* on the device now */
        b->owned = NULL, b->host = NULL;
    }
    if (!plan_slots(p)) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (uint32_t s = 0; s < p->n_slots; s++)
        p->device_bytes += p->slot_bytes[s] * OCL_MAX_IN_FLIGHT;
    p->held_bytes = sizeof *p + p->plan.n_launches * sizeof(ocl_launch) +
                    p->plan.n_bufs * (sizeof(ocl_buffer) + sizeof(cl_mem));
    if (d->is_cpu) p->held_bytes += p->device_bytes; /* its "device" memory is the host's */
    ocl_ctx *c = ocl_ctx_make(p, err, errlen);
    if (!c) goto fail;
    p->free_ctx = c, p->n_ctx = 1;
    *out = p;
    return NND_DRIVER_OK;
fail:
    ocl_release(p);
    return status;
}

void ocl_release(ocl_prepared *p) {
    if (!p) return;
    while (p->free_ctx) {
        ocl_ctx *c = p->free_ctx;
        p->free_ctx = c->next;
        ocl_ctx_free(c);
    }
    for (uint32_t i = 0; p->consts && i < p->plan.n_bufs; i++)
        if (p->consts[i]) clReleaseMemObject(p->consts[i]);
    free(p->consts);
    free(p->slot_of);
    free(p->slot_bytes);
    free(p->in);
    free(p->out);
    ocl_plan_free(&p->plan);
    free(p);
}
