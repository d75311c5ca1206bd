/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_alloc.c: see xnn_alloc.h. */
#include "engine/backends/xnnpack/xnn_alloc.h"

#include "engine/engine.h"
#include "engine/base/footprint.h"

#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <xnnpack.h>

#if ENG_XNN_MAPS_BLOCKS
#define BIG_BLOCK ENG_XNN_BIG_BLOCK
#else
#define BIG_BLOCK SIZE_MAX /* every block from the heap (xnn_alloc.h) */
#endif

#define HUGE_PAGE  (2u << 20)
#define PAGE       4096u
#define KEEP_SLOTS 64
#define MAGIC_HEAP 0x6e6e6458484541ull /* "nndXHEA" */
#define MAGIC_MAP  0x6e6e64584d4150ull /* "nndXMAP" */

/* Sits right below the pointer XNNPACK gets, inside the block's aligned prefix. */
typedef struct block_head {
    void *base;     /* what posix_memalign or mmap returned */
    size_t map_len; /* of the mapping; 0 for a heap block */
    uint64_t magic;
    uint64_t charged; /* what the block counts in a model's footprint (footprint.h) */
} block_head;

typedef struct kept_block {
    void *base;
    size_t map_len;
} kept_block;

static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;
static kept_block kept[KEEP_SLOTS];
static size_t n_kept, kept_bytes, live_bytes;

static size_t prefix_for(size_t alignment) {
    return alignment < 64 ? 64 : alignment;
}

/* A mapping of len bytes (a multiple of PAGE), 2 MiB-aligned when it spans one, so that
 * huge pages can back it. */
static void *map_block(size_t len) {
    size_t extra = len >= HUGE_PAGE ? HUGE_PAGE : 0;
    uint8_t *p =
        mmap(NULL, len + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    if (extra) {
        uintptr_t at = ((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
        size_t head = at - (uintptr_t)p;
        if (head) munmap(p, head);
        if (extra - head) munmap((uint8_t *)at + len, extra - head);
        p = (uint8_t *)at;
        madvise(p, len, MADV_HUGEPAGE);
    }
    return p;
}

/* A kept mapping of between *len and a quarter more, taken out of the keep (*len set to
 * its length); else NULL. Either way the block about to exist is counted as live. */
static void *take_kept(size_t *len_io) {
    size_t len = *len_io;
    void *got = NULL;
    pthread_mutex_lock(&keep_lock);
    live_bytes += len;
    size_t best = n_kept;
    for (size_t i = 0; i < n_kept; i++)
        if (kept[i].map_len >= len && kept[i].map_len - len <= len / 4 &&
            (best == n_kept || kept[i].map_len < kept[best].map_len))
            best = i;
    if (best < n_kept) {
        got = kept[best].base;
        *len_io = kept[best].map_len;
        live_bytes += kept[best].map_len - len;
        kept_bytes -= kept[best].map_len;
        memmove(&kept[best], &kept[best + 1], (--n_kept - best) * sizeof *kept);
    }
    pthread_mutex_unlock(&keep_lock);
    return got;
}

/* Keeps a freed mapping, making room by unmapping those kept longest (the keep is in the
 * order blocks were freed); one larger than the whole keep is unmapped at once. */
static void keep_or_unmap(void *base, size_t len) {
    kept_block out[KEEP_SLOTS];
    size_t n_out = 0;
    pthread_mutex_lock(&keep_lock);
    live_bytes -= len;
    bool keep = len <= ENG_XNN_KEEP_BYTES;
    while (keep && (n_kept == KEEP_SLOTS || kept_bytes + len > ENG_XNN_KEEP_BYTES)) {
        out[n_out++] = kept[0];
        kept_bytes -= kept[0].map_len;
        memmove(&kept[0], &kept[1], --n_kept * sizeof *kept);
    }
    if (keep) {
        kept[n_kept++] = (kept_block){base, len};
        kept_bytes += len;
    }
    pthread_mutex_unlock(&keep_lock);
    for (size_t i = 0; i < n_out; i++)
        munmap(out[i].base, out[i].map_len);
    if (!keep) munmap(base, len);
}

static void *aligned_allocate(void *ctx, size_t alignment, size_t size) {
    (void)ctx;
    size_t prefix = prefix_for(alignment);
    if (size > SIZE_MAX - prefix - PAGE) return NULL;
    void *base;
    size_t map_len = 0;
    if (size >= BIG_BLOCK) {
        map_len = (size + prefix + PAGE - 1) & ~(size_t)(PAGE - 1);
        base = take_kept(&map_len);
        if (!base && !(base = map_block(map_len))) {
            pthread_mutex_lock(&keep_lock);
            live_bytes -= map_len;
            pthread_mutex_unlock(&keep_lock);
            return NULL;
        }
    } else if (posix_memalign(&base, prefix, size + prefix) != 0) {
        return NULL;
    }
    uint8_t *p = (uint8_t *)base + prefix;
    block_head *h = (block_head *)p - 1;
    size_t charged = map_len ? map_len : size + prefix;
    *h = (block_head){.base = base,
                      .map_len = map_len,
                      .magic = map_len ? MAGIC_MAP : MAGIC_HEAP,
                      .charged = charged};
    eng_footprint_add((ssize_t)charged);
    return p;
}

static void aligned_deallocate(void *ctx, void *p) {
    (void)ctx;
    if (!p) return;
    block_head h = *((block_head *)p - 1);
    if (h.magic == MAGIC_MAP || h.magic == MAGIC_HEAP) eng_footprint_add(-(ssize_t)h.charged);
    if (h.magic == MAGIC_MAP)
        keep_or_unmap(h.base, h.map_len);
    else if (h.magic == MAGIC_HEAP)
        free(h.base);
    else
        abort(); /* not a block of ours: memory is corrupt */
}

static void *allocate(void *ctx, size_t size) {
    (void)ctx;
    void *p = malloc(size);
    eng_footprint_add_block(p);
    return p;
}

static void *reallocate(void *ctx, void *p, size_t size) {
    (void)ctx;
    size_t was = p ? malloc_usable_size(p) : 0;
    void *q = realloc(p, size);
    if (q) {
        eng_footprint_add(-(ssize_t)was);
        eng_footprint_add_block(q);
    }
    return q;
}

static void deallocate(void *ctx, void *p) {
    (void)ctx;
    if (p) eng_footprint_add(-(ssize_t)malloc_usable_size(p));
    free(p);
}

static const struct xnn_allocator allocator = {
    .allocate = allocate,
    .reallocate = reallocate,
    .deallocate = deallocate,
    .aligned_allocate = aligned_allocate,
    .aligned_deallocate = aligned_deallocate,
};

const struct xnn_allocator *eng_xnn_allocator(void) {
    return &allocator;
}

void eng_trim(void) {
    kept_block out[KEEP_SLOTS];
    pthread_mutex_lock(&keep_lock);
    size_t n = n_kept;
    memcpy(out, kept, n * sizeof *out);
    n_kept = kept_bytes = 0;
    pthread_mutex_unlock(&keep_lock);
    for (size_t i = 0; i < n; i++)
        munmap(out[i].base, out[i].map_len);
}

size_t eng_kept_bytes(void) {
    pthread_mutex_lock(&keep_lock);
    size_t n = kept_bytes;
    pthread_mutex_unlock(&keep_lock);
    return n;
}

size_t eng_mapped_bytes(void) {
    pthread_mutex_lock(&keep_lock);
    size_t n = live_bytes;
    pthread_mutex_unlock(&keep_lock);
    return n;
}
