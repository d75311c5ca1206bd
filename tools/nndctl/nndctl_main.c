/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl_main.c: command dispatch and the metrics, events, cache and reload
 * commands (info: nndctl_info.c, status: nndctl_status.c; the buses: nndctl_admin.c). See nndctl.h.
 */
#include "tools/nndctl/nndctl.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <nanomsg/nn.h>
#include <nanomsg/pubsub.h>
#include <nanomsg/reqrep.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/conformance/conformance.h"
#include "nnd/nnd_wire.h"
#include "proto/paths.h"
#include "metrics/prom.h"

static void usage(FILE *f) {
    char sock[512], dir[512];
    fprintf(
        f,
        "usage: nndctl [--socket PATH] [--state-dir DIR] COMMAND [ARGS]\n"
        "       nndctl -V|--version | -h|--help\n"
        "\n"
        "  --socket PATH     the daemon's socket; default $NND_SOCKET, else\n"
        "                    $XDG_RUNTIME_DIR/nnd.sock if it exists, else /run/nnd/nnd.sock\n"
        "                    (here: %s)\n"
        "  --state-dir DIR   the daemon's state directory, home of its admin and event bus;\n"
        "                    default: the one the daemon at the socket reports, else\n"
        "                    $NND_STATE_DIR, /var/lib/nnd for root, $XDG_STATE_HOME/nnd or\n"
        "                    ~/.local/state/nnd (here: %s)\n"
        "\n"
        "commands:\n"
        "  info [--json]                        version, devices (one line each, with its\n"
        "                                       type), capabilities\n"
        "  conformance [--jobs N] [--device NAME] [--exact] [--verbose] PATH...\n"
        "                                       run conformance vectors (files or folders,\n"
        "                                       NND_RECORD recordings too); --device: on\n"
        "                                       that device alone (names: see info);\n"
        "                                       --exact: 8-bit outputs to the bit\n"
        "  conformance --bisect --device A --device B [--verbose] PATH...\n"
        "                                       the first operation where A and B part\n"
        "  status [--json]                      the daemon's status from the admin bus: a\n"
        "                                       summary, or with --json every field\n"
        "  metrics                              status in the Prometheus text format\n"
        "  events [--count N]                   print bus events as JSON lines\n"
        "  cache list                           the daemon's content cache, one line per model\n"
        "  cache purge                          empty the content cache and the token index\n"
        "  reload                               reread the config files (as SIGHUP), reload\n"
        "                                       extension plugins and the allowlist\n",
        proto_client_socket_path(sock, sizeof sock) ? sock : "(too long)",
        proto_default_state_dir(dir, sizeof dir) ? dir : "(too long)");
}

/* ---- metrics -------------------------------------------------------------------------- */

static int nndctl_metrics(const nndctl_opts *o, int argc, char **argv) {
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "nndctl metrics: takes no arguments\n");
        return 2;
    }
    char *text = nndctl_admin_or_say(o, "{\"cmd\":\"status\"}", 5000);
    if (!text) return 1;
    cJSON *j = cJSON_Parse(text);
    char *unmapped = NULL;
    char *prom = met_prom_render(j, &unmapped);
    int rc = 0;
    if (!prom) {
        fprintf(stderr, "nndctl: the daemon's status is not a JSON object: %.200s\n", text);
        rc = 1;
    } else {
        fputs(prom, stdout);
    }
    /* A daemon newer than this nndctl: what it adds is named, the rest still printed. */
    if (unmapped) fprintf(stderr, "nndctl metrics: status fields not exported: %s\n", unmapped);
    free(unmapped);
    free(prom);
    cJSON_Delete(j);
    free(text);
    return rc;
}

/* ---- events --------------------------------------------------------------------------- */

/* Prints one message as one JSON line. JSON is minified as text (re-printing it through
 * cJSON's doubles would round 64-bit integers); anything else is wrapped as {"raw": "..."}. */
