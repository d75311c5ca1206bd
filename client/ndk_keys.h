/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_keys: the keys that name memory to daemon bursts, and the live bursts that must
 * forget a key before its memory goes away.
 *
 * Contract:
 * - ndk_memory_key() hands out a fresh key, never 0 and never reused, for memory a burst
 *   may cache (a memory, a compilation's staging memfd).
 * - A burst is on the list from ndk_bursts_add() to ndk_bursts_remove().
 *   ndk_bursts_forget_key() makes every listed burst whose connection is alive forget the
 *   key, in the daemon too; call it before memory an execution may have sent is closed,
 *   so that the daemon never keeps freed memory mapped. Thread-safe. */
#ifndef CLI_NDK_KEYS_H
#define CLI_NDK_KEYS_H

#include "client/ndk_shared.h"

/* A burst as the list sees it: the daemon burst and the connection it lives on. */
typedef struct ndk_burst_link {
    ndk_session *session;
    nnd_burst *nb;
    struct ndk_burst_link *prev, *next;
} ndk_burst_link;

NDK_HIDDEN uint64_t ndk_memory_key(void);
NDK_HIDDEN void ndk_bursts_add(ndk_burst_link *l);
NDK_HIDDEN void ndk_bursts_remove(ndk_burst_link *l);
NDK_HIDDEN void ndk_bursts_forget_key(uint64_t key);

#endif
