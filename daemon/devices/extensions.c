/* SPDX-License-Identifier: Apache-2.0 */
/* extensions.c: plugin loading and the allowlist. See extensions.h. */
#include "daemon/devices/extensions.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daemon/base/bus.h"
#include "engine/plugins/extension.h"
#include "daemon/base/log.h"
#include "daemon/clients/trust.h"

typedef struct srv_allowlist {
    char **exes; /* canonical executable paths */
    size_t n_exes;
    uid_t *uids;
    size_t n_uids;
} srv_allowlist;

static void allowlist_free(srv_allowlist *a) {
    if (!a) return;
    for (size_t i = 0; i < a->n_exes; i++)
        free(a->exes[i]);
    free(a->exes);
    free(a->uids);
    free(a);
}

static void ext_log(int level, const char *msg) {
    srv_log((srv_log_level)level, "%s", msg);
}

/* Adds one trimmed, non-comment line. Unusable entries are logged and skipped. */
static int allowlist_add(srv_allowlist *a, const char *path, unsigned line, char *e) {
    if (e[0] == '/') {
        char real[PATH_MAX];
        /* A program not installed yet cannot connect either: keep the path as written. */
        const char *p = realpath(e, real) ? real : e;
        char **x = realloc(a->exes, sizeof *x * (a->n_exes + 1));
        if (!x) return -1;
        a->exes = x;
        if (!(a->exes[a->n_exes] = strdup(p))) return -1;
        a->n_exes++;
        return 0;
    }
    uid_t uid;
    char *end;
    errno = 0;
    unsigned long v = strtoul(e, &end, 10);
    struct passwd *pw;
    if (*e && !*end && !errno && v < (unsigned long)(uid_t)-1) {
        uid = (uid_t)v;
    } else if ((pw = getpwnam(e))) {
        uid = pw->pw_uid;
    } else {
        srv_log_warn("%s:%u: \"%s\" is neither a path nor a known user; ignored", path, line, e);
        return 0;
    }
    uid_t *u = realloc(a->uids, sizeof *u * (a->n_uids + 1));
    if (!u) return -1;
    a->uids = u;
    a->uids[a->n_uids++] = uid;
    return 0;
}

static srv_allowlist *allowlist_load(const char *path, char *err, size_t errlen) {
    /* A list another user may edit allows whom that user likes: refuse it (trust.h), on
     * its path and again on the file opened. */
    if (srv_trust_path(path, "extensions allowlist", SRV_TRUST_FILE, err, errlen) < 0) return NULL;
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "cannot read extensions allowlist %s: %s", path, strerror(errno));
        return NULL;
    }
    char why[256];
    if (srv_trust_fd(fileno(f), path, why, sizeof why) < 0) {
        snprintf(err, errlen, "extensions allowlist %s is not safe: %s", path, why);
        fclose(f);
        return NULL;
    }
    srv_allowlist *a = calloc(1, sizeof *a);
    char buf[PATH_MAX + 64];
    unsigned line = 0;
    while (a && fgets(buf, sizeof buf, f)) {
        line++;
        char *s = buf, *end = buf + strlen(buf);
        while (*s == ' ' || *s == '\t')
            s++;
        while (end > s && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
            *--end = '\0';
        if (!*s || *s == '#') continue;
        if (allowlist_add(a, path, line, s) < 0) {
            allowlist_free(a);
            a = NULL;
        }
    }
    fclose(f);
    if (!a) snprintf(err, errlen, "out of memory reading %s", path);
    return a;
}

int srv_extensions_load(srv_daemon *d, char *err, size_t errlen) {
    eng_ext_set_log(ext_log);
    eng_ext_set_file_check(srv_trust_fd);
    char derr[512];
    struct stat st;
    /* At start main() checked it; a reload checks again (trust.h). */
    int n = d->extensions_dir && stat(d->extensions_dir, &st) == 0 &&
                    srv_trust_path(d->extensions_dir, "extensions directory", SRV_TRUST_DIR, derr,
                                   sizeof derr) < 0
                ? -1
            : d->extensions_dir ? eng_ext_load_dir(d->extensions_dir, derr, sizeof derr)
                                : 0;
    if (n < 0) {
        srv_log_info("no vendor extensions: %s", derr);
        n = 0;
    }
    allowlist_free(d->allowlist);
    d->allowlist = NULL;
    int rc = 0;
    if (d->allowlist_path) {
        d->allowlist = allowlist_load(d->allowlist_path, err, errlen);
        if (!d->allowlist) rc = -1;
    }
    const srv_allowlist *a = d->allowlist;
    if (n)
        srv_log_info("%d vendor extension%s loaded from %s; %s", n, n == 1 ? "" : "s",
                     d->extensions_dir,
                     !a ? "no allowlist: no client may use them"
                        : "the allowlist says which clients may use them");
    if (a)
        srv_log_info("extensions allowlist %s: %zu programs, %zu users", d->allowlist_path,
                     a->n_exes, a->n_uids);
    return rc;
}

void srv_extensions_close(srv_daemon *d) {
    eng_ext_unload_all();
    allowlist_free(d->allowlist);
    d->allowlist = NULL;
}

bool srv_extensions_allowed(const srv_daemon *d, const srv_session *s) {
    const srv_allowlist *a = d->allowlist;
    if (!a) return false;
    for (size_t i = 0; i < a->n_uids; i++)
        if (a->uids[i] == s->uid) return true;
    /* exe is "" when it could not be read: no path entry matches that. */
    for (size_t i = 0; s->exe[0] && i < a->n_exes; i++)
        if (!strcmp(a->exes[i], s->exe)) return true;
    return false;
}

cJSON *srv_extensions_json(const srv_daemon *d) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "dir", d->extensions_dir ? d->extensions_dir : "");
    cJSON_AddStringToObject(o, "allowlist", d->allowlist_path ? d->allowlist_path : "");
    const srv_allowlist *a = d->allowlist;
    cJSON_AddNumberToObject(o, "allowlist_entries", a ? (double)(a->n_exes + a->n_uids) : 0);
    srv_json_add_u64(o, "faults", eng_ext_faults());
    cJSON *loaded = cJSON_AddArrayToObject(o, "loaded");
    eng_ext_info x;
    for (uint32_t i = 0; loaded && eng_ext_get(i, &x); i++) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        cJSON_AddStringToObject(e, "name", x.name);
        cJSON_AddStringToObject(e, "version", x.version);
        cJSON_AddStringToObject(e, "path", x.path);
        cJSON_AddNumberToObject(e, "operand_types", x.n_operand_types);
        cJSON_AddNumberToObject(e, "operations", x.n_operations);
        cJSON_AddBoolToObject(e, "oem", x.oem);
        cJSON_AddBoolToObject(e, "faulted", x.faulted);
        cJSON_AddItemToArray(loaded, e);
    }
    cJSON *refused = cJSON_AddArrayToObject(o, "refused");
    const char *path, *why;
    for (uint32_t i = 0; refused && eng_ext_refused(i, &path, &why); i++) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        cJSON_AddStringToObject(e, "path", path);
        cJSON_AddStringToObject(e, "reason", why);
        cJSON_AddItemToArray(refused, e);
    }
    return o;
}