static void print_event(const char *buf, size_t len) {
    char *s = malloc(len + 1);
    if (!s) return;
    memcpy(s, buf, len);
    s[len] = 0;
    cJSON *j = cJSON_ParseWithLength(buf, len);
    if (j && strlen(s) == len) {
        cJSON_Minify(s);
        puts(s);
    } else {
        cJSON_Delete(j);
        j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "raw", s);
        char *line = cJSON_PrintUnformatted(j);
        if (line) puts(line);
        cJSON_free(line);
    }
    fflush(stdout);
    cJSON_Delete(j);
    free(s);
}

static int nndctl_events(const nndctl_opts *o, int argc, char **argv) {
    long count = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--count") && i + 1 < argc) {
            char *end;
            count = strtol(argv[++i], &end, 10);
            if (*end || count < 0) {
                fprintf(stderr, "nndctl events: bad --count %s\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "nndctl events: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    char buf[512], url[600], err[700];
    bool from_daemon;
    const char *dir = nndctl_state_dir(o, buf, sizeof buf, &from_daemon);
    if (!dir || !proto_events_url(dir, url, sizeof url)) {
        fprintf(stderr, "nndctl: state directory path too long\n");
        return 2;
    }
    /* Waiting makes sense only for a daemon not started yet at a known place; a bus this
     * user may not open, or one the running daemon does not have, never appears. */
    int e = nndctl_ipc_check(url, "event", from_daemon, err, sizeof err);
    if (e == ENOENT && !from_daemon) {
        fprintf(stderr, "nndctl: waiting for %s to appear\n", url + 6);
    } else if (e) {
        fprintf(stderr, "nndctl: %s\n", err);
        return 1;
    }
    int s = nn_socket(AF_SP, NN_SUB);
    int unlimited = -1;
    if (s < 0 || nn_setsockopt(s, NN_SUB, NN_SUB_SUBSCRIBE, "", 0) < 0 ||
        nn_setsockopt(s, NN_SOL_SOCKET, NN_RCVMAXSIZE, &unlimited, sizeof unlimited) < 0 ||
        nn_connect(s, url) < 0) {
        fprintf(stderr, "nndctl: cannot subscribe to %s: %s\n", url, nn_strerror(nn_errno()));
        if (s >= 0) nn_close(s);
        return 1;
    }
    int rc = 0;
    for (long seen = 0; count < 0 || seen < count; seen++) {
        void *msg;
        int n = nn_recv(s, &msg, NN_MSG, 0);
        if (n < 0) {
            if (nn_errno() == EINTR) {
                seen--;
                continue;
            }
            fprintf(stderr, "nndctl: receiving events: %s\n", nn_strerror(nn_errno()));
            rc = 1;
            break;
        }
        print_event(msg, (size_t)n);
        nn_freemsg(msg);
    }
    nn_close(s);
    return rc;
}

/* ---- cache --------------------------------------------------------------------------- */

static unsigned long long json_u64(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? (unsigned long long)v->valuedouble : 0;
}

static int nndctl_cache(const nndctl_opts *o, int argc, char **argv) {
    bool list = argc == 2 && !strcmp(argv[1], "list");
    bool purge = argc == 2 && !strcmp(argv[1], "purge");
    if (!list && !purge) {
        fprintf(stderr, "usage: nndctl cache list|purge\n");
        return 2;
    }
    char *text = nndctl_admin_or_say(
        o, list ? "{\"cmd\":\"cache list\"}" : "{\"cmd\":\"cache purge\"}", 5000);
    if (!text) return 1;
    cJSON *j = cJSON_Parse(text);
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(j, "ok");
    int rc = 0;
    if (!cJSON_IsTrue(ok)) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
        fprintf(stderr, "nndctl: %s\n", cJSON_IsString(e) ? e->valuestring : text);
        rc = 1;
    } else if (list) {
        const cJSON *entries = cJSON_GetObjectItemCaseSensitive(j, "entries"), *e;
        printf("%-16s %12s %12s %6s %6s %6s %5s\n", "hash", "model_bytes", "data_bytes", "hits",
               "stored", "memory", "users");
        int n = 0;
        cJSON_ArrayForEach(e, entries) {
            const cJSON *h = cJSON_GetObjectItemCaseSensitive(e, "hash");
            printf("%-16.16s %12llu %12llu %6llu %6s %6s %5llu\n",
                   cJSON_IsString(h) ? h->valuestring : "?", json_u64(e, "model_bytes"),
                   json_u64(e, "data_bytes"), json_u64(e, "hits"),
                   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "stored")) ? "yes" : "no",
                   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "in_memory")) ? "yes" : "no",
                   json_u64(e, "users"));
            n++;
        }
        printf("cache: %d entries\n", n);
    } else {
        printf("cache purged: %llu tokens, %llu store entries, %llu models in memory\n",
               json_u64(j, "tokens"), json_u64(j, "store_entries"), json_u64(j, "memory_models"));
    }
    cJSON_Delete(j);
    free(text);
    return rc;
}

