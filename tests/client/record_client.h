/* SPDX-License-Identifier: Apache-2.0 */
/* record_client.h: the fixed inputs record_client feeds its two models, shared with
 * test_record, which finds them again in the recording. */
#ifndef TST_CLIENT_RECORD_CLIENT_H
#define TST_CLIENT_RECORD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#define RC_FILTER_ELEMS 72 /* [4,3,3,2]: 288 bytes, in a memory pool */
#define RC_CONV_IN      32 /* [1,4,4,2] */
#define RC_CONV_OUT     64 /* [1,4,4,4] */
#define RC_CONV_RUNS    4  /* compute, burst, fenced, compute */
#define RC_QADD_N       6  /* [2,3] */
#define RC_QADD_RUNS    2

static inline float rc_filter(size_t i) {
    return (float)((int)(i % 7) - 3) * 0.125f;
}
static inline float rc_conv_input(int run, size_t i) {
    return (float)i * 0.25f - (float)run;
}
static inline float rc_conv_addend(int run, size_t i) {
    return (float)(i % 5) - 2.0f + 0.5f * (float)run;
}
/* a's real value is i + run, b's i + 2 run + 1: their sum is an integer, so the quantized
 * sum (scale 1, zero point 5) has no rounding to argue about. */
static inline uint8_t rc_qadd_a(int run, size_t i) {
    return (uint8_t)(10 + 2 * ((int)i + run));
}
static inline uint8_t rc_qadd_b(int run, size_t i) {
    return (uint8_t)(4 * ((int)i + 2 * run + 1));
}
static inline uint8_t rc_qadd_expected(int run, size_t i) {
    return (uint8_t)(2 * (int)i + 3 * run + 6);
}

#endif
