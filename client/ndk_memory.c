/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_memory.c: ANeuralNetworksMemory: from an fd, a memfd of the library's own, and the
 * copies between memories (through mappings, or through the daemon for its buffers).
 * Memories from a descriptor are made in ndk_memory_desc.c. See ndk_memory.h. */
#include "client/ndk_memory.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/ndk_keys.h"
#include "client/ndk_types.h"

ANeuralNetworksMemory *ndk_memory_ref(const ANeuralNetworksMemory *m) {
    ANeuralNetworksMemory *mm = (ANeuralNetworksMemory *)m; /* the count is not the value */
    atomic_fetch_add(&mm->refs, 1);
    return mm;
}

void ndk_memory_unref(ANeuralNetworksMemory *m) {
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1) return;
    if (m->session) { /* a daemon buffer */
        if (!atomic_load(&m->session->dead))
            ndk_session_code(m->session, nnd_client_release(m->session->client, m->buffer));
        ndk_session_put(m->session);
    }
    if (m->reg_session) {
        ndk_session_unregister(m->reg_session, m->reg_token);
        ndk_session_put(m->reg_session);
    }
    if (m->map_base) munmap(m->map_base, m->map_len);
    if (m->fd >= 0) {
        ndk_bursts_forget_key(m->key); /* no burst keeps it mapped in the daemon */
        close(m->fd);
    }
    pthread_mutex_destroy(&m->lock);
    free(m->dims);
    free(m->roles);
    free(m);
}

uint64_t ndk_memory_token(const ANeuralNetworksMemory *cm, ndk_session *s) {
    ANeuralNetworksMemory *m = (ANeuralNetworksMemory *)cm; /* the registration is no value */
    if (m->driver || m->fd < 0 || !s) return 0;
    pthread_mutex_lock(&m->lock);
    if (m->reg_session && m->reg_session != s && atomic_load(&m->reg_session->dead)) {
        ndk_session_put(m->reg_session); /* its connection is gone, and the token with it */
        m->reg_session = NULL;
        m->reg_token = 0;
    }
    if (!m->reg_session) {
        int kind = m->memfd ? NND__POOL_KIND__POOL_MEMFD : NND__POOL_KIND__POOL_MMAP_FD;
        uint64_t token = ndk_session_register(s, kind, m->fd, m->offset, m->size);
        if (token) {
            atomic_fetch_add(&s->refs, 1);
            m->reg_session = s;
            m->reg_token = token;
        }
    }
    uint64_t token = m->reg_session == s ? m->reg_token : 0;
    pthread_mutex_unlock(&m->lock);
    return token;
}

ANeuralNetworksMemory *ndk_memory_new(void) {
    ANeuralNetworksMemory *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    atomic_init(&m->refs, 1);
    m->key = ndk_memory_key();
    m->fd = -1;
    pthread_mutex_init(&m->lock, NULL);
    return m;
}

int ndk_memory_create_memfd(size_t size, ANeuralNetworksMemory **out, void **map) {
    *out = NULL;
    ANeuralNetworksMemory *m = ndk_memory_new();
    if (!m) return ANEURALNETWORKS_OUT_OF_MEMORY;
    void *p = NULL;
    int fd = nnd_memfd_create("nnd-ndk", size, &p);
    if (fd < 0) {
        ndk_memory_unref(m);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    m->fd = fd;
    m->size = size;
    m->prot = PROT_READ | PROT_WRITE;
    m->memfd = true;
    m->map = m->map_base = p;
    m->map_len = p ? size : 0;
    *out = m;
    if (map) *map = p;
    return ANEURALNETWORKS_NO_ERROR;
}

/* Maps [offset, offset + len) of fd with prot; returns the first byte (NULL on failure)
 * and the page-aligned mapping behind it. */
static uint8_t *map_range(int fd, size_t offset, size_t len, int prot, void **base,
                          size_t *base_len) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t lead = offset % page;
    void *p = mmap(NULL, len + lead, prot, MAP_SHARED, fd, (off_t)(offset - lead));
    if (p == MAP_FAILED) return NULL;
    *base = p;
    *base_len = len + lead;
    return (uint8_t *)p + lead;
}

