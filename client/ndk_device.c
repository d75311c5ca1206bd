/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_device.c: the shared daemon connection, the devices, result-code mapping and the
 * extension registry: the bottom of the NDK layer, what ndk_shared.h declares. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/ndk_shared.h"
#include "proto/paths.h"

/* Device_wait gives up after this long without a live daemon. */
#define WAIT_LIMIT_NS  (10ull * 1000000000ull)
#define WAIT_RETRY_NS  (50ull * 1000000ull)
#define MAX_EXTENSIONS 256

struct ANeuralNetworksDevice {
    char name[64];
    int32_t type;     /* ANEURALNETWORKS_DEVICE_*: wire and NDK share the numbering */
    char version[64]; /* a driver device's own; "": the daemon's version string */
};

/* The daemon's devices, asked for once per process; when it cannot be asked (not running
 * yet, or older than GetDevices) its built-in pair, which every daemon has. */
static ANeuralNetworksDevice g_devices[NDK_MAX_DEVICES] = {
    {"nnd-cpu", ANEURALNETWORKS_DEVICE_CPU, ""},
    {"nnd-reference", ANEURALNETWORKS_DEVICE_CPU, ""},
};
static uint32_t g_n_devices = 2;
static pthread_once_t g_devices_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER; /* guards everything below */
static ndk_session *g_session;                             /* the current connection */
static bool g_ever_connected;
static char g_version[128] = ""; /* cached GetVersionString; lives as long as the process */
static char *g_ext_names[MAX_EXTENSIONS]; /* prefix p names g_ext_names[p - 1] */
static size_t g_n_ext;

uint64_t ndk_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t ndk_deadline_after(uint64_t timeout_ns) {
    if (!timeout_ns) return 0;
    uint64_t now = ndk_now_ns();
    return timeout_ns > UINT64_MAX - now ? UINT64_MAX : now + timeout_ns;
}

bool ndk_is_device(const ANeuralNetworksDevice *d) {
    return d >= g_devices && d < g_devices + g_n_devices;
}

const char *ndk_device_name(const ANeuralNetworksDevice *d) {
    return d->name;
}

int ndk_status_code(int status) {
    switch (status) {
    case NND__ERROR_STATUS__NONE: return ANEURALNETWORKS_NO_ERROR;
    case NND__ERROR_STATUS__DEVICE_UNAVAILABLE: return ANEURALNETWORKS_UNAVAILABLE_DEVICE;
    case NND__ERROR_STATUS__OUTPUT_INSUFFICIENT_SIZE:
        return ANEURALNETWORKS_OUTPUT_INSUFFICIENT_SIZE;
    case NND__ERROR_STATUS__INVALID_ARGUMENT: return ANEURALNETWORKS_BAD_DATA;
    case NND__ERROR_STATUS__MISSED_DEADLINE_TRANSIENT:
        return ANEURALNETWORKS_MISSED_DEADLINE_TRANSIENT;
    case NND__ERROR_STATUS__MISSED_DEADLINE_PERSISTENT:
        return ANEURALNETWORKS_MISSED_DEADLINE_PERSISTENT;
    case NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT:
        return ANEURALNETWORKS_RESOURCE_EXHAUSTED_TRANSIENT;
    case NND__ERROR_STATUS__RESOURCE_EXHAUSTED_PERSISTENT:
        return ANEURALNETWORKS_RESOURCE_EXHAUSTED_PERSISTENT;
    default: return ANEURALNETWORKS_OP_FAILED; /* GENERAL_FAILURE and anything newer */
    }
}

void ndk_debug(const char *fmt, ...) {
    const char *d = getenv("NND_DEBUG");
    if (!d || !*d || !strcmp(d, "0")) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "libnnd: %s\n", line);
}

