/* hash: BLAKE2b (libb2) digests of cache bytes, computed on both cores, and the buffers
 * the bytes live in.
 *
 * Contract:
 * - A digest is NND_HASH_LEN bytes. The bytes are cut into NND_HASH_LEAF-byte leaves (the
 *   last may be short); each leaf is hashed with BLAKE2b-256; the digest is BLAKE2b-256 of
 *   a tag, the total length and the leaf digests in order. It depends only on the bytes,
 *   never on how many threads computed it.
 * - nnd_hash_read() reads files through their fds into fresh buffers and hashes each leaf
 *   right after reading it, while it is still in cache, on two threads (the caller's and
 *   one more). The digest is of the buffer, never of the file, so the caller can trust the
 *   buffer it checked even if the file changes afterwards. A file that ends early is an
 *   error; bytes past the asked size are not read.
 * - nnd_hash_bufs() hashes buffers already in memory the same way; nnd_hash_start() and
 *   nnd_hash_join() let the caller do other work before it joins in.
 * - nnd_buf: big buffers are anonymous mappings advised for huge pages, because first
 *   touch of fresh 4 KiB pages costs more than reading the bytes; small ones come from
 *   malloc. Either way p is 64-byte aligned and non-NULL after a successful alloc.
 */
#ifndef NND_STORAGE_HASH_H
#define NND_STORAGE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define NND_HASH_LEN  32
#define NND_HASH_LEAF (1u << 20)

typedef struct nnd_buf {
    uint8_t *p;
    size_t len;
    void *map; /* the mapping behind p, or NULL when p came from malloc */
    size_t map_len;
} nnd_buf;

/* Returns 0, or -ENOMEM. len may be 0. */
int nnd_buf_alloc(nnd_buf *b, size_t len);
void nnd_buf_free(nnd_buf *b);
/* Moves *b to the heap and returns it (NULL when out of memory; *b is then untouched);
 * nnd_buf_release() frees such a heap buffer: a release hook for nnd_memory_view. */
nnd_buf *nnd_buf_detach(nnd_buf *b);
void nnd_buf_release(void *heap_buf);

/* Digests of n (at most 8) buffers. Returns 0, or -ENOMEM. */
int nnd_hash_bufs(const uint8_t *const *p, const size_t *len, size_t n,
                  uint8_t (*digest)[NND_HASH_LEN]);
/* Reads sizes[i] bytes of fds[i] from offset 0 into bufs[i] (allocated here) and digests
 * them. Returns 0, or -errno with err set (-EIO when a file ended early); on failure no
 * buffer stays allocated. */
int nnd_hash_read(const int *fds, const size_t *sizes, size_t n, nnd_buf *bufs,
                  uint8_t (*digest)[NND_HASH_LEN], char *err, size_t errlen);
/* Reads sizes[i] bytes of fds[i] from offset 0 into bufs[i] (allocated here), without
 * hashing. Returns 0, or -errno with err set as nnd_hash_read() does; on failure no buffer
 * stays allocated. */
int nnd_buf_read(const int *fds, const size_t *sizes, size_t n, nnd_buf *bufs, char *err,
                 size_t errlen);
/* nnd_hash_bufs() in two steps, so that the caller can work meanwhile: nnd_hash_start()
 * sets a helper thread hashing the buffers (NULL when out of memory: nothing started);
 * nnd_hash_join() has the calling thread hash the leaves the helper has not reached, waits
 * for it, and returns what nnd_hash_bufs() returns, the digests in digest. The buffers must
 * stay as they are until the join. */
typedef struct nnd_hash_task nnd_hash_task;
nnd_hash_task *nnd_hash_start(const uint8_t *const *p, const size_t *len, size_t n);
int nnd_hash_join(nnd_hash_task *t, uint8_t (*digest)[NND_HASH_LEN]);
/* The digest of a cache entry: BLAKE2b-256 over a tag and the two file digests. */
void nnd_hash_combine(const uint8_t model[NND_HASH_LEN], const uint8_t data[NND_HASH_LEN],
                      uint8_t out[NND_HASH_LEN]);
/* Lower-case hex of n bytes into out (2n + 1 bytes). */
void nnd_hex(const uint8_t *bytes, size_t n, char *out);

#endif
