/* SPDX-License-Identifier: Apache-2.0 */
/* internal: the prepared plan and execution state, shared by model.c, prepare.c,
 * execute.c and the control flow files (flow.h) only. Nothing outside engine/ includes
 * this. */
#ifndef ENG_CORE_INTERNAL_H
#define ENG_CORE_INTERNAL_H

#include "engine/engine.h"
#include "engine/base/scratch.h"
#include "engine/op.h"
#include "engine/ops_common/operand.h"

#define ENG_ARENA_ALIGN 64
/* Distinct backends one plan's steps may be counted on: the CPU and the drivers of a
 * compilation (the daemon has at most 16 devices). */
#define ENG_PLAN_BACKENDS 24
#define ENG_NO_SLOT       SIZE_MAX

typedef struct eng_backend eng_backend;

typedef struct eng_step {
    const eng_op_def *def;
    eng_op_fn run;              /* the reference kernel, or the backend's run */
    const eng_backend *backend; /* NULL: the reference kernel */
    void *state;                /* the backend's prepared state, passed to run() */
    uint32_t index;             /* operation index in the model */
    uint32_t n_in, n_out;
    const uint32_t *in, *out; /* operand indexes, owned by the prepared model */
    /* IF (then, else) or WHILE (condition, body): the plans it runs and their indexes in
     * the model's referenced list (flow.h); NULL for every other operation. */
    const struct eng_prepared *sub[2];
    uint32_t sub_index[2];
    /* A driver partition (partition.h): its first step runs it whole (part_len steps, state
     * the partition); the others are members, never run (state NULL). */
    uint32_t part_len;
    bool part_member;
} eng_step;

struct eng_prepared {
    uint32_t n_operands;
    eng_operand_desc *operands; /* own copy, dimensions as inferred at prepare */
    eng_tensor *tensors;        /* template: constants bound, shapes as far as known */
    size_t *slot;               /* arena offset per temporary, or ENG_NO_SLOT */
    size_t arena_size;
    uint32_t n_steps;
    eng_step *steps;         /* in execution order */
    uint32_t *operand_lists; /* storage for steps' in/out lists */
    uint32_t n_inputs, n_outputs;
    uint32_t *inputs, *outputs;
    uint8_t *constants;               /* CONSTANT_COPY bytes */
    size_t constants_bytes;           /* what constants holds (footprint.h) */
    float *channel_scales;            /* storage for per-channel scales */
    eng_channel_quant *channel_quant; /* per operand */
    uint32_t n_pools;
    eng_memory_view *pools;
    bool dynamic; /* some shape is only known at execution */
    bool relaxed;
    bool reference_only; /* prepared for the reference kernels only */
    /* Steps per backend of the main graph once claimed (NULL: the CPU, XNNPACK or not),
     * counted once at prepare for eng_prepared_steps_on(), which every execution asks. */
    struct {
        const struct eng_backend *backend;
        uint32_t steps, partitions;
    } on[ENG_PLAN_BACKENDS];
    /* Per operand: a temporary inside a driver partition (no arena space, never seen by
     * the daemon); NULL when the plan has no partition. */
    bool *driver_owned;
    uint32_t n_on;
    uint8_t *extension_blobs;         /* copies of operands' extension data */
    struct eng_ext_plugin **ext_held; /* plugins this model uses (extension.h) */
    uint32_t n_ext_held;
    /* The main graph's plan owns one plan per referenced subgraph (flow.h). */
    uint32_t n_subplans;
    struct eng_prepared **subplans;
    uint32_t n_flow_steps;
    /* One pass of this graph (an IF its larger branch, a WHILE one iteration), for the
     * cost of the steps that run it (eng_flow_pass_cost). */
    bool pass_known;
    double pass_flops, pass_bytes;
    size_t arena_total; /* main graph: arena_size of its plan and every subgraph's */
    /* Main graph: what its backends allocated claiming steps, its subgraphs' too
     * (footprint.h). */
    size_t backend_bytes;
    /* Main graph, once prepared: eng_prepared_bytes(), measured by the thread that
     * prepared it (a walk of every step and operand), so that the loop does not walk it. */
    size_t held_bytes;
};