/* The memory's bytes, mapped with its protection on first use; NULL when that fails. */
static uint8_t *memory_bytes(ANeuralNetworksMemory *m) {
    pthread_mutex_lock(&m->lock);
    if (!m->map && m->prot != PROT_NONE)
        m->map = map_range(m->fd, m->offset, m->size, m->prot, &m->map_base, &m->map_len);
    uint8_t *r = m->map;
    pthread_mutex_unlock(&m->lock);
    return r;
}

bool ndk_memory_has_role(const ANeuralNetworksMemory *m, const ANeuralNetworksCompilation *c,
                         bool output, uint32_t index) {
    for (size_t i = 0; i < m->n_roles; i++)
        if (m->roles[i].compilation == c && m->roles[i].output == output &&
            m->roles[i].index == index)
            return true;
    return false;
}

int ANeuralNetworksMemory_createFromFd(size_t size, int protect, int fd, size_t offset,
                                       ANeuralNetworksMemory **memory) {
    if (!memory) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *memory = NULL;
    if (size == 0 || fd < 0) return ANEURALNETWORKS_BAD_DATA;
    if (protect & ~(PROT_READ | PROT_WRITE)) return ANEURALNETWORKS_BAD_DATA;
    if (offset > SIZE_MAX - size) return ANEURALNETWORKS_BAD_DATA;
    struct stat st;
    if (fstat(fd, &st) < 0) return ANEURALNETWORKS_BAD_DATA;
    /* "Must not be larger than the file size": checkable for files (memfds included). */
    if (S_ISREG(st.st_mode) && (uint64_t)offset + size > (uint64_t)st.st_size)
        return ANEURALNETWORKS_BAD_DATA;
    /* Mapping once proves the fd mmap-able with this protection (a pipe or socket is not,
     * nor is a read-only fd for PROT_WRITE); nothing is touched. */
    void *base;
    size_t base_len;
    if (!map_range(fd, offset, size, protect, &base, &base_len))
        return errno == ENOMEM ? ANEURALNETWORKS_OUT_OF_MEMORY : ANEURALNETWORKS_UNMAPPABLE;
    munmap(base, base_len);
    ANeuralNetworksMemory *m = ndk_memory_new();
    if (!m) return ANEURALNETWORKS_OUT_OF_MEMORY;
    m->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0); /* the caller keeps and may close its own fd */
    if (m->fd < 0) {
        ndk_memory_unref(m);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    m->size = size;
    m->offset = offset;
    m->prot = protect;
    *memory = m;
    return ANEURALNETWORKS_NO_ERROR;
}

void ANeuralNetworksMemory_free(ANeuralNetworksMemory *memory) {
    ndk_memory_unref(memory);
}

uint64_t ndk_memory_logical_size(const ANeuralNetworksMemory *m) {
    return m->from_desc ? ndk_type_bytes(m->type, m->rank, m->dims) : m->size;
}

static int pool_kind(const ANeuralNetworksMemory *m) {
    return m->memfd ? NND__POOL_KIND__POOL_MEMFD : NND__POOL_KIND__POOL_MMAP_FD;
}

/* Moves size bytes from s to d: through mappings, or through the daemon for its buffers
 * (between two daemon buffers by way of a memfd). dims/rank: the data's shape. */
static int copy_bytes(ANeuralNetworksMemory *s, ANeuralNetworksMemory *d, size_t size,
                      const uint32_t *dims, uint32_t rank) {
    if (!s->driver && !(s->prot & PROT_READ)) return ANEURALNETWORKS_OP_FAILED;
    if (!d->driver && !(d->prot & PROT_WRITE)) return ANEURALNETWORKS_OP_FAILED;
    if (!s->driver && !d->driver) {
        uint8_t *from = memory_bytes(s), *to = memory_bytes(d);
        if (!from || !to) return ANEURALNETWORKS_OP_FAILED;
        memmove(to, from, size);
        return ANEURALNETWORKS_NO_ERROR;
    }
    if ((s->driver && atomic_load(&s->session->dead)) ||
        (d->driver && atomic_load(&d->session->dead)))
        return ANEURALNETWORKS_DEAD_OBJECT;
    if (!d->driver)
        return ndk_session_code(s->session, nnd_client_buffer_copy_from(
                                                s->session->client, s->buffer, pool_kind(d), d->fd,
                                                d->offset, size, NULL, 0, NULL, NULL, 0));
    if (!s->driver)
        return ndk_session_code(
            d->session, nnd_client_buffer_copy_to(d->session->client, d->buffer, pool_kind(s),
                                                  s->fd, s->offset, size, dims, rank, NULL, 0));
    ANeuralNetworksMemory *tmp;
    int rc = ndk_memory_create_memfd(size, &tmp, NULL);
    if (rc == ANEURALNETWORKS_NO_ERROR) rc = copy_bytes(s, tmp, size, dims, rank);
    if (rc == ANEURALNETWORKS_NO_ERROR) rc = copy_bytes(tmp, d, size, dims, rank);
    ndk_memory_unref(tmp);
    return rc;
}

