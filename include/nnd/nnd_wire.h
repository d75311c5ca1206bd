/* SPDX-License-Identifier: Apache-2.0 */
/* nnd_wire: libnnd's calls at the level of the NN HAL, which take and return the wire
 * protocol's messages (the generated protobuf-c types of proto/nnd.proto). Internal to the
 * nnd source tree: libnnd's NNAPI layer, nndctl, the bench and the tests use them through
 * libnnd.a (nnd_client_static); libnnd.so does not export them and this header is not
 * installed, so the wire format is no part of the library's ABI (docs/packaging.md).
 *
 * Contract (beside nnd.h's):
 * - Calls of many threads are in flight on one client at once: each thread waits only for
 *   its own reply, which comes in the order the daemon finishes the work, not the order it
 *   was sent (a long execution does not hold up short ones). A transport failure wakes every
 *   call waiting on the client with that error.
 * - A call whose request carries a deadline waits for its reply until
 *   NND_DEADLINE_MARGIN_MS after it; past its bound a call returns -ETIMEDOUT, the client
 *   stays usable and the late reply is dropped (an execution that timed out is also
 *   cancelled in the daemon).
 * - The convenience wrappers return the reply's ErrorStatus (>= 0, NND__ERROR_STATUS__NONE
 *   on success) and copy the reply's message into err when it is not NONE. A well-formed
 *   reply they cannot use (a result of the wrong kind, counts or a rank they cannot take)
 *   fails that call with -EBADMSG and a message; the connection stays usable. -EPROTO is
 *   kept for a frame that could not be read, after which the connection is dead.
 * - fd_index values inside a Model or ExecutionRequest refer to positions in the fds array
 *   passed alongside it. File descriptors passed in are borrowed, never closed.
 * - Anything returned to the caller is freed with the matching
 *   nnd__*__free_unpacked(msg, NULL).
 */
#ifndef NND_NND_WIRE_H
#define NND_NND_WIRE_H

#include "nnd/nnd.h"
#include "nnd.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sends req (its id is assigned here) with fds and waits for the reply with the same id.
 * Returns 0 with *reply set (free with nnd__reply__free_unpacked), or a negative errno:
 * -ENOTCONN when the daemon closed the connection, -EPIPE / -ECONNRESET, -EPROTO,
 * -ETIMEDOUT past the call's bound (above; the deadline is read from the request).
 * The reply's fds go to reply_fds (at most *n_reply_fds on entry, the count on return;
 * the caller closes them); with reply_fds NULL they are closed. */
int nnd_client_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                    Nnd__Reply **reply, int *reply_fds, size_t *n_reply_fds, char *err,
                    size_t errlen);

/* *caps is freed with nnd__capabilities__free_unpacked(*caps, NULL). */
int nnd_client_get_capabilities(nnd_client *c, Nnd__Capabilities **caps, char *err, size_t errlen);
/* *type is an Nnd__DeviceType. */
int nnd_client_get_type(nnd_client *c, int *type, char *err, size_t errlen);
/* out[i] tells whether model->main->operations[i] is supported; n_ops must match. */
int nnd_client_supported_operations(nnd_client *c, const Nnd__Model *model, const int *pool_fds,
                                    size_t n_pool_fds, bool *out, size_t n_ops, char *err,
                                    size_t errlen);
/* preference: Nnd__ExecutionPreference; priority: Nnd__Priority; deadline_ns: absolute
 * CLOCK_MONOTONIC, 0 for none. *handle names the prepared model. */
int nnd_client_prepare(nnd_client *c, const Nnd__Model *model, const int *pool_fds,
                       size_t n_pool_fds, int preference, int priority, uint64_t deadline_ns,
                       uint64_t *handle, char *err, size_t errlen);
/* Synchronous execution. *reply (may be NULL) receives the whole reply whenever the
 * transport worked, also on OUTPUT_INSUFFICIENT_SIZE, whose reply->executed holds the
 * needed output shapes; the caller frees it with nnd__reply__free_unpacked. */
int nnd_client_execute(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *req,
                       const int *pool_fds, size_t n_pool_fds, bool measure_timing,
                       uint64_t deadline_ns, Nnd__Reply **reply, char *err, size_t errlen);
