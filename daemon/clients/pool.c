/* SPDX-License-Identifier: Apache-2.0 */
/* pool.c: mapping client pools, and the SIGBUS guard over those mappings. See pool.h. */
#include "daemon/clients/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "daemon/base/log.h"
#include "driverhost/drvhost.h"

#ifndef DMA_BUF_MAGIC
#define DMA_BUF_MAGIC 0x444d4142 /* statfs f_type of a dma-buf fd */
#endif
#define DMA_HEAP_SYSTEM "/dev/dma_heap/system"

/* ---- SIGBUS guard -------------------------------------------------------------------- */

/* Every live mapping is registered in a fixed table the signal handler can scan without
 * locks or allocation. The size caps how many pools can be mapped daemon-wide. */
#define GUARD_SLOTS 65536

typedef struct guard_slot {
    atomic_int claimed;
    _Atomic uintptr_t base; /* published last, cleared first */
    _Atomic size_t len;
    atomic_bool damaged; /* a page was lost and replaced: the mapping no longer shows the file */
} guard_slot;

static guard_slot guard[GUARD_SLOTS];
static atomic_size_t guard_hi; /* slots at or above this index were never claimed */
static size_t page_size = 4096;
static _Thread_local volatile uint64_t faults;

static atomic_size_t guard_next; /* where the search for a free slot starts */

static int guard_add(void *base, size_t len) {
    size_t start = atomic_load(&guard_next);
    for (size_t k = 0; k < GUARD_SLOTS; k++) {
        size_t i = (start + k) % GUARD_SLOTS;
        int expect = 0;
        if (!atomic_compare_exchange_strong(&guard[i].claimed, &expect, 1)) continue;
        atomic_store(&guard[i].damaged, false);
        atomic_store(&guard[i].len, len);
        atomic_store(&guard[i].base, (uintptr_t)base);
        size_t hi = atomic_load(&guard_hi);
        while (hi < i + 1 && !atomic_compare_exchange_weak(&guard_hi, &hi, i + 1)) {
        }
        atomic_store(&guard_next, (i + 1) % GUARD_SLOTS);
        return (int)i;
    }
    return -1;
}

static void guard_remove(int i) {
    atomic_store(&guard[i].base, 0);
    atomic_store(&guard[i].len, 0);
    atomic_store(&guard[i].claimed, 0);
}

static void on_sigbus(int sig, siginfo_t *si, void *uctx) {
    (void)uctx;
    uintptr_t a = (uintptr_t)si->si_addr;
    size_t hi = atomic_load(&guard_hi);
    for (size_t i = 0; i < hi; i++) {
        uintptr_t base = atomic_load(&guard[i].base);
        size_t len = atomic_load(&guard[i].len);
        if (!base || a < base || a - base >= len) continue;
        /* The client shrank the file under us: zero pages replace the whole mapping, which
         * is damaged for good anyway, so that it stays one mapping in the kernel's count
         * (a page replaced alone would split it in three). */
        if (mmap((void *)base, len, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0) != MAP_FAILED) {
            faults = faults + 1;
            atomic_store(&guard[i].damaged, true);
            return;
        }
        break;
    }
    /* Not ours: die as if there were no handler. */
    signal(sig, SIG_DFL);
}

/* ---- budgets ----------------------------------------------------------------------------- */

struct srv_map_account {
    atomic_uint_fast64_t mapped;
    atomic_uint refs;         /* the owner's, plus one per mapping */
    _Atomic uint64_t limit;   /* changed by a reload while workers map */
    srv_map_refuse_fn refuse; /* NULL once the owner is gone */
    void *owner;
};

static atomic_uint_fast64_t mapped_total;
static uint64_t map_budget = GUARD_SLOTS;
static _Thread_local srv_map_account *current_account;

srv_map_account *srv_map_account_new(uint64_t limit, srv_map_refuse_fn refuse, void *owner) {
    srv_map_account *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    atomic_init(&a->refs, 1);
    atomic_init(&a->limit, limit);
    a->refuse = refuse;
    a->owner = owner;
    return a;
}

