/* SPDX-License-Identifier: Apache-2.0 */
/* nnd/driver.h: the device driver plugin ABI, version 2. This header is all a driver needs;
 * drivers/example/ is the template and docs/drivers.md the guide.
 *
 * It is a C rendering of the NN HAL's device interface (IDevice, IPreparedModel, IBuffer):
 * a driver is offered a whole model, compiles the partitions it is given (submodels whose
 * temporaries never leave it), and executes them synchronously or asynchronously.
 *
 * Contract:
 * - Loading: a driver is a shared object in the daemon's drivers directory (--drivers-dir)
 *   exporting one object, `nnd_driver_info` (NND_DRIVER_SYMBOL), of type nnd_driver; export
 *   it with NND_DRIVER_EXPORT. abi_version must be NND_DRIVER_ABI_VERSION and struct_size
 *   sizeof(nnd_driver); a version 1 driver (abi_version 1) is refused with a log line that
 *   says to rebuild it against this header. The daemon loads each driver in a driver host
 *   process of its own (one per plugin; docs/drivers.md); every rule below holds there as
 *   it would in the daemon, and a driver cannot tell the two apart.
 * - Devices: open() is called once, before anything else, fills up to `max` device records
 *   (one per accelerator the driver drives) and returns how many it filled (0 is fine:
 *   nothing here), or -1 with a message in err (the driver is refused). Each device
 *   becomes one nnd device, listed by GetDevices (ANeuralNetworks_getDevice) under its
 *   name: 1 to 31 characters of [a-z0-9-], unique among the daemon's devices (the built-in
 *   "nnd-cpu" and "nnd-reference" included). `device` in the record is the driver's own
 *   pointer, handed back to every per-device call. close() ends the driver.
 * - Capabilities (the HAL's Capabilities): performance per operand type, for relaxed
 *   FLOAT32 computed as FLOAT16 (scalar, tensor), and for IF and WHILE. Each figure is a
 *   cost relative to nnd-reference (1.0; nnd-cpu states 0.1 for time and power on every
 *   type), lower is better; 0 (or not finite) means "not stated" and ranks last. The
 *   daemon gives an operation to the device with the lowest figure for the type of the
 *   operation's first input (the relaxed figure for FLOAT32 in a relaxed model): the
 *   execution time, or the power usage when the compilation prefers LOW_POWER. Ties go to
 *   nnd-cpu, then to the device listed first. cache_blobs is how many blobs cache_save()
 *   makes per prepared partition (0: its compilations are not cached).
 * - supported_operations(): for a whole model (operands with the shapes known at
 *   compilation, 0 for a dimension not known yet; constants' data set), set supported[i]
 *   for each operation i. The driver may judge by context (what surrounds an operation,
 *   fusion, shapes). Control flow (IF, WHILE) and the operations of their subgraphs stay
 *   on the CPU and are marked unsupported before the call. No side effects; it also
 *   answers GetSupportedOperations.
 * - prepare(): compiles one partition: a submodel of operations the driver said it
 *   supports, consecutive in the daemon's plan, with its operands, its inputs (tensors it
 *   reads from outside) and its outputs (tensors others read). Constants' data stay valid
 *   and unchanged for as long as the prepared partition lives (the daemon keeps the
 *   client's memory mapped), so a driver copies only what it transforms. The compilation's
 *   preference, priority and deadline come with it (a deadline passed: return
 *   NND_DRIVER_MISSED_DEADLINE_TRANSIENT). It sets out->prepared and out->held_bytes, the
 *   host memory it holds for the partition (counted against the client). NND_DRIVER_OK, or
 *   a status with a message in err; a partition a driver declines (UNSUPPORTED) goes to
 *   the CPU, any other failure fails the compilation.
 * - execute(): runs a prepared partition, synchronously. start() (optional, with
 *   cancel()) is the asynchronous form: it starts the work and returns
 *   NND_DRIVER_STARTED, then calls x->complete(x, status) exactly once, from any thread,
 *   when the work ends (or returns another status at once, without calling complete()).
 *   A driver with start() is never called through execute() unless execute() is set too;
 *   with both, the daemon starts what its scheduler can leave running and executes the
 *   rest. cancel() asks started work to end soon (it may come while complete() is being
 *   called); complete() still comes, with any status.
 *   Inputs are read-only; every input and output is host memory (data) or, only for a
 *   driver with device memory, one of its own handles (data NULL, memory set). Host data,
 *   a constant's as an argument's, is aligned for its element type (the daemon copies what
 *   a client placed otherwise). The execution carries the priority, the deadline (a deadline passed
 * inside the partition: NND_DRIVER_MISSED_DEADLINE_TRANSIENT) and whether to measure (then set the
 * two times, else leave them at NND_DRIVER_NO_TIME). An output whose shape was not fully known gets
 * its shape from the driver (rank, dims); when its length is too small for that shape, return
 * NND_DRIVER_OUTPUT_INSUFFICIENT_SIZE with the shape set. Several executions may run at once, on
 * one prepared partition too.
 * - Device memory (optional, all four or none; the HAL's IDevice::allocate and IBuffer):
 *   allocate() makes a buffer for the descriptor's operand (type, shape, bytes) and the
 *   roles it will play (the HAL's BufferRole, at least one): each a prepared partition of
 *   this device that reads it (an input, by its index among that partition's inputs) or
 *   writes it (an output, likewise), and how often (0 < frequency <= 1). A client's
 *   buffer whose every role touches a partition of the device comes here; one partition
 *   may appear in several roles. Zeroed, with a handle other than 0; any other status
 *   (with err) leaves the buffer in the daemon's memory. memory_read() and
 * memory_write() copy [offset, offset + bytes) of it (always in range) out and in; memory_free()
 * frees it once no execution uses it.
 * - Cache (optional, both or none, with caps.cache_blobs > 0): cache_save() writes blob i
 *   of a prepared partition into buf when it fits in cap and returns its size in any case
 *   (0: cannot save this one); the daemon asks with cap 0 first. cache_load() rebuilds a
 *   prepared partition from the blobs cache_save() made for the same submodel, instead of
 *   prepare(), or fails: the compilation then prepares again. Blobs outlive the daemon:
 *   no pointers in them, put a format version in. The daemon hashes them with the rest of
 *   the compilation, so a tampered blob is refused before the driver sees it.
 * - release() frees a prepared partition, once no execution uses it.
 * - Callbacks must not keep the pointers they get beyond the call (a prepared partition's
 *   constants excepted, as above), nor call exit() or change signal dispositions. A fault,
 *   a hang past the execution bound or memory past the host's limit costs the driver host
 *   a restart, and fails only the work it held; a driver restarted too often is disabled.
 */
