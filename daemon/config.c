/* config.c: keys, values and the config file. See config.h. */
#include "daemon/config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cache/cache.h"
#include "daemon/base/daemon.h"
#include "daemon/clients/session.h"
#include "daemon/clients/trust.h"

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
} key;

#define AT(field) offsetof(srv_config, field), sizeof(((srv_config *)0)->field)
#define APP(r)    AT(quota.app[r])
#define CONN(r)   AT(quota.conn[r])

static const key keys[] = {
    {"socket", K_STRING, AT(socket_path), 0, 0},
    {"state_dir", K_STRING, AT(state_dir), 0, 0},
    {"log_level", K_LEVEL, AT(log_level), 0, 0},
    {"cache_max_bytes", K_BYTES, AT(cache_max_bytes), 0, 0},
    {"cache_save_max_bytes", K_BYTES, AT(cache_save_max_bytes), 0, 0},
    {"driver_build_id", K_STRING, AT(build_id), 0, 0},
    {"extensions_dir", K_STRING, AT(extensions_dir), 0, 0},
    {"extensions_allowlist", K_STRING, AT(allowlist), 0, 0},
    {"drivers_dir", K_STRING, AT(drivers_dir), 0, 0},
    {"workers", K_COUNT, AT(sched.workers), 1, 64},
    {"device_workers", K_COUNT, AT(sched.lane_workers), 1, 64},
    {"preempt", K_PREEMPT, AT(sched.restart), 0, 0},
    {"app_queue", K_COUNT, AT(sched.app_queue), 1, 1u << 20},
    {"app_memory", K_BYTES, AT(sched.app_memory), 0, 0},
    {"device_memory", K_BYTES, AT(sched.device_memory), 0, 0},
    {"worker_nice", K_COUNT, AT(sched.worker_nice), 0, 19},
    {"quota.app.connections", K_COUNT, APP(NND_QUOTA_CONNECTIONS), 0, UINT32_MAX},
    {"quota.app.prepared_models", K_COUNT, APP(NND_QUOTA_PREPARED_MODELS), 0, UINT32_MAX},
    {"quota.app.buffers", K_COUNT, APP(NND_QUOTA_BUFFERS), 0, UINT32_MAX},
    {"quota.app.buffer_bytes", K_BYTES, APP(NND_QUOTA_BUFFER_BYTES), 0, 0},
    {"quota.app.queued_executions", K_COUNT, APP(NND_QUOTA_QUEUED_EXECUTIONS), 0, UINT32_MAX},
    {"quota.app.prepared_bytes", K_BYTES, APP(NND_QUOTA_PREPARED_BYTES), 0, 0},
    {"quota.app.mappings", K_COUNT, APP(NND_QUOTA_MAPPINGS), 0, UINT32_MAX},
    {"quota.app.descriptors", K_COUNT, APP(NND_QUOTA_DESCRIPTORS), 0, UINT32_MAX},
    {"quota.app.cache_bytes", K_BYTES, APP(NND_QUOTA_CACHE_BYTES), 0, 0},
    {"quota.app.cache_tokens", K_COUNT, APP(NND_QUOTA_CACHE_TOKENS), 0, UINT32_MAX},
    {"quota.connection.prepared_models", K_COUNT, CONN(NND_QUOTA_PREPARED_MODELS), 0,
     NND_SESSION_MAX_OBJECTS},
    {"quota.connection.buffers", K_COUNT, CONN(NND_QUOTA_BUFFERS), 0, NND_SESSION_MAX_OBJECTS},
    {"quota.connection.buffer_bytes", K_BYTES, CONN(NND_QUOTA_BUFFER_BYTES), 0, 0},
    {"quota.connection.prepared_bytes", K_BYTES, CONN(NND_QUOTA_PREPARED_BYTES), 0, 0},
    {"quota.connection.queued_executions", K_COUNT, CONN(NND_QUOTA_QUEUED_EXECUTIONS), 0,
     UINT32_MAX},
};
#define N_KEYS (sizeof keys / sizeof keys[0])

void srv_config_default(srv_config *c, const char *extensions_dir, const char *drivers_dir) {
    memset(c, 0, sizeof *c);
    c->drivers_dir = drivers_dir;
    c->build_id = NND_DRIVER_BUILD_ID;
    c->extensions_dir = extensions_dir;
    c->log_level = NND_LOG_INFO;
    c->cache_max_bytes = NND_CACHE_DEFAULT_MAX_BYTES;
    c->cache_save_max_bytes = NND_CACHE_DEFAULT_SAVE_MAX_BYTES;
    qos_sched_config_default(&c->sched);
    srv_quota_limits_default(&c->quota);
}

void srv_config_clear(srv_config *c) {
    for (size_t i = 0; i < c->n_strings; i++)
        free(c->strings[i]);
    c->n_strings = 0;
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

int srv_config_set(srv_config *c, const char *name, const char *value, char *err, size_t errlen) {
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

int srv_config_load(srv_config *c, const char *path, char *err, size_t errlen) {
    /* Settings name paths and plugins the daemon trusts: only its own users may write them. */
    if (srv_trust_path(path, "config file", NND_TRUST_FILE, err, errlen) < 0) return -1;
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
            char *copy = c->n_strings < NND_CONFIG_MAX_STRINGS ? strdup(value) : NULL;
            if (!copy) {
                snprintf(err, errlen, "%s:%u: %s: out of memory", path, lineno, name);
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