int ndk_session_code(ndk_session *s, int rc) {
    if (rc >= 0) return ndk_status_code(rc);
    ndk_debug("a call to the daemon at %s failed: %s", s ? s->path : "(unknown)", strerror(-rc));
    switch (-rc) {
    case EPIPE:
    case ECONNRESET:
    case ENOTCONN:
    case ECONNREFUSED:
    case EBADF:
    case EPROTO: /* the connection is gone (libnnd marked it dead too) */
        if (s) atomic_store(&s->dead, true);
        return ANEURALNETWORKS_DEAD_OBJECT;
    case ETIMEDOUT: return ANEURALNETWORKS_UNAVAILABLE_DEVICE; /* it does not answer */
    case EBADMSG: return ANEURALNETWORKS_OP_FAILED; /* a reply it cannot use: only this call */
    case ENOMEM: return ANEURALNETWORKS_OUT_OF_MEMORY;
    default: return ANEURALNETWORKS_OP_FAILED; /* nothing was sent, e.g. too many fds */
    }
}

static void session_free(ndk_session *s) {
    nnd_client_close(s->client);
    if (s->ext) nnd__reply__free_unpacked(s->ext, NULL);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

void ndk_session_put(ndk_session *s) {
    if (s && atomic_fetch_sub(&s->refs, 1) == 1) session_free(s);
}

/* fork(): the child shares the parent's socket, so its copy of the connection must not
 * carry another call. It is marked dead there; the child's next need reconnects. */
static void fork_prepare(void) {
    pthread_mutex_lock(&g_lock);
}
static void fork_parent(void) {
    pthread_mutex_unlock(&g_lock);
}
static void fork_child(void) {
    if (g_session) atomic_store(&g_session->dead, true);
    pthread_mutex_unlock(&g_lock);
}
static void install_fork_handlers(void) {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int ndk_session_get(ndk_session **out) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_fork_handlers);
    *out = NULL;
    char path[sizeof g_session->path];
    /* $NND_SOCKET, else the daemon's default for clients, read afresh each time. */
    if (!proto_client_socket_path(path, sizeof path)) return ANEURALNETWORKS_UNAVAILABLE_DEVICE;
    pthread_mutex_lock(&g_lock);
    if (g_session && !atomic_load(&g_session->dead) && !nnd_client_alive(g_session->client))
        atomic_store(&g_session->dead, true); /* the daemon hung up since the last call */
    if (g_session && (atomic_load(&g_session->dead) || strcmp(g_session->path, path))) {
        ndk_session_put(g_session); /* the global reference; users keep theirs */
        g_session = NULL;
    }
    if (!g_session) {
        char err[256];
        nnd_client *c = nnd_client_connect(path, program_invocation_short_name, err, sizeof err);
        ndk_session *s = c ? calloc(1, sizeof *s) : NULL;
        if (!s) {
            ndk_debug("%s", c ? "out of memory" : err);
            nnd_client_close(c);
            int rc =
                g_ever_connected ? ANEURALNETWORKS_DEAD_OBJECT : ANEURALNETWORKS_UNAVAILABLE_DEVICE;
            pthread_mutex_unlock(&g_lock);
            return rc;
        }
        s->client = c;
        snprintf(s->path, sizeof s->path, "%s", path);
        atomic_init(&s->refs, 1);
        atomic_init(&s->dead, false);
        pthread_mutex_init(&s->lock, NULL);
        g_session = s;
        g_ever_connected = true;
    }
    atomic_fetch_add(&g_session->refs, 1);
    *out = g_session;
    pthread_mutex_unlock(&g_lock);
    return ANEURALNETWORKS_NO_ERROR;
}

