/* SPDX-License-Identifier: Apache-2.0 */
/* engine: the driver proper. Validates a model, prepares it into an immutable plan, and
 * executes the plan against caller memory. Knows nothing about sockets or protobuf.
 *
 * Contract:
 * - A model is described by eng_model_desc, borrowed for the duration of a call.
 * - eng_validate() checks everything a HAL driver checks, shapes included, and names the
 *   operand or operation at fault in err; it succeeds exactly when eng_prepare() would
 *   (an operation without a kernel is refused too), without keeping the plan.
 *   eng_plan() is the same check keeping the plan, for eng_prepare_planned().
 * - On success eng_prepare() (and eng_prepare_planned()) takes ownership of every constant
 *   pool view (it calls each view's release when the prepared model is freed); on failure
 *   the caller keeps them. CONSTANT_COPY bytes are copied; CONSTANT_REFERENCE bytes are
 *   used in place.
 * - A prepared model is immutable and may be shared; each concurrent execution needs its
 *   own eng_exec, which is reusable and allocates nothing in steady state for models
 *   whose shapes are known at prepare.
 * - eng_exec_run() calls the checkpoint between operations; a non-zero return stops the
 *   run with that status, and eng_exec_resume() may continue it from there. Tensor bytes
 *   are read from and written to the caller's memory directly; an input or output in a
 *   device's memory (eng_io.device) is used there by that device's steps and copied for
 *   the others (backend.h, "Device memory").
 * - Control flow (HAL 1.3): a model may reference subgraphs (eng_model_desc.referenced),
 *   named by operands of type SUBGRAPH and lifetime SUBGRAPH whose offset is the
 *   subgraph's index; IF and WHILE run them. Every subgraph is validated and prepared
 *   with the model. The checkpoint runs between the operations of branches and loop
 *   iterations too, always given the index of the main graph's operation they belong to;
 *   a run stopped inside a loop resumes there. A WHILE whose condition still holds after
 *   the checkpoint's loop timeout stops the run with SCHEMA_MISSED_DEADLINE_TRANSIENT.
 */
#ifndef ENG_ENGINE_H
#define ENG_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Codes, operand types, operation names, status names and error messages are the
 * schema's (schema/), which the engine builds on. */
#include "schema/codes.h"
#include "schema/op_name.h"
#include "schema/operand_type.h"
#include "schema/status.h"

#define ENG_MAX_RANK       16 /* MIRROR_PAD and the movement operations take any rank */
#define ENG_MAX_OPERANDS   (1u << 20)
#define ENG_MAX_OPERATIONS (1u << 20)

typedef struct eng_channel_quant {
    const float *scales;
    uint32_t n_scales;
    uint32_t channel_dim;
} eng_channel_quant;

typedef struct eng_operand_desc {
    int32_t type;                /* enum schema_operand_type, or an extension code */
    uint32_t rank;               /* a tensor of rank 0 has unknown rank */
    uint32_t dims[ENG_MAX_RANK]; /* 0 = unknown */
    float scale;
    int32_t zero_point;
    uint32_t lifetime; /* enum schema_lifetime */
    uint32_t pool;     /* CONSTANT_REFERENCE: index into eng_model_desc.pools */
    uint64_t offset;   /* CONSTANT_COPY: into operand_values; CONSTANT_REFERENCE: into pool */
    uint64_t length;
    eng_channel_quant channel_quant; /* TENSOR_QUANT8_SYMM_PER_CHANNEL only */
    const uint8_t *extension_data;
    uint32_t extension_len;
} eng_operand_desc;

typedef struct eng_operation_desc {
    int32_t type; /* enum schema_operation_type */
    uint32_t n_inputs;
    const uint32_t *inputs;
    uint32_t n_outputs;
    const uint32_t *outputs;
} eng_operation_desc;

/* A referenced subgraph: its own operands and operations; MODEL_INPUT and MODEL_OUTPUT
 * operands are its inputs and outputs. Constants point into the model's operand values
 * and pools, as the main graph's do. */
typedef struct eng_subgraph_desc {
    uint32_t n_operands;
    const eng_operand_desc *operands;
    uint32_t n_operations;
    const eng_operation_desc *operations;
    uint32_t n_inputs;
    const uint32_t *inputs;
    uint32_t n_outputs;
    const uint32_t *outputs;
} eng_subgraph_desc;

