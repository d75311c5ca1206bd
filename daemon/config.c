/* SPDX-License-Identifier: Apache-2.0 */
/* config.c: keys, values and the config file. See config.h. */
#include "daemon/config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/cache/cache.h"
#include "daemon/base/daemon.h"
#include "daemon/clients/session.h"
#include "daemon/clients/trust.h"
#include "driverhost/drvhost.h"

typedef enum kind {
    K_STRING,  /* a path or name */
    K_LEVEL,   /* a log level */
    K_BYTES,   /* bytes with an optional K, M or G */
    K_COUNT,   /* an unsigned in [min, max] */
    K_PREEMPT, /* resume or restart */
} kind;

typedef struct key {
    const char *name;
    kind k;
    size_t off, size;  /* the field in srv_config */
    uint64_t min, max; /* K_COUNT */
    bool reload;       /* a reload applies it (reload.h); the others wait for a restart */
    const char *about; /* the shipped file's comment (srv_config_print_template) */
    const char *shown; /* the default as the shipped file shows it; NULL: the value */
} key;

#define AT(field) offsetof(srv_config, field), sizeof(((srv_config *)0)->field)
#define APP(r)    AT(quota.app[r])
#define CONN(r)   AT(quota.conn[r])

static const key keys[] = {
    {"socket", K_STRING, AT(socket_path), 0, 0, false,
     "The client socket. Default: $NND_SOCKET, $XDG_RUNTIME_DIR/nnd.sock, or the system\n"
     "service's; under systemd, the socket nnd.socket passes (this only names it).",
     "/run/nnd/nnd.sock"},
    {"state_dir", K_STRING, AT(state_dir), 0, 0, false,
     "Cache index and store, admin and event bus. Default: $NND_STATE_DIR, /var/lib/nnd\n"
     "for root, else $XDG_STATE_HOME/nnd.",
     "/var/lib/nnd"},
    {"log_level", K_LEVEL, AT(log_level), 0, 0, true, "error, warn, info or debug.", NULL},
    {"cache_max_bytes", K_BYTES, AT(cache_max_bytes), 0, 0, false,
     "The content cache's cap (K, M, G; 0 turns the content cache off).", NULL},
    {"cache_save_max_bytes", K_BYTES, AT(cache_save_max_bytes), 0, 0, false,
     "Models with more bytes of constants are not saved to client cache files (0: no limit).",
     NULL},
    {"driver_build_id", K_STRING, AT(build_id), 0, 0, false,
     "The build id that scopes cache entries. Default: this build's.", "ID"},
    {"extensions_dir", K_STRING, AT(extensions_dir), 0, 0, false,
     "Vendor extension plugins (*.so). Default: lib/nnd/extensions beside nnd's bin folder\n"
     "(/usr/lib/<multiarch>/nnd/extensions for the Debian package).",
     "DIR"},
    {"extensions_allowlist", K_STRING, AT(allowlist), 0, 0, true,
     "Who may use vendor extensions: a file with one executable path or user a line.\n"
     "Default: none, nobody may.",
     "FILE"},
    {"drivers_dir", K_STRING, AT(drivers_dir), 0, 0, false,
     "Device driver plugins (*.so), loaded at start. Default: lib/nnd/drivers beside nnd's\n"
     "bin folder.",
     "DIR"},
    {"drivers_in_process", K_COUNT, AT(drivers_in_process), 0, 1, false,
     "1: driver plugins load into the daemon itself (trusted drivers, debugging); 0: each in a\n"
     "driver host process of its own (docs/driver-host.md).",
     NULL},
    {"driver_call_timeout_ms", K_COUNT, AT(drivers.call_timeout_ms), 10, 3600000, false,
     "Driver hosts: an execution (without a deadline) or another call that the driver does\n"
     "not answer within this many milliseconds kills and restarts its host.",
     NULL},
    {"driver_memory_limit", K_BYTES, AT(drivers.memory_limit_bytes), 0, 0, false,
     "Driver hosts: a host whose anonymous resident memory passes this is restarted.", NULL},
    {"driver_max_restarts", K_COUNT, AT(drivers.max_restarts), 1, 1000, false,
     "Driver hosts: a driver restarted more often than this within driver_restart_window_ms\n"
     "is disabled until the daemon restarts.",
     NULL},
    {"driver_restart_window_ms", K_COUNT, AT(drivers.restart_window_ms), 1000, 86400000, false,
     NULL, NULL},
    {"workers", K_COUNT, AT(sched.workers), 1, 64, false,
     "Executions nnd-cpu runs at once (1: one at a time, for predictable latency).", NULL},
    {"device_workers", K_COUNT, AT(sched.lane_workers), 1, 64, false,
     "Executions each other device (nnd-reference, each driver) runs at once.", NULL},
    {"preempt", K_PREEMPT, AT(sched.restart), 0, 0, false,
     "Preempted executions resume, or restart from the start.", NULL},
    {"app_queue", K_COUNT, AT(sched.app_queue), 1, 1u << 20, false,
     "Queued executions per app (uid).", NULL},
    {"app_memory", K_BYTES, AT(sched.app_memory), 0, 0, false,
     "Execution memory per app, queued and running.", NULL},
    {"device_memory", K_BYTES, AT(sched.device_memory), 0, 0, false,
     "The most memory one execution may need.", NULL},
    {"worker_nice", K_COUNT, AT(sched.worker_nice), 0, 19, false,
     "The workers' nice value above the event loop's (0 to 19).", NULL},
    {"quota.app.connections", K_COUNT, APP(SRV_QUOTA_CONNECTIONS), 0, UINT32_MAX, true,
     "Quotas per app (uid, all its connections together); 0: unlimited.", NULL},
    {"quota.app.prepared_models", K_COUNT, APP(SRV_QUOTA_PREPARED_MODELS), 0, UINT32_MAX, true,
     NULL, NULL},
    {"quota.app.buffers", K_COUNT, APP(SRV_QUOTA_BUFFERS), 0, UINT32_MAX, true, NULL, NULL},
    {"quota.app.buffer_bytes", K_BYTES, APP(SRV_QUOTA_BUFFER_BYTES), 0, 0, true, NULL, NULL},
    {"quota.app.queued_executions", K_COUNT, APP(SRV_QUOTA_QUEUED_EXECUTIONS), 0, UINT32_MAX, true,
     NULL, NULL},
    {"quota.app.prepared_bytes", K_BYTES, APP(SRV_QUOTA_PREPARED_BYTES), 0, 0, true,
     "(the memory its prepared models hold: packed weights, copies, plans, arenas)", NULL},
    {"quota.app.mappings", K_COUNT, APP(SRV_QUOTA_MAPPINGS), 0, UINT32_MAX, true, NULL, NULL},
    {"quota.app.descriptors", K_COUNT, APP(SRV_QUOTA_DESCRIPTORS), 0, UINT32_MAX, true,
     "(at most a quarter of the daemon's descriptor limit)", NULL},
    {"quota.app.cache_bytes", K_BYTES, APP(SRV_QUOTA_CACHE_BYTES), 0, 0, true, NULL, NULL},
    {"quota.app.cache_tokens", K_COUNT, APP(SRV_QUOTA_CACHE_TOKENS), 0, UINT32_MAX, true, NULL,
     NULL},
    {"quota.connection.prepared_models", K_COUNT, CONN(SRV_QUOTA_PREPARED_MODELS), 0,
     SRV_SESSION_MAX_OBJECTS, true, "Quotas per connection; 0: unlimited.", NULL},
    {"quota.connection.buffers", K_COUNT, CONN(SRV_QUOTA_BUFFERS), 0, SRV_SESSION_MAX_OBJECTS, true,
     NULL, NULL},
    {"quota.connection.buffer_bytes", K_BYTES, CONN(SRV_QUOTA_BUFFER_BYTES), 0, 0, true, NULL,
     NULL},
    {"quota.connection.prepared_bytes", K_BYTES, CONN(SRV_QUOTA_PREPARED_BYTES), 0, 0, true, NULL,
     NULL},
    {"quota.connection.queued_executions", K_COUNT, CONN(SRV_QUOTA_QUEUED_EXECUTIONS), 0,
     UINT32_MAX, true, NULL, NULL},
};
#define N_KEYS (sizeof keys / sizeof keys[0])

