/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_compilation: what executions borrow from their ANeuralNetworksCompilation (struct in
 * ndk_shared.h): a staging memfd for pointer arguments.
 *
 * Contract: ndk_staging_get() hands out a memfd of at least size bytes, mapped read-write,
 * with its own memory key: a kept one when one is large enough, else a new one rounded up
 * to whole pages. ndk_staging_put() gives it back; the compilation keeps up to
 * NDK_STAGING_CACHE for its next executions and closes the rest (the bursts forget them
 * first) and, when freed, all it kept. Thread-safe. */
#ifndef CLI_NDK_COMPILATION_H
#define CLI_NDK_COMPILATION_H

#include "client/ndk_shared.h"

NDK_HIDDEN int ndk_staging_get(ANeuralNetworksCompilation *c, size_t size, ndk_staging *out);
NDK_HIDDEN void ndk_staging_put(ANeuralNetworksCompilation *c, ndk_staging *s);

#endif