typedef struct eng_memory_view {
    const uint8_t *base;
    size_t size;
    void (*release)(void *ctx); /* may be NULL */
    void *ctx;
    /* May be NULL: whether the memory no longer shows what it held (its file shrank under
     * it). A prepared model whose constant pool is lost refuses every later execution. */
    bool (*lost)(void *ctx);
} eng_memory_view;

typedef struct eng_model_desc {
    uint32_t n_operands;
    const eng_operand_desc *operands;
    uint32_t n_operations;
    const eng_operation_desc *operations;
    uint32_t n_inputs;
    const uint32_t *inputs;
    uint32_t n_outputs;
    const uint32_t *outputs;
    const uint8_t *operand_values;
    size_t operand_values_len;
    uint32_t n_pools;
    eng_memory_view *pools;
    bool relaxed;        /* relaxComputationFloat32toFloat16 */
    bool reference_only; /* no XNNPACK: the reference kernels (the nnd-reference device) */
    /* Driver backends (driver.h) the model is partitioned among (partition.h): each driver
     * is offered the whole main graph once; each operation goes to the device with the
     * lowest figure for the type of its first input (capabilities: exec_time, or
     * power_usage when preference is NND_DRIVER_PREFER_LOW_POWER), ties to the CPU, then
     * to the driver listed first; consecutive operations of one driver form one
     * partition, prepared with preference, priority and deadline_ns. cpu_caps: the CPU
     * device's figures (NULL: 0.1 for each type, 1.0 with reference_only). drivers_only:
     * no CPU device, so an operation no driver takes fails the preparation
     * (INVALID_ARGUMENT naming the operation). */
    const struct eng_backend *const *drivers;
    uint32_t n_drivers;
    bool drivers_only;
    /* cpu_last: the CPU takes only what no driver of the set takes, whatever the figures
     * (a device set the client named: the CPU device is its fallback). */
    bool cpu_last;
    const struct nnd_driver_capabilities *cpu_caps;
    int32_t preference;    /* NND_DRIVER_PREFER_*; 0 is LOW_POWER, so callers set it */
    int32_t priority;      /* NND_DRIVER_PRIORITY_*; 0: medium */
    uint64_t deadline_ns;  /* of the preparation, CLOCK_MONOTONIC; 0: none */
    uint32_t n_referenced; /* subgraphs IF and WHILE operations run */
    const eng_subgraph_desc *referenced;
    /* from_blobs: a compilation restored from a cache. The partitions blobs name are
     * rebuilt by their drivers' cache_load() from those bytes (prepare() when it fails);
     * no driver is offered any other operation. */
    bool from_blobs;
    const struct eng_step_blob *blobs;
    uint32_t n_blobs;
} eng_model_desc;

/* A driver partition's prepared state as bytes (partition.h): its driver's blobs with the
 * partition's extent, in the engine's format. */
typedef struct eng_step_blob {
    uint32_t operation; /* the partition's first operation, its index in the main graph */
    uint32_t driver;    /* its backend: eng_model_desc.drivers[driver] */
    const uint8_t *data;
    size_t len;
} eng_step_blob;

/* The graph fields of m (operands, operations, inputs, outputs) set to g's. */
void eng_model_set_graph(eng_model_desc *m, const eng_subgraph_desc *g);
/* Referenced subgraph r of m as a model description of its own: its graph, with m's operand
 * values, pools, flags and referenced list. r must be below m->n_referenced. */
eng_model_desc eng_model_referenced(const eng_model_desc *m, uint32_t r);

/* Referenced subgraphs: how many a model may have, and how deep they may nest (the main
 * graph running one is depth 1). */
#define ENG_MAX_SUBGRAPHS      4096
#define ENG_MAX_SUBGRAPH_DEPTH 32
/* WHILE loop timeouts, as NNAPI's: the default and the largest a request may ask for. */
#define ENG_LOOP_TIMEOUT_DEFAULT_NS 2000000000ull
#define ENG_LOOP_TIMEOUT_MAX_NS     15000000000ull

typedef struct eng_prepared eng_prepared;
typedef struct eng_exec eng_exec;