#ifndef NND_DRIVER_ABI_H
#define NND_DRIVER_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NND_DRIVER_ABI_VERSION      2
#define NND_DRIVER_SYMBOL           "nnd_driver_info"
#define NND_DRIVER_MAX_NAME         31
#define NND_DRIVER_MAX_RANK         16
#define NND_DRIVER_MAX_DEVICES      8
#define NND_DRIVER_TYPE_OTHER       1
#define NND_DRIVER_TYPE_CPU         2
#define NND_DRIVER_TYPE_GPU         3
#define NND_DRIVER_TYPE_ACCELERATOR 4

/* Statuses: the HAL's ErrorStatus numbers, and two of the ABI's own. */
enum {
    NND_DRIVER_OK = 0,
    NND_DRIVER_DEVICE_UNAVAILABLE = 1,
    NND_DRIVER_GENERAL_FAILURE = 2,
    NND_DRIVER_OUTPUT_INSUFFICIENT_SIZE = 3,
    NND_DRIVER_INVALID_ARGUMENT = 4,
    NND_DRIVER_MISSED_DEADLINE_TRANSIENT = 5,
    NND_DRIVER_MISSED_DEADLINE_PERSISTENT = 6,
    NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT = 7,
    NND_DRIVER_RESOURCE_EXHAUSTED_PERSISTENT = 8,
    NND_DRIVER_UNSUPPORTED = 100, /* prepare(): valid, but declined: the CPU takes it */
    NND_DRIVER_STARTED = 101,     /* start(): complete() will follow */
};

/* Operand types, numbered as NNAPI's OperandCode (base types only). */
enum {
    NND_DRIVER_FLOAT32 = 0,
    NND_DRIVER_INT32 = 1,
    NND_DRIVER_UINT32 = 2,
    NND_DRIVER_TENSOR_FLOAT32 = 3,
    NND_DRIVER_TENSOR_INT32 = 4,
    NND_DRIVER_TENSOR_QUANT8_ASYMM = 5,
    NND_DRIVER_BOOL = 6,
    NND_DRIVER_TENSOR_QUANT16_SYMM = 7,
    NND_DRIVER_TENSOR_FLOAT16 = 8,
    NND_DRIVER_TENSOR_BOOL8 = 9,
    NND_DRIVER_FLOAT16 = 10,
    NND_DRIVER_TENSOR_QUANT8_SYMM_PER_CHANNEL = 11,
    NND_DRIVER_TENSOR_QUANT16_ASYMM = 12,
    NND_DRIVER_TENSOR_QUANT8_SYMM = 13,
    NND_DRIVER_TENSOR_QUANT8_ASYMM_SIGNED = 14,
    NND_DRIVER_OPERAND_TYPES = 15, /* the size of the per-type performance table */
};

