/* SPDX-License-Identifier: Apache-2.0 */
/* server: the client socket. An AF_UNIX SOCK_SEQPACKET listener and its connections,
 * driven by uv_poll_t handles on the libuv loop (libuv pipes cannot pass memfds, so
 * frames go through recvmsg/sendmsg in frame.c).
 *
 * Contract:
 * - srv_server_start() binds the socket path. A stale socket file (nobody answers) is
 *   replaced; a live daemon on the path, or a path that is not a socket, is an error.
 *   The socket file is mode 0666: every local user may connect (as every app may use a
 *   HAL); isolation is per connection. Given a listening socket instead (listen_fd >= 0,
 *   from systemd: activation.h), it serves that one as it is, and never removes its file.
 * - Each connection gets a session with the peer's identity. One frame is read per
 *   wake-up of its level-triggered poll (a client with more to say is woken again after
 *   the other ready connections had their turn) and handed to srv_dispatch(), or, for a
 *   spilled request, decoded on a worker thread first. A malformed frame is answered with
 *   INVALID_ARGUMENT (id 0, the message says why) and the connection stays open:
 *   datagrams keep their boundaries, so one bad frame cannot desynchronize the stream.
 * - Replies go out with MSG_DONTWAIT; what the socket will not take waits in a
 *   per-connection outbox, flushed when writable. Past SRV_OUTBOX_MAX_FRAMES frames or
 *   SRV_OUTBOX_MAX_BYTES bytes the connection is dropped (a warning, a "dropped" event,
 *   counted by srv_server_dropped()): a client that never reads costs bounded memory.
 * - Each connection joins its app's quotas at accept (quota.h). One over
 *   quota.app.connections is refused: it stays open only to answer its first request
 *   (Hello, normally) with RESOURCE_EXHAUSTED_TRANSIENT and the quota's message, and is
 *   closed once that reply is sent, or after a second if it asks nothing. Refused
 *   connections are left out of the counts and of srv_server_foreach().
 * - On disconnect the session is cleared: everything it owns is released. Then it leaves its app.
 * - Shared sessions: a connection whose Hello carries join_session, the token of another
 *   connection of the same process (pid and uid) that joined none itself, becomes its
 *   member (when it holds no objects of its own). A member's requests after Hello are
 *   dispatched to the owner's session (its objects, quotas, queues and priorities), and
 *   their replies come back on the member, routed by request id (at most MEMBER_ROUTES
 *   awaited at once, then RESOURCE_EXHAUSTED_TRANSIENT). A call that holds the owner's
 *   session holds its members' reading too. When the owner goes, its objects go and its
 *   members are closed; a member that goes takes nothing with it (replies still due to
 *   it are dropped).
 * - srv_server_stop() stops accepting, closes every connection, removes the socket file
 *   (if it is still ours); the server is freed once libuv has closed its handles.
 */
#ifndef SRV_NET_SERVER_H
#define SRV_NET_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "daemon/base/daemon.h"
#include "daemon/clients/session.h"

#define SRV_OUTBOX_MAX_FRAMES 4096
#define SRV_OUTBOX_MAX_BYTES  (64u << 20)

typedef struct srv_server srv_server;

srv_server *srv_server_start(srv_daemon *d, int listen_fd, char *err, size_t errlen);
void srv_server_stop(srv_server *s);

/* Accepted connections, refused ones not counted. */
size_t srv_server_connections(const srv_server *s);
uint64_t srv_server_dropped(const srv_server *s);
/* Calls fn for every live session, oldest first. */
void srv_server_foreach(srv_server *s, void (*fn)(srv_session *, void *), void *ctx);

#endif