/* ---- devices --------------------------------------------------------------------------
 * The daemon offers several devices: "nnd-cpu" (XNNPACK fast paths over the reference
 * kernels) and "nnd-reference" (the reference kernels only, deterministic: the device to
 * compare against). nnd_client_get_devices() lists them (free *devices with
 * nnd__devices_reply__free_unpacked). nnd_client_prepare_on() is nnd_client_prepare()
 * limited to the n_devices devices named (n_devices 0: all of them); the daemon compiles
 * for the fastest of them, and refuses a name it does not have with INVALID_ARGUMENT. */
int nnd_client_get_devices(nnd_client *c, Nnd__DevicesReply **devices, char *err, size_t errlen);
/* nnd_client_supported_operations() for the n_devices devices named (0: all): an operation
 * is supported when one of them runs it. */
int nnd_client_supported_operations_on(nnd_client *c, const char *const *devices, size_t n_devices,
                                       const Nnd__Model *model, const int *pool_fds,
                                       size_t n_pool_fds, bool *out, size_t n_ops, char *err,
                                       size_t errlen);
int nnd_client_prepare_on(nnd_client *c, const char *const *devices, size_t n_devices,
                          const Nnd__Model *model, const int *pool_fds, size_t n_pool_fds,
                          int preference, int priority, uint64_t deadline_ns, uint64_t *handle,
                          char *err, size_t errlen);

/* Releases a prepared model, buffer, burst or execution. */
int nnd_client_release(nnd_client *c, uint64_t handle);

/* ---- compilation caching ---------------------------------------------------------------
 * nnd_client_prepare_cached() is what ANeuralNetworksCompilation_setCaching(dir, token)
 * does in the NNAPI runtime. It asks the daemon how many cache files it wants (1 model,
 * 1 data; 0 and 0 means no caching: a plain prepare) and up to what size of constants it
 * saves them (once per connection); a model over that size is a plain prepare too, its
 * files neither read nor written (docs/caching.md). Else it derives the file names from the
 * token in cache_dir (nnd-<hex token>.model and .data, created 0600 when missing), and
 * when both files hold something tries PrepareModelFromCache; on any refusal, or when
 * the files are new, it prepares with PrepareModel and the files, which the daemon
 * (re)writes. A damaged or foreign cache thus costs time, never correctness.
 * The token the daemon sees is nnd_cache_token(): the app's token folded with a
 * fingerprint of the model (its wire form and every constant it references) and the
 * preference and priority, so a changed model under an unchanged token is a miss.
 * Returns like nnd_client_prepare(); *from_cache (may be NULL) tells whether the model
 * came from the cache. Nothing about caching ever fails the call by itself. */
#define NND_CACHE_TOKEN_BYTES 32

int nnd_client_prepare_cached(nnd_client *c, const Nnd__Model *model, const int *pool_fds,
                              size_t n_pool_fds, int preference, int priority, uint64_t deadline_ns,
                              const char *cache_dir, const uint8_t token[NND_CACHE_TOKEN_BYTES],
                              uint64_t *handle, bool *from_cache, char *err, size_t errlen);
/* nnd_client_prepare_cached() for the devices named (see nnd_client_prepare_on()); the
 * names are folded into the token the daemon sees, so one app token cached for two device
 * sets never loads one's compilation for the other. */
int nnd_client_prepare_cached_on(nnd_client *c, const char *const *devices, size_t n_devices,
                                 const Nnd__Model *model, const int *pool_fds, size_t n_pool_fds,
                                 int preference, int priority, uint64_t deadline_ns,
                                 const char *cache_dir, const uint8_t token[NND_CACHE_TOKEN_BYTES],
                                 uint64_t *handle, bool *from_cache, char *err, size_t errlen);
/* PrepareModelFromCache with already open cache files and the (folded) token they were
 * saved under: *handle on success; returns like nnd_client_prepare(). */
int nnd_client_prepare_from_cache(nnd_client *c, const uint8_t token[NND_CACHE_TOKEN_BYTES],
                                  int model_fd, int data_fd, int priority, uint64_t deadline_ns,
                                  uint64_t *handle, char *err, size_t errlen);
/* GetNumberOfCacheFilesNeeded. */
int nnd_client_cache_files_needed(nnd_client *c, uint32_t *model_files, uint32_t *data_files,
                                  char *err, size_t errlen);
/* The folded token (see above); -1 when a referenced constant cannot be read. */
int nnd_cache_token(const Nnd__Model *model, const int *pool_fds, size_t n_pool_fds, int preference,
                    int priority, const uint8_t app_token[NND_CACHE_TOKEN_BYTES],
                    uint8_t out[NND_CACHE_TOKEN_BYTES]);
