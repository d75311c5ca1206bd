/* ndk_memory.c: ANeuralNetworksMemory (from an fd, or from a descriptor) and
 * ANeuralNetworksMemoryDesc. A memory from a descriptor is a buffer the daemon allocates
 * for its roles (Allocate; copies go through BufferCopyTo/From), or, when the daemon
 * cannot, a memfd of the library's own as the NNAPI runtime falls back to shared memory;
 * that needs known dimensions. See ndk_internal.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ndk_internal.h"

struct ANeuralNetworksMemoryDesc {
    bool finished;
    bool have_operand; /* set by the first role */
    int32_t type;
    float scale;
    int32_t zero_point;
    uint32_t rank; /* 0: not known (or a scalar) */
    uint32_t *dims;
    size_t n_roles;
    ndk_role *roles;
};

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

uint64_t ndk_memory_key(void) {
    static atomic_uint_fast64_t last;
    return atomic_fetch_add(&last, 1) + 1;
}

static ANeuralNetworksMemory *memory_new(void) {
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
    ANeuralNetworksMemory *m = memory_new();
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
    ANeuralNetworksMemory *m = memory_new();
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

/* ---- descriptors ---------------------------------------------------------------------- */

/* Merges dimensions b into a (rank 0: unknown); false when they contradict each other. */
static bool combine_dims(uint32_t *a_rank, uint32_t **a_dims, uint32_t b_rank,
                         const uint32_t *b_dims) {
    if (b_rank == 0) return true;
    if (*a_rank == 0) {
        uint32_t *d = malloc(sizeof *d * b_rank);
        if (!d) return false;
        memcpy(d, b_dims, sizeof *d * b_rank);
        free(*a_dims);
        *a_dims = d;
        *a_rank = b_rank;
        return true;
    }
    if (*a_rank != b_rank) return false;
    for (uint32_t i = 0; i < b_rank; i++)
        if ((*a_dims)[i] && b_dims[i] && (*a_dims)[i] != b_dims[i]) return false;
    for (uint32_t i = 0; i < b_rank; i++)
        if (!(*a_dims)[i]) (*a_dims)[i] = b_dims[i];
    return true;
}

int ANeuralNetworksMemoryDesc_create(ANeuralNetworksMemoryDesc **desc) {
    if (!desc) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *desc = calloc(1, sizeof **desc);
    return *desc ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUT_OF_MEMORY;
}

void ANeuralNetworksMemoryDesc_free(ANeuralNetworksMemoryDesc *desc) {
    if (!desc) return;
    free(desc->dims);
    free(desc->roles);
    free(desc);
}

static int add_role(ANeuralNetworksMemoryDesc *desc, const ANeuralNetworksCompilation *c,
                    bool output, uint32_t index, float frequency) {
    if (!desc || !c) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (desc->finished) return ANEURALNETWORKS_BAD_STATE;
    if (!c->finished || !c->valid) return ANEURALNETWORKS_BAD_DATA;
    const ANeuralNetworksModel *m = c->model;
    if (index >= (output ? m->n_outputs : m->n_inputs)) return ANEURALNETWORKS_BAD_DATA;
    for (size_t i = 0; i < desc->n_roles; i++)
        if (desc->roles[i].compilation == c && desc->roles[i].output == output &&
            desc->roles[i].index == index)
            return ANEURALNETWORKS_BAD_DATA;
    if (!(frequency > 0.f && frequency <= 1.f)) return ANEURALNETWORKS_BAD_DATA;
    const ndk_operand *o = output ? ndk_model_output(m, index) : ndk_model_input(m, index);
    if (desc->have_operand &&
        (o->type != desc->type || o->scale != desc->scale || o->zero_point != desc->zero_point))
        return ANEURALNETWORKS_BAD_DATA;
    uint32_t rank = desc->rank, *dims = NULL;
    if (rank) {
        if (!(dims = malloc(sizeof *dims * rank))) return ANEURALNETWORKS_OUT_OF_MEMORY;
        memcpy(dims, desc->dims, sizeof *dims * rank);
    }
    if (!combine_dims(&rank, &dims, o->rank, o->dims)) {
        free(dims);
        return ANEURALNETWORKS_BAD_DATA;
    }
    ndk_role *roles = realloc(desc->roles, sizeof *roles * (desc->n_roles + 1));
    if (!roles) {
        free(dims);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    desc->roles = roles;
    roles[desc->n_roles++] = (ndk_role){c, output, index};
    free(desc->dims);
    desc->dims = dims;
    desc->rank = rank;
    desc->have_operand = true;
    desc->type = o->type;
    desc->scale = o->scale;
    desc->zero_point = o->zero_point;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksMemoryDesc_addInputRole(ANeuralNetworksMemoryDesc *desc,
                                           const ANeuralNetworksCompilation *compilation,
                                           uint32_t index, float frequency) {
    return add_role(desc, compilation, false, index, frequency);
}

int ANeuralNetworksMemoryDesc_addOutputRole(ANeuralNetworksMemoryDesc *desc,
                                            const ANeuralNetworksCompilation *compilation,
                                            uint32_t index, float frequency) {
    return add_role(desc, compilation, true, index, frequency);
}

int ANeuralNetworksMemoryDesc_setDimensions(ANeuralNetworksMemoryDesc *desc, uint32_t rank,
                                            const uint32_t *dimensions) {
    if (!desc || (!dimensions && rank > 0)) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (desc->finished) return ANEURALNETWORKS_BAD_STATE;
    uint32_t size;
    bool tensor;
    if (desc->have_operand && ndk_type_info(desc->type, &size, &tensor) && !tensor && rank)
        return ANEURALNETWORKS_BAD_DATA;
    uint32_t r = desc->rank, *dims = NULL;
    if (r) {
        if (!(dims = malloc(sizeof *dims * r))) return ANEURALNETWORKS_OUT_OF_MEMORY;
        memcpy(dims, desc->dims, sizeof *dims * r);
    }
    if (!combine_dims(&r, &dims, rank, dimensions)) {
        free(dims);
        return ANEURALNETWORKS_BAD_DATA;
    }
    free(desc->dims);
    desc->dims = dims;
    desc->rank = r;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksMemoryDesc_finish(ANeuralNetworksMemoryDesc *desc) {
    if (!desc) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (desc->finished) return ANEURALNETWORKS_BAD_STATE;
    if (!desc->n_roles) return ANEURALNETWORKS_BAD_DATA;
    desc->finished = true;
    return ANEURALNETWORKS_NO_ERROR;
}

/* Asks the daemon for a buffer in the descriptor's roles: all their compilations must be
 * prepared on the current connection. Returns NO_ERROR with m->driver set, or a code. */
static int allocate_buffer(const ANeuralNetworksMemoryDesc *desc, ANeuralNetworksMemory *m) {
    ndk_session *s = desc->roles[0].compilation->session;
    if (!s || atomic_load(&s->dead)) return ANEURALNETWORKS_DEAD_OBJECT;
    size_t n = desc->n_roles, n_models = 0, n_in = 0, n_out = 0;
    uint64_t *models = calloc(n, sizeof *models);
    nnd_buffer_role *in = calloc(n, sizeof *in), *out = calloc(n, sizeof *out);
    int rc = models && in && out ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUT_OF_MEMORY;
    for (size_t i = 0; i < n && !rc; i++) {
        const ndk_role *r = &desc->roles[i];
        if (r->compilation->session != s) rc = ANEURALNETWORKS_OP_FAILED;
        size_t k = 0;
        while (k < n_models && models[k] != r->compilation->handle)
            k++;
        if (k == n_models) models[n_models++] = r->compilation->handle;
        nnd_buffer_role b = {.model_index = (uint32_t)k, .io_index = r->index, .probability = 1.f};
        if (r->output)
            out[n_out++] = b;
        else
            in[n_in++] = b;
    }
    if (!rc)
        rc = ndk_session_code(s, nnd_client_allocate(s->client, desc->dims, desc->rank, models,
                                                     n_models, in, n_in, out, n_out, &m->buffer,
                                                     &m->token, NULL, 0));
    if (!rc) {
        atomic_fetch_add(&s->refs, 1);
        m->session = s;
        m->driver = true;
    }
    free(models);
    free(in);
    free(out);
    return rc;
}

int ANeuralNetworksMemory_createFromDesc(const ANeuralNetworksMemoryDesc *desc,
                                         ANeuralNetworksMemory **memory) {
    if (!desc || !memory) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *memory = NULL;
    if (!desc->finished) return ANEURALNETWORKS_BAD_STATE;
    uint64_t size = ndk_type_bytes(desc->type, desc->rank, desc->dims);
    if (size == UINT64_MAX || size > SIZE_MAX) return ANEURALNETWORKS_OP_FAILED;
    ANeuralNetworksMemory *m = memory_new();
    if (!m) return ANEURALNETWORKS_OUT_OF_MEMORY;
    m->from_desc = true;
    m->type = desc->type;
    m->rank = desc->rank;
    m->dims = desc->rank ? malloc(sizeof *m->dims * desc->rank) : NULL;
    m->roles = malloc(sizeof *m->roles * desc->n_roles);
    if ((desc->rank && !m->dims) || !m->roles) {
        ndk_memory_unref(m);
        return ANEURALNETWORKS_OUT_OF_MEMORY;
    }
    if (desc->rank) memcpy(m->dims, desc->dims, sizeof *m->dims * desc->rank);
    memcpy(m->roles, desc->roles, sizeof *m->roles * desc->n_roles);
    m->n_roles = desc->n_roles;
    m->prot = PROT_READ | PROT_WRITE;
    m->size = (size_t)size; /* 0 while the shape is not known */
    /* The daemon's buffer first; failing that, as the NNAPI runtime does, shared memory,
     * which needs a known size. */
    int rc = allocate_buffer(desc, m);
    if (rc != ANEURALNETWORKS_NO_ERROR && size) {
        void *p;
        int fd = nnd_memfd_create("nnd-ndk", (size_t)size, &p);
        if (fd < 0) {
            ndk_memory_unref(m);
            return ANEURALNETWORKS_OUT_OF_MEMORY;
        }
        m->fd = fd;
        m->memfd = true;
        m->map = m->map_base = p;
        m->map_len = (size_t)size;
        rc = ANEURALNETWORKS_NO_ERROR;
    }
    if (rc != ANEURALNETWORKS_NO_ERROR) {
        ndk_memory_unref(m);
        return rc == ANEURALNETWORKS_DEAD_OBJECT ? rc : ANEURALNETWORKS_OP_FAILED;
    }
    *memory = m;
    return ANEURALNETWORKS_NO_ERROR;
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
        return ndk_session_code(
            s->session, nnd_client_buffer_copy_from(s->session->client, s->buffer, pool_kind(d),
                                                    d->fd, d->offset, size, NULL, NULL, NULL, 0));
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
    if (src == dst) return ANEURALNETWORKS_NO_ERROR;
    ANeuralNetworksMemory *s = (ANeuralNetworksMemory *)src, *d = (ANeuralNetworksMemory *)dst;
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
        else if (s->from_desc && (type != d->type || !combine_dims(&d_rank, &d_dims, rank, dims)))
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
    if (d->from_desc && attempted) { /* a failed copy leaves the destination uninitialized */
        d->initialized = rc == ANEURALNETWORKS_NO_ERROR;
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
