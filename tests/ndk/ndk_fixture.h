/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_fixture: what the test_ndk_* programs (the NNAPI NDK API of libnnd against a real
 * daemon) share: result-code shorthands, the small ADD model and its executions, and a
 * cmocka group fixture with one daemon for the whole group.
 *
 * Contract: ndk_setup() starts a quiet daemon and points $NND_SOCKET at it (the library
 * keeps one connection per process); ndk_teardown() stops it if a test failed before
 * test_clean_stop, which stops it as the group's last test (cmocka ignores a failed
 * teardown). The helpers assert through cmocka, so they run inside tests only. */
#ifndef TST_NDK_NDK_FIXTURE_H
#define TST_NDK_NDK_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/support/harness.h"
#include "nnd/NeuralNetworks.h"

#define OK        ANEURALNETWORKS_NO_ERROR
#define NUL       ANEURALNETWORKS_UNEXPECTED_NULL
#define BAD_DATA  ANEURALNETWORKS_BAD_DATA
#define BAD_STATE ANEURALNETWORKS_BAD_STATE
#define N         4  /* elements of the small ADD model */
#define BIG       64 /* elements of the large constant: 256 bytes, over the 128 limit */

extern tst_daemon g_daemon;
extern const uint32_t dims_n[], dims_big[], dims_unknown[];
extern const ANeuralNetworksOperandType k_int32;

/* A 1-D float32 tensor type of dimensions dims. */
ANeuralNetworksOperandType tensor(const uint32_t *dims);
/* out = a + b on [n] floats: operands a 0, b 1, act 2, out 3. With b_value, b is a
 * constant holding b_value; with out_unknown, out's dimension is left unknown. Finished. */
ANeuralNetworksModel *add_model(uint32_t n, const float *b_value, bool out_unknown);
/* The one device. */
ANeuralNetworksDevice *device(void);
/* m compiled and finished, for the device when for_device. */
ANeuralNetworksCompilation *compile(ANeuralNetworksModel *m, bool for_device);
/* v[i] = base + i. */
void fill(float *v, size_t n, float base);
/* An execution of the two-input ADD model with a, b set and out bound. */
ANeuralNetworksExecution *add_execution(ANeuralNetworksCompilation *c, const float *a,
                                        const float *b, float *out);
/* What f(arg) wrote to stderr (up to 4 KiB; the text lives until the next call). */
const char *stderr_of(void (*f)(void *), void *arg);
void assert_sum(const float *a, const float *b, const float *out, size_t n);

int ndk_setup(void **state);
int ndk_teardown(void **state);
void test_clean_stop(void **state);

#endif