/* Where an operand of a (sub)model lives. */
enum {
    NND_DRIVER_TEMPORARY = 0, /* made and used inside the model: the driver's own */
    NND_DRIVER_INPUT = 1,     /* one of the model's inputs */
    NND_DRIVER_OUTPUT = 2,    /* one of the model's outputs */
    NND_DRIVER_CONSTANT = 3,  /* data holds the value */
    NND_DRIVER_OMITTED = 4,   /* an optional input left out */
};

/* NNAPI's execution preference (ANEURALNETWORKS_PREFER_*) and priority numbers. */
enum {
    NND_DRIVER_PREFER_LOW_POWER = 0,
    NND_DRIVER_PREFER_FAST_SINGLE_ANSWER = 1,
    NND_DRIVER_PREFER_SUSTAINED_SPEED = 2,
};
enum {
    NND_DRIVER_PRIORITY_LOW = 90,
    NND_DRIVER_PRIORITY_MEDIUM = 100,
    NND_DRIVER_PRIORITY_HIGH = 110,
};

#define NND_DRIVER_NO_DEADLINE 0          /* deadline_ns when there is none */
#define NND_DRIVER_NO_TIME     UINT64_MAX /* a time not measured */

typedef struct nnd_driver_perf {
    float exec_time;   /* relative execution time; lower is better */
    float power_usage; /* relative power usage; lower is better */
} nnd_driver_perf;

typedef struct nnd_driver_capabilities {
    nnd_driver_perf operand[NND_DRIVER_OPERAND_TYPES]; /* indexed by operand type */
    nnd_driver_perf relaxed_scalar;                    /* FLOAT32 computed as FLOAT16 */
    nnd_driver_perf relaxed_tensor;                    /* TENSOR_FLOAT32 computed as FLOAT16 */
    nnd_driver_perf if_perf, while_perf;
    uint32_t cache_blobs; /* blobs per prepared partition; 0: not cached */
} nnd_driver_capabilities;

typedef struct nnd_driver_device_info {
    char name[NND_DRIVER_MAX_NAME + 1];
    char version[64]; /* free text for GetDevices and logs */
    int32_t type;     /* NND_DRIVER_TYPE_* */
    nnd_driver_capabilities caps;
    void *device; /* the driver's own, handed back to each per-device call */
} nnd_driver_device_info;

typedef struct nnd_driver_operand {
    int32_t type;                       /* NND_DRIVER_* operand type */
    uint32_t rank;                      /* 0: a scalar, or a tensor of rank not known yet */
    uint32_t dims[NND_DRIVER_MAX_RANK]; /* 0: not known yet */
    float scale;
    int32_t zero_point;
    /* TENSOR_QUANT8_SYMM_PER_CHANNEL: one scale per index of dimension channel_dim. */
    uint32_t channel_dim;
    uint32_t n_channel_scales;
    const float *channel_scales;
    int32_t lifetime; /* NND_DRIVER_TEMPORARY, ... */
    const void *data; /* CONSTANT: the value */
    size_t length;    /* CONSTANT: bytes at data */
} nnd_driver_operand;

typedef struct nnd_driver_operation {
    int32_t type; /* NNAPI OperationCode */
    uint32_t n_inputs, n_outputs;
    const uint32_t *inputs; /* operand indices */
    const uint32_t *outputs;
    uint32_t index; /* the operation's index in the client's model, for messages */
} nnd_driver_operation;

/* A model (supported_operations) or a partition of one (prepare). Operations come in an
 * order that runs them: each reads only inputs, constants and earlier outputs. */
typedef struct nnd_driver_model {
    uint32_t n_operands;
    const nnd_driver_operand *operands;
    uint32_t n_operations;
    const nnd_driver_operation *operations;
    uint32_t n_inputs, n_outputs;
    const uint32_t *inputs; /* operand indices, in the order execute() gets them */
    const uint32_t *outputs;
    bool relaxed; /* FLOAT32 may be computed with FLOAT16 range and precision */
} nnd_driver_model;

typedef struct nnd_driver_prepare_args {
    int32_t preference;   /* NND_DRIVER_PREFER_* */
    int32_t priority;     /* NND_DRIVER_PRIORITY_* or a number between */
    uint64_t deadline_ns; /* CLOCK_MONOTONIC; NND_DRIVER_NO_DEADLINE: none */
} nnd_driver_prepare_args;

