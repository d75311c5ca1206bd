/* SPDX-License-Identifier: Apache-2.0 */
/* hash.c: leaf-parallel BLAKE2b over buffers and files, and huge-page buffers. See hash.h. */
#include "storage/hash.h"

#include <blake2.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BIG_BUF    (1u << 20) /* from here on buffers are mappings */
#define HUGE_PAGE  (2u << 20)
#define READ_PIECE (256u << 10) /* read this much, hash it while it is in cache */

int store_buf_alloc(store_buf *b, size_t len) {
    memset(b, 0, sizeof *b);
    if (len < BIG_BUF) {
        size_t rounded = (len + 64) & ~(size_t)63; /* aligned_alloc wants a multiple */
        b->p = aligned_alloc(64, rounded);
        if (!b->p) return -ENOMEM;
        b->len = len;
        return 0;
    }
    /* Over-map so the buffer can start on a huge-page boundary. */
    size_t map_len = len + HUGE_PAGE;
    void *m = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -ENOMEM;
    uintptr_t start = ((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
    madvise((void *)start, len, MADV_HUGEPAGE); /* advice only: fine if refused */
    b->map = m;
    b->map_len = map_len;
    b->p = (uint8_t *)start;
    b->len = len;
    return 0;
}

void store_buf_free(store_buf *b) {
    if (b->map)
        munmap(b->map, b->map_len);
    else
        free(b->p);
    memset(b, 0, sizeof *b);
}

store_buf *store_buf_detach(store_buf *b) {
    store_buf *h = malloc(sizeof *h);
    if (!h) return NULL;
    *h = *b;
    memset(b, 0, sizeof *b);
    return h;
}

void store_buf_release(void *heap_buf) {
    store_buf *b = heap_buf;
    if (!b) return;
    store_buf_free(b);
    free(b);
}

void store_hex(const uint8_t *bytes, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 15];
    }
    out[2 * n] = '\0';
}

/* ---- leaf-parallel hashing ------------------------------------------------------------ */

typedef struct seg {
    int fd;             /* read from here into dst, or -1 to hash src in place */
    const uint8_t *src; /* the bytes to hash (dst when reading) */
    uint8_t *dst;
    size_t len;
    size_t first_item; /* index of its first leaf in the job's item list */
    size_t n_leaves;
    uint8_t (*leaves)[STORE_HASH_LEN];
} seg;

typedef struct job {
    seg *segs;
    size_t n_segs, n_items;
    atomic_size_t next;
    atomic_int error;                  /* first errno seen (EIO: a file ended early) */
    uint8_t (*leaves)[STORE_HASH_LEN]; /* every segment's, in order */
} job;

static int read_full(int fd, uint8_t *dst, size_t n, size_t off) {
    while (n) {
        ssize_t r = pread(fd, dst, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return errno;
        if (r == 0) return EIO;
        dst += r, n -= (size_t)r, off += (size_t)r;
    }
    return 0;
}

static void do_leaf(job *j, seg *s, size_t leaf) {
    size_t off = leaf * STORE_HASH_LEAF;
    size_t n = s->len - off < STORE_HASH_LEAF ? s->len - off : STORE_HASH_LEAF;
    blake2b_state st;
    blake2b_init(&st, STORE_HASH_LEN);
    for (size_t k = 0; k < n; k += READ_PIECE) {
        size_t piece = n - k < READ_PIECE ? n - k : READ_PIECE;
        if (s->fd >= 0) {
            int e = read_full(s->fd, s->dst + off + k, piece, off + k);
            if (e) {
                int zero = 0;
                atomic_compare_exchange_strong(&j->error, &zero, e);
                return;
            }
        }
        blake2b_update(&st, s->src + off + k, piece);
    }
    blake2b_final(&st, s->leaves[leaf], STORE_HASH_LEN);
}

static void *worker(void *arg) {
    job *j = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= j->n_items || atomic_load(&j->error)) break;
        size_t k = 0;
        while (i >= j->segs[k].first_item + j->segs[k].n_leaves)
            k++;
        do_leaf(j, &j->segs[k], i - j->segs[k].first_item);
    }
    return NULL;
}

static void root_digest(const seg *s, uint8_t out[STORE_HASH_LEN]) {
    uint8_t head[16 + 8 + 4] = "nnd-tree-v1";
    uint64_t len = s->len;
    uint32_t leaf = STORE_HASH_LEAF;
    for (int i = 0; i < 8; i++)
        head[16 + i] = (uint8_t)(len >> (8 * i));
    for (int i = 0; i < 4; i++)
        head[24 + i] = (uint8_t)(leaf >> (8 * i));
    blake2b_state st;
    blake2b_init(&st, STORE_HASH_LEN);
    blake2b_update(&st, head, sizeof head);
    blake2b_update(&st, (const uint8_t *)s->leaves, s->n_leaves * STORE_HASH_LEN);
    blake2b_final(&st, out, STORE_HASH_LEN);
}

/* Lays out the leaves of every segment; 0, or ENOMEM. */
static int job_init(job *j, seg *segs, size_t n) {
    *j = (job){.segs = segs, .n_segs = n};
    atomic_init(&j->next, 0);
    atomic_init(&j->error, 0);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        segs[i].first_item = total;
        segs[i].n_leaves = (segs[i].len + STORE_HASH_LEAF - 1) / STORE_HASH_LEAF;
        total += segs[i].n_leaves;
    }
    j->n_items = total;
    j->leaves = malloc((total + 1) * STORE_HASH_LEN);
    if (!j->leaves) return ENOMEM;
    for (size_t i = 0; i < n; i++)
        segs[i].leaves = j->leaves + segs[i].first_item;
    return 0;
}

