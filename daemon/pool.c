/* pool.c: mapping client pools, and the SIGBUS guard over those mappings. See pool.h. */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- SIGBUS guard -------------------------------------------------------------------- */

/* Every live mapping is registered in a fixed table the signal handler can scan without
 * locks or allocation. The size caps how many pools can be mapped daemon-wide. */
#define GUARD_SLOTS 65536

typedef struct guard_slot {
    atomic_int claimed;
    _Atomic uintptr_t base; /* published last, cleared first */
    _Atomic size_t len;
} guard_slot;

static guard_slot guard[GUARD_SLOTS];
static atomic_size_t guard_hi; /* slots at or above this index were never claimed */
static size_t page_size = 4096;
static _Thread_local volatile uint64_t faults;

static int guard_add(void *base, size_t len) {
    for (size_t i = 0; i < GUARD_SLOTS; i++) {
        int expect = 0;
        if (!atomic_compare_exchange_strong(&guard[i].claimed, &expect, 1)) continue;
        atomic_store(&guard[i].len, len);
        atomic_store(&guard[i].base, (uintptr_t)base);
        size_t hi = atomic_load(&guard_hi);
        while (hi < i + 1 && !atomic_compare_exchange_weak(&guard_hi, &hi, i + 1)) {
        }
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
        /* The client shrank the file under us: put a zero page where the lost one was. */
        void *page = (void *)(a & ~(uintptr_t)(page_size - 1));
        if (mmap(page, page_size, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS,
                 -1, 0) != MAP_FAILED) {
            faults = faults + 1;
            return;
        }
        break;
    }
    /* Not ours: die as if there were no handler. */
    signal(sig, SIG_DFL);
}

int nnd_pool_guard_install(void) {
    long pg = sysconf(_SC_PAGESIZE);
    if (pg > 0) page_size = (size_t)pg;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGBUS, &sa, NULL) < 0 ? -errno : 0;
}

uint64_t nnd_pool_faults(void) { return faults; }

/* ---- mapping ------------------------------------------------------------------------- */

typedef struct mapping {
    void *addr;
    size_t len;
    int slot;
} mapping;

static void unmap(void *ctx) {
    mapping *m = ctx;
    guard_remove(m->slot);
    munmap(m->addr, m->len);
    free(m);
}