/* The default plugin and driver directories. */
static void srv_config_default(srv_config *c, const char *extensions_dir, const char *drivers_dir) {
    memset(c, 0, sizeof *c);
    c->drivers_dir = drivers_dir;
    c->build_id = SRV_DRIVER_BUILD_ID;
    c->extensions_dir = extensions_dir;
    c->log_level = SRV_LOG_INFO;
    c->cache_max_bytes = SRV_CACHE_DEFAULT_MAX_BYTES;
    c->cache_save_max_bytes = SRV_CACHE_DEFAULT_SAVE_MAX_BYTES;
    c->drivers = (srv_driver_limits){DRVHOST_CALL_TIMEOUT_MS, DRVHOST_MEMORY_LIMIT,
                                     DRVHOST_MAX_RESTARTS, DRVHOST_RESTART_WINDOW_MS};
    qos_sched_config_default(&c->sched);
    srv_quota_limits_default(&c->quota);
}

void srv_config_clear(srv_config *c) {
    for (size_t i = 0; i < c->n_strings; i++)
        free(c->strings[i]);
    c->n_strings = 0;
}

void srv_config_move(srv_config *to, srv_config *from) {
    srv_config_clear(to);
    *to = *from;
    from->n_strings = 0;
}

/* "256M", "1G", "4096": bytes with an optional binary suffix. Returns 0 or -1. */
static int parse_bytes(const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || !isdigit((unsigned char)*s)) return -1;
    int shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end || (shift && v > (~0ull >> shift))) return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || !isdigit((unsigned char)*s) || v < min || v > max) return -1;
    *out = v;
    return 0;
}

