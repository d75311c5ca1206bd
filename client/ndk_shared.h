/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_shared: what every file of the NNAPI NDK layer of libnnd
 * (include/nnd/NeuralNetworks.h) shares: the object structs, the one connection to the
 * daemon and the helpers around it (ndk_device.c). Nothing here is exported from libnnd
 * (NDK_HIDDEN).
 *
 * Contract:
 * - The NDK objects are plain structs defined here; the functions that work on them are
 *   declared by each file's own header. A file includes this header and the headers of
 *   the files below it, never one above, so the files depend on each other one way:
 *     ndk_device.c     the functions declared here (the bottom)
 *     ndk_types        operand types and shapes
 *     ndk_keys         memory keys and the live bursts that forget them
 *     ndk_memory       memories (on types, keys)
 *     ndk_signature    operation signatures by the engine's rules (on the engine only)
 *     ndk_model        models and their wire form (on memory, types, signature)
 *     ndk_compilation  compilations and staging memfds (on model, keys)
 *     ndk_memory_desc  descriptors and their memories (on model, memory, types)
 *     ndk_event        events
 *     ndk_request      execution arguments into a wire request
 *     ndk_execution    executions, their arguments, results and the steps of a
 *                      computation (on compilation, model, memory, types, request)
 *     ndk_compute      compute and startCompute (on execution, event)
 *     ndk_fenced       startComputeWithDependencies (on execution, event, model, types)
 *     ndk_burst        bursts (on execution, keys)
 *     ndk_attribute    extension attributes of compilations and executions (on
 *                      execution)
 * - One process-wide connection to the daemon (ndk_session), opened on first need from
 *   $NND_SOCKET or the default path, shared by every object and thread; the requests of
 *   all threads are in flight on it at once (libnnd, nnd.h). A transport
 *   failure or a hang-up marks it dead: work bound to it answers
 *   ANEURALNETWORKS_DEAD_OBJECT, and the next ndk_session_get() reconnects (prepared
 *   models do not survive the old connection). New work also moves to a new connection
 *   when $NND_SOCKET names another socket; old work stays on its own.
 * - Models are built entirely client-side; the wire form (ndk_model.h) is made on demand
 *   for GetSupportedOperations and PrepareModel, with every pool's fd alongside.
 * - Memories are reference counted: models and executions that use a memory keep it
 *   alive past ANeuralNetworksMemory_free, so the fds they send stay valid. When the last
 *   reference goes, every burst that cached the memory forgets it (ndk_keys.h).
 * - Execution memory (every memory an execution names, and the staging memfds) is
 *   registered with the connection on first use and named by its token from then on, so
 *   that executions of every kind carry no fd; it is unregistered when freed. A daemon
 *   that does not register memory gets the fds, as before.
 * - A burst is a daemon burst on its compilation's connection; burstCompute builds the
 *   same request as compute and sends it through libnnd's burst calls. A memory from
 *   a descriptor is a daemon buffer when the daemon allocates one, else a memfd.
 * - Result codes are the NDK's ANEURALNETWORKS_* values throughout.
 */
#ifndef CLI_NDK_SHARED_H
#define CLI_NDK_SHARED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd/NeuralNetworks.h"
#include "nnd/nnd_wire.h"

#define NDK_HIDDEN __attribute__((visibility("hidden")))

/* Operand lifetimes, as the wire numbers them (HAL 1.3). */
enum {
    NDK_TEMPORARY = 0,
    NDK_MODEL_INPUT = 1,
    NDK_MODEL_OUTPUT = 2,
    NDK_CONSTANT_COPY = 3,
    NDK_CONSTANT_REFERENCE = 4,
    NDK_NO_VALUE = 5,
    NDK_SUBGRAPH = 6,
};

#define NDK_OEM_SCALAR          10000
#define NDK_TENSOR_OEM_BYTE     10001
#define NDK_OEM_OPERATION       10000
#define NDK_NUM_OPERAND_TYPES   16  /* FLOAT32 .. MODEL */
#define NDK_NUM_OPERATION_TYPES 106 /* ADD .. REVERSE */
/* The device and the runtime implement every operation and call of feature level 8 (the
 * newest NeuralNetworks.h defines): HAL 1.3's language plus BATCH_MATMUL .. REVERSE (level
 * 7) and the extension attributes (level 8, which adds no operation). */
