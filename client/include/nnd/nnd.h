/* libnnd: the client side of the nnd wire protocol, at the level of the NN HAL.
 *
 * Contract:
 * - A client is one SOCK_SEQPACKET connection to the daemon, opened with Hello. Every call
 *   is thread-safe: calls on one client are serialized, one request in flight at a time.
 * - Transport failures (daemon gone, protocol error) return a negative errno and fill err;
 *   the client is then dead and every later call returns -ENOTCONN without blocking.
 * - The convenience wrappers return the reply's ErrorStatus (>= 0, NND__ERROR_STATUS__NONE
 *   on success) and copy the reply's message into err when it is not NONE.
 * - fd_index values inside a Model or ExecutionRequest refer to positions in the fds array
 *   passed alongside it. File descriptors passed in are borrowed, never closed.
 * - Messages are the generated protobuf-c types of proto/nnd.proto; anything returned to
 *   the caller is freed with the matching nnd__*__free_unpacked(msg, NULL).
 */
#ifndef NND_NND_H
#define NND_NND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd.pb-c.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnd_client nnd_client;

/* Connects to socket_path (NULL: nnd_default_socket_path()) and says Hello. NULL on failure
 * with err set. */
nnd_client *nnd_client_connect(const char *socket_path, const char *client_name, char *err,
                               size_t errlen);
/* Closes the connection; the daemon releases everything the connection owned. */
void nnd_client_close(nnd_client *c);
/* The daemon's version string from the Hello reply. */
const char *nnd_client_daemon_version(const nnd_client *c);

/* Sends req (its id is assigned here) with fds and waits for the reply with the same id.
 * Returns 0 with *reply set (free with nnd__reply__free_unpacked), or a negative errno:
 * -ENOTCONN when the daemon closed the connection, -EPIPE / -ECONNRESET, -EPROTO.
 * The reply's fds go to reply_fds (at most *n_reply_fds on entry, the count on return;
 * the caller closes them); with reply_fds NULL they are closed. */
int nnd_client_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                    Nnd__Reply **reply, int *reply_fds, size_t *n_reply_fds, char *err,
                    size_t errlen);

/* *caps is freed with nnd__capabilities__free_unpacked(*caps, NULL). */
int nnd_client_get_capabilities(nnd_client *c, Nnd__Capabilities **caps, char *err, size_t errlen);
int nnd_client_version_string(nnd_client *c, char *buf, size_t len, char *err, size_t errlen);
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
/* Releases a prepared model, buffer, burst or execution. */
int nnd_client_release(nnd_client *c, uint64_t handle);

/* The wire name of an ErrorStatus ("NONE", "INVALID_ARGUMENT", ...), or "UNKNOWN". */
const char *nnd_status_name(int status);

/* A shared memory pool: memfd_create + ftruncate, and with map non-NULL an mmap shared
 * read-write (*map is NULL for size 0). Returns the fd (CLOEXEC) or a negative errno. */
int nnd_memfd_create(const char *name, size_t size, void **map);

#ifdef __cplusplus
}
#endif

#endif