static const key *find_key(const char *name) {
    for (size_t i = 0; i < N_KEYS; i++)
        if (!strcmp(keys[i].name, name)) return &keys[i];
    return NULL;
}

/* Whether quota.app.<res> exists. */
static bool find_key_app(const char *res) {
    char name[64];
    snprintf(name, sizeof name, "quota.app.%s", res);
    return find_key(name) != NULL;
}

/* Sets key from value (borrowed: it must outlive c, as argv does). 0, or -1 with err
 * saying what is wrong with the value, or -2 when the key is unknown. */
static int srv_config_set(srv_config *c, const char *name, const char *value, char *err,
                          size_t errlen) {
    const key *k = find_key(name);
    if (!k) {
        if (!strcmp(name, "quota.connection.connections"))
            snprintf(err, errlen,
                     "unknown key \"%s\" (a connection is one connection; "
                     "quota.app.connections limits an app's)",
                     name);
        else if (!strncmp(name, "quota.connection.", 17) && find_key_app(name + 17))
            snprintf(err, errlen, "unknown key \"%s\" (counted per app only: quota.app.%s)", name,
                     name + 17);
        else
            snprintf(err, errlen, "unknown key \"%s\"", name);
        return -2;
    }
    void *field = (char *)c + k->off;
    uint64_t v;
    switch (k->k) {
    case K_STRING:
        if (!*value) {
            snprintf(err, errlen, "an empty value");
            return -1;
        }
        *(const char **)field = value;
        return 0;
    case K_LEVEL:
        if (srv_log_parse_level(value, field) < 0) {
            snprintf(err, errlen, "\"%s\" is not error, warn, info or debug", value);
            return -1;
        }
        return 0;
    case K_PREEMPT:
        if (strcmp(value, "resume") && strcmp(value, "restart")) {
            snprintf(err, errlen, "\"%s\" is not resume or restart", value);
            return -1;
        }
        *(bool *)field = !strcmp(value, "restart");
        return 0;
    case K_BYTES:
        if (parse_bytes(value, &v) < 0) {
            snprintf(err, errlen, "\"%s\" is not a byte size (digits, then K, M or G if you like)",
                     value);
            return -1;
        }
        *(uint64_t *)field = v;
        return 0;
    case K_COUNT:
        if (parse_count(value, k->min, k->max, &v) < 0) {
            snprintf(err, errlen, "\"%s\" is not a whole number from %llu to %llu%s", value,
                     (unsigned long long)k->min, (unsigned long long)k->max,
                     !strncmp(name, "quota.", 6) ? " (0: unlimited)" : "");
            return -1;
        }
        /* The quotas are uint64_t; the scheduler's counts unsigned or int, max fits both. */
        if (k->size == sizeof(uint64_t))
            *(uint64_t *)field = v;
        else
            *(unsigned *)field = (unsigned)v;
        return 0;
    }
    return -1;
}