/* The two cache file paths for a token in cache_dir; -ENAMETOOLONG when len is short. */
int nnd_cache_paths(const char *cache_dir, const uint8_t token[NND_CACHE_TOKEN_BYTES],
                    char *model_path, char *data_path, size_t len);

/* ---- registered memory -----------------------------------------------------------------
 * nnd_client_register_memory() maps size bytes at offset of fd (kind POOL_MEMFD or
 * POOL_MMAP_FD; size 0: to the end of the file) into the daemon once, for this connection:
 * *token is what an ExecutionRequest of any kind (Execute, ExecuteFenced, BurstExecute)
 * names in a MemoryPool of kind POOL_REGISTERED (no fd; offset and size there select a
 * part of the memory, size 0: all of it). An execution naming only registered memories
 * sends no fd, and the daemon maps nothing for it. The daemon keeps its own reference to
 * the file: the caller may close fd. The memory must not shrink while registered.
 * Registrations count against the app's mappings and descriptors quotas
 * (docs/limits.md); only this connection can use the token.
 * nnd_client_unregister_memory() ends it (an execution using it finishes first); closing
 * the connection ends them all. Both return like nnd_client_prepare(). */
int nnd_client_register_memory(nnd_client *c, int kind, int fd, uint64_t offset, uint64_t size,
                               uint64_t *token, char *err, size_t errlen);
int nnd_client_unregister_memory(nnd_client *c, uint64_t token, char *err, size_t errlen);

/* ---- memory domains: driver-owned buffers ----------------------------------------------
 * nnd_client_allocate() (the HAL's IDevice::allocate) asks the daemon for a buffer usable
 * in the given roles: each names an input or output (io_index) of
 * prepared_models[model_index], all prepared on this client. dims/rank (rank 0: none) is
 * the descriptor's shape, 0 marking an unknown dimension; dimensions that stay unknown
 * make a flexible buffer, shaped by its last write. *buffer is the handle for the copies
 * and nnd_client_release(); *token is what an ExecutionRequest names in a MemoryPool of
 * kind POOL_DRIVER_BUFFER (no fd; its arguments' locations at offset 0, length 0). Only
 * this client can use the token, and only in an allocated role.
 * The copies move bytes between the buffer and size bytes at offset of fd (kind
 * POOL_MEMFD, POOL_MMAP_FD or POOL_DMABUF): nnd_client_buffer_copy_to() into the buffer
 * (IBuffer::copyFrom; dims/rank: the data's shape, needed where the buffer's is not fully
 * known; size must equal its bytes), nnd_client_buffer_copy_from() out of it
 * (IBuffer::copyTo; size must equal the contents' bytes; the fd must be writable; the
 * contents' shape goes to dims_out, which holds dims_cap entries, when not NULL). A buffer
 * never written is GENERAL_FAILURE to read. All return like nnd_client_prepare().
 * A reply this library cannot use (a contents' rank over dims_cap, a result of the wrong
 * kind) fails that call with -EBADMSG and a message in err; the connection stays usable.
 * NND_BUFFER_MAX_RANK is the engine's rank limit (ENG_MAX_RANK): a dims_out of that many
 * entries takes any buffer this daemon version makes. */
#define NND_BUFFER_MAX_RANK 16

typedef struct nnd_buffer_role {
    uint32_t model_index; /* position in prepared_models */
    uint32_t io_index;    /* the input's or output's position in its model */
    float probability;    /* (0, 1]; 0: not given */
} nnd_buffer_role;

int nnd_client_allocate(nnd_client *c, const uint32_t *dims, size_t rank,
                        const uint64_t *prepared_models, size_t n_models,
                        const nnd_buffer_role *input_roles, size_t n_input_roles,
                        const nnd_buffer_role *output_roles, size_t n_output_roles,
                        uint64_t *buffer, uint64_t *token, char *err, size_t errlen);
int nnd_client_buffer_copy_to(nnd_client *c, uint64_t buffer, int kind, int fd, uint64_t offset,
                              uint64_t size, const uint32_t *dims, size_t rank, char *err,
                              size_t errlen);
int nnd_client_buffer_copy_from(nnd_client *c, uint64_t buffer, int kind, int fd, uint64_t offset,
                                uint64_t size, uint32_t *dims_out, size_t dims_cap,
                                size_t *rank_out, char *err, size_t errlen);

