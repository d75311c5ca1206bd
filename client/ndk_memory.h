/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_memory: ANeuralNetworksMemory (struct in ndk_shared.h) as the rest of the NDK layer
 * uses it.
 *
 * Contract:
 * - Memories are reference counted: ndk_memory_ref() takes a reference,
 *   ndk_memory_unref() drops one (ANeuralNetworksMemory_free drops the caller's). The last
 *   one releases a daemon buffer, unregisters the memory, makes the bursts forget the
 *   memory's key (ndk_keys.h) and closes its fd.
 * - ndk_memory_new() is an empty memory (no fd, one reference, a fresh key) for its maker
 *   to fill in.
 */
#ifndef CLI_NDK_MEMORY_H
#define CLI_NDK_MEMORY_H

#include "client/ndk_shared.h"

NDK_HIDDEN ANeuralNetworksMemory *ndk_memory_new(void);
NDK_HIDDEN ANeuralNetworksMemory *ndk_memory_ref(const ANeuralNetworksMemory *m);
NDK_HIDDEN void ndk_memory_unref(ANeuralNetworksMemory *m);
/* The token of m's fd memory on s's connection, registering it there on first use; 0 when
 * it has none (a daemon buffer, a refusal, registered with another connection that is
 * still alive): its fd travels then. */
NDK_HIDDEN uint64_t ndk_memory_token(const ANeuralNetworksMemory *m, ndk_session *s);
/* A fresh memfd-backed memory of size bytes, mapped read-write at *map. */
NDK_HIDDEN int ndk_memory_create_memfd(size_t size, ANeuralNetworksMemory **out, void **map);
/* True when a descriptor memory was made for this role of compilation c. */
NDK_HIDDEN bool ndk_memory_has_role(const ANeuralNetworksMemory *m,
                                    const ANeuralNetworksCompilation *c, bool output,
                                    uint32_t index);

#endif