static void account_unref(srv_map_account *a) {
    if (a && atomic_fetch_sub(&a->refs, 1) == 1) free(a);
}

void srv_map_account_detach(srv_map_account *a) {
    if (!a) return;
    a->refuse = NULL;
    a->owner = NULL;
    if (current_account == a) current_account = NULL;
    account_unref(a);
}

void srv_map_account_set_limit(srv_map_account *a, uint64_t limit) {
    if (a) atomic_store(&a->limit, limit);
}

uint64_t srv_map_account_mapped(const srv_map_account *a) {
    return a ? atomic_load(&a->mapped) : 0;
}

void srv_pool_set_account(srv_map_account *a) {
    current_account = a;
}

uint64_t srv_pool_mapped(void) {
    return atomic_load(&mapped_total);
}

uint64_t srv_pool_map_budget(void) {
    return map_budget;
}

/* Half of vm.max_map_count, at most the guard table. */
static void read_map_budget(void) {
    FILE *f = fopen("/proc/sys/vm/max_map_count", "re");
    unsigned long long max = 0;
    if (f) {
        if (fscanf(f, "%llu", &max) != 1) max = 0;
        fclose(f);
    }
    map_budget = max ? max / 2 : GUARD_SLOTS;
    if (map_budget > GUARD_SLOTS) map_budget = GUARD_SLOTS;
    srv_log_info("mapping budget: %llu pools mapped at once (vm.max_map_count %llu)",
                 (unsigned long long)map_budget, max);
}

/* ---- dma-buf support ------------------------------------------------------------------ */

static pthread_once_t dmabuf_once = PTHREAD_ONCE_INIT;
static bool dmabuf_ok;

static void dmabuf_probe(void) {
    /* A machine with a system dma-buf heap can give clients dma-bufs; without one nobody
     * here has any, and the kind is refused. */
    int fd = open(DMA_HEAP_SYSTEM, O_RDONLY | O_CLOEXEC);
    dmabuf_ok = fd >= 0;
    if (fd >= 0) close(fd);
    srv_log_info("dma-buf pools: %s", dmabuf_ok ? "supported (" DMA_HEAP_SYSTEM ")"
                                                : "not supported (no " DMA_HEAP_SYSTEM ")");
}

bool srv_pool_dmabuf_supported(void) {
    pthread_once(&dmabuf_once, dmabuf_probe);
    return dmabuf_ok;
}

int srv_pool_guard_install(void) {
    (void)srv_pool_dmabuf_supported(); /* probe at startup, not on the first request */
    read_map_budget();
    long pg = sysconf(_SC_PAGESIZE);
    if (pg > 0) page_size = (size_t)pg;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGBUS, &sa, NULL) < 0 ? -errno : 0;
}

uint64_t srv_pool_faults(void) {
    return faults;
}

/* ---- mapping ------------------------------------------------------------------------- */

typedef struct mapping {
    void *addr;
    size_t len;
    int slot;
    int dmabuf_fd;            /* a dma-buf kept open to end CPU access at unmap; else -1 */
    uint64_t sync_flags;      /* DMA_BUF_SYNC_READ / _RW given at the start of CPU access */
    unsigned refs;            /* views handed out and not yet released */
    bool in_cache;            /* a cache entry holds it too */
    srv_map_account *account; /* who pays for it; may be NULL */
    int region;               /* its id for the driver hosts (drvhost.h); 0: none */
} mapping;

/* Gives back what counting m took. */
static void uncount(mapping *m) {
    atomic_fetch_sub(&mapped_total, 1);
    if (m->account) {
        atomic_fetch_sub(&m->account->mapped, 1);
        account_unref(m->account);
    }
}

