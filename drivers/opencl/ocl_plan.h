/* SPDX-License-Identifier: Apache-2.0 */
/* ocl_plan: a partition lowered to kernel launches over buffers, before any OpenCL object
 * exists. ocl_lower() adds one operation's launches (or says it cannot run it exactly);
 * the same code answers supported_operations() (check_only: no weights are re-laid) and
 * builds the plan prepare() turns into device buffers and kernels (ocl_exec.h).
 *
 * Contract:
 * - Buffers: one per tensor operand a launch touches (ocl_plan_operand), constants
 *   uploaded as they are, weights the kernels want re-laid uploaded from the plan's own
 *   copy (ocl_plan_owned); partition inputs and outputs name their index in the model's
 *   input and output lists; temporaries are device memory of each execution context.
 * - ocl_lower() returns false, with a message in the plan's err, for anything it does not
 *   run exactly as NNAPI defines it (types, ranks, layouts, unknown shapes, non-constant
 *   parameters); the caller then declines the operation.
 * - ocl_plan_free() frees what the plan owns (re-laid weights, arrays). */
#ifndef OCL_PLAN_H
#define OCL_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd/driver.h"

enum ocl_kernel_id {
    OCL_K_CONV2D,
    OCL_K_DEPTHWISE,
    OCL_K_GEMM,
    OCL_K_BINARY,
    OCL_K_UNARY,
    OCL_K_POOL,
    OCL_K_SOFTMAX,
    OCL_K_COPY_ROWS,
    OCL_K_GATHER4,
    OCL_K_MEAN,
    OCL_K_RESIZE_BILINEAR,
    OCL_K_CONV2D_NHWC,
    OCL_K_DEPTHWISE_NHWC,
    OCL_K_GEMM_BN1,
    OCL_K_POOL_NHWC,
    OCL_K_CONV2D_NHWC8,
    OCL_K_DEPTHWISE_NHWC8,
    OCL_K_COUNT,
};
/* The kernels' names in kernels.cl, indexed by ocl_kernel_id. */
extern const char *const ocl_kernel_names[OCL_K_COUNT];
/* Their argument kinds and work dimensions (ocl_plan.c), for the warm-up launches. */
extern const char *const ocl_kernel_signatures[OCL_K_COUNT];
/* The work-group size along dimension 0 (1 along the others) of every launch. */
size_t ocl_local_size0(uint32_t work_dim);

typedef enum {
    OCL_ARG_BUF,
    OCL_ARG_INT,
    OCL_ARG_INT2,
    OCL_ARG_INT4,
    OCL_ARG_FLOAT,
    OCL_ARG_FLOAT2
} ocl_arg_kind;

typedef struct ocl_arg {
    ocl_arg_kind kind;
    uint32_t buf; /* OCL_ARG_BUF: a buffer index */
    int32_t i[4];
    float f[2];
} ocl_arg;

#define OCL_MAX_ARGS 16

typedef struct ocl_launch {
    int kernel; /* ocl_kernel_id */
    uint32_t n_args;
    ocl_arg args[OCL_MAX_ARGS];
    uint32_t work_dim;
    size_t global[3];
    size_t local[3];
} ocl_launch;

enum ocl_buf_kind { OCL_BUF_CONST, OCL_BUF_TEMP, OCL_BUF_INPUT, OCL_BUF_OUTPUT };

typedef struct ocl_buffer {
    enum ocl_buf_kind kind;
    size_t bytes;
    uint32_t io;      /* INPUT, OUTPUT: the index in the model's inputs (outputs) */
    const void *host; /* CONST: the bytes to upload */
    void *owned;      /* CONST: the plan's re-laid copy (host points into it), or NULL */
} ocl_buffer;

typedef struct ocl_plan {
    const nnd_driver_model *m;
    bool check_only; /* supported_operations(): no re-laid copies are made */
    ocl_buffer *bufs;
    uint32_t n_bufs, cap_bufs;
    ocl_launch *launches;
    uint32_t n_launches, cap_launches;
    uint32_t *operand_buf; /* per operand: its buffer, or UINT32_MAX */
    char err[160];         /* why the last ocl_lower() said no */
} ocl_plan;

/* An empty plan over m; false when out of memory. */
bool ocl_plan_init(ocl_plan *p, const nnd_driver_model *m, bool check_only);
void ocl_plan_free(ocl_plan *p);
/* Adds op's launches; false (err set) when it cannot run it exactly. A failed call may
 * leave buffers behind but no launch of op. */
bool ocl_lower(ocl_plan *p, const nnd_driver_operation *op);

/* For the lowering files (ocl_lower*.c). */
bool ocl_fail(ocl_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t ocl_plan_operand(ocl_plan *p, uint32_t operand);
/* A temporary of `bytes` no operand names (a launch's own scratch). */
uint32_t ocl_plan_temp(ocl_plan *p, size_t bytes);
/* A constant buffer holding `bytes` the plan owns from now on (NULL in check_only). */
uint32_t ocl_plan_owned(ocl_plan *p, void *data, size_t bytes);
ocl_launch *ocl_plan_launch(ocl_plan *p, int kernel, uint32_t work_dim, size_t g0, size_t g1,
                            size_t g2);
void ocl_arg_buf(ocl_launch *l, uint32_t buf);
void ocl_arg_int(ocl_launch *l, int32_t v);
void ocl_arg_int2(ocl_launch *l, int32_t a, int32_t b);
void ocl_arg_int4(ocl_launch *l, int32_t a, int32_t b, int32_t c, int32_t d);
void ocl_arg_float(ocl_launch *l, float v);
void ocl_arg_float2(ocl_launch *l, float a, float b);

/* Operand readers for the lowering files. */
const nnd_driver_operand *ocl_in(const ocl_plan *p, const nnd_driver_operation *op, uint32_t j);
const nnd_driver_operand *ocl_out(const ocl_plan *p, const nnd_driver_operation *op);
/* A TENSOR_FLOAT32 of rank in [lo, hi] with every dimension known. */
bool ocl_f32_tensor(const nnd_driver_operand *o, uint32_t lo, uint32_t hi);
size_t ocl_elems(const nnd_driver_operand *o);
bool ocl_const_i32(const nnd_driver_operand *o, int32_t *v);
bool ocl_const_f32(const nnd_driver_operand *o, float *v);
/* An optional BOOL: false when omitted; false return when not a constant BOOL. */
bool ocl_const_bool(const nnd_driver_operand *o, bool *v);
/* A fused activation code into clamp bounds. */
bool ocl_act(const nnd_driver_operand *o, float *lo, float *hi);

/* The lowering families. */
bool ocl_lower_conv(ocl_plan *p, const nnd_driver_operation *op, bool depthwise);
bool ocl_lower_pool(ocl_plan *p, const nnd_driver_operation *op, bool is_max);
bool ocl_lower_resize(ocl_plan *p, const nnd_driver_operation *op);
bool ocl_lower_matmul(ocl_plan *p, const nnd_driver_operation *op);
bool ocl_lower_fully_connected(ocl_plan *p, const nnd_driver_operation *op);
bool ocl_lower_shape(ocl_plan *p, const nnd_driver_operation *op); /* movement, reduction */

#endif