/* A helper for more than a leaf's worth of bytes only: a small model's two short leaves
 * cost less than starting a thread, whose wait for a CPU on a busy machine would hold up
 * the caller (the daemon's loop). */
static bool job_helped(job *j, pthread_t *helper) {
    size_t bytes = 0;
    for (size_t i = 0; i < j->n_segs; i++)
        bytes += j->segs[i].len;
    return j->n_items > 1 && bytes > STORE_HASH_LEAF &&
           pthread_create(helper, NULL, worker, j) == 0;
}

/* The digests once every leaf is done (the helper joined); frees the leaves. Returns 0 or
 * the first errno. */
static int job_finish(job *j, uint8_t (*digest)[STORE_HASH_LEN]) {
    int e = atomic_load(&j->error);
    for (size_t i = 0; !e && i < j->n_segs; i++)
        root_digest(&j->segs[i], digest[i]);
    free(j->leaves);
    return e;
}

/* Hashes every segment's leaves on this thread and, when worth it, one helper thread.
 * Returns 0 or the first errno. */
static int run_job(seg *segs, size_t n, uint8_t (*digest)[STORE_HASH_LEN]) {
    job j;
    if (job_init(&j, segs, n)) return ENOMEM;
    pthread_t helper;
    bool helped = job_helped(&j, &helper);
    worker(&j);
    if (helped) pthread_join(helper, NULL);
    return job_finish(&j, digest);
}

int store_hash_bufs(const uint8_t *const *p, const size_t *len, size_t n,
                    uint8_t (*digest)[STORE_HASH_LEN]) {
    seg segs[8];
    if (n > 8) return -EINVAL;
    for (size_t i = 0; i < n; i++)
        segs[i] = (seg){.fd = -1, .src = p[i], .len = len[i]};
    return -run_job(segs, n, digest);
}

int store_hash_read(const int *fds, const size_t *sizes, size_t n, store_buf *bufs,
                    uint8_t (*digest)[STORE_HASH_LEN], char *err, size_t errlen) {
    seg segs[8];
    if (n > 8) {
        snprintf(err, errlen, "too many files to hash (%zu)", n);
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        if (store_buf_alloc(&bufs[i], sizes[i]) < 0) {
            for (size_t k = 0; k < i; k++)
                store_buf_free(&bufs[k]);
            snprintf(err, errlen, "out of memory for %zu cache bytes", sizes[i]);
            return -ENOMEM;
        }
        segs[i] = (seg){.fd = fds[i], .src = bufs[i].p, .dst = bufs[i].p, .len = sizes[i]};
    }
    int e = run_job(segs, n, digest);
    if (e) {
        for (size_t i = 0; i < n; i++)
            store_buf_free(&bufs[i]);
        if (e == EIO)
            snprintf(err, errlen, "a cache file ended before its recorded size");
        else
            snprintf(err, errlen, "reading a cache file failed: %s", strerror(e));
        return -e;
    }
    return 0;
}

int store_buf_read(const int *fds, const size_t *sizes, size_t n, store_buf *bufs, char *err,
                   size_t errlen) {
    for (size_t i = 0; i < n; i++) {
        int e = store_buf_alloc(&bufs[i], sizes[i]) < 0 ? ENOMEM : 0;
        if (!e) e = read_full(fds[i], bufs[i].p, sizes[i], 0);
        if (!e) continue;
        for (size_t k = 0; k <= i; k++)
            store_buf_free(&bufs[k]);
        if (e == ENOMEM)
            snprintf(err, errlen, "out of memory for %zu cache bytes", sizes[i]);
        else if (e == EIO)
            snprintf(err, errlen, "a cache file ended before its recorded size");
        else
            snprintf(err, errlen, "reading a cache file failed: %s", strerror(e));
        return -e;
    }
    return 0;
}

struct store_hash_task {
    seg segs[8];
    job j;
    pthread_t helper;
    bool helped;
};

store_hash_task *store_hash_start(const uint8_t *const *p, const size_t *len, size_t n) {
    store_hash_task *t = n <= 8 ? calloc(1, sizeof *t) : NULL;
    if (!t) return NULL;
    for (size_t i = 0; i < n; i++)
        t->segs[i] = (seg){.fd = -1, .src = p[i], .len = len[i]};
    if (job_init(&t->j, t->segs, n)) {
        free(t);
        return NULL;
    }
    t->helped = job_helped(&t->j, &t->helper);
    return t;
}

int store_hash_join(store_hash_task *t, uint8_t (*digest)[STORE_HASH_LEN]) {
    worker(&t->j); /* the leaves the helper has not taken yet */
    if (t->helped) pthread_join(t->helper, NULL);
    int e = job_finish(&t->j, digest);
    free(t);
    return -e;
}

void store_hash_combine(const uint8_t model[STORE_HASH_LEN], const uint8_t data[STORE_HASH_LEN],
                        uint8_t out[STORE_HASH_LEN]) {
    uint8_t in[16 + 2 * STORE_HASH_LEN] = "nnd-cache-v1";
    memcpy(in + 16, model, STORE_HASH_LEN);
    memcpy(in + 16 + STORE_HASH_LEN, data, STORE_HASH_LEN);
    blake2b(out, in, NULL, STORE_HASH_LEN, sizeof in, 0);
}