static void unmap_now(mapping *m) {
    if (m->dmabuf_fd >= 0) {
        struct dma_buf_sync sync = {.flags = DMA_BUF_SYNC_END | m->sync_flags};
        while (ioctl(m->dmabuf_fd, DMA_BUF_IOCTL_SYNC, &sync) < 0 && errno == EINTR) {
        }
        close(m->dmabuf_fd);
    }
    if (m->region > 0) drvhost_unregister_region(m->region);
    guard_remove(m->slot);
    munmap(m->addr, m->len);
    uncount(m);
    free(m);
}

static void unmap(void *ctx) {
    mapping *m = ctx;
    if (--m->refs == 0 && !m->in_cache) unmap_now(m);
}

typedef struct cache_entry {
    dev_t dev;
    ino_t ino;
    uint64_t map_offset; /* page-aligned file offset of the mapping */
    size_t len;
    bool writable;
    uint64_t last_use;
    mapping *m; /* NULL: free entry */
} cache_entry;

struct srv_pool_cache {
    cache_entry e[SRV_POOL_CACHE_SLOTS];
    uint64_t clock;
};

srv_pool_cache *srv_pool_cache_create(void) {
    return calloc(1, sizeof(srv_pool_cache));
}

static void evict(cache_entry *ce) {
    mapping *m = ce->m;
    ce->m = NULL;
    m->in_cache = false;
    if (m->refs == 0) unmap_now(m);
}

void srv_pool_cache_free(srv_pool_cache *cache) {
    if (!cache) return;
    for (int i = 0; i < SRV_POOL_CACHE_SLOTS; i++)
        if (cache->e[i].m) evict(&cache->e[i]);
    free(cache);
}

static bool mapping_damaged(const mapping *m) {
    return atomic_load(&guard[m->slot].damaged);
}

static bool mapping_lost(void *ctx) {
    return mapping_damaged(ctx);
}

static cache_entry *cache_find(srv_pool_cache *c, const struct stat *sb, uint64_t off, size_t len,
                               bool writable) {
    for (int i = 0; c && i < SRV_POOL_CACHE_SLOTS; i++) {
        cache_entry *ce = &c->e[i];
        if (ce->m && ce->dev == sb->st_dev && ce->ino == sb->st_ino && ce->map_offset == off &&
            ce->len == len && ce->writable == writable) {
            /* Zero pages stand where the file shrank: map afresh, whatever it holds now. */
            if (!mapping_damaged(ce->m)) return ce;
            evict(ce);
        }
    }
    return NULL;
}

static void cache_insert(srv_pool_cache *c, const struct stat *sb, uint64_t off, size_t len,
                         bool writable, mapping *m) {
    cache_entry *victim = &c->e[0];
    for (int i = 0; i < SRV_POOL_CACHE_SLOTS; i++) {
        if (!c->e[i].m) {
            victim = &c->e[i];
            break;
        }
        if (c->e[i].last_use < victim->last_use) victim = &c->e[i];
    }
    if (victim->m) evict(victim);
    *victim = (cache_entry){.dev = sb->st_dev,
                            .ino = sb->st_ino,
                            .map_offset = off,
                            .len = len,
                            .writable = writable,
                            .last_use = ++c->clock,
                            .m = m};
    m->in_cache = true;
}

/* A driver-buffer pool has no bytes of its own: buffer.c binds the arguments that name
 * it. Its view points here so that location arithmetic never starts from NULL. */
static const uint8_t driver_buffer_placeholder[1];