/* ---- reload ---------------------------------------------------------------------------- */

/* Prints one line per extension the daemon loaded and per plugin it refused. */
static void print_extensions(const cJSON *x) {
    const cJSON *e;
    int n = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(x, "loaded")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(e, "path");
        printf("loaded   %s (%s)%s\n", cJSON_IsString(name) ? name->valuestring : "?",
               cJSON_IsString(path) ? path->valuestring : "?",
               cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "faulted")) ? " faulted" : "");
        n++;
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(x, "refused")) {
        const cJSON *path = cJSON_GetObjectItemCaseSensitive(e, "path");
        const cJSON *why = cJSON_GetObjectItemCaseSensitive(e, "reason");
        printf("refused  %s: %s\n", cJSON_IsString(path) ? path->valuestring : "?",
               cJSON_IsString(why) ? why->valuestring : "?");
    }
    const cJSON *allow = cJSON_GetObjectItemCaseSensitive(x, "allowlist");
    printf("extensions: %d loaded; allowlist %s, %llu entries\n", n,
           cJSON_IsString(allow) && *allow->valuestring ? allow->valuestring : "(none)",
           json_u64(x, "allowlist_entries"));
}

static int nndctl_reload(const nndctl_opts *o, int argc, char **argv) {
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: nndctl reload\n");
        return 2;
    }
    char *text = nndctl_admin_or_say(o, "{\"cmd\":\"reload\"}", 10000);
    if (!text) return 1;
    cJSON *j = cJSON_Parse(text);
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, "extensions");
    if (x) print_extensions(x);
    int rc = 0;
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok"))) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
        fprintf(stderr, "nndctl: %s\n", cJSON_IsString(e) ? e->valuestring : text);
        rc = 1;
    }
    cJSON_Delete(j);
    free(text);
    return rc;
}

/* ---- main ----------------------------------------------------------------------------- */

static const struct {
    const char *name;
    int (*run)(const nndctl_opts *, int, char **);
} commands[] = {
    {"info", nndctl_info},       {"conformance", nndctl_conformance},
    {"status", nndctl_status},   {"events", nndctl_events},
    {"cache", nndctl_cache},     {"reload", nndctl_reload},
    {"metrics", nndctl_metrics},
};

int main(int argc, char **argv) {
    nndctl_opts o = {0};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
            printf("nndctl %s\n", TOOL_VERSION);
            return 0;
        } else if (!strcmp(a, "--socket") && i + 1 < argc) {
            o.socket_path = argv[++i];
        } else if (!strncmp(a, "--socket=", 9)) {
            o.socket_path = a + 9;
        } else if (!strcmp(a, "--state-dir") && i + 1 < argc) {
            o.state_dir = argv[++i];
        } else if (!strncmp(a, "--state-dir=", 12)) {
            o.state_dir = a + 12;
        } else {
            fprintf(stderr, "nndctl: unknown option %s\n\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (i == argc) {
        usage(stderr);
        return 2;
    }
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++)
        if (!strcmp(argv[i], commands[k].name)) return commands[k].run(&o, argc - i, argv + i);
    fprintf(stderr, "nndctl: unknown command %s\n\n", argv[i]);
    usage(stderr);
    return 2;
}
