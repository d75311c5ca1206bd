/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_plan.c: the plan's buffers, launches and operand readers (ocl_plan.h). */
#include "ocl_plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ocl_kernel_names[OCL_K_COUNT] = {
    [OCL_K_CONV2D] = "conv2d",
    [OCL_K_DEPTHWISE] = "depthwise",
    [OCL_K_GEMM] = "gemm",
    [OCL_K_BINARY] = "binary",
    [OCL_K_UNARY] = "unary",
    [OCL_K_POOL] = "pool",
    [OCL_K_SOFTMAX] = "softmax",
    [OCL_K_COPY_ROWS] = "copy_rows",
    [OCL_K_GATHER4] = "gather4",
    [OCL_K_MEAN] = "mean",
    [OCL_K_RESIZE_BILINEAR] = "resize_bilinear",
    [OCL_K_CONV2D_NHWC] = "conv2d_nhwc",
    [OCL_K_DEPTHWISE_NHWC] = "depthwise_nhwc",
    [OCL_K_GEMM_BN1] = "gemm_bn1",
    [OCL_K_POOL_NHWC] = "pool_nhwc",
    [OCL_K_CONV2D_NHWC8] = "conv2d_nhwc8",
    [OCL_K_DEPTHWISE_NHWC8] = "depthwise_nhwc8",
};

/* Argument kinds (B buffer, i int, 2 int2, 4 int4, f float, F float2), then after a space
 * the work dimensions. */
const char *const ocl_kernel_signatures[OCL_K_COUNT] = {
    [OCL_K_CONV2D] = "BBBB444444ff 3",
    [OCL_K_DEPTHWISE] = "BBBB444444iff 3",
    [OCL_K_GEMM] = "BBBB444ff 3",
    [OCL_K_BINARY] = "BBBi444ff 1",
    [OCL_K_UNARY] = "BBii 1",
    [OCL_K_POOL] = "BB444442iff 3",
    [OCL_K_SOFTMAX] = "BBiif 2",
    [OCL_K_COPY_ROWS] = "BBiii 2",
    [OCL_K_GATHER4] = "BB4444f 1",
    [OCL_K_MEAN] = "BB444f 1",
    [OCL_K_RESIZE_BILINEAR] = "BB4444Fi 3",
    [OCL_K_CONV2D_NHWC] = "BBBB444444ff 3",
    [OCL_K_DEPTHWISE_NHWC] = "BBBB444444iff 3",
    [OCL_K_GEMM_BN1] = "BBBB444ff 3",
    [OCL_K_POOL_NHWC] = "BB444442iff 3",
    [OCL_K_CONV2D_NHWC8] = "BBBB444444ff 3",
    [OCL_K_DEPTHWISE_NHWC8] = "BBBB444444iff 3",
};

size_t ocl_local_size0(uint32_t work_dim) {
    return work_dim == 1 ? 64 : 16;
}

bool ocl_plan_init(ocl_plan *p, const nnd_driver_model *m, bool check_only) {
    memset(p, 0, sizeof *p);
    p->m = m;
    p->check_only = check_only;
    p->operand_buf = malloc(sizeof(uint32_t) * (m->n_operands ? m->n_operands : 1));
    if (!p->operand_buf) return false;
    memset(p->operand_buf, 0xff, sizeof(uint32_t) * m->n_operands);
    return true;
}

void ocl_plan_free(ocl_plan *p) {
    for (uint32_t i = 0; i < p->n_bufs; i++)
        free(p->bufs[i].owned);
    free(p->bufs);
    free(p->launches);
    free(p->operand_buf);
    memset(p, 0, sizeof *p);
}

bool ocl_fail(ocl_plan *p, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
    return false;
}

static uint32_t add_buffer(ocl_plan *p, ocl_buffer b) {
    if (p->n_bufs == p->cap_bufs) {
        uint32_t cap = p->cap_bufs ? p->cap_bufs * 2 : 32;
        ocl_buffer *nb = realloc(p->bufs, sizeof *nb * cap);
        if (!nb) return UINT32_MAX;
        p->bufs = nb, p->cap_bufs = cap;
    }
    p->bufs[p->n_bufs] = b;
    return p->n_bufs++;
}

static uint32_t index_in(const uint32_t *list, uint32_t n, uint32_t v) {
    for (uint32_t i = 0; i < n; i++)
        if (list[i] == v) return i;
    return UINT32_MAX;
}

uint32_t ocl_plan_operand(ocl_plan *p, uint32_t operand) {
    if (p->operand_buf[operand] != UINT32_MAX) return p->operand_buf[operand];
    const nnd_driver_model *m = p->m;
    const nnd_driver_operand *o = &m->operands[operand];
    ocl_buffer b = {.kind = OCL_BUF_TEMP, .bytes = ocl_elems(o) * sizeof(float)};
    /* A partition's lifetimes say what its inputs and outputs are; the lists give their
     * order. An operand of the lists is theirs whatever its lifetime says. */
    uint32_t in = index_in(m->inputs, m->n_inputs, operand);
    uint32_t out = index_in(m->outputs, m->n_outputs, operand);
    if (o->lifetime == NND_DRIVER_CONSTANT) {
        b.kind = OCL_BUF_CONST, b.host = o->data, b.bytes = o->length;
    } else if (in != UINT32_MAX) {
        b.kind = OCL_BUF_INPUT, b.io = in;
    } else if (out != UINT32_MAX) {
        b.kind = OCL_BUF_OUTPUT, b.io = out;
    }
    uint32_t i = add_buffer(p, b);
    p->operand_buf[operand] = i;
    return i;
}

uint32_t ocl_plan_temp(ocl_plan *p, size_t bytes) {
    return add_buffer(p, (ocl_buffer){.kind = OCL_BUF_TEMP, .bytes = bytes});
}