int ndk_session_extensions(ndk_session *s, const Nnd__SupportedExtensionsReply **out) {
    *out = NULL;
    pthread_mutex_lock(&s->lock);
    int rc = ANEURALNETWORKS_NO_ERROR;
    if (!s->ext_fetched) {
        Nnd__GetSupportedExtensions call = NND__GET_SUPPORTED_EXTENSIONS__INIT;
        Nnd__Request req = NND__REQUEST__INIT;
        req.call_case = NND__REQUEST__CALL_GET_SUPPORTED_EXTENSIONS;
        req.get_supported_extensions = &call;
        Nnd__Reply *r = NULL;
        int st = nnd_client_call(s->client, &req, NULL, 0, &r, NULL, NULL, NULL, 0);
        if (st < 0) {
            rc = ndk_session_code(s, st);
        } else {
            /* A daemon without extension support answers with an error: none, then. */
            if (r->status == NND__ERROR_STATUS__NONE &&
                r->result_case == NND__REPLY__RESULT_SUPPORTED_EXTENSIONS)
                s->ext = r;
            else
                nnd__reply__free_unpacked(r, NULL);
            s->ext_fetched = true;
        }
    }
    if (s->ext) *out = s->ext->supported_extensions;
    pthread_mutex_unlock(&s->lock);
    return rc;
}

