/* SPDX-License-Identifier: Apache-2.0 */
/* srv_cache.c: libnnd's compilation caching, as the NNAPI runtime does it for
 * ANeuralNetworksCompilation_setCaching. See include/nnd/nnd_wire.h.
 *
 * The app's token names the files; the daemon sees a token folded from the app's token, a
 * fingerprint of the model (the packed wire model plus every constant it references in
 * its pools) and the preference and priority, so an app that keeps its token while its
 * model changes gets a miss, never the old model. The fingerprint is XXH3 (two 128-bit
 * lanes with different seeds) where libxxhash's header is available, else BLAKE2b: it
 * only needs to tell an app's own models apart, and the daemon checks the files' contents
 * with BLAKE2b itself. */
#include "client/client_internal.h"
#include "client/record.h"
#include "nnd/nnd_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/frame.h"
#include "proto/model_bytes.h"

#ifdef CLI_HAVE_XXHASH
#define XXH_INLINE_ALL /* header-only: libnnd gains no runtime dependency */
#include <xxhash.h>
typedef struct fp_state {
    XXH3_state_t lane[2];
} fp_state;
static void fp_init(fp_state *s) {
    memset(s, 0, sizeof *s); /* XXH3 reads the old seed before resetting */
    XXH3_128bits_reset_withSeed(&s->lane[0], 0x6e6e642d746f6b31ull);
    XXH3_128bits_reset_withSeed(&s->lane[1], 0x6e6e642d746f6b32ull);
}
static void fp_update(fp_state *s, const void *p, size_t n) {
    XXH3_128bits_update(&s->lane[0], p, n);
    XXH3_128bits_update(&s->lane[1], p, n);
}
static void fp_final(fp_state *s, uint8_t out[NND_CACHE_TOKEN_BYTES]) {
    for (int i = 0; i < 2; i++) {
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits_digest(&s->lane[i]));
        memcpy(out + 16 * i, c.digest, 16);
    }
}
#else
#include <blake2.h>
typedef struct fp_state {
    blake2b_state st;
} fp_state;
static void fp_init(fp_state *s) {
    blake2b_init(&s->st, NND_CACHE_TOKEN_BYTES);
}
static void fp_update(fp_state *s, const void *p, size_t n) {
    blake2b_update(&s->st, p, n);
}
static void fp_final(fp_state *s, uint8_t out[NND_CACHE_TOKEN_BYTES]) {
    blake2b_final(&s->st, out, NND_CACHE_TOKEN_BYTES);
}
#endif

#define READ_CHUNK (1u << 20)

/* protobuf-c packs the model straight into the fingerprint, without a copy. */
typedef struct fp_buffer {
    ProtobufCBuffer base;
    fp_state *s;
} fp_buffer;

static void fp_append(ProtobufCBuffer *b, size_t len, const uint8_t *data) {
    fp_update(((fp_buffer *)b)->s, data, len);
}

/* Feeds the bytes of every CONSTANT_REFERENCE operand of graph g, read from its pool's fd. */
static int fp_graph_constants(fp_state *s, const Nnd__Model *m, const Nnd__Subgraph *g,
                              const int *pool_fds, size_t n_pool_fds, uint8_t **buf) {
    for (size_t i = 0; g && i < g->n_operands; i++) {
        const Nnd__Operand *o = g->operands[i];
        if (o->lifetime != NND__OPERAND_LIFE_TIME__CONSTANT_REFERENCE) continue;
        const Nnd__DataLocation *l = o->location;
        if (!l || l->pool_index >= m->n_pools) return -1;
        const Nnd__MemoryPool *p = m->pools[l->pool_index];
        if ((p->kind != NND__POOL_KIND__POOL_MEMFD && p->kind != NND__POOL_KIND__POOL_MMAP_FD) ||
            p->fd_index >= n_pool_fds || l->offset > p->size || l->length > p->size - l->offset)
            return -1;
        if (!*buf && !(*buf = malloc(READ_CHUNK))) return -1;
        uint64_t at = p->offset + l->offset, left = l->length;
        while (left) {
            size_t want = left < READ_CHUNK ? (size_t)left : READ_CHUNK;
            ssize_t n = pread(pool_fds[p->fd_index], *buf, want, (off_t)at);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return -1;
            fp_update(s, *buf, (size_t)n);
            at += (uint64_t)n, left -= (uint64_t)n;
        }
    }
    return 0;
}