/* The size of the file or dma-buf behind fd, or a status with err filled. */
static schema_status fd_size(int fd, const Nnd__MemoryPool *mp, uint32_t index,
                             const struct stat *sb, uint64_t *size, char *err, size_t errlen) {
    if (mp->kind == NND__POOL_KIND__POOL_DMABUF) {
        struct statfs fs;
        if (fstatfs(fd, &fs) < 0 || fs.f_type != DMA_BUF_MAGIC)
            return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                "pool %u: fd %u is not a dma-buf", index, mp->fd_index);
        off_t end = lseek(fd, 0, SEEK_END); /* a dma-buf's size, by its documented API */
        if (end < 0)
            return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                                "pool %u: cannot size dma-buf fd %u: %s", index, mp->fd_index,
                                strerror(errno));
        *size = (uint64_t)end;
        return SCHEMA_OK;
    }
    /* The HAL's rule: memory the driver cannot map fails the call with GENERAL_FAILURE. */
    if (!S_ISREG(sb->st_mode))
        return schema_failf(err, errlen, SCHEMA_GENERAL_FAILURE,
                            "pool %u: fd %u cannot be mapped: not a memfd or regular file", index,
                            mp->fd_index);
    *size = (uint64_t)sb->st_size;
    return SCHEMA_OK;
}

/* Gives up the least recently used idle mapping of the cache; false when there is none. */
static bool evict_idle(srv_pool_cache *c) {
    cache_entry *victim = NULL;
    for (int i = 0; c && i < SRV_POOL_CACHE_SLOTS; i++)
        if (c->e[i].m && c->e[i].m->refs == 0 && (!victim || c->e[i].last_use < victim->last_use))
            victim = &c->e[i];
    if (!victim) return false;
    evict(victim);
    return true;
}

/* Counts one more mapping against the budget and the current account (*account, with a
 * reference taken), or refuses it. */
static schema_status count_mapping(srv_pool_cache *cache, uint32_t index, srv_map_account **account,
                                   char *err, size_t errlen) {
    srv_map_account *a = current_account;
    for (;;) {
        bool over_budget = atomic_load(&mapped_total) >= map_budget;
        uint64_t limit = a ? atomic_load(&a->limit) : 0;
        bool over_quota = limit && atomic_load(&a->mapped) >= limit;
        if (!over_budget && !over_quota) break;
        if (evict_idle(cache)) continue;
        if (over_quota && a->refuse) {
            char why[SCHEMA_ERR_LEN];
            schema_status st = a->refuse(a->owner, limit, atomic_load(&a->mapped), why, sizeof why);
            return schema_failf(err, errlen, st, "pool %u: %s", index, why);
        }
        if (over_quota) break; /* the owner is gone: nobody to refuse for */
        return schema_failf(err, errlen, SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT,
                            "pool %u: the daemon's mapping budget (%llu, half of vm.max_map_count) "
                            "is used up",
                            index, (unsigned long long)map_budget);
    }
    atomic_fetch_add(&mapped_total, 1);
    if (a) {
        atomic_fetch_add(&a->mapped, 1);
        atomic_fetch_add(&a->refs, 1);
    }
    *account = a;
    return SCHEMA_OK;
}