uint32_t ocl_plan_owned(ocl_plan *p, void *data, size_t bytes) {
    ocl_buffer b = {.kind = OCL_BUF_CONST, .bytes = bytes, .host = data, .owned = data};
    uint32_t i = add_buffer(p, b);
    if (i == UINT32_MAX) free(data);
    return i;
}

ocl_launch *ocl_plan_launch(ocl_plan *p, int kernel, uint32_t work_dim, size_t g0, size_t g1,
                            size_t g2) {
    if (p->n_launches == p->cap_launches) {
        uint32_t cap = p->cap_launches ? p->cap_launches * 2 : 32;
        ocl_launch *nl = realloc(p->launches, sizeof *nl * cap);
        if (!nl) return NULL;
        p->launches = nl, p->cap_launches = cap;
    }
    ocl_launch *l = &p->launches[p->n_launches++];
    memset(l, 0, sizeof *l);
    l->kernel = kernel;
    l->work_dim = work_dim;
    /* One work-group shape per dimension count: PoCL compiles a kernel once per local size
     * (with LLVM), so sizes it would pick from each global size cost a compilation each.
     * Dimension 0 is rounded up; every kernel checks its bound there. */
    size_t local0 = ocl_local_size0(work_dim);
    l->local[0] = local0, l->local[1] = 1, l->local[2] = 1;
    l->global[0] = ((g0 ? g0 : 1) + local0 - 1) / local0 * local0;
    l->global[1] = g1 ? g1 : 1, l->global[2] = g2 ? g2 : 1;
    return l;
}

static ocl_arg *next_arg(ocl_launch *l, ocl_arg_kind kind) {
    ocl_arg *a = &l->args[l->n_args++];
    memset(a, 0, sizeof *a);
    a->kind = kind;
    return a;
}
void ocl_arg_buf(ocl_launch *l, uint32_t buf) {
    next_arg(l, OCL_ARG_BUF)->buf = buf;
}
void ocl_arg_int(ocl_launch *l, int32_t v) {
    next_arg(l, OCL_ARG_INT)->i[0] = v;
}
void ocl_arg_int2(ocl_launch *l, int32_t a, int32_t b) {
    ocl_arg *x = next_arg(l, OCL_ARG_INT2);
    x->i[0] = a, x->i[1] = b;
}
void ocl_arg_int4(ocl_launch *l, int32_t a, int32_t b, int32_t c, int32_t d) {
    ocl_arg *x = next_arg(l, OCL_ARG_INT4);
    x->i[0] = a, x->i[1] = b, x->i[2] = c, x->i[3] = d;
}
void ocl_arg_float(ocl_launch *l, float v) {
    next_arg(l, OCL_ARG_FLOAT)->f[0] = v;
}
void ocl_arg_float2(ocl_launch *l, float a, float b) {
    ocl_arg *x = next_arg(l, OCL_ARG_FLOAT2);
    x->f[0] = a, x->f[1] = b;
}

const nnd_driver_operand *ocl_in(const ocl_plan *p, const nnd_driver_operation *op, uint32_t j) {
    if (j >= op->n_inputs || op->inputs[j] >= p->m->n_operands) return NULL;
    return &p->m->operands[op->inputs[j]];
}

const nnd_driver_operand *ocl_out(const ocl_plan *p, const nnd_driver_operation *op) {
    if (op->n_outputs < 1 || op->outputs[0] >= p->m->n_operands) return NULL;
    return &p->m->operands[op->outputs[0]];
}

bool ocl_f32_tensor(const nnd_driver_operand *o, uint32_t lo, uint32_t hi) {
    if (!o || o->type != NND_DRIVER_TENSOR_FLOAT32 || o->lifetime == NND_DRIVER_OMITTED ||
        o->rank < lo || o->rank > hi)
        return false;
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++) {
        if (!o->dims[i]) return false;
        n *= o->dims[i];
        if (n > INT32_MAX / 4) return false; /* the kernels index with int */
    }
    if (o->lifetime == NND_DRIVER_CONSTANT && (!o->data || o->length < n * sizeof(float)))
        return false;
    return true;
}

size_t ocl_elems(const nnd_driver_operand *o) {
    size_t n = 1;
    for (uint32_t i = 0; i < o->rank; i++)
        n *= o->dims[i];
    return n;
}

static bool const_scalar(const nnd_driver_operand *o, int32_t type, void *v, size_t size) {
    if (!o || o->type != type || o->lifetime != NND_DRIVER_CONSTANT || !o->data || o->length < size)
        return false;
    memcpy(v, o->data, size);
    return true;
}

bool ocl_const_i32(const nnd_driver_operand *o, int32_t *v) {
    return const_scalar(o, NND_DRIVER_INT32, v, sizeof *v);
}

bool ocl_const_f32(const nnd_driver_operand *o, float *v) {
    return const_scalar(o, NND_DRIVER_FLOAT32, v, sizeof *v);
}

bool ocl_const_bool(const nnd_driver_operand *o, bool *v) {
    *v = false;
    if (!o || o->lifetime == NND_DRIVER_OMITTED) return true;
    uint8_t b;
    if (!const_scalar(o, NND_DRIVER_BOOL, &b, 1)) return false;
    *v = b != 0;
    return true;
}

bool ocl_act(const nnd_driver_operand *o, float *lo, float *hi) {
    int32_t a;
    if (!ocl_const_i32(o, &a)) return false;
    switch (a) {
    case 0: *lo = -INFINITY, *hi = INFINITY; return true;
    case 1: *lo = 0.f, *hi = INFINITY; return true;
    case 2: *lo = -1.f, *hi = 1.f; return true;
    case 3: *lo = 0.f, *hi = 6.f; return true;
    default: return false;
    }
}