/* The constants in pools of every graph: the main one, then each referenced subgraph. */
static int fp_constants(fp_state *s, const Nnd__Model *m, const int *pool_fds, size_t n_pool_fds) {
    uint8_t *buf = NULL;
    int rc = fp_graph_constants(s, m, m->main, pool_fds, n_pool_fds, &buf);
    for (size_t r = 0; r < m->n_referenced && rc == 0; r++)
        rc = fp_graph_constants(s, m, m->referenced[r], pool_fds, n_pool_fds, &buf);
    free(buf);
    return rc;
}

int nnd_cache_token(const Nnd__Model *model, const int *pool_fds, size_t n_pool_fds, int preference,
                    int priority, const uint8_t app_token[NND_CACHE_TOKEN_BYTES],
                    uint8_t out[NND_CACHE_TOKEN_BYTES]) {
    fp_state s;
    fp_init(&s);
    static const char tag[16] = "nnd-token-v1";
    int32_t knobs[2] = {preference, priority};
    fp_update(&s, tag, sizeof tag);
    fp_update(&s, app_token, NND_CACHE_TOKEN_BYTES);
    fp_update(&s, knobs, sizeof knobs);
    fp_buffer b = {.base = {.append = fp_append}, .s = &s};
    protobuf_c_message_pack_to_buffer(&model->base, &b.base);
    if (fp_constants(&s, model, pool_fds, n_pool_fds) < 0) return -1;
    fp_final(&s, out);
    return 0;
}

/* ---- calls ----------------------------------------------------------------------------- */

/* GetNumberOfCacheFilesNeeded with the daemon's save limit. With remembered, the answer
 * a call on this connection got before, if any: it holds for the daemon's life, and a
 * connection never outlives its daemon. Each answer asked for is remembered. */