#define NDK_FEATURE_LEVEL ANEURALNETWORKS_FEATURE_LEVEL_8
#define NDK_IO_ALIGN                                                                               \
    64 /* pointer arguments' boundary in the staging memfd, and                                    \
           the alignment and padding compilations prefer */
#define NDK_DEFAULT_LOOP_TIMEOUT_NS 2000000000ull  /* 2 s, as the NDK */
#define NDK_MAX_LOOP_TIMEOUT_NS     15000000000ull /* 15 s, as the NDK */

/* ---- session: the shared connection (ndk_device.c) ----------------------------------- */

typedef struct ndk_session {
    nnd_client *client;
    char path[108]; /* the socket it connected to */
    atomic_int refs;
    atomic_bool dead;        /* a call on it failed in transport; never cleared */
    atomic_bool no_register; /* the daemon registers no memory (older): fds travel */
    pthread_mutex_t lock;    /* guards ext */
    bool ext_fetched;
    Nnd__Reply *ext; /* GetSupportedExtensions reply, NULL when the daemon has none */
} ndk_session;

/* A live session with a reference taken, connecting if needed. Returns NO_ERROR, or
 * UNAVAILABLE_DEVICE when the daemon was never reached, DEAD_OBJECT when it was and is
 * gone now. */
NDK_HIDDEN int ndk_session_get(ndk_session **out);
NDK_HIDDEN void ndk_session_put(ndk_session *s);
/* Registers [offset, offset + size) of fd (a POOL_MEMFD or POOL_MMAP_FD kind) with s's
 * connection (nnd_client_register_memory): the token, or 0 when it cannot be (a dead
 * session, a refusal, a daemon without registration), and the fd travels instead.
 * ndk_session_unregister() ends one (nothing when the session is dead). */
NDK_HIDDEN uint64_t ndk_session_register(ndk_session *s, int kind, int fd, size_t offset,
                                         size_t size);
NDK_HIDDEN void ndk_session_unregister(ndk_session *s, uint64_t token);
/* The NDK code for a libnnd call's return: negative errno (transport: marks the session
 * dead, DEAD_OBJECT) or a wire ErrorStatus. */
NDK_HIDDEN int ndk_session_code(ndk_session *s, int rc);
/* Wire ErrorStatus to NDK result code. */
NDK_HIDDEN int ndk_status_code(int status);
NDK_HIDDEN uint64_t ndk_now_ns(void);
/* The deadline a timeout sets: 0 for none (a timeout of 0), else now plus the timeout,
 * saturating at UINT64_MAX as the runtime's makeDeadline does (LegacyUtils.cpp). */
NDK_HIDDEN uint64_t ndk_deadline_after(uint64_t timeout_ns);
/* With $NND_DEBUG set (and not "0"): one line on stderr, "libnnd: " and the message. Every
 * failure to reach the daemon makes one (libnnd's messages name its socket), and so does
 * every call refused for a reason the caller cannot see in the result code alone. */
NDK_HIDDEN void ndk_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* At most this many devices are listed. */
#define NDK_MAX_DEVICES 16
/* True for a device ANeuralNetworks_getDevice hands out; its name, as PrepareModel takes it. */
NDK_HIDDEN bool ndk_is_device(const ANeuralNetworksDevice *d);
NDK_HIDDEN const char *ndk_device_name(const ANeuralNetworksDevice *d);

/* The type code (prefix << 16 | code) of code within extension name, which must be one the
 * daemon offers (else BAD_DATA; the session's code when the daemon cannot be asked). */
NDK_HIDDEN int ndk_extension_type(const char *name, uint16_t code, int32_t *type);
NDK_HIDDEN const char *ndk_extension_name(uint16_t prefix);
/* Operand type information of an extension operand type code, from the daemon. */
NDK_HIDDEN bool ndk_extension_operand_info(int32_t type, bool *is_tensor, uint32_t *byte_size);

/* ---- memory objects ------------------------------------------------------------------ */

typedef struct ndk_role {
    const ANeuralNetworksCompilation *compilation;
    bool output;
    uint32_t index;
    float frequency; /* (0, 1]: passed on to the driver that owns the buffer */
} ndk_role;