/* Strips leading and trailing blanks in place. */
static char *trim(char *s) {
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* Reads a config file into c. 0, or -1 with err as "FILE:LINE: ...". */
static int srv_config_load(srv_config *c, const char *path, char *err, size_t errlen) {
    /* Settings name paths and plugins the daemon trusts: only its own users may write them. */
    if (srv_trust_path(path, "config file", SRV_TRUST_FILE, err, errlen) < 0) return -1;
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(err, errlen, "cannot read config file %s: %s", path, strerror(errno));
        return -1;
    }
    unsigned seen[N_KEYS] = {0}; /* the line each key was set on */
    char *line = NULL, why[256];
    size_t cap = 0;
    unsigned lineno = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        /* A comment starts with '#' at the start or after a blank. */
        for (char *p = line; *p; p++)
            if (*p == '#' && (p == line || isspace((unsigned char)p[-1]))) {
                *p = '\0';
                break;
            }
        char *text = trim(line);
        if (!*text) continue;
        char *eq = strchr(text, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%u: expected \"key = value\", got \"%.80s\"", path, lineno,
                     text);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *name = trim(text), *value = trim(eq + 1);
        const key *k = find_key(name);
        if (k && seen[k - keys]) {
            snprintf(err, errlen, "%s:%u: %s is set again (first on line %u)", path, lineno, name,
                     seen[k - keys]);
            rc = -1;
            break;
        }
        if (k && k->k == K_STRING && *value) {
            /* Strings must outlive the file's buffer. */
            char *copy = c->n_strings < SRV_CONFIG_MAX_STRINGS ? strdup(value) : NULL;
            if (!copy) {
                snprintf(err, errlen, "%s:%u: %s: %s", path, lineno, name,
                         c->n_strings < SRV_CONFIG_MAX_STRINGS ? "out of memory"
                                                               : "too many paths set in all");
                rc = -1;
                break;
            }
            c->strings[c->n_strings++] = copy;
            value = copy;
        }
        int set = srv_config_set(c, name, value, why, sizeof why);
        if (set == -2)
            snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
        else if (set < 0)
            snprintf(err, errlen, "%s:%u: %s: %s", path, lineno, name, why);
        if (set < 0) rc = -1;
        if (k) seen[k - keys] = lineno;
    }
    if (rc == 0 && ferror(f)) {
        snprintf(err, errlen, "cannot read config file %s: %s", path, strerror(errno));
        rc = -1;
    }
    free(line);
    fclose(f);
    return rc;
}

/* ---- values as text, the shipped file, differences ---------------------------------- */

