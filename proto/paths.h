/* SPDX-License-Identifier: Apache-2.0 */
/* paths: where the daemon's socket and state live by default, shared by the daemon and
 * every client so that both sides agree without configuration.
 * - socket: $NND_SOCKET, else $XDG_RUNTIME_DIR/nnd.sock, else /run/nnd/nnd.sock
 *   (where a daemon started by hand makes it); a client takes $XDG_RUNTIME_DIR/nnd.sock
 *   only when that socket exists, and the system service's /run/nnd/nnd.sock otherwise
 * - state:  $NND_STATE_DIR, else /var/lib/nnd for root, else
 *           $XDG_STATE_HOME/nnd or ~/.local/state/nnd
 * - bus:    ipc://<state>/admin.ipc (REQ/REP, JSON) and ipc://<state>/events.ipc (PUB)
 * Each function writes into buf and returns it, or NULL when the path does not fit. */
#ifndef PROTO_PATHS_H
#define PROTO_PATHS_H

#include <stddef.h>

char *nnd_default_socket_path(char *buf, size_t len);
char *proto_client_socket_path(char *buf, size_t len);
char *proto_default_state_dir(char *buf, size_t len);
char *proto_admin_url(const char *state_dir, char *buf, size_t len);
char *proto_events_url(const char *state_dir, char *buf, size_t len);

#endif
