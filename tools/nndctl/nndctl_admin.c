/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl_admin.c: reaching the daemon's admin and event buses (nndctl.h), shared by the
 * commands; apart from nndctl_main.c, which dispatches to them, so that no command calls
 * its dispatcher. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nnd/nnd_wire.h"
#include "proto/paths.h"
#include "tools/nndctl/nndctl.h"
#include "tools/common/admin_call.h"

/* --state-dir, else the directory the daemon names in its Hello (*from_daemon set), else
 * the default. */
const char *nndctl_state_dir(const nndctl_opts *o, char *buf, size_t len, bool *from_daemon) {
    *from_daemon = false;
    if (o->state_dir) return o->state_dir;
    char err[256];
    nnd_client *c = nnd_client_connect(o->socket_path, "nndctl", err, sizeof err);
    const char *dir = c ? nnd_client_daemon_state_dir(c) : "";
    if (*dir && (size_t)snprintf(buf, len, "%s", dir) < len) *from_daemon = true;
    nnd_client_close(c);
    return *from_daemon ? buf : proto_default_state_dir(buf, len);
}

/* Whether the bus socket at an ipc:// url can be opened, and if not, why: err says so and
 * the errno is returned (ENOENT: not there; EACCES: not this user's to open). */
int nndctl_ipc_check(const char *url, const char *what, bool from_daemon, char *err,
                     size_t errlen) {
    const char *path = url + 6;
    struct stat st;
    int e = stat(path, &st) < 0 ? errno : access(path, R_OK | W_OK) < 0 ? errno : 0;
    if (e == EACCES || e == EPERM)
        snprintf(err, errlen,
                 "permission denied: %s (the daemon's %s bus is its user's alone; run as "
                 "that user or root)",
                 path, what);
    else if (e == ENOENT && from_daemon)
        snprintf(err, errlen,
                 "no %s socket at %s, the daemon's state directory (its bus is off: see its "
                 "log; a daemon in a container names its own path: give --state-dir)",
                 what, path);
    else if (e == ENOENT)
        snprintf(err, errlen,
                 "no %s socket at %s (no daemon answered on its socket; give "
                 "--socket or --state-dir)",
                 what, path);
    else if (e)
        snprintf(err, errlen, "cannot use %s: %s", path, strerror(e));
    return e;
}

char *nndctl_admin_request(const nndctl_opts *o, const char *request, int timeout_ms, char *err,
                           size_t errlen) {
    char buf[512], url[600];
    bool from_daemon;
    const char *dir = nndctl_state_dir(o, buf, sizeof buf, &from_daemon);
    if (!dir || !proto_admin_url(dir, url, sizeof url)) {
        snprintf(err, errlen, "state directory path too long");
        return NULL;
    }
    if (nndctl_ipc_check(url, "admin", from_daemon, err, errlen)) return NULL;
    return tool_admin_call(url, request, timeout_ms, err, errlen);
}

char *nndctl_admin_or_say(const nndctl_opts *o, const char *request, int timeout_ms) {
    char err[700];
    char *text = nndctl_admin_request(o, request, timeout_ms, err, sizeof err);
    if (!text) fprintf(stderr, "nndctl: daemon unreachable: %s\n", err);
    return text;
}