schema_status srv_pool_map(const Nnd__MemoryPool *mp, uint32_t index, proto_frame_in *in,
                           bool readonly, srv_pool_cache *cache, srv_pool *out, char *err,
                           size_t errlen) {
    memset(out, 0, sizeof *out);
    switch (mp->kind) {
    case NND__POOL_KIND__POOL_MEMFD:
    case NND__POOL_KIND__POOL_MMAP_FD: break;
    case NND__POOL_KIND__POOL_DMABUF:
        if (!srv_pool_dmabuf_supported())
            return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                "pool %u: dma-buf pools are not supported on this machine (no %s)",
                                index, DMA_HEAP_SYSTEM);
        cache = NULL; /* each use brackets its CPU access with DMA_BUF_IOCTL_SYNC */
        break;
    case NND__POOL_KIND__POOL_DRIVER_BUFFER:
        if (readonly)
            return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                                "pool %u: a driver buffer cannot hold model constants", index);
        out->view = (eng_memory_view){.base = driver_buffer_placeholder, .size = 0};
        out->writable = true; /* access is decided per buffer, when arguments are bound */
        out->driver_buffer = true;
        return SCHEMA_OK;
    case NND__POOL_KIND__POOL_BURST_SLOT:
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "pool %u: a burst slot can only be named in BurstExecute", index);
    case NND__POOL_KIND__POOL_REGISTERED:
        return schema_failf(
            err, errlen, SCHEMA_INVALID_ARGUMENT,
            "pool %u: a registered memory (token 0x%016llx) can only be named in an "
            "execution",
            index, (unsigned long long)mp->token);
    default:
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "pool %u has unknown kind %d",
                            index, (int)mp->kind);
    }
    if (mp->size == 0)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "pool %u has size 0", index);
    if (mp->fd_index >= in->nfds)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "pool %u names fd %u but the message carries %zu fds", index,
                            mp->fd_index, in->nfds);
    int fd = proto_frame_take_fd(in, mp->fd_index);
    if (fd < 0)
        return schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                            "pool %u names fd %u, which another pool already uses", index,
                            mp->fd_index);

    bool dmabuf = mp->kind == NND__POOL_KIND__POOL_DMABUF;
    schema_status st = SCHEMA_INVALID_ARGUMENT;
    struct stat sb;
    uint64_t fsize = 0;
    int fl = fcntl(fd, F_GETFL);
    if (fstat(fd, &sb) < 0 || fl < 0) {
        schema_failf(err, errlen, st, "pool %u: cannot inspect fd %u: %s", index, mp->fd_index,
                     strerror(errno));
        goto out;
    }
    if ((st = fd_size(fd, mp, index, &sb, &fsize, err, errlen)) != SCHEMA_OK) goto out;
    st = SCHEMA_INVALID_ARGUMENT;
    if (mp->offset > fsize || mp->size > fsize - mp->offset) {
        schema_failf(err, errlen, st,
                     "pool %u: offset %llu + size %llu runs past the end of fd %u (%llu bytes)",
                     index, (unsigned long long)mp->offset, (unsigned long long)mp->size,
                     mp->fd_index, (unsigned long long)fsize);
        goto out;
    }
    if ((fl & O_ACCMODE) == O_WRONLY) {
        schema_failf(err, errlen, st, "pool %u: fd %u is open write-only", index, mp->fd_index);
        goto out;
    }
    /* mmap wants a page-aligned file offset: map from the page start, then step in. */
    uint64_t delta = mp->offset & (page_size - 1);
    size_t len = (size_t)(mp->size + delta);
    bool writable = !readonly && (fl & O_ACCMODE) == O_RDWR;
    /* A writable mapping made earlier stays writable, seals or not: F_SEAL_WRITE cannot be
     * added while it exists, and F_SEAL_FUTURE_WRITE spares existing mappings by design.
     * So the seals matter only when no such mapping is cached (a system call saved). */
    cache_entry *hit = writable ? cache_find(cache, &sb, mp->offset - delta, len, true) : NULL;
    if (!hit) {
        /* A memfd sealed against writes is input-only, whatever its fd's access mode. */
        int seals = dmabuf ? -1 : fcntl(fd, F_GET_SEALS);
        if (seals > 0 && (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE))) writable = false;
        hit = cache_find(cache, &sb, mp->offset - delta, len, writable);
    }
    if (hit) {
        hit->last_use = ++cache->clock;
        hit->m->refs++;
        out->view = (eng_memory_view){.base = (const uint8_t *)hit->m->addr + delta,
                                      .size = (size_t)mp->size,
                                      .release = unmap,
                                      .ctx = hit->m,
                                      .lost = mapping_lost};
        out->writable = writable;
        out->dev = (uint64_t)sb.st_dev;
        out->ino = (uint64_t)sb.st_ino;
        st = SCHEMA_OK;
        goto out;
    }
    srv_map_account *account = NULL;
    if ((st = count_mapping(cache, index, &account, err, errlen)) != SCHEMA_OK) goto out;
    st = SCHEMA_INVALID_ARGUMENT;
    void *addr = mmap(NULL, len, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd,
                      (off_t)(mp->offset - delta));
    if (addr == MAP_FAILED && writable && (errno == EPERM || errno == EACCES)) {
        /* Write-protected some other way (a read-only mount, say): inputs only. */
        writable = false;
        addr = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)(mp->offset - delta));
    }
    if (addr == MAP_FAILED) {
        uncount(&(mapping){.account = account});
        st = SCHEMA_GENERAL_FAILURE;
        schema_failf(err, errlen, st, "pool %u: cannot map fd %u: %s", index, mp->fd_index,
                     strerror(errno));
        goto out;
    }
    mapping *m = malloc(sizeof *m);
    int slot = m ? guard_add(addr, len) : -1;
    if (slot < 0) {
        free(m);
        munmap(addr, len);
        uncount(&(mapping){.account = account});
        st = SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT;
        schema_failf(err, errlen, st, "pool %u: too many pools mapped in the daemon", index);
        goto out;
    }
    *m = (mapping){
        .addr = addr, .len = len, .slot = slot, .refs = 1, .dmabuf_fd = -1, .account = account};
    /* Drivers in hosts read and write it in place: the host maps the same file. */
    if (drvhost_active())
        m->region = drvhost_register_region(fd, mp->offset - delta, addr, len, writable);
    if (dmabuf) {
        /* Bracket our CPU access so caches are coherent with devices sharing the buffer. */
        m->sync_flags = writable ? DMA_BUF_SYNC_RW : DMA_BUF_SYNC_READ;
        struct dma_buf_sync sync = {.flags = DMA_BUF_SYNC_START | m->sync_flags};
        int rc;
        while ((rc = ioctl(fd, DMA_BUF_IOCTL_SYNC, &sync)) < 0 && errno == EINTR) {
        }
        if (rc < 0) {
            st = SCHEMA_GENERAL_FAILURE;
            schema_failf(err, errlen, st, "pool %u: cannot begin CPU access to dma-buf fd %u: %s",
                         index, mp->fd_index, strerror(errno));
            unmap_now(m);
            goto out;
        }
        m->dmabuf_fd = fd;
        fd = -1; /* the mapping keeps it to end the access */
    }
    if (cache) cache_insert(cache, &sb, mp->offset - delta, len, writable, m);
    out->view = (eng_memory_view){.base = (const uint8_t *)addr + delta,
                                  .size = (size_t)mp->size,
                                  .release = unmap,
                                  .ctx = m,
                                  .lost = mapping_lost};
    out->writable = writable;
    out->dev = (uint64_t)sb.st_dev;
    out->ino = (uint64_t)sb.st_ino;
    st = SCHEMA_OK;
