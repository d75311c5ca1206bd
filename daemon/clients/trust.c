/* SPDX-License-Identifier: Apache-2.0 */
/* trust.c: ownership and mode checks on the paths the daemon trusts. See trust.h. */
#include "daemon/clients/trust.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool srv_trust_owner(uid_t uid) {
    if (uid == 0 || uid == geteuid()) return true;
    const char *sudo = geteuid() == 0 ? getenv("SUDO_UID") : NULL;
    char *end;
    unsigned long v = sudo && *sudo ? strtoul(sudo, &end, 10) : 0;
    return sudo && *sudo && !*end && v == (unsigned long)uid;
}

/* Why st (of path) is not to be trusted, or NULL. self: the object itself, not a
 * directory above it. */
static const char *why_not(const struct stat *st, bool self, int flags, char *buf, size_t len) {
    if (!srv_trust_owner(st->st_uid)) {
        snprintf(buf, len, "owned by uid %u, not root or the daemon's user", (unsigned)st->st_uid);
        return buf;
    }
    bool shared = st->st_mode & (S_IWGRP | S_IWOTH);
    bool sticky = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX);
    if (shared && (!sticky || (self && !(flags & SRV_TRUST_STICKY)))) {
        snprintf(buf, len, "writable by %s (mode %04o)",
                 st->st_mode & S_IWOTH ? "others" : "its group", (unsigned)(st->st_mode & 07777));
        return buf;
    }
    return NULL;
}

int srv_trust_path(const char *path, const char *what, int flags, char *err, size_t errlen) {
    char real[PATH_MAX], why[128];
    if (!realpath(path, real)) {
        snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(real, &st) < 0) {
        snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
        return -1;
    }
    if ((flags & SRV_TRUST_DIR) && !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s %s is not a directory", what, path);
        return -1;
    }
    if ((flags & SRV_TRUST_FILE) && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s %s is not a regular file", what, path);
        return -1;
    }
    /* The object, then each directory above it, up to /. */
    for (bool self = true;; self = false) {
        if (!self && stat(real[0] ? real : "/", &st) < 0) {
            snprintf(err, errlen, "%s %s: %s: %s", what, path, real[0] ? real : "/",
                     strerror(errno));
            return -1;
        }
        if (why_not(&st, self, flags, why, sizeof why)) {
            snprintf(err, errlen, "%s %s is not safe: %s is %s", what, path, real[0] ? real : "/",
                     why);
            return -1;
        }
        if (!real[0]) return 0;
        char *slash = strrchr(real, '/');
        *slash = '\0'; /* "/a/b" -> "/a"; "/a" -> "" (the root) */
    }
}

int srv_trust_fd(int fd, const char *path, char *err, size_t errlen) {
    struct stat st;
    char why[128];
    if (fstat(fd, &st) < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "not a regular file");
        return -1;
    }
    if (why_not(&st, true, 0, why, sizeof why)) {
        snprintf(err, errlen, "%s is %s", path, why);
        return -1;
    }
    return 0;
}

int srv_trust_daemon_paths(const char *state_dir, const char *socket_path,
                           const char *extensions_dir, const char *allowlist, char *err,
                           size_t errlen) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", socket_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    if (!slash || !dir[0]) snprintf(dir, sizeof dir, "%s", slash ? "/" : ".");
    struct stat st;
    if (state_dir && srv_trust_path(state_dir, "state directory", SRV_TRUST_DIR, err, errlen) < 0)
        return -1;
    if (srv_trust_path(dir, "socket directory", SRV_TRUST_DIR | SRV_TRUST_STICKY, err, errlen) < 0)
        return -1;
    if (extensions_dir && stat(extensions_dir, &st) == 0 &&
        srv_trust_path(extensions_dir, "extensions directory", SRV_TRUST_DIR, err, errlen) < 0)
        return -1;
    if (allowlist &&
        srv_trust_path(allowlist, "extensions allowlist", SRV_TRUST_FILE, err, errlen) < 0)
        return -1;
    return 0;
}
