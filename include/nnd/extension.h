/* SPDX-License-Identifier: Apache-2.0 */
/* nnd/extension.h: the vendor extension plugin ABI. This header is all a plugin needs.
 *
 * A plugin is a shared object in the daemon's extensions directory (--extensions-dir) that
 * exports one object, `nnd_extension_info` (NND_EXTENSION_SYMBOL), of type nnd_extension:
 * its reverse-domain name ("com.example.fibonacci"), its operand types and its
 * operations. Export it with NND_EXTENSION_EXPORT.
 *
 * Contract:
 * - Versioning: abi_version must equal NND_EXTENSION_ABI_VERSION and struct_size must be
 *   sizeof(nnd_extension) of this header; anything else is refused at load with a log
 *   line. Any incompatible change to these structs bumps the version.
 * - Codes: a model names an extension type or operation as prefix << 16 | code, with a
 *   prefix chosen per model. The daemon resolves prefixes; a plugin only ever sees the
 *   extension's own 16-bit codes (nnd_ext_operand.extension says whose).
 * - Every operation has three callbacks, each getting an nnd_ext_call:
 *   validate(): the signature: operand counts, types, extension data, constant values
 *     (data is set only for constants). Return NND_EXT_INVALID for a wrong model,
 *     NND_EXT_UNSUPPORTED for a valid one this plugin cannot run; say why in err.
 *   prepare(): output shapes from input shapes and values: set outputs[i].rank and dims.
 *     Called at model preparation when every input's shape is known (data set for
 *     constants only; return NND_EXT_DEFER when a needed value is not known yet), and
 *     again before each execute() when the model's shapes are only known at execution.
 *   execute(): compute outputs from inputs. Every data pointer is set; each output holds
 *     at least its element size times its dimensions (as prepare() set them) bytes.
 *   Return NND_EXT_FAILED for a failed computation (e.g. a bad input value).
 * - Callbacks are stateless as far as the daemon knows, may run concurrently on several
 *   threads (for different or the same model), and must not keep the pointers they get.
 *   They must not call exit(), abort() or change signal dispositions.
 * - The extension data blob of an operand (ANeuralNetworksModel_setOperandExtensionData)
 *   arrives exactly as the client gave it; validate() must check its size before use.
 * - Faults: a SIGSEGV, SIGBUS, SIGFPE or SIGILL inside a callback fails that request with
 *   GENERAL_FAILURE and disables the plugin until `nndctl reload`. This is damage
 *   control, not a sandbox: see docs/extensions.md for the limits.
 * - oem_operation (optional) claims OEM_OPERATION and the OEM operand types (OEM scalar,
 *   TENSOR_OEM_BYTE) for this plugin; at most one loaded plugin may claim them. The daemon
 *   knows no size for an OEM scalar (element_size 0): as an input its data is what the
 *   client gave (length bytes); as an output it has no storage (length 0).
 */
#ifndef NND_EXTENSION_ABI_H
#define NND_EXTENSION_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NND_EXTENSION_ABI_VERSION 1
#define NND_EXTENSION_SYMBOL      "nnd_extension_info"
#define NND_EXT_MAX_RANK          8

/* Callback results; the numbers are the HAL ErrorStatus values where one applies. */
enum {
    NND_EXT_OK = 0,
    NND_EXT_FAILED = 2,        /* GENERAL_FAILURE: the computation failed */
    NND_EXT_INVALID = 4,       /* INVALID_ARGUMENT: the model is wrong */
    NND_EXT_UNSUPPORTED = 100, /* valid, but not something this plugin runs */
    NND_EXT_DEFER = 101,       /* prepare(): needs an input value only known at execution */
};

