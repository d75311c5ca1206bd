/* SPDX-License-Identifier: Apache-2.0 */
/* fibonacci.h: the definition of the example vendor extension com.example.fibonacci, for
 * the applications that use it (through ANeuralNetworksModel_getExtensionOperandType and
 * friends) and for its plugin, fibonacci.c.
 *
 * Operand types:
 * - TEST_VENDOR_INT64 (0): a signed 64-bit integer scalar.
 * - TEST_VENDOR_TENSOR_QUANT64_ASYMM (1): a tensor of unsigned 64-bit integers standing for
 *   reals, real = (value - zeroPoint) * scale, with scale and zeroPoint in the operand's
 *   extension data as a TestVendorQuant64AsymmParams (exactly its 16 bytes).
 * Operations:
 * - TEST_VENDOR_FIBONACCI (0): input 0 is n, a TEST_VENDOR_INT64 or a TENSOR_FLOAT32 of one
 *   element (truncated to an integer); output 0 is the 1-D tensor [n] of the first n
 *   Fibonacci numbers (1, 1, 2, 3, ...), as TENSOR_FLOAT32 or
 *   TEST_VENDOR_TENSOR_QUANT64_ASYMM (each number quantized with the output's parameters).
 *   1 <= n <= TEST_VENDOR_FIBONACCI_MAX_N; a constant n outside is INVALID_ARGUMENT, an
 *   input n outside fails the execution (GENERAL_FAILURE).
 */
#ifndef TEST_VENDOR_FIBONACCI_H
#define TEST_VENDOR_FIBONACCI_H

#include <stdint.h>

#define TEST_VENDOR_FIBONACCI_EXTENSION_NAME "com.example.fibonacci"
#define TEST_VENDOR_FIBONACCI_MAX_N          (1 << 20)

typedef struct TestVendorQuant64AsymmParams {
    double scale;
    int64_t zeroPoint;
} TestVendorQuant64AsymmParams;

enum {
    TEST_VENDOR_INT64 = 0,
    TEST_VENDOR_TENSOR_QUANT64_ASYMM = 1,
};

enum {
    TEST_VENDOR_FIBONACCI = 0,
};

#endif