int ANeuralNetworksMemory_copy(const ANeuralNetworksMemory *src, const ANeuralNetworksMemory *dst) {
    if (!src || !dst) return ANEURALNETWORKS_UNEXPECTED_NULL;
    ANeuralNetworksMemory *s = (ANeuralNetworksMemory *)src, *d = (ANeuralNetworksMemory *)dst;
    if (src == dst) { /* a copy onto itself succeeds, and so initializes, as the runtime's */
        pthread_mutex_lock(&d->lock);
        if (d->from_desc) d->initialized = true;
        pthread_mutex_unlock(&d->lock);
        return ANEURALNETWORKS_NO_ERROR;
    }
    pthread_mutex_lock(&s->lock);
    bool init = !s->from_desc || s->initialized;
    uint64_t size = ndk_memory_logical_size(s);
    uint32_t rank = s->rank, *dims = NULL;
    if (s->from_desc && rank && (dims = malloc(sizeof *dims * rank)))
        memcpy(dims, s->dims, sizeof *dims * rank);
    int32_t type = s->type;
    pthread_mutex_unlock(&s->lock);
    if (s->from_desc && rank && !dims) return ANEURALNETWORKS_OUT_OF_MEMORY;
    int rc = ANEURALNETWORKS_NO_ERROR;
    if (!init || !size) rc = ANEURALNETWORKS_BAD_DATA; /* never written, or shape unknown */

    /* The destination must hold exactly the source's bytes; a descriptor destination takes
     * the source's shape where its own is open. */
    pthread_mutex_lock(&d->lock);
    uint32_t d_rank = d->rank, *d_dims = NULL;
    if (rc == ANEURALNETWORKS_NO_ERROR && d->from_desc) {
        if (d_rank && (d_dims = malloc(sizeof *d_dims * d_rank)))
            memcpy(d_dims, d->dims, sizeof *d_dims * d_rank);
        if (d_rank && !d_dims)
            rc = ANEURALNETWORKS_OUT_OF_MEMORY;
        else if (s->from_desc &&
                 (type != d->type || !ndk_dims_combine(&d_rank, &d_dims, rank, dims)))
            rc = ANEURALNETWORKS_BAD_DATA;
        else if (ndk_type_bytes(d->type, d_rank, d_dims) != size)
            rc = ANEURALNETWORKS_BAD_DATA;
    } else if (rc == ANEURALNETWORKS_NO_ERROR && size != d->size) {
        rc = ANEURALNETWORKS_BAD_DATA;
    }
    pthread_mutex_unlock(&d->lock);

    bool attempted = rc == ANEURALNETWORKS_NO_ERROR;
    if (attempted) /* the data's shape: the source's, else what the destination knows */
        rc = copy_bytes(s, d, (size_t)size, s->from_desc ? dims : d_dims,
                        s->from_desc ? rank : d_rank);
    pthread_mutex_lock(&d->lock);
    /* Any failed copy, refused or not, leaves the destination uninitialized, as
     * RuntimeMemory::copy (Memory.cpp) has it. */
    if (d->from_desc) d->initialized = rc == ANEURALNETWORKS_NO_ERROR;
    if (d->from_desc && attempted) {
        if (rc == ANEURALNETWORKS_NO_ERROR && d_rank) { /* dst takes the source's shape */
            free(d->dims);
            d->dims = d_dims;
            d->rank = d_rank;
            d_dims = NULL;
        }
    }
    pthread_mutex_unlock(&d->lock);
    free(d_dims);
    free(dims);
    return rc;
}
