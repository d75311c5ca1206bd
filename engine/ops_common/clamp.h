/* SPDX-License-Identifier: Apache-2.0 */
/* clamp: bounding a value to a range, and converting a float to an int without undefined
 * behaviour.
 *
 * Contract: pure inline functions; lo <= hi is the caller's to ensure.
 */
#ifndef ENG_OPS_COMMON_CLAMP_H
#define ENG_OPS_COMMON_CLAMP_H

#include <stdint.h>

static inline float eng_clampf(float x, float lo, float hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}
static inline int32_t eng_clampi(int32_t x, int32_t lo, int32_t hi) {
    return x < lo ? lo : (x > hi ? hi : x);
}
/* x truncated into [lo, hi], NaN giving lo: converting a float past the int range is
 * undefined, and floats computed from client data go anywhere. */
static inline int32_t eng_f2i_clamp(float x, int32_t lo, int32_t hi) {
    if (!(x > (float)lo)) return lo;
    if (x >= (float)hi) return hi;
    return (int32_t)x;
}

#endif