out:
    if (fd >= 0) close(fd); /* the mapping keeps the file alive */
    return st;
}

void srv_pool_share(const srv_pool *p, srv_pool *out) {
    *out = *p;
    if (p->view.release == unmap) ((mapping *)p->view.ctx)->refs++;
}

bool srv_pool_damaged(const srv_pool *p) {
    return p->view.release == unmap && mapping_damaged(p->view.ctx);
}

void srv_pool_release(srv_pool *p) {
    if (p->view.release) p->view.release(p->view.ctx);
    memset(p, 0, sizeof *p);
}

void srv_pools_release(srv_pool *p, size_t n) {
    for (size_t i = 0; i < n; i++)
        srv_pool_release(&p[i]);
}

schema_status srv_pools_map(Nnd__MemoryPool *const *mps, size_t n, proto_frame_in *in,
                            bool readonly, srv_pool_cache *cache, srv_pool *out, char *err,
                            size_t errlen) {
    for (size_t i = 0; i < n; i++) {
        schema_status st =
            mps[i] ? srv_pool_map(mps[i], (uint32_t)i, in, readonly, cache, &out[i], err, errlen)
                   : schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "pool %zu is empty", i);
        if (st != SCHEMA_OK) {
            srv_pools_release(out, i);
            return st;
        }
    }
    return SCHEMA_OK;
}
