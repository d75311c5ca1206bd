/* SPDX-License-Identifier: Apache-2.0 */
/* cache: the compilation-cache rows of `make bench`, for a model with 10 MiB of weights
 * (tests/support/cache_model.h), on a daemon of its own started with the content cache off so
 * every prepare does its full work, and with no limit on the models it saves to cache
 * files (--cache-save-max-bytes 0; by default one this large is not saved, docs/caching.md),
 * so that loads can be measured. Medians over trials that alternate between sides.
 *   cache_load       PrepareModelFromCache (the daemon reads both files into fresh
 *                    buffers while hashing them, checks the digest, decodes, prepares)
 *                    over the floor: this process reading the same two files into fresh
 *                    buffers and hashing them with the same BLAKE2b tree code (storage/
 *                    hash.h, both cores);
 *   cache_vs_cold    PrepareModelFromCache over a cold PrepareModel of the same model
 *                    (reported; lower is better);
 *   content_vs_cold  a plain PrepareModel served by the content cache (a second daemon,
 *                    default settings: the model is copied and hashed to find it) over
 *                    the cold PrepareModel (reported: the price of content addressing).
 * Returns 0 and fills *out; -1 on failure (message on stderr). */
#ifndef BENCH_CACHE_H
#define BENCH_CACHE_H

#include <stddef.h>

typedef struct bench_cache {
    double load_ns;        /* PrepareModelFromCache round trip */
    double floor_ns;       /* in-process read + hash of the same files */
    double plain_floor_ns; /* one thread: read(2) into a fresh buffer, then one-shot blake2b */
    double cold_ns;        /* PrepareModel without caching */
    double save_ns;        /* PrepareModel writing the cache (one run) */
    double client_ns;      /* nnd_client_prepare_cached from the cache, as an app sees it */
    double content_ns;     /* plain PrepareModel that the content cache answers */
    double bytes;          /* model + data cache bytes */
} bench_cache;

int bench_cache_rows(bench_cache *out);
/* The floor of a verified load, in this process: both cache files read into fresh buffers
 * and BLAKE2b-hashed as the daemon does it (storage/hash.h). 0, or -1 with a message. */
int bench_read_and_hash(int mfd, int dfd, size_t msize, size_t dsize);

#endif