/* One model input or output at execution time. */
typedef struct eng_io {
    void *data;    /* NULL only with has_no_value */
    size_t length; /* bytes available at data */
    /* Bytes past data + length the engine may read, never write (the rest of the caller's
     * mapping): kernels that read a little past an input then need no copy of it. */
    size_t readable_past;
    bool has_no_value;
    uint32_t rank; /* 0: the model's dimensions */
    uint32_t dims[ENG_MAX_RANK];
    /* Non-NULL: the bytes are in this device backend's memory (backend.h), under
     * device_handle from offset 0, and data is NULL. Steps on that backend use them there;
     * the run copies what other steps read or write (backend.h, "Device memory"). */
    const struct eng_backend *device;
    uint64_t device_handle;
} eng_io;

typedef struct eng_output_shape {
    uint32_t rank;
    uint32_t dims[ENG_MAX_RANK];
    bool sufficient;
} eng_output_shape;

/* Called between operations with the index of the next one; return SCHEMA_OK to go on.
 * Inside IF branches and WHILE loops next_op is the main graph operation running them. */
typedef struct eng_checkpoint {
    schema_status (*check)(void *ctx, uint32_t next_op);
    void *ctx;
    /* How long one WHILE operation may loop: 0 means ENG_LOOP_TIMEOUT_DEFAULT_NS; more
     * than ENG_LOOP_TIMEOUT_MAX_NS counts as that. Without a checkpoint: the default. */
    uint64_t loop_timeout_ns;
    /* What a driver partition's execution gets (nnd/driver.h): the execution's priority
     * (NND_DRIVER_PRIORITY_*, 0: medium), deadline (0: none) and whether to measure. */
    int32_t priority;
    uint64_t deadline_ns;
    bool measure;
    /* The caller can leave a run whose partition a driver works on asynchronously
     * (ENG_ON_DEVICE); else the engine waits for it. */
    bool can_suspend;
} eng_checkpoint;

/* eng_exec_run() and eng_exec_resume(): a driver partition was started asynchronously at
 * step eng_exec_stopped_at(); no thread is needed until the function given to
 * eng_exec_set_notify() is called (from any thread, also before the run returned), then
 * eng_exec_resume(e, eng_exec_stopped_at(e), ...) finishes that partition and goes on. */
#define ENG_ON_DEVICE ((schema_status)230)

schema_status eng_validate(const eng_model_desc *m, char *err, size_t errlen);

/* One operation's signature as its operands are declared so far (types, quantization,
 * dimensions; no constant values), by the model's rules only (what the NNAPI runtime
 * checks as an operation is added; the driver's rules wait for prepare): the check() of
 * its registry row, and for IF and WHILE the match against the subgraphs they name (an
 * operand of lifetime SCHEMA_SUBGRAPH names referenced[offset]; only the subgraphs' operands,
 * inputs and outputs are looked at). For a client that validates as a model is built (the
 * NNAPI layer's addOperation). SCHEMA_OK, SCHEMA_INVALID_ARGUMENT with err naming what is wrong,
 * or SCHEMA_UNSUPPORTED for what this engine does not judge (no registry row, an extension). */
schema_status eng_validate_operation(const eng_operand_desc *operands, uint32_t n_operands,
                                     const eng_operation_desc *op,
                                     const eng_subgraph_desc *referenced, uint32_t n_referenced,
                                     bool relaxed, char *err, size_t errlen);

/* Fills supported[i] for each operation: true when it is valid and has a kernel for its
 * operand types. Returns SCHEMA_INVALID_ARGUMENT (with err) for a structurally bad model. */
schema_status eng_supported_operations(const eng_model_desc *m, bool *supported, char *err,
                                       size_t errlen);
/* As eng_supported_operations(), and on_refused (may be NULL) is told, for each operation of
 * the main graph answered false, its index and the sentence that says why (valid during the
 * call only). A call that then fails has told of refusals all the same. */
typedef void (*eng_refused_fn)(void *ctx, uint32_t op_index, const char *reason);
schema_status eng_supported_operations_why(const eng_model_desc *m, bool *supported,
                                           eng_refused_fn on_refused, void *ctx, char *err,
                                           size_t errlen);
/* eng_supported_operations_why() for m's device set (drivers, drivers_only): with no CPU
 * device, an operation is supported only when one of m->drivers supports it (shapes known
 * at preparation); on_refused hears of those too. */
schema_status eng_supported_operations_on(const eng_model_desc *m, bool *supported,
                                          eng_refused_fn on_refused, void *ctx, char *err,
                                          size_t errlen);

schema_status eng_prepare(const eng_model_desc *m, eng_prepared **out, char *err, size_t errlen);
/* Memory the engine maps itself, outside the C allocator (XNNPACK's packed weights,
 * xnn_alloc.h): live bytes, bytes of freed blocks kept for the next preparation, and the
 * trim that unmaps those kept (where the daemon trims its allocator). */