static nnd_status fail(char *err, size_t errlen, nnd_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static nnd_status fail(char *err, size_t errlen, nnd_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return st;
}

nnd_status nnd_pool_map(const Nnd__MemoryPool *mp, uint32_t index, nnd_frame_in *in,
                        bool readonly, nnd_pool *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    switch (mp->kind) {
    case NND__POOL_KIND__POOL_MEMFD:
    case NND__POOL_KIND__POOL_MMAP_FD: break;
    case NND__POOL_KIND__POOL_DMABUF:
        return fail(err, errlen, NND_GENERAL_FAILURE,
                    "pool %u: dma-buf pools are not implemented yet", index);
    case NND__POOL_KIND__POOL_DRIVER_BUFFER:
        return fail(err, errlen, NND_GENERAL_FAILURE,
                    "pool %u: driver buffers are not implemented yet", index);
    case NND__POOL_KIND__POOL_BURST_SLOT:
        return fail(err, errlen, NND_GENERAL_FAILURE,
                    "pool %u: burst slots are not implemented yet", index);
    default:
        return fail(err, errlen, NND_INVALID_ARGUMENT, "pool %u has unknown kind %d", index,
                    (int)mp->kind);
    }
    if (mp->size == 0) return fail(err, errlen, NND_INVALID_ARGUMENT, "pool %u has size 0", index);
    if (mp->fd_index >= in->nfds)
        return fail(err, errlen, NND_INVALID_ARGUMENT,
                    "pool %u names fd %u but the message carries %zu fds", index, mp->fd_index,
                    in->nfds);
    int fd = nnd_frame_take_fd(in, mp->fd_index);
    if (fd < 0)
        return fail(err, errlen, NND_INVALID_ARGUMENT,
                    "pool %u names fd %u, which another pool already uses", index, mp->fd_index);

    nnd_status st = NND_INVALID_ARGUMENT;
    struct stat sb;
    int fl = fcntl(fd, F_GETFL);
    if (fstat(fd, &sb) < 0 || fl < 0) {
        fail(err, errlen, st, "pool %u: cannot inspect fd %u: %s", index, mp->fd_index,
             strerror(errno));
        goto out;
    }
    if (!S_ISREG(sb.st_mode)) {
        fail(err, errlen, st, "pool %u: fd %u is not a memfd or regular file", index,
             mp->fd_index);
        goto out;
    }
    if (mp->offset > (uint64_t)sb.st_size || mp->size > (uint64_t)sb.st_size - mp->offset) {
        fail(err, errlen, st, "pool %u: offset %llu + size %llu runs past the end of fd %u (%lld bytes)",
             index, (unsigned long long)mp->offset, (unsigned long long)mp->size, mp->fd_index,
             (long long)sb.st_size);
        goto out;
    }
    if ((fl & O_ACCMODE) == O_WRONLY) {
        fail(err, errlen, st, "pool %u: fd %u is open write-only", index, mp->fd_index);
        goto out;
    }
    /* mmap wants a page-aligned file offset: map from the page start, then step in. */
    uint64_t delta = mp->offset & (page_size - 1);
    size_t len = (size_t)(mp->size + delta);
    bool writable = !readonly && (fl & O_ACCMODE) == O_RDWR;
    void *addr = mmap(NULL, len, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd,
                      (off_t)(mp->offset - delta));
    if (addr == MAP_FAILED && writable && (errno == EPERM || errno == EACCES)) {
        /* Sealed against writes (F_SEAL_WRITE / F_SEAL_FUTURE_WRITE): inputs only. */
        writable = false;
        addr = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)(mp->offset - delta));
    }
    if (addr == MAP_FAILED) {
        st = errno == ENOMEM ? NND_GENERAL_FAILURE : NND_INVALID_ARGUMENT;
        fail(err, errlen, st, "pool %u: cannot map fd %u: %s", index, mp->fd_index,
             strerror(errno));
        goto out;
    }
    mapping *m = malloc(sizeof *m);
    int slot = m ? guard_add(addr, len) : -1;
    if (slot < 0) {
        free(m);
        munmap(addr, len);
        st = NND_RESOURCE_EXHAUSTED_TRANSIENT;
        fail(err, errlen, st, "pool %u: too many pools mapped in the daemon", index);
        goto out;
    }
    *m = (mapping){.addr = addr, .len = len, .slot = slot};
    out->view = (nnd_memory_view){
        .base = (const uint8_t *)addr + delta, .size = (size_t)mp->size, .release = unmap, .ctx = m};
    out->writable = writable;
    st = NND_OK;
out:
    close(fd); /* the mapping keeps the file alive */
    return st;
}

void nnd_pool_release(nnd_pool *p) {
    if (p->view.release) p->view.release(p->view.ctx);
    memset(p, 0, sizeof *p);
}

void nnd_pools_release(nnd_pool *p, size_t n) {
    for (size_t i = 0; i < n; i++) nnd_pool_release(&p[i]);
}

nnd_status nnd_pools_map(Nnd__MemoryPool *const *mps, size_t n, nnd_frame_in *in, bool readonly,
                         nnd_pool *out, char *err, size_t errlen) {
    for (size_t i = 0; i < n; i++) {
        nnd_status st = mps[i] ? nnd_pool_map(mps[i], (uint32_t)i, in, readonly, &out[i], err, errlen)
                               : fail(err, errlen, NND_INVALID_ARGUMENT, "pool %zu is empty", i);
        if (st != NND_OK) {
            nnd_pools_release(out, i);
            return st;
        }
    }
    return NND_OK;
}
