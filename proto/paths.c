/* SPDX-License-Identifier: Apache-2.0 */
/* paths.c: default locations. See paths.h. */
#include "proto/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *fit(char *buf, size_t len, int n) {
    return n < 0 || (size_t)n >= len ? NULL : buf;
}

static const char *env(const char *name) {
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

char *nnd_default_socket_path(char *buf, size_t len) {
    const char *v = env("NND_SOCKET");
    if (v) return fit(buf, len, snprintf(buf, len, "%s", v));
    v = env("XDG_RUNTIME_DIR");
    if (v) return fit(buf, len, snprintf(buf, len, "%s/nnd.sock", v));
    return fit(buf, len, snprintf(buf, len, "/run/nnd/nnd.sock"));
}

char *proto_client_socket_path(char *buf, size_t len) {
    const char *v = env("NND_SOCKET");
    if (v) return fit(buf, len, snprintf(buf, len, "%s", v));
    v = env("XDG_RUNTIME_DIR");
    struct stat st;
    if (v && fit(buf, len, snprintf(buf, len, "%s/nnd.sock", v)) && stat(buf, &st) == 0 &&
        S_ISSOCK(st.st_mode))
        return buf;
    return fit(buf, len, snprintf(buf, len, "/run/nnd/nnd.sock"));
}

char *proto_default_state_dir(char *buf, size_t len) {
    const char *v = env("NND_STATE_DIR");
    if (v) return fit(buf, len, snprintf(buf, len, "%s", v));
    if (geteuid() == 0) return fit(buf, len, snprintf(buf, len, "/var/lib/nnd"));
    v = env("XDG_STATE_HOME");
    if (v) return fit(buf, len, snprintf(buf, len, "%s/nnd", v));
    v = env("HOME");
    if (v) return fit(buf, len, snprintf(buf, len, "%s/.local/state/nnd", v));
    return fit(buf, len, snprintf(buf, len, "/tmp/nnd-%u", (unsigned)geteuid()));
}

char *proto_admin_url(const char *state_dir, char *buf, size_t len) {
    return fit(buf, len, snprintf(buf, len, "ipc://%s/admin.ipc", state_dir));
}

char *proto_events_url(const char *state_dir, char *buf, size_t len) {
    return fit(buf, len, snprintf(buf, len, "ipc://%s/events.ipc", state_dir));
}
