/* SPDX-License-Identifier: Apache-2.0 */
/* op: the contract between the engine and an operation. An operation is one row, the
 * eng_op_def its kernel file writes with ENG_OP_DEF (ops/op_def.h); ops/registry.c finds it
 * by the operation's code (schema/codes.h).
 *
 * - check(): signature validation, once per model: operand counts and types, and any
 *   constant scalar it can judge. Tensors carry type, quantization and dimensions as far
 *   as known (known == false: some dimension or the rank is unknown); data is set only
 *   for constants. Return SCHEMA_INVALID_ARGUMENT via eng_fail(), or SCHEMA_UNSUPPORTED for a
 *   valid combination this engine has no kernel for.
 * - shape(): output dimensions from input dimensions and parameters, with consistency
 *   checks. Called at prepare when every input's shape is known and every scalar input is
 *   constant, and at execution when the model has dynamic shapes. If it needs the bytes
 *   of a tensor that is not constant (data == NULL), it returns ENG_DEFER.
 * - kernels[]: run functions keyed by the type of input `key_input`; run() computes
 *   outputs (dims already set by shape()) and may use eng_scratch() for temporaries.
 * - An omitted optional input has data == NULL and lifetime SCHEMA_NO_VALUE. Which inputs
 *   an operation takes as optional is its row's optional_inputs (eng_op_optional_inputs()); the
 *   engine refuses an omitted input anywhere else, so kernels never see one there.
 * - Reference kernels ignore c->state; it carries a fast backend's per-step state
 *   (backend.h) to that backend's run().
 */
#ifndef ENG_OP_H
#define ENG_OP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#define ENG_DEFER       101 /* shape(): needs data that is only known at execution */
#define ENG_MAX_KERNELS 12
/* A kernel row of this type runs for any key input type (extension operations). */
#define ENG_KERNEL_ANY_TYPE INT32_MIN

typedef struct eng_tensor {
    int32_t type;
    uint32_t rank;
    uint32_t dims[ENG_MAX_RANK];
    float scale;
    int32_t zero_point;
    const eng_channel_quant *channel_quant;
    void *data;           /* NULL: omitted, or not known yet (prepare) */
    size_t bytes;         /* capacity at data */
    size_t readable_past; /* bytes past data + bytes that may be read (eng_io.readable_past) */
    uint8_t lifetime;
    bool known; /* rank and every dimension known */
    /* Extension operand types: the operand's extension blob, handed to the plugin. */
    const uint8_t *extension_data;
    uint32_t extension_len;
    /* A model input or output bound to device memory (eng_io.device): data is the run's
     * host copy, device_sync says which side is stale (NND_*_STALE). NULL: host only. */
    const struct eng_backend *device;
    uint64_t device_handle;
    uint8_t device_sync;
} eng_tensor;

#define ENG_HOST_STALE   1 /* the device memory holds the newest bytes */
#define ENG_DEVICE_STALE 2 /* data holds the newest bytes */
#define ENG_HOST_ONLY    4 /* an output sharing its handle with an input: computed at data */

typedef struct eng_scratch_pool eng_scratch_pool;

typedef struct eng_op_ctx {
    const struct eng_op_def *def;
    uint32_t index; /* operation index in the model, for messages */
    eng_tensor **in;
    uint32_t n_in;
    eng_tensor **out;
    uint32_t n_out;
    bool relaxed;
    /* Set while a model is judged as it is built (addOperation) and finished (the
     * supported-operations query): only what the NNAPI runtime checks there holds then
     * (operand counts, types, ranks). What a driver finds only when it prepares or runs
     * the model (constant scalar values such as a fused activation code, quantization
     * relations between operands) waits for prepare: see eng_driver_rules(). */
    bool model_rules_only;
    eng_scratch_pool *scratch;
    void *state; /* the step's prepared state from a fast backend (backend.h), else NULL */
    char *err;
    size_t errlen;
} eng_op_ctx;

typedef schema_status (*eng_op_fn)(eng_op_ctx *c);

typedef struct eng_kernel {
    int32_t type; /* of input key_input */
    eng_op_fn run;
} eng_kernel;

typedef struct eng_op_def {
    int32_t code;
    const char *name;
    eng_op_fn check;
    eng_op_fn shape;
    eng_kernel kernels[ENG_MAX_KERNELS]; /* none in libnnd's copy (ENG_RULES_ONLY) */
    uint8_t key_input;
    uint64_t optional_inputs; /* bit j set: input j may be omitted (NO_VALUE) */
} eng_op_def;

/* Registry: the definition for an operation code, or NULL. */
const eng_op_def *eng_op_lookup(int32_t code);

/* ---- rows installed by the extension loader -------------------------------------------------
 * Engine codes with nonzero high bits, id << 16 | code, belong to the plugin the loader gave
 * that id (extension.h; SCHEMA_EXT_MAX_ID in operand_type.h, which holds their type rows). The
 * loader installs a plugin's rows here when it publishes the plugin and removes them (rows
 * NULL) before freeing it; the table answers for those codes from the rows alone and never
 * calls the loader. Installed rows must stay unchanged until removed; lookups are lock-free. */
/* One plugin's operations: each def's code is its full engine code. */
typedef struct eng_op_rows {
    uint32_t n;
    const eng_op_def *const *defs;
} eng_op_rows;
void eng_ops_install(uint16_t id, const eng_op_rows *rows); /* ops/registry.c */
/* The definition OEM_OPERATION resolves to (a plugin's claim), or NULL for none. */
void eng_ops_install_oem(const eng_op_def *def);
/* The kernel of def for key input type `type`, or NULL (a pure reading of the row: kernels
 * pick a sibling kernel with it without calling back into the table). */
static inline eng_op_fn eng_op_kernel(const eng_op_def *def, int32_t type) {
    for (int i = 0; i < ENG_MAX_KERNELS && def->kernels[i].run; i++)
        if (def->kernels[i].type == type || def->kernels[i].type == ENG_KERNEL_ANY_TYPE)
            return def->kernels[i].run;
    return NULL;
}
/* Bit j set: input j of the operation may be omitted (NO_VALUE). */
uint64_t eng_op_optional_inputs(int32_t code);

/* Whether check() judges the driver's rules too (prepare, execution), not only the model's
 * (eng_op_ctx.model_rules_only). */
static inline bool eng_driver_rules(const eng_op_ctx *c) {
    return !c->model_rules_only;
}

/* Scratch memory for one run() call, released when it returns; NULL when out of memory. */
void *eng_scratch(eng_op_ctx *c, size_t bytes);

#endif
