/* SPDX-License-Identifier: Apache-2.0 */
/* hash: BLAKE2b (libb2) digests of cache bytes, computed on both cores, and the buffers
 * the bytes live in.
 *
 * Contract:
 * - A digest is STORE_HASH_LEN bytes. The bytes are cut into STORE_HASH_LEAF-byte leaves (the
 *   last may be short); each leaf is hashed with BLAKE2b-256; the digest is BLAKE2b-256 of
 *   a tag, the total length and the leaf digests in order. It depends only on the bytes,
 *   never on how many threads computed it.
 * - store_hash_read() reads files through their fds into fresh buffers and hashes each leaf
 *   right after reading it, while it is still in cache, on two threads (the caller's and
 *   one more). The digest is of the buffer, never of the file, so the caller can trust the
 *   buffer it checked even if the file changes afterwards. A file that ends early is an
 *   error; bytes past the asked size are not read.
 * - store_hash_bufs() hashes buffers already in memory the same way; store_hash_start() and
 *   store_hash_join() let the caller do other work before it joins in.
 * - store_buf: big buffers are anonymous mappings advised for huge pages, because first
 *   touch of fresh 4 KiB pages costs more than reading the bytes; small ones come from
 *   malloc. Either way p is 64-byte aligned and non-NULL after a successful alloc.
 */
#ifndef STORE_HASH_H
#define STORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define STORE_HASH_LEN  32
#define STORE_HASH_LEAF (1u << 20)

typedef struct store_buf {
    uint8_t *p;
    size_t len;
    void *map; /* the mapping behind p, or NULL when p came from malloc */
    size_t map_len;
} store_buf;

/* Returns 0, or -ENOMEM. len may be 0. */
int store_buf_alloc(store_buf *b, size_t len);
void store_buf_free(store_buf *b);
/* Moves *b to the heap and returns it (NULL when out of memory; *b is then untouched);
 * store_buf_release() frees such a heap buffer: a release hook for eng_memory_view. */
store_buf *store_buf_detach(store_buf *b);
void store_buf_release(void *heap_buf);

/* Digests of n (at most 8) buffers. Returns 0, or -ENOMEM. */
int store_hash_bufs(const uint8_t *const *p, const size_t *len, size_t n,
                    uint8_t (*digest)[STORE_HASH_LEN]);
/* Reads sizes[i] bytes of fds[i] from offset 0 into bufs[i] (allocated here) and digests
 * them. Returns 0, or -errno with err set (-EIO when a file ended early); on failure no
 * buffer stays allocated. */
int store_hash_read(const int *fds, const size_t *sizes, size_t n, store_buf *bufs,
                    uint8_t (*digest)[STORE_HASH_LEN], char *err, size_t errlen);
/* Reads sizes[i] bytes of fds[i] from offset 0 into bufs[i] (allocated here), without
 * hashing. Returns 0, or -errno with err set as store_hash_read() does; on failure no buffer
 * stays allocated. */
int store_buf_read(const int *fds, const size_t *sizes, size_t n, store_buf *bufs, char *err,
                   size_t errlen);
/* store_hash_bufs() in two steps, so that the caller can work meanwhile: store_hash_start()
 * sets a helper thread hashing the buffers (NULL when out of memory: nothing started);
 * store_hash_join() has the calling thread hash the leaves the helper has not reached, waits
 * for it, and returns what store_hash_bufs() returns, the digests in digest. The buffers must
 * stay as they are until the join. */
typedef struct store_hash_task store_hash_task;
store_hash_task *store_hash_start(const uint8_t *const *p, const size_t *len, size_t n);
int store_hash_join(store_hash_task *t, uint8_t (*digest)[STORE_HASH_LEN]);
/* The digest of a cache entry: BLAKE2b-256 over a tag and the two file digests. */
void store_hash_combine(const uint8_t model[STORE_HASH_LEN], const uint8_t data[STORE_HASH_LEN],
                        uint8_t out[STORE_HASH_LEN]);
/* Lower-case hex of n bytes into out (2n + 1 bytes). */
void store_hex(const uint8_t *bytes, size_t n, char *out);

#endif