size_t eng_mapped_bytes(void);
size_t eng_kept_bytes(void);
void eng_trim(void);
/* eng_prepare() in two steps, so that one preparation validates and plans once:
 * eng_plan() validates m exactly as eng_validate() does (same statuses and messages) and
 * keeps the plan it built (it takes none of m's pools); eng_prepare_planned() finishes a
 * plan into a prepared model of m, or of a model equal to the planned one whose constants
 * live elsewhere (the daemon's own serialized copy): constants held in place by m are then
 * used from m, which gives its pools to the prepared model as eng_prepare() does.
 * eng_prepare_planned() always consumes the plan; a plan not given to it is freed with
 * eng_prepared_free(). */
schema_status eng_plan(const eng_model_desc *m, eng_prepared **plan, char *err, size_t errlen);
schema_status eng_prepare_planned(eng_prepared *plan, const eng_model_desc *m, eng_prepared **out,
                                  char *err, size_t errlen);
void eng_prepared_free(eng_prepared *p);

uint32_t eng_prepared_num_inputs(const eng_prepared *p);
uint32_t eng_prepared_num_outputs(const eng_prepared *p);
/* The operand behind model input or output i, with dimensions as far as known. */
const eng_operand_desc *eng_prepared_input(const eng_prepared *p, uint32_t i);
const eng_operand_desc *eng_prepared_output(const eng_prepared *p, uint32_t i);
uint32_t eng_prepared_num_operations(const eng_prepared *p);

/* A cost model's inputs for operation k in execution order (the index a checkpoint gets):
 * arithmetic (multiply-adds count 2) and bytes read and written, from the shapes known at
 * prepare (an unknown dimension counts as 1; an IF counts its larger branch, a WHILE one
 * iteration). For schedulers' estimates, not exact. */
typedef struct eng_cost {
    double flops;
    double bytes;
} eng_cost;
eng_cost eng_prepared_step_cost(const eng_prepared *p, uint32_t k);
/* Whether an execution may run a WHILE loop, so that how long it takes depends on its
 * data (up to the loop timeout), not only on its shapes. */
bool eng_prepared_loops(const eng_prepared *p);
/* Whether p was prepared with eng_model_desc.reference_only (no fast kernels). */
bool eng_prepared_reference_only(const eng_prepared *p);
/* How many steps of p's main graph run on backend b (NULL: on the CPU, reference kernels
 * or XNNPACK). */
uint32_t eng_prepared_steps_on(const eng_prepared *p, const struct eng_backend *b);
/* The cache blobs of p's steps on drivers[0..n_drivers), in step order: *out (n_out
 * entries, freed with eng_step_blobs_free()). SCHEMA_UNSUPPORTED (err names the device) when
 * such a step's backend keeps no blobs or declines; steps elsewhere have none. */
schema_status eng_prepared_blobs(const eng_prepared *p, const struct eng_backend *const *drivers,
                                 uint32_t n_drivers, eng_step_blob **out, uint32_t *n_out,
                                 char *err, size_t errlen);
void eng_step_blobs_free(eng_step_blob *b, uint32_t n);
/* The driver backend that runs step k of p's main graph (the index a checkpoint gets), or
 * NULL for the CPU (reference kernels or XNNPACK; control flow always). */
const struct eng_backend *eng_prepared_step_backend(const eng_prepared *p, uint32_t k);
/* What p holds in memory, its backends' operators and packed weights included, the
 * client's pools used in place not (footprint.h): what the daemon's memory quotas charge.
 * Measured once, by the thread that prepared p. */
size_t eng_prepared_bytes(const eng_prepared *p);
/* Before preparing m: the bytes of constants its preparation will copy (a lower bound of
 * eng_prepared_bytes() of the result), so that a quota can refuse it without the copy. */
uint64_t eng_model_copy_bytes(const eng_model_desc *m);
/* Bytes of temporaries each eng_exec of this model allocates (its subgraphs' included;
 * shapes known only at execution not counted). */
size_t eng_prepared_arena_bytes(const eng_prepared *p);

eng_exec *eng_exec_create(const eng_prepared *p);
void eng_exec_free(eng_exec *e);

