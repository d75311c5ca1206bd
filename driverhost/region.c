/* SPDX-License-Identifier: Apache-2.0 */
/* region: the proxy's registry of shared regions (drvhost.h): memory the daemon mapped
 * from an fd, which a host can map too, so a tensor in it crosses as (region, offset). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driverhost/proxy_internal.h"

typedef struct region {
    uint32_t id;
    int fd;
    bool writable;
    uint64_t file_offset;
    uintptr_t base;
    size_t length;
} region;

/* Sorted by base; regions do not overlap (each is a mapping of its own). */
static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER;
static region *g_regions;
static size_t g_n, g_cap;
static uint32_t g_next_id;
static void (*g_forget)(uint32_t id); /* the proxy's: hosts that mapped a region forget it */

void dhp_regions_on_forget(void (*fn)(uint32_t id)) {
    g_forget = fn;
}

/* The first region whose end is past p. */
static size_t lower(uintptr_t p) {
    size_t lo = 0, hi = g_n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (g_regions[mid].base + g_regions[mid].length <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int drvhost_register_region(int fd, uint64_t file_offset, const void *base, size_t length,
                            bool writable) {
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (dup < 0) return -errno;
    int mode = fcntl(fd, F_GETFL);
    bool rw = writable && mode >= 0 && (mode & O_ACCMODE) == O_RDWR;
    region r = {0, dup, rw, file_offset, (uintptr_t)base, length};
    pthread_rwlock_wrlock(&g_lock);
    if (g_n == g_cap) {
        size_t cap = g_cap ? g_cap * 2 : 64;
        region *n = realloc(g_regions, cap * sizeof *n);
        if (!n) {
            pthread_rwlock_unlock(&g_lock);
            close(dup);
            return -ENOMEM;
        }
        g_regions = n, g_cap = cap;
    }
    if (++g_next_id >= DH_REGION_INLINE) g_next_id = 1; /* after four billion: wraps */
    r.id = g_next_id;
    size_t at = lower(r.base);
    memmove(&g_regions[at + 1], &g_regions[at], (g_n - at) * sizeof *g_regions);
    g_regions[at] = r;
    g_n++;
    pthread_rwlock_unlock(&g_lock);
    return (int)r.id;
}

void drvhost_unregister_region(int id) {
    int fd = -1;
    pthread_rwlock_wrlock(&g_lock);
    for (size_t i = 0; i < g_n; i++)
        if (g_regions[i].id == (uint32_t)id) {
            fd = g_regions[i].fd;
            memmove(&g_regions[i], &g_regions[i + 1], (g_n - i - 1) * sizeof *g_regions);
            g_n--;
            break;
        }
    pthread_rwlock_unlock(&g_lock);
    if (fd < 0) return;
    close(fd);
    if (g_forget) g_forget((uint32_t)id);
}

bool dhp_region_find(const void *p, size_t len, uint32_t *id, uint64_t *offset) {
    uintptr_t a = (uintptr_t)p;
    bool found = false;
    pthread_rwlock_rdlock(&g_lock);
    size_t i = lower(a);
    if (i < g_n && g_regions[i].base <= a && len <= g_regions[i].length - (a - g_regions[i].base)) {
        *id = g_regions[i].id;
        *offset = a - g_regions[i].base;
        found = true;
    }
    pthread_rwlock_unlock(&g_lock);
    return found;
}

void dhp_regions_note(dhp_regions *r, uint32_t id) {
    for (uint32_t i = 0; i < r->n; i++)
        if (r->ids[i] == id) return;
    if (r->n < sizeof r->ids / sizeof r->ids[0])
        r->ids[r->n++] = id;
    else
        r->overflow = true;
}

/* ---- what each host knows (send_mu held) ---- */

static size_t known_at(drvhost *h, uint32_t id) {
    size_t lo = 0, hi = h->n_known;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->known[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool dhp_known(drvhost *h, uint32_t id) {
    size_t i = known_at(h, id);
    return i < h->n_known && h->known[i] == id;
}

void dhp_known_add(drvhost *h, uint32_t id) {
    if (dhp_known(h, id)) return;
    if (h->n_known == h->cap_known) {
        size_t cap = h->cap_known ? h->cap_known * 2 : 64;
        uint32_t *n = realloc(h->known, cap * sizeof *n);
        if (!n) return; /* introduced again next time: harmless, refused as a duplicate */
        h->known = n, h->cap_known = cap;
    }
    size_t i = known_at(h, id);
    memmove(&h->known[i + 1], &h->known[i], (h->n_known - i) * sizeof *h->known);
    h->known[i] = id;
    h->n_known++;
}

void dhp_known_remove(drvhost *h, uint32_t id) {
    size_t i = known_at(h, id);
    if (i >= h->n_known || h->known[i] != id) return;
    memmove(&h->known[i], &h->known[i + 1], (h->n_known - i - 1) * sizeof *h->known);
    h->n_known--;
}

static int send_intros(drvhost *h, dh_region_intro *in, int *fds, uint32_t n,
                       uint64_t deadline_ns) {
    if (!n) return 0;
    dh_msg_header hd = {.type = DH_MSG_REGIONS};
    int rc = dh_send(h->sock, &hd, in, n * sizeof *in, fds, n, -1, deadline_ns);
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        dhp_known_add(h, in[i].id);
    return rc;
}

int dhp_regions_introduce(drvhost *h, const dhp_regions *r, uint64_t deadline_ns) {
    dh_region_intro in[DH_MAX_REGIONS_MSG];
    int fds[DH_MAX_REGIONS_MSG];
    uint32_t n = 0;
    int rc = 0;
    /* The fds are used under the read lock: an unregister cannot close them meanwhile. */
    pthread_rwlock_rdlock(&g_lock);
    for (size_t i = 0; i < g_n && rc == 0; i++) {
        const region *g = &g_regions[i];
        bool wanted = r->overflow;
        for (uint32_t k = 0; !wanted && k < r->n; k++)
            wanted = r->ids[k] == g->id;
        if (!wanted || dhp_known(h, g->id)) continue;
        in[n] = (dh_region_intro){g->id, g->writable, g->file_offset, g->length};
        fds[n++] = g->fd;
        if (n == DH_MAX_REGIONS_MSG) rc = send_intros(h, in, fds, n, deadline_ns), n = 0;
    }
    if (rc == 0) rc = send_intros(h, in, fds, n, deadline_ns);
    pthread_rwlock_unlock(&g_lock);
    return rc;
}
