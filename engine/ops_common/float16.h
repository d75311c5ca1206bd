/* SPDX-License-Identifier: Apache-2.0 */
/* float16: the storage type of FLOAT16 and TENSOR_FLOAT16 elements.
 *
 * Contract: eng_half is IEEE 754 binary16, two bytes, converting to and from float with
 * plain casts (round to nearest even). Clang before 15 has no _Float16 on x86: __fp16
 * stores the same bits there (the fuzz build, scripts/fuzz.sh, links compiler-rt for its
 * conversions).
 */
#ifndef ENG_OPS_COMMON_FLOAT16_H
#define ENG_OPS_COMMON_FLOAT16_H

#if defined(__clang__) && __clang_major__ < 15 && (defined(__x86_64__) || defined(__i386__))
typedef __fp16 eng_half;
#else
typedef _Float16 eng_half;
#endif

#endif