/* A byte size with the largest binary suffix that keeps it exact ("256M", "4096"). */
static void format_bytes(uint64_t v, char *buf, size_t len) {
    static const char suffix[] = "GMK";
    for (int i = 0; i < 3; i++) {
        int shift = 30 - 10 * i;
        if (v && v % (1ull << shift) == 0) {
            snprintf(buf, len, "%llu%c", (unsigned long long)(v >> shift), suffix[i]);
            return;
        }
    }
    snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* k's value in c as the file would give it; strings not set are "" (the default). */
static void format_value(const key *k, const srv_config *c, char *buf, size_t len) {
    const void *field = (const char *)c + k->off;
    uint64_t v;
    switch (k->k) {
    case K_STRING: {
        const char *s = *(const char *const *)field;
        snprintf(buf, len, "%s", s ? s : "");
        return;
    }
    case K_LEVEL:
        snprintf(buf, len, "%s", srv_log_level_name(*(const srv_log_level *)field));
        return;
    case K_PREEMPT: snprintf(buf, len, "%s", *(const bool *)field ? "restart" : "resume"); return;
    case K_BYTES: format_bytes(*(const uint64_t *)field, buf, len); return;
    case K_COUNT:
        v = k->size == sizeof(uint64_t) ? *(const uint64_t *)field : *(const unsigned *)field;
        snprintf(buf, len, "%llu", (unsigned long long)v);
        return;
    }
}

void srv_config_print_template(FILE *f) {
    srv_config dflt;
    srv_config_default(&dflt, NULL, NULL);
    fprintf(f, "# /etc/nnd/nnd.conf: settings of the nnd daemon, see nnd.conf(5). Every key is\n"
               "# here, commented out, with its default. Files /etc/nnd/nnd.conf.d/*.conf are\n"
               "# read after this one, in name order, and win over it; options on nnd's command\n"
               "# line win over both. `systemctl reload nnd` (or SIGHUP) applies log_level,\n"
               "# extensions_allowlist and the quota.* keys; the others need a restart.\n"
               "# Generated by `nnd --print-config-template`.\n");
    for (size_t i = 0; i < N_KEYS; i++) {
        const key *k = &keys[i];
        if (k->about) {
            fprintf(f, "\n# ");
            for (const char *p = k->about; *p; p++)
                fputs(*p == '\n' ? "\n# " : (char[]){*p, 0}, f);
            fputc('\n', f);
        }
        char v[64];
        format_value(k, &dflt, v, sizeof v);
        fprintf(f, "#%s = %s\n", k->name, k->shown ? k->shown : v);
    }
}

void srv_config_diff(const srv_config *was, const srv_config *now, srv_config_change_fn fn,
                     void *ctx) {
    for (size_t i = 0; i < N_KEYS; i++) {
        char a[512], b[512];
        format_value(&keys[i], was, a, sizeof a);
        format_value(&keys[i], now, b, sizeof b);
        if (strcmp(a, b)) fn(keys[i].name, a, b, keys[i].reload, ctx);
    }
}

void srv_config_keep(srv_config *c, const srv_config *from, bool reloadable) {
    for (size_t i = 0; i < N_KEYS; i++)
        if (keys[i].reload == reloadable)
            memcpy((char *)c + keys[i].off, (const char *)from + keys[i].off, keys[i].size);
}

/* ---- every source in order ------------------------------------------------------------- */

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads every *.conf of dir in name order; a missing dir is none. 0, or -1 with err. */
static int load_dropins(srv_config *c, const char *dir, char *err, size_t errlen) {
    DIR *dh = opendir(dir);
    if (!dh) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        snprintf(err, errlen, "cannot read %s: %s", dir, strerror(errno));
        return -1;
    }
    char *names[256];
    size_t n = 0;
    int rc = 0;
    for (struct dirent *e; (e = readdir(dh));) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".conf")) continue;
        if (n == sizeof names / sizeof *names || !(names[n] = strdup(e->d_name))) {
            snprintf(err, errlen, "%s: too many files", dir);
            rc = -1;
            break;
        }
        n++;
    }
    closedir(dh);
    qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        if (rc == 0 && (size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= sizeof path) {
            snprintf(err, errlen, "%s: a path too long", dir);
            rc = -1;
        }
        if (rc == 0 && (rc = srv_config_load(c, path, err, errlen)) == 0) {
            size_t at = strlen(c->files);
            snprintf(c->files + at, sizeof c->files - at, ", %s", path);
        }
        free(names[i]);
    }
    return rc;
}

int srv_config_read(srv_config *c, const srv_config_source *src, char *err, size_t errlen) {
    srv_config_default(c, src->extensions_dir, src->drivers_dir);
    const char *path = src->path ? src->path : SRV_CONFIG_DEFAULT_PATH;
    /* The default file is optional; a file named on the command line is not. */
    bool present = src->path || access(path, F_OK) == 0;
    if (present && srv_config_load(c, path, err, errlen) < 0) return -1;
    if (present) snprintf(c->files, sizeof c->files, "%s", path);
    char dir[2048];
    if ((size_t)snprintf(dir, sizeof dir, "%s.d", path) >= sizeof dir) {
        snprintf(err, errlen, "%s: a path too long", path);
        return -1;
    }
    if (load_dropins(c, dir, err, errlen) < 0) return -1;
    if (c->files[0] == ',') memmove(c->files, c->files + 2, strlen(c->files + 2) + 1);
    for (size_t i = 0; i < src->n_settings; i++) {
        char why[256];
        if (srv_config_set(c, src->keys[i], src->values[i], why, sizeof why) < 0) {
            snprintf(err, errlen, "--%s: %s", src->options[i], why);
            return -1;
        }
    }
    return 0;
}
