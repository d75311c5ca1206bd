/* SPDX-License-Identifier: Apache-2.0 */
/* activation: the listening socket systemd passes (socket activation, read with
 * libsystemd's sd_listen_fds(3)).
 *
 * Contract:
 * - srv_activation_socket() looks at LISTEN_PID and LISTEN_FDS. When they name this
 *   process and one socket, that socket (fd 3) must be an AF_UNIX SOCK_SEQPACKET socket
 *   that listens; it is made non-blocking and close-on-exec, its bound path goes into
 *   path, and the fd is returned. With no activation (the variables absent, or naming
 *   another process) it returns -1 and the daemon makes its own socket. Anything else
 *   (more than one socket, another kind of socket) returns -2 with err saying why.
 * - The variables (and LISTEN_FDNAMES) are removed either way, so that nothing the
 *   daemon starts mistakes them for its own.
 */
#ifndef SRV_NET_ACTIVATION_H
#define SRV_NET_ACTIVATION_H

#include <stddef.h>

#define SRV_ACTIVATION_FD 3 /* SD_LISTEN_FDS_START */

int srv_activation_socket(char *path, size_t pathlen, char *err, size_t errlen);

#endif