int ndk_extension_prefix(const char *name, uint16_t *prefix) {
    pthread_mutex_lock(&g_lock);
    int rc = ANEURALNETWORKS_NO_ERROR;
    size_t i = 0;
    while (i < g_n_ext && strcmp(g_ext_names[i], name))
        i++;
    if (i == g_n_ext) {
        if (g_n_ext == MAX_EXTENSIONS || !(g_ext_names[i] = strdup(name)))
            rc = ANEURALNETWORKS_OUT_OF_MEMORY;
        else
            g_n_ext++;
    }
    if (rc == ANEURALNETWORKS_NO_ERROR) *prefix = (uint16_t)(i + 1);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

const char *ndk_extension_name(uint16_t prefix) {
    pthread_mutex_lock(&g_lock);
    const char *name = prefix >= 1 && prefix <= g_n_ext ? g_ext_names[prefix - 1] : NULL;
    pthread_mutex_unlock(&g_lock);
    return name; /* names are never freed */
}

static const Nnd__Extension *find_extension(const Nnd__SupportedExtensionsReply *list,
                                            const char *name) {
    for (size_t i = 0; list && name && i < list->n_extensions; i++)
        if (list->extensions[i]->name && !strcmp(list->extensions[i]->name, name))
            return list->extensions[i];
    return NULL;
}

bool ndk_extension_operand_info(int32_t type, bool *is_tensor, uint32_t *byte_size) {
    const char *name = ndk_extension_name((uint16_t)((uint32_t)type >> 16));
    ndk_session *s;
    if (!name || ndk_session_get(&s) != ANEURALNETWORKS_NO_ERROR) return false;
    const Nnd__SupportedExtensionsReply *list;
    bool found = false;
    if (ndk_session_extensions(s, &list) == ANEURALNETWORKS_NO_ERROR) {
        const Nnd__Extension *e = find_extension(list, name);
        for (size_t i = 0; e && i < e->n_operand_types && !found; i++) {
            const Nnd__ExtensionOperandTypeInformation *t = e->operand_types[i];
            if (t->type == ((uint32_t)type & 0xffffu)) {
                *is_tensor = t->is_tensor;
                *byte_size = t->byte_size;
                found = true;
            }
        }
    }
    ndk_session_put(s);
    return found;
}

/* ---- devices -------------------------------------------------------------------------- */

static void load_devices(void) {
    ndk_session *s;
    if (ndk_session_get(&s) != ANEURALNETWORKS_NO_ERROR) return;
    Nnd__DevicesReply *list = NULL;
    if (nnd_client_get_devices(s->client, &list, NULL, 0) == 0 && list->n_devices > 0) {
        uint32_t n = 0;
        for (size_t i = 0; i < list->n_devices && n < NDK_MAX_DEVICES; i++) {
            const Nnd__DeviceInfo *d = list->devices[i];
            if (!d->name || !*d->name || strlen(d->name) >= sizeof g_devices[n].name) continue;
            snprintf(g_devices[n].name, sizeof g_devices[n].name, "%s", d->name);
            /* The built-in devices are the daemon: they keep its version string. */
            bool builtin = !strcmp(d->name, "nnd-cpu") || !strcmp(d->name, "nnd-reference");
            snprintf(g_devices[n].version, sizeof g_devices[n].version, "%s",
                     !builtin && d->version ? d->version : "");
            int t = (int)d->type;
            g_devices[n].type =
                t >= ANEURALNETWORKS_DEVICE_UNKNOWN && t <= ANEURALNETWORKS_DEVICE_ACCELERATOR
                    ? t
                    : ANEURALNETWORKS_DEVICE_UNKNOWN;
            n++;
        }
        if (n) g_n_devices = n;
    }
    if (list) nnd__devices_reply__free_unpacked(list, NULL);
    ndk_session_put(s);
}

int ANeuralNetworks_getDeviceCount(uint32_t *numDevices) {
    if (!numDevices) return ANEURALNETWORKS_UNEXPECTED_NULL;
    pthread_once(&g_devices_once, load_devices);
    *numDevices = g_n_devices;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworks_getDevice(uint32_t devIndex, ANeuralNetworksDevice **device) {
    if (!device) return ANEURALNETWORKS_UNEXPECTED_NULL;
    pthread_once(&g_devices_once, load_devices);
    if (devIndex >= g_n_devices) return ANEURALNETWORKS_BAD_DATA;
    *device = &g_devices[devIndex];
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getName(const ANeuralNetworksDevice *device, const char **name) {
    if (!device || !name) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!ndk_is_device(device)) return ANEURALNETWORKS_BAD_DATA;
    *name = device->name;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getType(const ANeuralNetworksDevice *device, int32_t *type) {
    if (!device || !type) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!ndk_is_device(device)) return ANEURALNETWORKS_BAD_DATA;
    *type = device->type;
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getVersion(const ANeuralNetworksDevice *device, const char **version) {
    if (!device || !version) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!ndk_is_device(device)) return ANEURALNETWORKS_BAD_DATA;
    if (device->version[0]) {
        *version = device->version;
        return ANEURALNETWORKS_NO_ERROR;
    }
    pthread_mutex_lock(&g_lock);
    bool have = g_version[0] != '\0';
    pthread_mutex_unlock(&g_lock);
    if (!have) {
        ndk_session *s;
        int rc = ndk_session_get(&s);
        if (rc != ANEURALNETWORKS_NO_ERROR) return rc;
        char buf[sizeof g_version];
        rc = ndk_session_code(s, nnd_client_version_string(s->client, buf, sizeof buf, NULL, 0));
        ndk_session_put(s);
        if (rc != ANEURALNETWORKS_NO_ERROR) return rc;
        pthread_mutex_lock(&g_lock);
        if (!g_version[0]) snprintf(g_version, sizeof g_version, "%s", buf[0] ? buf : "UNKNOWN");
        pthread_mutex_unlock(&g_lock);
    }
    *version = g_version; /* written once, then only read */
    return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksDevice_getFeatureLevel(const ANeuralNetworksDevice *device,
                                          int64_t *featureLevel) {
    if (!device || !featureLevel) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!ndk_is_device(device)) return ANEURALNETWORKS_BAD_DATA;
    *featureLevel = NDK_FEATURE_LEVEL;
    return ANEURALNETWORKS_NO_ERROR;
}

int64_t ANeuralNetworks_getRuntimeFeatureLevel(void) {
    return NDK_FEATURE_LEVEL;
}

int ANeuralNetworksDevice_wait(const ANeuralNetworksDevice *device) {
    if (!device) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!ndk_is_device(device)) return ANEURALNETWORKS_BAD_DATA;
    uint64_t end = ndk_now_ns() + WAIT_LIMIT_NS;
    for (;;) {
        ndk_session *s;
        int rc = ndk_session_get(&s);
        if (rc == ANEURALNETWORKS_NO_ERROR) {
            /* A round trip proves the daemon alive; any reply will do. */
            int t, st = nnd_client_get_type(s->client, &t, NULL, 0);
            rc = st >= 0 ? ANEURALNETWORKS_NO_ERROR : ndk_session_code(s, st);
            ndk_session_put(s);
            if (rc == ANEURALNETWORKS_NO_ERROR) return rc;
        }
        if (ndk_now_ns() >= end) return rc;
        struct timespec ts = {0, (long)WAIT_RETRY_NS};
        nanosleep(&ts, NULL);
    }
}

int ANeuralNetworksDevice_getExtensionSupport(const ANeuralNetworksDevice *device,
                                              const char *extensionName,
                                              bool *isExtensionSupported) {
    if (!device || !extensionName || !isExtensionSupported) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (!ndk_is_device(device)) return ANEURALNETWORKS_BAD_DATA;
    *isExtensionSupported = false;
    ndk_session *s;
    int rc = ndk_session_get(&s);
    if (rc != ANEURALNETWORKS_NO_ERROR) return rc;
    const Nnd__SupportedExtensionsReply *list;
    rc = ndk_session_extensions(s, &list);
    if (rc == ANEURALNETWORKS_NO_ERROR) *isExtensionSupported = find_extension(list, extensionName);
    ndk_session_put(s);
    return rc;
}

uint64_t ANeuralNetworks_getDefaultLoopTimeout(void) {
    return NDK_DEFAULT_LOOP_TIMEOUT_NS;
}

uint64_t ANeuralNetworks_getMaximumLoopTimeout(void) {
    return NDK_MAX_LOOP_TIMEOUT_NS;
}

int ndk_extension_type(const char *name, uint16_t code, int32_t *type) {
    ndk_session *s;
    int rc = ndk_session_get(&s);
    if (rc != ANEURALNETWORKS_NO_ERROR) return rc;
    const Nnd__SupportedExtensionsReply *list;
    rc = ndk_session_extensions(s, &list);
    if (rc == ANEURALNETWORKS_NO_ERROR && !find_extension(list, name))
        rc = ANEURALNETWORKS_BAD_DATA;
    ndk_session_put(s);
    uint16_t prefix;
    if (rc == ANEURALNETWORKS_NO_ERROR) rc = ndk_extension_prefix(name, &prefix);
    if (rc == ANEURALNETWORKS_NO_ERROR) *type = (int32_t)(((uint32_t)prefix << 16) | code);
    return rc;
}

int ANeuralNetworksModel_getExtensionOperandType(ANeuralNetworksModel *model,
                                                 const char *extensionName,
                                                 uint16_t operandCodeWithinExtension,
                                                 int32_t *type) {
    if (!model || !extensionName || !type) return ANEURALNETWORKS_UNEXPECTED_NULL;
    return ndk_extension_type(extensionName, operandCodeWithinExtension, type);
}

int ANeuralNetworksModel_getExtensionOperationType(ANeuralNetworksModel *model,
                                                   const char *extensionName,
                                                   uint16_t operationCodeWithinExtension,
                                                   ANeuralNetworksOperationType *type) {
    if (!model || !extensionName || !type) return ANEURALNETWORKS_UNEXPECTED_NULL;
    return ndk_extension_type(extensionName, operationCodeWithinExtension, type);
}

uint64_t ndk_session_register(ndk_session *s, int kind, int fd, size_t offset, size_t size) {
    if (!s || fd < 0 || atomic_load(&s->dead) || atomic_load(&s->no_register)) return 0;
    char err[256];
    uint64_t token = 0;
    int rc = nnd_client_register_memory(s->client, kind, fd, offset, size, &token, err, sizeof err);
    if (rc == 0) return token;
    ndk_debug("memory not registered, its fd travels with each execution: %s", err);
    if (rc < 0)
        ndk_session_code(s, rc);
    else if (rc == NND__ERROR_STATUS__GENERAL_FAILURE) /* a daemon without RegisterMemory */
        atomic_store(&s->no_register, true);
    return 0;
}

void ndk_session_unregister(ndk_session *s, uint64_t token) {
    if (!s || !token || atomic_load(&s->dead)) return;
    ndk_session_code(s, nnd_client_unregister_memory(s->client, token, NULL, 0));
}