/* Where the execs of models with driver partitions keep their arenas, which hold the
 * tensors crossing partitions: alloc(bytes) gives 64-byte aligned memory (NULL: none),
 * release(mem, bytes) gives it back. The daemon gives memory its driver hosts map once, so
 * crossings reach a driver without a copy. NULL (the default): the heap like every other
 * exec. Set once before any exec is made. */
typedef struct eng_arena_allocator {
    void *(*alloc)(size_t bytes);
    void (*release)(void *mem, size_t bytes);
} eng_arena_allocator;
void eng_set_partition_arena_allocator(const eng_arena_allocator *a);

/* Runs one execution. inputs/outputs have eng_prepared_num_inputs/outputs entries; shapes
 * (may be NULL) receives one entry per output. Returns SCHEMA_OK,
 * SCHEMA_OUTPUT_INSUFFICIENT_SIZE (shapes tell which), SCHEMA_INVALID_ARGUMENT for a bad
 * request, SCHEMA_GENERAL_FAILURE, or what the checkpoint returned. */
schema_status eng_exec_run(eng_exec *e, const eng_io *inputs, const eng_io *outputs,
                           eng_output_shape *shapes, const eng_checkpoint *cp, char *err,
                           size_t errlen);
/* Continues a run that its checkpoint stopped before operation `from` (the index the
 * checkpoint was given): operations before it are not run again; temporaries and bindings
 * are the stopped run's, so the caller keeps the request's memory as it was and uses e for
 * nothing else in between. Returns as eng_exec_run(). Lets a scheduler suspend work at a
 * checkpoint and resume it later instead of starting over. */
schema_status eng_exec_resume(eng_exec *e, uint32_t from, eng_output_shape *shapes,
                              const eng_checkpoint *cp, char *err, size_t errlen);

/* The step a run stopped at (a checkpoint's stop, or ENG_ON_DEVICE); UINT32_MAX if none. */
uint32_t eng_exec_stopped_at(const eng_exec *e);
/* fn(ctx) is called once when a partition started on a device completes (ENG_ON_DEVICE). */
void eng_exec_set_notify(eng_exec *e, void (*fn)(void *ctx), void *ctx);
/* Asks the driver to end the work started on a device soon (its notify still comes). */
void eng_exec_cancel_device(eng_exec *e);
/* The times drivers measured in e's last run (eng_checkpoint.measure), summed over its
 * partitions: on the device and in the driver; UINT64_MAX when none was measured. */
void eng_exec_driver_times(const eng_exec *e, uint64_t *on_device_ns, uint64_t *in_driver_ns);
/* How many driver partitions of p run on backend b. */
uint32_t eng_prepared_partitions_on(const eng_prepared *p, const struct eng_backend *b);
/* One driver partition of a prepared model, as status lists it. */
typedef struct eng_partition_view {
    const struct eng_backend *backend; /* its device's */
    uint32_t first_op;                 /* the client's index of its first operation */
    uint32_t operations;
    uint64_t held_bytes; /* what its driver said it holds for it */
} eng_partition_view;
/* Calls fn for each driver partition of p (main graph), in step order. */
void eng_prepared_each_partition(const eng_prepared *p,
                                 void (*fn)(const eng_partition_view *v, void *ctx), void *ctx);

/* Device memory for a client's buffer (memory domains, the HAL's IDevice::allocate): one of
 * the buffer's roles, as the client's Allocate names it. */
typedef struct eng_buffer_role {
    const eng_prepared *p;
    bool output;     /* an output of p (else an input) */
    uint32_t io;     /* which of p's inputs (outputs) */
    float frequency; /* (0, 1]; anything else counts as 1 */
} eng_buffer_role;
/* Whether driver backend b (with device memory) can own such a buffer: each role's tensor
 * is an input or output of at least one of its model's partitions on b. */
bool eng_buffer_roles_on(const struct eng_backend *b, const eng_buffer_role *roles, size_t n);
/* The buffer (zeroed) in b's memory: a handle, or 0 when the roles are not all on b or the
 * driver refused. The driver gets the operand, bytes and the roles as its partitions play
 * them: for each role, every partition of b that reads the tensor (an input, by its index
 * among that partition's inputs) or writes it (an output, likewise), with the frequency. */
uint64_t eng_buffer_alloc(const struct eng_backend *b, const eng_operand_desc *operand,
                          uint64_t bytes, const eng_buffer_role *roles, size_t n);

/* Number of operation types with at least one kernel. */
uint32_t eng_supported_operation_count(void);

#endif