typedef struct nnd_driver_prepared_info {
    void *prepared;      /* the driver's own, handed to execute() and release() */
    uint64_t held_bytes; /* host memory held for it */
} nnd_driver_prepared_info;

/* One input or output of an execution. */
typedef struct nnd_driver_arg {
    void *data;      /* host memory; NULL when it is in device memory */
    size_t length;   /* bytes at data (or in the device buffer) */
    uint64_t memory; /* a handle of allocate() when data is NULL */
    uint32_t rank;   /* the shape: inputs as given; outputs as known, set by the driver */
    uint32_t dims[NND_DRIVER_MAX_RANK];
} nnd_driver_arg;

typedef struct nnd_driver_execution nnd_driver_execution;
struct nnd_driver_execution {
    void *prepared;
    uint32_t n_inputs, n_outputs;
    const nnd_driver_arg *inputs;
    nnd_driver_arg *outputs;
    int32_t priority;
    uint64_t deadline_ns; /* CLOCK_MONOTONIC; NND_DRIVER_NO_DEADLINE: none */
    bool measure;
    uint64_t time_on_device_ns; /* set when measure; else NND_DRIVER_NO_TIME */
    uint64_t time_in_driver_ns;
    char *err; /* a failure's message goes here (snprintf), errlen bytes */
    size_t errlen;
    /* start(): call once when the work ends, from any thread; x stays valid until then. */
    void (*complete)(nnd_driver_execution *x, int status);
    void *daemon_data; /* the daemon's own */
    void *driver_data; /* the driver's own (e.g. for cancel()) */
};

/* A driver-managed buffer's descriptor (ANeuralNetworksMemoryDesc) and its roles. */
typedef struct nnd_driver_buffer_role {
    void *prepared;  /* a prepared partition of this device (its prepare()'s out->prepared) */
    bool is_output;  /* the role is an output (else an input) */
    uint32_t index;  /* which of the partition's inputs (outputs): not the client model's */
    float frequency; /* 0 < frequency <= 1 */
} nnd_driver_buffer_role;

typedef struct nnd_driver_buffer_desc {
    nnd_driver_operand operand; /* type and shape (fully known) */
    uint64_t bytes;
    uint32_t n_roles;
    const nnd_driver_buffer_role *roles;
} nnd_driver_buffer_desc;

typedef struct nnd_driver_blob {
    const void *data;
    size_t size;
} nnd_driver_blob;

typedef struct nnd_driver {
    uint32_t abi_version; /* NND_DRIVER_ABI_VERSION */
    uint32_t struct_size; /* sizeof(nnd_driver) */
    const char *name;     /* the driver's name, for logs */
    /* Required. */
    int (*open)(nnd_driver_device_info *devices, uint32_t max, char *err, size_t errlen);
    void (*close)(void);
    int (*supported_operations)(void *device, const nnd_driver_model *model, bool *supported,
                                char *err, size_t errlen);
    int (*prepare)(void *device, const nnd_driver_model *partition,
                   const nnd_driver_prepare_args *args, nnd_driver_prepared_info *out, char *err,
                   size_t errlen);
    void (*release)(void *prepared);
    /* execute(), or start() with cancel(), or all three. */
    int (*execute)(nnd_driver_execution *x);
    int (*start)(nnd_driver_execution *x);
    void (*cancel)(nnd_driver_execution *x);
    /* Optional, all four or none: device memory. */
    int (*allocate)(void *device, const nnd_driver_buffer_desc *desc, uint64_t *handle, char *err,
                    size_t errlen);
    void (*memory_free)(void *device, uint64_t handle);
    int (*memory_read)(void *device, uint64_t handle, uint64_t offset, void *dst, size_t bytes);
    int (*memory_write)(void *device, uint64_t handle, uint64_t offset, const void *src,
                        size_t bytes);
    /* Optional, both or none: cache blobs. */
    size_t (*cache_save)(void *prepared, uint32_t blob, void *buf, size_t cap);
    int (*cache_load)(void *device, const nnd_driver_model *partition,
                      const nnd_driver_prepare_args *args, const nnd_driver_blob *blobs,
                      uint32_t n_blobs, nnd_driver_prepared_info *out, char *err, size_t errlen);
} nnd_driver;

#define NND_DRIVER_EXPORT                                                                          \
    __attribute__((visibility("default"))) extern const nnd_driver nnd_driver_info;                \
    __attribute__((visibility("default"))) const nnd_driver nnd_driver_info

#ifdef __cplusplus
}
#endif

#endif
