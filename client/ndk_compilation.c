/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_compilation.c: ANeuralNetworksCompilation (PrepareModel over the shared connection,
 * or nnd_client_prepare_cached with a cache directory and token) and the staging memfds
 * its executions borrow for pointer arguments. Preference, priority and the timeout (as
 * a deadline) are carried to the daemon. See ndk_compilation.h. */
#include "client/ndk_compilation.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client/ndk_keys.h"
#include "client/ndk_model.h"

static int create(ANeuralNetworksModel *model, const ANeuralNetworksDevice *const *devices,
                  uint32_t n_devices, ANeuralNetworksCompilation **out) {
    if (!model->finished || model->invalid) return ANEURALNETWORKS_BAD_STATE;
    ANeuralNetworksCompilation *c = calloc(1, sizeof *c);
    if (!c) return ANEURALNETWORKS_OUT_OF_MEMORY;
    c->model = model;
    c->explicit_devices = devices != NULL;
    c->n_devices = n_devices;
    for (uint32_t i = 0; devices && i < n_devices; i++)
        c->device_names[i] = ndk_device_name(devices[i]);
    c->preference = ANEURALNETWORKS_PREFER_FAST_SINGLE_ANSWER;
    c->priority = ANEURALNETWORKS_PRIORITY_DEFAULT;
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_create(ANeuralNetworksModel *model,
                                      ANeuralNetworksCompilation **compilation) {
    if (!model || !compilation) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *compilation = NULL;
    return create(model, NULL, 1, compilation);
}

int ANeuralNetworksCompilation_createForDevices(ANeuralNetworksModel *model,
                                                const ANeuralNetworksDevice *const *devices,
                                                uint32_t numDevices,
                                                ANeuralNetworksCompilation **compilation) {
    if (!model || !devices || !compilation) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *compilation = NULL;
    if (!numDevices || numDevices > NDK_MAX_DEVICES) return ANEURALNETWORKS_BAD_DATA;
    for (uint32_t i = 0; i < numDevices; i++) {
        if (!devices[i]) return ANEURALNETWORKS_UNEXPECTED_NULL;
        if (!ndk_is_device(devices[i])) return ANEURALNETWORKS_BAD_DATA;
        for (uint32_t j = i + 1; j < numDevices; j++)
            if (devices[i] == devices[j]) return ANEURALNETWORKS_BAD_DATA;
    }
    return create(model, devices, numDevices, compilation);
}

static void staging_unmap(ANeuralNetworksCompilation *c, ndk_staging *s) {
    if (s->token) ndk_session_unregister(c->session, s->token);
    if (s->map) munmap(s->map, s->size);
    if (s->fd >= 0) {
        ndk_bursts_forget_key(s->key);
        close(s->fd);
    }
}

void ANeuralNetworksCompilation_free(ANeuralNetworksCompilation *c) {
    if (!c) return;
    for (size_t i = 0; i < c->n_staging; i++) /* their tokens are the session's */
        staging_unmap(c, &c->staging[i]);
    if (c->session) {
        if (c->valid && !c->fails_at_execution && !atomic_load(&c->session->dead))
            ndk_session_code(c->session, nnd_client_release(c->session->client, c->handle));
        ndk_session_put(c->session);
    }
    pthread_mutex_destroy(&c->lock);
    free(c->attributes.tokens);
    free(c->cache_dir);
    free(c);
}

int ANeuralNetworksCompilation_setPreference(ANeuralNetworksCompilation *c, int32_t preference) {
    if (!c) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (c->finished) return ANEURALNETWORKS_BAD_STATE;
    if (preference < ANEURALNETWORKS_PREFER_LOW_POWER ||
        preference > ANEURALNETWORKS_PREFER_SUSTAINED_SPEED)
        return ANEURALNETWORKS_BAD_DATA;
    c->preference = preference;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_setPriority(ANeuralNetworksCompilation *c, int priority) {
    if (!c) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (c->finished) return ANEURALNETWORKS_BAD_STATE;
    if (priority != ANEURALNETWORKS_PRIORITY_LOW && priority != ANEURALNETWORKS_PRIORITY_MEDIUM &&
        priority != ANEURALNETWORKS_PRIORITY_HIGH)
        return ANEURALNETWORKS_BAD_DATA;
    c->priority = priority;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_setTimeout(ANeuralNetworksCompilation *c, uint64_t duration) {
    if (!c) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (c->finished) return ANEURALNETWORKS_BAD_STATE;
    if (!c->explicit_devices || c->n_devices != 1) return ANEURALNETWORKS_BAD_DATA;
    c->timeout_ns = duration; /* 0: none */
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_setCaching(ANeuralNetworksCompilation *c, const char *cacheDir,
                                          const uint8_t *token) {
    if (!c || !cacheDir || !token) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (c->finished) return ANEURALNETWORKS_BAD_STATE;
    size_t n = strlen(cacheDir);
    char *dir = malloc(n + 2);
    if (!dir) return ANEURALNETWORKS_OUT_OF_MEMORY;
    memcpy(dir, cacheDir, n + 1);
    if (n && dir[n - 1] != '/') strcpy(dir + n, "/"); /* file names are appended */
    free(c->cache_dir);
    c->cache_dir = dir;
    memcpy(c->token, token, sizeof c->token);
    c->caching = true;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_finish(ANeuralNetworksCompilation *c) {
    if (!c) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (c->finished) return ANEURALNETWORKS_BAD_STATE;
    c->finished = true; /* even when it fails: a compilation is finished once */
    uint64_t deadline = ndk_deadline_after(c->timeout_ns);
    int rc = ndk_session_get(&c->session);
    if (rc) return rc;
    ndk_wire w;
    if ((rc = ndk_model_wire(c->model, &w))) return rc;
    /* Wire preference numbering is the NDK's plus one (0 = unspecified). With a cache
     * directory and token, the files live there and the daemon reads or writes them. */
    int pref = c->preference + 1, st;
    char why[256] = "";
    /* createForDevices names its devices; create() leaves the choice to the daemon. */
    const char *const *devices = c->explicit_devices ? c->device_names : NULL;
    size_t n_devices = c->explicit_devices ? c->n_devices : 0;
    if (c->caching)
        st = nnd_client_prepare_cached_on(c->session->client, devices, n_devices, w.model, w.fds,
                                          w.n_fds, pref, c->priority, deadline, c->cache_dir,
                                          c->token, &c->handle, NULL, why, sizeof why);
    else
        st = nnd_client_prepare_on(c->session->client, devices, n_devices, w.model, w.fds, w.n_fds,
                                   pref, c->priority, deadline, &c->handle, why, sizeof why);
    ndk_wire_free(&w);
    if (st) ndk_debug("ANeuralNetworksCompilation_finish: %s", why);
    if (st == NND__ERROR_STATUS__INVALID_ARGUMENT && !c->explicit_devices && c->model->supported) {
        c->fails_at_execution = c->valid = true;
        return ANEURALNETWORKS_NO_ERROR;
    }
    /* No answer by the compilation's deadline (and the margin) is a missed deadline. */
    rc = ndk_session_code(c->session, st);
    if (st == -ETIMEDOUT && deadline) rc = ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT;
    c->valid = rc == ANEURALNETWORKS_NO_ERROR;
    return rc;
}

/* ---- preferred memory layout (feature level 5) -------------------------------------------- */

/* Where execution memory had best start and end: the staging memfd lays pointer arguments
 * out on NDK_IO_ALIGN, which is also the NNAPI runtime's default for a driver. */
static int preferred(const ANeuralNetworksCompilation *c, bool output, uint32_t index,
                     uint32_t *out, uint32_t value) {
    if (!c || !out) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!c->finished || !c->valid) return ANEURALNETWORKS_BAD_STATE;
    if (index >= (output ? c->model->n_outputs : c->model->n_inputs))
        return ANEURALNETWORKS_BAD_DATA;
    *out = value;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksCompilation_getPreferredMemoryAlignmentForInput(
    const ANeuralNetworksCompilation *c, uint32_t index, uint32_t *alignment) {
    return preferred(c, false, index, alignment, NDK_IO_ALIGN);
}

int ANeuralNetworksCompilation_getPreferredMemoryPaddingForInput(
    const ANeuralNetworksCompilation *c, uint32_t index, uint32_t *padding) {
    return preferred(c, false, index, padding, NDK_IO_ALIGN);
}

int ANeuralNetworksCompilation_getPreferredMemoryAlignmentForOutput(
    const ANeuralNetworksCompilation *c, uint32_t index, uint32_t *alignment) {
    return preferred(c, true, index, alignment, NDK_IO_ALIGN);
}

int ANeuralNetworksCompilation_getPreferredMemoryPaddingForOutput(
    const ANeuralNetworksCompilation *c, uint32_t index, uint32_t *padding) {
    return preferred(c, true, index, padding, NDK_IO_ALIGN);
}

/* ---- staging memory for pointer arguments ------------------------------------------------- */

int ndk_staging_get(ANeuralNetworksCompilation *c, size_t size, ndk_staging *out) {
    pthread_mutex_lock(&c->lock);
    size_t best = SIZE_MAX;
    for (size_t i = 0; i < c->n_staging; i++)
        if (c->staging[i].size >= size &&
            (best == SIZE_MAX || c->staging[i].size < c->staging[best].size))
            best = i;
    if (best != SIZE_MAX) {
        *out = c->staging[best];
        c->staging[best] = c->staging[--c->n_staging];
        pthread_mutex_unlock(&c->lock);
        return ANEURALNETWORKS_NO_ERROR;
    }
    pthread_mutex_unlock(&c->lock);
    /* Round up so that slightly larger requests reuse it too. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t n = (size + page - 1) & ~(page - 1);
    void *map;
    int fd = nnd_memfd_create("nnd-ndk-io", n, &map);
    if (fd < 0) return ANEURALNETWORKS_OUT_OF_MEMORY;
    *out = (ndk_staging){.key = ndk_memory_key(), .fd = fd, .map = map, .size = n};
    return ANEURALNETWORKS_NO_ERROR;
}

void ndk_staging_put(ANeuralNetworksCompilation *c, ndk_staging *s) {
    pthread_mutex_lock(&c->lock);
    if (c->n_staging < NDK_STAGING_CACHE) {
        c->staging[c->n_staging++] = *s;
        s = NULL;
    }
    pthread_mutex_unlock(&c->lock);
    if (s) staging_unmap(c, s);
}
