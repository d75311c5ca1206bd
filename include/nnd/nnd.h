/* SPDX-License-Identifier: Apache-2.0 */
/* libnnd's own C API beside NNAPI: a connection to the nnd daemon and what can be asked of
 * it without the wire protocol's messages. Programs normally use the NNAPI NDK API
 * (<android/NeuralNetworks.h>), which libnnd carries on top of these calls.
 *
 * Contract:
 * - A client is one SOCK_SEQPACKET connection to the daemon, opened with Hello. Every call
 *   is thread-safe.
 * - Transport failures (daemon gone, protocol error) return a negative errno and fill err
 *   (the message names the socket path); the client is then dead, and every later call
 *   returns -ENOTCONN without blocking.
 * - No call waits forever: connecting and Hello wait up to NND_CONNECT_TIMEOUT_MS, other
 *   calls up to their call timeout (NND_CALL_TIMEOUT_MS unless
 *   nnd_client_set_call_timeout() says otherwise), then return -ETIMEDOUT.
 * - These are the only nnd_ names libnnd.so exports (client/libnnd.map). The calls that
 *   take the wire protocol's messages (prepare, execute, bursts...: nnd_wire.h) are
 *   internal to libnnd and the programs of the nnd source tree, so the generated protobuf-c
 *   code and its struct layouts are no part of the library's ABI.
 */
#ifndef NND_NND_H
#define NND_NND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nnd_client nnd_client;

#define NND_DEADLINE_MARGIN_MS 500    /* a reply may come this long after its deadline */
#define NND_CALL_TIMEOUT_MS    120000 /* calls without a deadline: two minutes */
#define NND_CONNECT_TIMEOUT_MS 10000  /* connect() and Hello */

/* Connects to socket_path (NULL: $NND_SOCKET, else $XDG_RUNTIME_DIR/nnd.sock when that
 * socket exists, else /run/nnd/nnd.sock) and says Hello. NULL on failure
 * with err set. */
nnd_client *nnd_client_connect(const char *socket_path, const char *client_name, char *err,
                               size_t errlen);
/* Closes the connection; the daemon releases everything the connection owned. */
void nnd_client_close(nnd_client *c);
/* The daemon's version string from the Hello reply. */
const char *nnd_client_daemon_version(const nnd_client *c);
/* The daemon's state directory (home of its admin and event bus) as the daemon names it,
 * from the Hello reply; "" when it did not say. */
const char *nnd_client_daemon_state_dir(const nnd_client *c);
/* The number of operation types the daemon supports, from the Hello reply; 0 when it
 * did not say. */
unsigned nnd_client_daemon_operation_types(const nnd_client *c);
/* How long a call without a deadline waits for its reply, in ms (0: without limit). Calls
 * sent after this take the new value. */
void nnd_client_set_call_timeout(nnd_client *c, uint32_t ms);

/* The daemon's version string, asked of it (GetVersionString): 0 or a negative errno. */
int nnd_client_version_string(nnd_client *c, char *buf, size_t len, char *err, size_t errlen);
/* ---- connection state (for the NNAPI layer) --------------------------------------------
 * False once the connection has hung up (the daemon closed it or went away). Never
 * blocks and never reads from the socket, so it is safe beside a call in flight. */
bool nnd_client_alive(nnd_client *c);

/* The wire name of an ErrorStatus ("NONE", "INVALID_ARGUMENT", ...), or "UNKNOWN". */
const char *nnd_status_name(int status);

/* A shared memory pool: memfd_create + ftruncate, and with map non-NULL an mmap shared
 * read-write (*map is NULL for size 0). Returns the fd (CLOEXEC) or a negative errno. */
int nnd_memfd_create(const char *name, size_t size, void **map);

/* The socket a client connects to when given none: $NND_SOCKET, else
 * $XDG_RUNTIME_DIR/nnd.sock when that socket exists, else /run/nnd/nnd.sock; written to buf
 * (len bytes), which is returned. */
char *nnd_default_socket_path(char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
