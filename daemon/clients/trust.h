/* SPDX-License-Identifier: Apache-2.0 */
/* trust: which paths the daemon may trust, checked as sshd's StrictModes and systemd do.
 *
 * Contract:
 * - Trusted owners: root, the daemon's effective uid, and, for a daemon run as root by
 *   sudo, the invoking user (SUDO_UID): the development recipe in docs/configuration.md runs a root
 * daemon on that user's own build tree.
 * - srv_trust_path() resolves path (realpath) and checks it and every directory above it:
 *   each must be owned by a trusted owner; a directory above may be writable by group or
 *   others only with the sticky bit (/tmp); the path itself may not be writable by group
 *   or others at all (SRV_TRUST_STICKY: unless sticky, for the socket's directory).
 *   SRV_TRUST_DIR and SRV_TRUST_FILE say what it must be. A refusal names the path, the
 *   component at fault and why; 0 or -1.
 * - srv_trust_fd() applies the same rule to an open file (a plugin, before dlopen).
 * - srv_trust_daemon_paths() checks what the daemon trusts at start: the state directory
 *   (NULL: none, it could not be made), the socket's directory, the extensions directory (when it
 * exists) and the allowlist. The config file is checked by config.c before it is read. main() exits
 * with status 2 on a refusal.
 */
#ifndef SRV_CLIENTS_TRUST_H
#define SRV_CLIENTS_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum { SRV_TRUST_DIR = 1, SRV_TRUST_FILE = 2, SRV_TRUST_STICKY = 4 };

int srv_trust_path(const char *path, const char *what, int flags, char *err, size_t errlen);
int srv_trust_fd(int fd, const char *path, char *err, size_t errlen);
int srv_trust_daemon_paths(const char *state_dir, const char *socket_path,
                           const char *extensions_dir, const char *allowlist, char *err,
                           size_t errlen);

#endif