/* Base operand types (extension == NULL), numbered as NNAPI's OperandCode. */
enum {
    NND_EXT_FLOAT32 = 0,
    NND_EXT_INT32 = 1,
    NND_EXT_UINT32 = 2,
    NND_EXT_TENSOR_FLOAT32 = 3,
    NND_EXT_TENSOR_INT32 = 4,
    NND_EXT_TENSOR_QUANT8_ASYMM = 5,
    NND_EXT_BOOL = 6,
    NND_EXT_TENSOR_QUANT16_SYMM = 7,
    NND_EXT_TENSOR_FLOAT16 = 8,
    NND_EXT_TENSOR_BOOL8 = 9,
    NND_EXT_FLOAT16 = 10,
    NND_EXT_TENSOR_QUANT8_SYMM_PER_CHANNEL = 11,
    NND_EXT_TENSOR_QUANT16_ASYMM = 12,
    NND_EXT_TENSOR_QUANT8_SYMM = 13,
    NND_EXT_TENSOR_QUANT8_ASYMM_SIGNED = 14,
    NND_EXT_OEM_SCALAR = 10000,
    NND_EXT_TENSOR_OEM_BYTE = 10001,
};

/* One operand as a callback sees it. */
typedef struct nnd_ext_operand {
    const char *extension;           /* NULL: a base type; else the extension defining type */
    int32_t type;                    /* base: the NNAPI code; else the code within extension */
    bool is_tensor;                  /* false: a scalar (rank 0) */
    uint32_t element_size;           /* bytes of the scalar or of one tensor element */
    uint32_t rank;                   /* tensors: 0 = rank not known */
    uint32_t dims[NND_EXT_MAX_RANK]; /* 0 = dimension not known */
    float scale;
    int32_t zero_point;
    const void *extension_data; /* the operand's extension blob as given, or NULL */
    uint32_t extension_len;
    void *data;    /* the value; NULL when not known yet or omitted (read-only for inputs) */
    size_t length; /* bytes at data */
    bool is_constant;
    bool omitted; /* an optional input the model left out */
} nnd_ext_operand;

typedef struct nnd_ext_call {
    int32_t operation; /* the code within the extension (OEM_OPERATION: 10000) */
    uint32_t index;    /* the operation's index in the model, for messages */
    uint32_t n_inputs, n_outputs;
    nnd_ext_operand *inputs;
    nnd_ext_operand *outputs; /* prepare() sets rank and dims; execute() fills data */
    bool relaxed;             /* FLOAT32 may be computed with FLOAT16 range and precision */
    char *err;                /* a failure's message goes here (snprintf), errlen bytes */
    size_t errlen;
} nnd_ext_call;

typedef struct nnd_ext_operation {
    uint16_t code;
    const char *name; /* "TEST_VENDOR_FIBONACCI", for messages */
    int (*validate)(const nnd_ext_call *c);
    int (*prepare)(nnd_ext_call *c);
    int (*execute)(nnd_ext_call *c);
} nnd_ext_operation;

typedef struct nnd_ext_operand_type {
    uint16_t code;
    bool is_tensor;
    uint32_t byte_size; /* of the scalar, or of one element of the tensor; > 0 */
    const char *name;   /* for messages */
} nnd_ext_operand_type;

typedef struct nnd_extension {
    uint32_t abi_version; /* NND_EXTENSION_ABI_VERSION */
    uint32_t struct_size; /* sizeof(nnd_extension) */
    const char *name;     /* reverse domain: [a-z0-9_-] labels joined by dots, two or more */
    const char *version;  /* free text for logs; may be NULL */
    uint32_t n_operand_types;
    const nnd_ext_operand_type *operand_types;
    uint32_t n_operations;
    const nnd_ext_operation *operations;
    const nnd_ext_operation *oem_operation; /* NULL, or the handler of OEM_OPERATION */
} nnd_extension;

#define NND_EXTENSION_EXPORT                                                                       \
    __attribute__((visibility("default"))) extern const nnd_extension nnd_extension_info;          \
    __attribute__((visibility("default"))) const nnd_extension nnd_extension_info

#ifdef __cplusplus
}
#endif

#endif
