/* SPDX-License-Identifier: Apache-2.0 */
/* cachefile: the files behind cache entries. The clients' cache files come as fds; the
 * daemon's own content store is a folder of files named by digest.
 *
 * Contract:
 * - Client cache fds must be regular files (a memfd counts). store_cachefile_lock() takes
 *   flock() locks on all of them, shared to read and exclusive to write, all or nothing,
 *   retrying without blocking for at most timeout_ms: another process that opened the
 *   same files (another open file description) and locks them never sees a half-written
 *   cache, and a stuck peer costs a bounded wait, never a hung daemon.
 * - store_cachefile_write() truncates the file to zero first, then writes; so a file that
 *   is cut short by a crash is shorter than its index row says, and its digest differs.
 *   For the crash test only, a non-zero stall_at makes the write stop after that many
 *   bytes and sleep (NND_TEST_CACHE_WRITE_STALL in the daemon).
 * - Store files: <dir>/<hex digest>.model and .data, written to a temporary name and
 *   renamed into place, so a store file is complete or absent. store_sweep() removes
 *   temporaries and every file whose digest `keep` rejects (crash leftovers, entries
 *   invalidated by a new build).
 */
#ifndef STORE_CACHEFILE_H
#define STORE_CACHEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/hash.h"

/* Fills *size for a regular file; returns 0 or -errno (-EINVAL: not a regular file). */
int store_cachefile_size(int fd, uint64_t *size);
int store_cachefile_lock(const int *fds, size_t n, bool exclusive, int timeout_ms);
void store_cachefile_unlock(const int *fds, size_t n);
/* Returns 0 or -errno with err set. */
int store_cachefile_write(int fd, const uint8_t *p, size_t len, size_t stall_at, char *err,
                          size_t errlen);

int store_write(const char *dir, const uint8_t hash[STORE_HASH_LEN], const uint8_t *model,
                size_t model_len, const uint8_t *data, size_t data_len, char *err, size_t errlen);
void store_remove(const char *dir, const uint8_t hash[STORE_HASH_LEN]);
/* Returns the number of files removed. */
int store_sweep(const char *dir, bool (*keep)(const uint8_t hash[STORE_HASH_LEN], void *ctx),
                void *ctx);

#endif
