/* SPDX-License-Identifier: Apache-2.0 */
/* op_def: the one macro that writes an operation's row, the eng_op_def (op.h) its kernel
 * file defines and ops/registry.c finds by the operation's code.
 *
 * Contract: an operation's row is one ENG_OP_DEF in its kernel file; nothing else states its
 * code, name, check, shape rule, optional inputs, key input or kernels. The code and name
 * are those of the NNAPI operation OP (schema/codes.h spells both), so the registry and the
 * schema's names (op_name.c, and hal_names.c, which looks them up) come from one spelling.
 * Compiled with ENG_RULES_ONLY (the copy libnnd links: engine/CMakeLists.txt), a row keeps
 * its check and shape rule and drops its kernels, as AOSP builds its operation files for the
 * runtime. ENG_FLOAT_OP writes a row whose FLOAT16 kernel is its FLOAT32 one through the
 * type bridge (ops_common/type_bridge.h).
 */
#ifndef ENG_OPS_OP_DEF_H
#define ENG_OPS_OP_DEF_H

#include "engine/op.h"
#include "engine/ops_common/type_bridge.h"

/* Bit j of an optional-input mask: input j may be omitted (NO_VALUE). */
#define ENG_INPUT(j) ((uint64_t)1 << (j))
/* Inputs first..last (last < 63). */
#define ENG_INPUT_RANGE(first, last) (ENG_INPUT((last) + 1) - ENG_INPUT(first))

/* ENG_KERNEL_ONLY(f): a kernel's helper named in an operation's own table beside what its
 * check reads (elementwise.c's lanes), NULL in libnnd's copy like the row's kernels. */
// clang-format off
#ifdef ENG_RULES_ONLY
#define ENG_OP_KERNELS(...) {{0, NULL}}
#define ENG_KERNEL_ONLY(f)  NULL
#else
#define ENG_OP_KERNELS(...) __VA_ARGS__
#define ENG_KERNEL_ONLY(f)  (f)
#endif
// clang-format on

/* Defines `const eng_op_def eng_op_<OP>` for the NNAPI operation OP: its check and shape
 * functions, its optional-input mask (ENG_INPUT bits, 0 for none), the input whose type
 * picks the kernel (key), and the kernel rows ({{type, run}, ...}). */
// clang-format off
#define ENG_OP_DEF(OP, check_fn, shape_fn, optional, key, ...) \
    const eng_op_def eng_op_##OP = {.code = SCHEMA_OP_##OP, .name = #OP, .check = check_fn, \
        .shape = shape_fn, .optional_inputs = optional, .key_input = key, \
        .kernels = ENG_OP_KERNELS(__VA_ARGS__)}
// clang-format on

/* Kernel rows running one type-agnostic function for FLOAT32, FLOAT16 and the 8-bit
 * quantized inputs, unsigned and signed (FQ), and also TENSOR_INT32 (FQI). Which of
 * these an operation accepts is its check()'s to say. */
// clang-format off
#define ENG_KERNELS_FQ(run) \
    {{SCHEMA_TENSOR_FLOAT32, run}, {SCHEMA_TENSOR_FLOAT16, run}, {SCHEMA_TENSOR_QUANT8_ASYMM, run}, \
     {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, run}}
#define ENG_KERNELS_FQI(run) \
    {{SCHEMA_TENSOR_FLOAT32, run}, {SCHEMA_TENSOR_FLOAT16, run}, {SCHEMA_TENSOR_QUANT8_ASYMM, run}, \
     {SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED, run}, {SCHEMA_TENSOR_INT32, run}}
/* The types eng_check_moved() (signature.h) accepts: those of FQI. */
#define ENG_KERNELS_MOVED(run) ENG_KERNELS_FQI(run)
// clang-format on

/* A row with FLOAT32 kernel f32 and its FLOAT16 kernel through the type bridge. */
#define ENG_FLOAT_OP(OP, check_fn, shape_fn, optional, f32)                                        \
    static schema_status f32##_as_f16(eng_op_ctx *c) {                                             \
        return eng_run_f16_as_f32(c, f32);                                                         \
    }                                                                                              \
    ENG_OP_DEF(OP, check_fn, shape_fn, optional, 0,                                                \
               {{SCHEMA_TENSOR_FLOAT32, f32}, {SCHEMA_TENSOR_FLOAT16, f32##_as_f16}})

#endif