struct ANeuralNetworksMemory {
    atomic_int refs;
    uint64_t key;  /* names it to bursts (nnd_client_burst_execute_keyed), never reused */
    int fd;        /* owned: a dup of the caller's fd, or our memfd */
    size_t offset; /* the memory is [offset, offset + size) of the fd */
    size_t size;
    int prot;
    bool memfd;           /* our own memfd (sent as POOL_MEMFD) */
    pthread_mutex_t lock; /* guards the mapping and the descriptor state below */
    uint8_t *map;         /* the memory's first byte once mapped (for copies) */
    void *map_base;       /* the page-aligned mapping behind map */
    size_t map_len;
    /* Registered with reg_session's connection (one reference) as reg_token, on its first
     * execution there (ndk_memory_token); executions name it by token, without its fd. */
    ndk_session *reg_session;
    uint64_t reg_token;
    /* Made by ANeuralNetworksMemory_createFromDesc: a driver buffer the daemon allocated
     * (no fd; named by token in requests), or else a memfd of the library's own. */
    bool from_desc;
    bool driver;
    ndk_session *session; /* driver: the connection that owns the buffer */
    uint64_t buffer, token;
    bool initialized;
    int32_t type;
    uint32_t rank;
    uint32_t *dims; /* as known; updated by executions and copies */
    size_t n_roles;
    ndk_role *roles;
};

/* ---- model objects ------------------------------------------------------------------- */

typedef struct ndk_operand {
    int32_t type;
    uint32_t rank;
    uint32_t *dims;
    float scale;
    int32_t zero_point;
    int lifetime;
    uint32_t pool; /* CONSTANT_REFERENCE: index into model->mems */
    uint64_t offset, length;
    const void *large; /* a value over 128 bytes, copied into a memfd at finish */
    bool has_channel_quant;
    uint32_t channel_dim;
    uint32_t n_scales;
    float *scales;
    uint8_t *ext_data; /* extension data, ext_len bytes (ext_data may be NULL with 0) */
    size_t ext_len;
    bool has_ext;
    ANeuralNetworksModel *ref_model; /* SUBGRAPH: the referenced model */
} ndk_operand;

typedef struct ndk_operation {
    int32_t type;
    uint32_t n_in, n_out;
    uint32_t *in, *out;
} ndk_operation;

struct ANeuralNetworksModel {
    ndk_operand *operands;
    uint32_t n_operands, cap_operands;
    ndk_operation *ops;
    uint32_t n_ops, cap_ops;
    uint32_t *inputs, *outputs;
    uint32_t n_inputs, n_outputs;
    uint8_t *values; /* CONSTANT_COPY bytes */
    size_t values_len, values_cap;
    ANeuralNetworksMemory **mems; /* pools, one reference each */
    uint32_t n_mems, cap_mems;
    bool relaxed;
    bool finished;
    bool invalid;
    bool supported; /* at finish, the daemon said it runs every operation */
};

/* ---- compilation objects ------------------------------------------------------------- */

/* A staging memfd for pointer arguments, kept by the compilation and reused. */
typedef struct ndk_staging {
    uint64_t key;   /* ndk_memory_key() */
    uint64_t token; /* registered with the compilation's connection; 0: not (yet) */
    int fd;
    uint8_t *map;
    size_t size;
} ndk_staging;

/* The extension attributes a compilation or an execution holds (ndk_attribute.h): their
 * tokens, prefix << 16 | code. */
typedef struct ndk_attributes {
    int32_t *tokens;
    uint32_t n;
} ndk_attributes;

#define NDK_STAGING_CACHE 16 /* one per thread computing at once, as the daemon caches mappings */

struct ANeuralNetworksCompilation {
    ANeuralNetworksModel *model;
    bool explicit_devices; /* createForDevices */
    uint32_t n_devices;
    const char *device_names[NDK_MAX_DEVICES]; /* createForDevices' devices, by name */
    int32_t preference;
    int32_t priority;
    uint64_t timeout_ns;
    bool caching;
    char *cache_dir;
    uint8_t token[ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN];
    ndk_attributes attributes; /* addExtensionAttribute's, before finish */
    bool finished;
    bool valid; /* finished and prepared */
    /* The daemon refused to prepare the model (INVALID_ARGUMENT) although it runs every
     * operation of it: a shape or value that conflicts only when the model runs. As the
     * NNAPI runtime (whose CPU fallback compiles such a model), it compiles, valid, with no
     * prepared model, and every computation fails with OP_FAILED. Not with an explicit
     * device list, which has no fallback. */
    bool fails_at_execution;
    ndk_session *session;
    uint64_t handle;
    pthread_mutex_t lock; /* guards the staging cache */
    ndk_staging staging[NDK_STAGING_CACHE];
    size_t n_staging;
};

#endif