/* ---- vendor extensions -----------------------------------------------------------------
 * GetSupportedExtensions: the extensions this client may use (none unless the daemon's
 * allowlist names its executable or user). *out (never NULL on success; it may list no
 * extension) is freed with nnd__supported_extensions_reply__free_unpacked(*out, NULL).
 * Returns like nnd_client_get_capabilities(). */
int nnd_client_get_supported_extensions(nnd_client *c, Nnd__SupportedExtensionsReply **out,
                                        char *err, size_t errlen);

/* ---- quality of service: priorities, deadlines, asynchronous and fenced executions ---
 * The daemon schedules executions per app (uid): HIGH before MEDIUM before LOW inside an
 * app, apps in turn, earliest deadline first. Refusals come back as the HAL's codes:
 * MISSED_DEADLINE_PERSISTENT (deadline passed, or too short even for an idle device),
 * MISSED_DEADLINE_TRANSIENT (too short behind queued work, or stopped when it could no
 * longer make it), RESOURCE_EXHAUSTED_TRANSIENT (the app's queue or memory quota is full),
 * RESOURCE_EXHAUSTED_PERSISTENT (beyond the device), INVALID_ARGUMENT (a bad priority).
 * - nnd_client_execute_opts(): a synchronous execution with options; returns like
 *   nnd_client_execute().
 * - nnd_client_execute_start() sends an Execute and returns its ticket (the request id) at
 *   once; nnd_client_execute_wait() collects the reply (timeout_ms -1: up to the ticket's
 *   bound, its deadline plus NND_DEADLINE_MARGIN_MS or the call timeout from its start;
 *   -ETIMEDOUT before that bound leaves the ticket open, at it closes the ticket). A
 *   ticket's reply is kept until collected, whoever read it; one thread at a time waits
 *   for a ticket (-EBUSY otherwise). Waiting holds up no other call on the client.
 * - nnd_client_cancel(): stops the ticket's execution, queued or running (its reply is
 *   then GENERAL_FAILURE "cancelled"); INVALID_ARGUMENT when it is no longer in flight.
 * - nnd_client_execute_fenced(): ExecuteFenced. The daemon waits until every wait_fds fd
 *   (an eventfd or a sync_file, borrowed) is readable, then runs the execution, at the
 *   latest timeout_after_fence_ns after that (0: no limit). *sync_fd (the caller's to
 *   close) is an eventfd that becomes readable when the execution ended, successfully or
 *   not; it can be another fenced execution's wait fd. *execution names it for
 *   nnd_client_fenced_info() (which waits for the end, up to the call timeout, and gives
 *   its status and timings) and nnd_client_release().
 * - nnd_fence_wait(): waits for a fence fd to become readable: 0, -ETIMEDOUT or -errno. */
typedef struct nnd_exec_opts {
    bool measure_timing;
    uint64_t deadline_ns;     /* absolute CLOCK_MONOTONIC; 0: none */
    uint64_t loop_timeout_ns; /* WHILE loops; 0: the default */
    int priority;             /* Nnd__Priority; 0: the compilation's (not for fenced) */
} nnd_exec_opts;

int nnd_client_execute_opts(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *req,
                            const int *pool_fds, size_t n_pool_fds, const nnd_exec_opts *opts,
                            Nnd__Reply **reply, char *err, size_t errlen);
int nnd_client_execute_start(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *req,
                             const int *pool_fds, size_t n_pool_fds, const nnd_exec_opts *opts,
                             uint64_t *ticket, char *err, size_t errlen);
int nnd_client_execute_wait(nnd_client *c, uint64_t ticket, int timeout_ms, Nnd__Reply **reply,
                            char *err, size_t errlen);
int nnd_client_cancel(nnd_client *c, uint64_t ticket, char *err, size_t errlen);
int nnd_client_execute_fenced(nnd_client *c, uint64_t handle, const Nnd__ExecutionRequest *req,
                              const int *pool_fds, size_t n_pool_fds, const int *wait_fds,
                              size_t n_wait_fds, const nnd_exec_opts *opts,
                              uint64_t timeout_after_fence_ns, uint64_t *execution, int *sync_fd,
                              char *err, size_t errlen);
int nnd_client_fenced_info(nnd_client *c, uint64_t execution, int *status, Nnd__Timing *launched,
                           Nnd__Timing *fenced, char *err, size_t errlen);
