/* SPDX-License-Identifier: Apache-2.0 */
/* host_region: the driver host's shared regions and the SIGBUS guard over them (host.h). */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driverhost/host.h"

#define SLOTS 8192u /* a power of two */
#define TOMB  0xffffffffu

/* The guard reads slots from a signal handler: a slot's fields are set before its key is
 * published and its key cleared before they change. */
typedef struct slot {
    _Atomic uint32_t key; /* 0: empty, TOMB: deleted, else the region id */
    uint8_t *map;
    size_t map_len;
    uint64_t delta; /* the region starts at map + delta */
    uint64_t length, file_offset;
    int fd;
    bool writable;
    _Atomic uint32_t faults, repaired;
} slot;

static slot g_slots[SLOTS];
static _Atomic uint64_t g_faults;

static slot *find(uint32_t id) {
    if (id == 0 || id == TOMB) return NULL;
    for (uint32_t i = 0; i < SLOTS; i++) {
        slot *s = &g_slots[(id + i) & (SLOTS - 1)];
        uint32_t k = atomic_load(&s->key);
        if (k == id) return s;
        if (k == 0) return NULL;
    }
    return NULL;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    uintptr_t a = (uintptr_t)si->si_addr;
    for (uint32_t i = 0; i < SLOTS; i++) {
        slot *s = &g_slots[i];
        uint32_t k = atomic_load(&s->key);
        if (k == 0 || k == TOMB || !s->map || a < (uintptr_t)s->map ||
            a >= (uintptr_t)s->map + s->map_len)
            continue;
        struct stat st;
        uint64_t page_end = (s->file_offset - s->delta) + (a - (uintptr_t)s->map) + 1;
        if (fstat(s->fd, &st) == 0 && (uint64_t)st.st_size < page_end) {
            /* The client shrank its file: zero pages in place, the call fails as its error. */
            if (mmap(s->map, s->map_len, PROT_READ | PROT_WRITE,
                     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) != MAP_FAILED) {
                atomic_fetch_add(&s->faults, 1);
                atomic_fetch_add(&g_faults, 1);
                return;
            }
        }
        break;
    }
    /* Not a region's: the driver's own fault. Die of it (the proxy restarts the host). */
    signal(sig, SIG_DFL);
}

int dhh_guard_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGBUS, &sa, NULL) < 0 ? -errno : 0;
}

static int map_slot(slot *s, bool fixed) {
    long page = sysconf(_SC_PAGESIZE);
    uint64_t aligned = s->file_offset & ~(uint64_t)(page - 1);
    s->delta = s->file_offset - aligned;
    size_t len = (size_t)(s->length + s->delta);
    int flags = MAP_SHARED | (fixed ? MAP_FIXED : 0);
    void *want = fixed ? s->map : NULL;
    void *p = MAP_FAILED;
    if (s->writable) p = mmap(want, len, PROT_READ | PROT_WRITE, flags, s->fd, (off_t)aligned);
    if (p == MAP_FAILED) p = mmap(want, len, PROT_READ, flags, s->fd, (off_t)aligned);
    if (p == MAP_FAILED) return -errno;
    s->map = p, s->map_len = len;
    return 0;
}

int dhh_region_add(const dh_region_intro *in, int fd) {
    if (in->id == 0 || in->id == TOMB || in->id >= DH_REGION_INLINE || find(in->id)) {
        close(fd);
        return -EINVAL;
    }
    for (uint32_t i = 0; i < SLOTS; i++) {
        slot *s = &g_slots[(in->id + i) & (SLOTS - 1)];
        uint32_t k = atomic_load(&s->key);
        if (k != 0 && k != TOMB) continue;
        s->fd = fd, s->length = in->length, s->file_offset = in->file_offset;
        s->writable = in->writable != 0, s->map = NULL, s->map_len = 0;
        atomic_store(&s->faults, 0);
        atomic_store(&s->repaired, 0);
        int rc = in->length ? map_slot(s, false) : 0;
        if (rc < 0) {
            close(fd);
            return rc;
        }
        atomic_store(&s->key, in->id);
        return 0;
    }
    close(fd);
    return -ENOSPC;
}

void dhh_region_forget(uint32_t id) {
    slot *s = find(id);
    if (!s) return;
    atomic_store(&s->key, TOMB);
    if (s->map) munmap(s->map, s->map_len);
    close(s->fd);
    s->map = NULL;
}

bool dhh_region_covers(uint32_t region, uint64_t offset, uint64_t length, uint64_t *size) {
    slot *s = find(region);
    struct stat st;
    if (!s || fstat(s->fd, &st) < 0) return false;
    *size = (uint64_t)st.st_size;
    return s->file_offset + offset + length <= *size;
}

void *dhh_region_resolve(void *ctx, uint32_t region, uint64_t offset, uint64_t length) {
    if (region == DH_REGION_STAGING) {
        dhh_staging *st = ctx;
        if (!st || offset > st->length || length > st->length - offset) return NULL;
        return st->base + offset;
    }
    slot *s = find(region);
    if (!s || offset > s->length || length > s->length - offset || !s->map) return NULL;
    uint32_t f = atomic_load(&s->faults);
    if (f != atomic_load(&s->repaired)) {
        /* Zero pages since a shrink: map the file again where it was, once it is whole. */
        struct stat st;
        if (fstat(s->fd, &st) < 0 || (uint64_t)st.st_size < s->file_offset + s->length ||
            map_slot(s, true) < 0)
            return NULL;
        atomic_store(&s->repaired, f);
    }
    return s->map + s->delta + offset;
}

uint32_t dhh_region_faults(uint32_t region) {
    slot *s = find(region);
    return s ? atomic_load(&s->faults) : 0;
}

uint64_t dhh_faults_total(void) {
    return atomic_load(&g_faults);
}

int dhh_staging_map(int fd, dhh_staging *s) {
    struct stat st;
    s->base = NULL, s->length = 0;
    if (fstat(fd, &st) < 0) return -errno;
    if (st.st_size == 0) return 0;
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return -errno;
    s->base = p, s->length = (uint64_t)st.st_size;
    return 0;
}

void dhh_staging_unmap(dhh_staging *s) {
    if (s->base) munmap(s->base, (size_t)s->length);
    s->base = NULL, s->length = 0;
}