struct eng_exec {
    const eng_prepared *p;
    eng_tensor *tensors;
    eng_tensor **ptrs; /* per step: input then output tensor pointers */
    size_t *step_ptr;  /* offset of each step's pointers in ptrs */
    uint8_t *arena;
    const struct eng_arena_allocator *arena_from; /* NULL: the heap */
    size_t arena_bytes;
    void **dyn; /* per operand: buffer for temporaries sized at execution */
    size_t *dyn_cap;
    eng_scratch_pool scratch;
    /* Per model input, then output: an aligned stand-in for a caller buffer misaligned for
     * its element type (kernels load whole elements), and for outputs the caller's buffer
     * the result is copied back to (NULL when the caller's own is used). */
    void **io_copy;
    size_t *io_copy_cap;
    void **out_caller;
    bool started;      /* inputs and outputs are bound: eng_exec_resume() may continue */
    bool insufficient; /* some output buffer is too small (dynamic shapes go on to learn all) */
    /* Control flow (flow.h): one exec per referenced subgraph, shared by the tree and
     * owned by the main graph's exec; per step, the state of an IF or WHILE. */
    eng_exec **subs;
    bool owns_subs;
    struct eng_flow_state *flow;
    uint32_t stopped_at; /* the step a checkpoint stopped the last run at, or UINT32_MAX */
    /* Runs IF or WHILE step k (eng_flow_run, flow.h): given by execute.c, so that the step
     * loop (exec_steps.c) and the control flow runner, which runs subgraphs through that
     * loop, do not call each other by name. */
    schema_status (*run_flow)(eng_exec *e, uint32_t k, const eng_checkpoint *cp, char *err,
                              size_t errlen);
    struct eng_part_run *part; /* a driver partition's execution (partition.h); lazily made */
    void (*notify)(void *ctx);
    void *notify_ctx;
    uint64_t device_ns, driver_ns; /* measured by drivers this run; UINT64_MAX: none */
};

/* A step offered to a backend (prepare.c): at most ENG_STEP_MAX_IN inputs and
 * ENG_STEP_MAX_OUT outputs, and no subgraphs (IF, WHILE stay on the CPU). */
#define ENG_STEP_MAX_IN  512
#define ENG_STEP_MAX_OUT 64
bool eng_step_offerable(const eng_step *st);
/* Backend be's context for step st of p, with in and out (arrays of the maxima above)
 * filled with the step's tensors; err and errlen take a declined claim's message. */
eng_op_ctx eng_step_ctx(const eng_prepared *p, const eng_step *st, const eng_backend *be,
                        eng_tensor **in, eng_tensor **out, char *err, size_t errlen);
/* Step st runs on backend be with the state be's claim gave. */
void eng_step_take(eng_step *st, const eng_backend *be, void *state);
/* Builds tensors for a model: types, quantization, dims (known flag), constant data. */
schema_status eng_model_tensors(const eng_model_desc *m, eng_tensor *tensors, eng_channel_quant *cq,
                                const uint8_t *constants, char *err, size_t errlen);
/* Full validation of the main graph and every referenced subgraph; SCHEMA_UNSUPPORTED when
 * valid but some operation has no kernel (an IF or WHILE counts as such when a subgraph
 * it runs has one). With supported != NULL, fills one flag per operation of the main
 * graph instead of stopping at the first. */
schema_status eng_validate_model(const eng_model_desc *m, bool *supported, char *err,
                                 size_t errlen);
/* Runs c->def->check() and refuses an omitted input the operation does not take as
 * optional (eng_op_optional_inputs()). */
schema_status eng_check_op(eng_op_ctx *c);
/* Orders operations so every operand is written before it is read; fails on a cycle or
 * an operand read but never written. order receives n_operations indexes. */
schema_status eng_order_operations(const eng_model_desc *m, uint32_t *order, char *err,
                                   size_t errlen);
/* Execution pieces the control flow files share (exec_steps.c): eng_exec_reset() puts the
 * plan's tensors in place (temporaries in the arena); eng_exec_steps() runs steps from..
 * of a bound run (as eng_exec_resume); eng_exec_size_operand() gives operand o a buffer
 * of e's own for its current shape. */
void eng_exec_reset(eng_exec *e);
schema_status eng_exec_steps(eng_exec *e, uint32_t from, eng_output_shape *shapes,
                             const eng_checkpoint *cp, char *err, size_t errlen);
schema_status eng_exec_size_operand(eng_exec *e, uint32_t o, char *err, size_t errlen);

#endif