static int cache_files_answer(nnd_client *c, bool remembered, uint32_t *model_files,
                              uint32_t *data_files, uint64_t *save_max_bytes, char *err,
                              size_t errlen) {
    pthread_mutex_lock(&c->lock);
    bool known = remembered && c->cache_files_known;
    *model_files = c->cache_model_files, *data_files = c->cache_data_files;
    *save_max_bytes = c->cache_save_max_bytes;
    pthread_mutex_unlock(&c->lock);
    if (known) return 0;
    Nnd__GetNumberOfCacheFilesNeeded g = NND__GET_NUMBER_OF_CACHE_FILES_NEEDED__INIT;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_GET_NUMBER_OF_CACHE_FILES_NEEDED;
    req.get_number_of_cache_files_needed = &g;
    Nnd__Reply *r;
    *model_files = *data_files = 0;
    int st = cli_simple_call(c, &req, NULL, 0, NND__REPLY__RESULT_CACHE_FILES, &r, err, errlen);
    if (st != 0) return st;
    *model_files = r->cache_files->model_cache;
    *data_files = r->cache_files->data_cache;
    *save_max_bytes = r->cache_files->save_max_bytes;
    nnd__reply__free_unpacked(r, NULL);
    pthread_mutex_lock(&c->lock);
    c->cache_model_files = *model_files, c->cache_data_files = *data_files;
    c->cache_save_max_bytes = *save_max_bytes;
    c->cache_files_known = true;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

int nnd_client_cache_files_needed(nnd_client *c, uint32_t *model_files, uint32_t *data_files,
                                  char *err, size_t errlen) {
    uint64_t save_max;
    return cache_files_answer(c, false, model_files, data_files, &save_max, err, errlen);
}

int nnd_client_prepare_from_cache(nnd_client *c, const uint8_t token[NND_CACHE_TOKEN_BYTES],
                                  int model_fd, int data_fd, int priority, uint64_t deadline_ns,
                                  uint64_t *handle, char *err, size_t errlen) {
    uint32_t mi = 0, di = 1;
    Nnd__PrepareModelFromCache p = NND__PREPARE_MODEL_FROM_CACHE__INIT;
    p.deadline_ns = deadline_ns;
    p.priority = (Nnd__Priority)priority;
    p.n_model_cache_fds = 1, p.model_cache_fds = &mi;
    p.n_data_cache_fds = 1, p.data_cache_fds = &di;
    p.token.data = (uint8_t *)token;
    p.token.len = NND_CACHE_TOKEN_BYTES;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL_FROM_CACHE;
    req.prepare_model_from_cache = &p;
    int fds[2] = {model_fd, data_fd};
    Nnd__Reply *r;
    int st = cli_simple_call(c, &req, fds, 2, NND__REPLY__RESULT_PREPARED, &r, err, errlen);
    if (st != 0) return st;
    *handle = r->prepared->handle;
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

/* The devices a compilation may use, as PrepareModel names them. */
typedef struct device_set {
    const char *const *names;
    size_t n;
} device_set;

static int prepare_saving(nnd_client *c, device_set devices, const Nnd__Model *model,
                          const int *pool_fds, size_t n_pool_fds, int preference, int priority,
                          uint64_t deadline_ns, const uint8_t token[NND_CACHE_TOKEN_BYTES],
                          int model_fd, int data_fd, uint64_t *handle, char *err, size_t errlen) {
    int fds[PROTO_FRAME_MAX_FDS];
    if (n_pool_fds) memcpy(fds, pool_fds, n_pool_fds * sizeof *fds);
    fds[n_pool_fds] = model_fd;
    fds[n_pool_fds + 1] = data_fd;
    uint32_t mi = (uint32_t)n_pool_fds, di = (uint32_t)n_pool_fds + 1;
    Nnd__PrepareModel p = NND__PREPARE_MODEL__INIT;
    p.n_devices = devices.n;
    p.devices = (char **)devices.names;
    p.model = (Nnd__Model *)model;
    p.preference = (Nnd__ExecutionPreference)preference;
    p.priority = (Nnd__Priority)priority;
    p.deadline_ns = deadline_ns;
    p.n_model_cache_fds = 1, p.model_cache_fds = &mi;
    p.n_data_cache_fds = 1, p.data_cache_fds = &di;
    p.token.data = (uint8_t *)token;
    p.token.len = NND_CACHE_TOKEN_BYTES;
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &p;
    Nnd__Reply *r;
    int st =
        cli_simple_call(c, &req, fds, n_pool_fds + 2, NND__REPLY__RESULT_PREPARED, &r, err, errlen);
    if (st != 0) return st;
    *handle = r->prepared->handle;
    nnd__reply__free_unpacked(r, NULL);
    return 0;
}

int nnd_cache_paths(const char *cache_dir, const uint8_t token[NND_CACHE_TOKEN_BYTES],
                    char *model_path, char *data_path, size_t len) {
    static const char digits[] = "0123456789abcdef";
    char hex[2 * NND_CACHE_TOKEN_BYTES + 1];
    for (int i = 0; i < NND_CACHE_TOKEN_BYTES; i++) {
        hex[2 * i] = digits[token[i] >> 4];
        hex[2 * i + 1] = digits[token[i] & 15];
    }
    hex[2 * NND_CACHE_TOKEN_BYTES] = '\0';
    int a = snprintf(model_path, len, "%s/nnd-%s.model", cache_dir, hex);
    int b = snprintf(data_path, len, "%s/nnd-%s.data", cache_dir, hex);
    return a < 0 || b < 0 || (size_t)a >= len || (size_t)b >= len ? -ENAMETOOLONG : 0;
}

/* The folded token with the device names folded in as well (none named: unchanged, so
 * the tokens of callers that name no devices stay what they were). */
static void fold_devices(device_set devices, uint8_t token[NND_CACHE_TOKEN_BYTES]) {
    if (!devices.n) return;
    fp_state s;
    fp_init(&s);
    static const char tag[16] = "nnd-devices-v1";
    fp_update(&s, tag, sizeof tag);
    fp_update(&s, token, NND_CACHE_TOKEN_BYTES);
    for (size_t i = 0; i < devices.n; i++)
        fp_update(&s, devices.names[i], strlen(devices.names[i]) + 1);
    fp_final(&s, token);
}

int nnd_client_prepare_cached(nnd_client *c, const Nnd__Model *model, const int *pool_fds,
                              size_t n_pool_fds, int preference, int priority, uint64_t deadline_ns,
                              const char *cache_dir, const uint8_t token[NND_CACHE_TOKEN_BYTES],
                              uint64_t *handle, bool *from_cache_out, char *err, size_t errlen) {
    return nnd_client_prepare_cached_on(c, NULL, 0, model, pool_fds, n_pool_fds, preference,
                                        priority, deadline_ns, cache_dir, token, handle,
                                        from_cache_out, err, errlen);
}

int nnd_client_prepare_cached_on(nnd_client *c, const char *const *device_names, size_t n_devices,
                                 const Nnd__Model *model, const int *pool_fds, size_t n_pool_fds,
                                 int preference, int priority, uint64_t deadline_ns,
                                 const char *cache_dir, const uint8_t token[NND_CACHE_TOKEN_BYTES],
                                 uint64_t *handle, bool *from_cache_out, char *err, size_t errlen) {
    device_set devices = {device_names, device_names ? n_devices : 0};
    *handle = 0;
    if (from_cache_out) *from_cache_out = false;
    uint32_t n_model = 0, n_data = 0;
    uint64_t save_max = 0;
    int st = cache_files_answer(c, true, &n_model, &n_data, &save_max, err, errlen);
    if (st < 0) return st;
    char model_path[4096], data_path[4096];
    uint8_t folded[NND_CACHE_TOKEN_BYTES];
    int model_fd = -1, data_fd = -1;
    /* Whatever stands in the way of caching costs the cache, never the compilation. */
    /* So does a model the daemon would not save (over its save_max_bytes): it compiles as
     * without caching, its constants never read for a fingerprint. */
    bool caching =
        st == 0 && n_model == 1 && n_data == 1 && cache_dir && token &&
        n_pool_fds + 2 < PROTO_FRAME_MAX_FDS &&
        (!save_max || proto_wire_constant_bytes(model) <= save_max) &&
        nnd_cache_paths(cache_dir, token, model_path, data_path, sizeof model_path) == 0 &&
        nnd_cache_token(model, pool_fds, n_pool_fds, preference, priority, token, folded) == 0;
    if (caching) {
        fold_devices(devices, folded);
        model_fd = open(model_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        data_fd = open(data_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        caching = model_fd >= 0 && data_fd >= 0;
    }
    if (!caching) {
        if (model_fd >= 0) close(model_fd);
        if (data_fd >= 0) close(data_fd);
        return nnd_client_prepare_on(c, devices.names, devices.n, model, pool_fds, n_pool_fds,
                                     preference, priority, deadline_ns, handle, err, errlen);
    }
    struct stat ms, ds;
    bool saved =
        fstat(model_fd, &ms) == 0 && fstat(data_fd, &ds) == 0 && ms.st_size > 0 && ds.st_size > 0;
    st = -1;
    if (saved) {
        st = nnd_client_prepare_from_cache(c, folded, model_fd, data_fd, priority, deadline_ns,
                                           handle, err, errlen);
        if (st == 0 && from_cache_out) *from_cache_out = true;
    }
    if (st > 0 || !saved) /* any refusal: compile, and let the daemon rewrite the files */
        st = prepare_saving(c, devices, model, pool_fds, n_pool_fds, preference, priority,
                            deadline_ns, folded, model_fd, data_fd, handle, err, errlen);
    cli_record_prepared(c, *handle, model, pool_fds, n_pool_fds, st, err);
    close(model_fd);
    close(data_fd);
    return st;
}