int nnd_fence_wait(int fd, int timeout_ms);

/* ---- bursts ----------------------------------------------------------------------------
 * A burst (the HAL's IBurst) runs one prepared model again and again at less cost per
 * execution: the daemon keeps the execution memory mapped as numbered slots, so that
 * after the first execution a pool travels as its slot number instead of as an fd that
 * the daemon has to receive, inspect and map.
 * - nnd_client_burst_configure(): ConfigureBurst for a prepared model of this client.
 *   The model must stay prepared while the burst is used: once it is released, burst
 *   executions are INVALID_ARGUMENT.
 * - nnd_client_burst_execute(): BurstExecute; otherwise as nnd_client_execute_opts()
 *   (opts may be NULL; opts->priority is not used: a burst runs at its compilation's
 *   priority). Each memfd or mmap_fd pool is keyed by its file (fstat's device and inode),
 *   offset, size and kind. A key seen for the first time goes with its fd and a new slot
 *   number; once the daemon has run an execution with it (NONE or
 *   OUTPUT_INSUFFICIENT_SIZE), the key goes as a POOL_BURST_SLOT pool with that number and
 *   no fd. After any other answer the fds go again (the daemon takes a memory it already
 *   caches under its slot as it is). Beyond NND_BURST_CLIENT_SLOTS keys, further pools go
 *   as in Execute, mapped for that execution only; other pools go unchanged.
 * - nnd_client_burst_execute_keyed(): the same with the caller naming each fd's memory:
 *   keys[k], for pool_fds[k], is a non-zero number that stands for that memory in place
 *   of its file identity, which nnd_client_burst_execute() reads with one fstat() per
 *   pool per execution (a system call: about 1.5 us on a virtual machine). The caller
 *   promises that a key names the same memory until forgotten; a key of 0 sends its pools
 *   as in Execute. The NNAPI layer keys by memory object.
 * - nnd_client_burst_forget_fd() / _forget_key(): forget, here and in the daemon, every
 *   slot of fd's file / of that key. Call one before closing or shrinking memory a burst
 *   has used: the daemon keeps a slot's memory mapped until the slot is forgotten or the
 *   burst freed. *forgotten (may be NULL) is how many slots went.
 * - nnd_client_burst_free(): releases the burst (the daemon unmaps its slots) and frees
 *   it; the client must outlive it. Returns the status of Release (or -errno).
 * - nnd_client_burst_handle(): the daemon's handle of the burst.
 * A burst may be shared by threads, and their executions are in flight at once: each
 * keeps the slot caching above (a key first used by two at once travels with its fd in
 * both).
 * Unless $NND_BURST_CHANNEL is "0", nnd_client_burst_configure() asks the daemon for the
 * burst's shared-memory channel, and an execution that sends no fd goes through it
 * instead of the socket (one at a time per burst: another thread's meanwhile takes the
 * socket), with the same statuses and replies. The caller polls for the answer up to
 * $NND_BURST_POLL_US microseconds (default 50, at most 1000; docs/memory-and-bursts.md) before it
 * sleeps. A channel whose answer does not come within the call's bound is given up and
 * the socket used from then on. */
#define NND_BURST_CLIENT_SLOTS 64

typedef struct nnd_burst nnd_burst;

int nnd_client_burst_configure(nnd_client *c, uint64_t prepared_model, nnd_burst **burst, char *err,
                               size_t errlen);
int nnd_client_burst_execute(nnd_burst *b, const Nnd__ExecutionRequest *req, const int *pool_fds,
                             size_t n_pool_fds, const nnd_exec_opts *opts, Nnd__Reply **reply,
                             char *err, size_t errlen);
int nnd_client_burst_execute_keyed(nnd_burst *b, const Nnd__ExecutionRequest *req,
                                   const int *pool_fds, const uint64_t *keys, size_t n_pool_fds,
                                   const nnd_exec_opts *opts, Nnd__Reply **reply, char *err,
                                   size_t errlen);
int nnd_client_burst_forget_fd(nnd_burst *b, int fd, size_t *forgotten, char *err, size_t errlen);
int nnd_client_burst_forget_key(nnd_burst *b, uint64_t key, size_t *forgotten, char *err,
                                size_t errlen);
int nnd_client_burst_free(nnd_burst *b);
uint64_t nnd_client_burst_handle(const nnd_burst *b);

#ifdef __cplusplus
}
#endif

#endif
