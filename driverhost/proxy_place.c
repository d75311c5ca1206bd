/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_place: where a tensor crosses to a host (proxy_internal.h): in a registered region
 * as (region, offset), else at an offset of the call's staging memfd. */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "driverhost/proxy_internal.h"

#define STAGING_ALIGN 64u

void dhp_place(const void *data, size_t len, dh_arg *a, dhp_regions *regs, uint64_t *staging_len) {
    uint32_t id;
    uint64_t off;
    if (dhp_region_find(data, len, &id, &off)) {
        a->region = id, a->offset = off;
        dhp_regions_note(regs, id);
        return;
    }
    a->region = DH_REGION_STAGING;
    a->offset = (*staging_len + STAGING_ALIGN - 1) & ~(uint64_t)(STAGING_ALIGN - 1);
    *staging_len = a->offset + len;
}

int dhp_staging_make(dhp_staging *s, uint64_t length) {
    s->fd = -1, s->base = NULL, s->length = 0;
    if (!length) return 0;
    int fd = memfd_create("nnd-dh-staging", MFD_CLOEXEC);
    if (fd < 0) return -errno;
    void *p = MAP_FAILED;
    if (ftruncate(fd, (off_t)length) == 0)
        p = mmap(NULL, (size_t)length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(fd);
        return -e;
    }
    s->fd = fd, s->base = p, s->length = length;
    return 0;
}

void dhp_staging_drop(dhp_staging *s) {
    if (s->base) munmap(s->base, (size_t)s->length);
    if (s->fd >= 0) close(s->fd);
    s->fd = -1, s->base = NULL, s->length = 0;
}
