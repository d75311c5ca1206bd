/* SPDX-License-Identifier: Apache-2.0 */
/* nndctl_status.c: `nndctl status [--json]`. The daemon's status reply (its admin bus's
 * "status", a JSON object) printed as a short summary: units, device types by name, only
 * the latency histograms that counted something, one line per device, app and client. With
 * --json the reply itself, every field, for scripts. */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/nndctl/nndctl.h"
#include "tools/nndctl/nndctl_units.h"

#define MAX_LISTED 20 /* clients and apps listed one a line; the rest counted */

static const cJSON *get(const cJSON *o, const char *key) {
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static double num(const cJSON *o, const char *key) {
    const cJSON *v = get(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static unsigned long long u64(const cJSON *o, const char *key) {
    double v = num(o, key);
    return v > 0 ? (unsigned long long)v : 0;
}

static const char *str(const cJSON *o, const char *key) {
    const cJSON *v = get(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static const char *plural(unsigned long long n) {
    return n == 1 ? "" : "s";
}

static const char *bytes(char *buf, size_t len, const cJSON *o, const char *key) {
    return tool_fmt_bytes(buf, len, u64(o, key));
}

/* Appends "key N" for every non-zero number of o to line (", " between); skip: a key left
 * out. Returns how many it appended. */
static int nonzero(char *line, size_t len, const cJSON *o, const char *skip) {
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, o) {
        if (!cJSON_IsNumber(e) || e->valuedouble == 0 || (skip && !strcmp(e->string, skip)))
            continue;
        size_t at = strlen(line);
        snprintf(line + at, len - at, "%s%s %.15g", *line ? ", " : "", e->string, e->valuedouble);
        n++;
    }
    return n;
}

static void print_activity(const cJSON *j, const cJSON *sched) {
    char b[32];
    printf("clients      %llu connected (%llu dropped), %llu prepared models",
           u64(j, "connections"), u64(j, "connections_dropped"), u64(j, "prepared_models"));
    if (u64(j, "buffers"))
        printf(", %llu driver buffers (%s)", u64(j, "buffers"),
               bytes(b, sizeof b, j, "buffer_bytes"));
    putchar('\n');
    printf("executions   %llu submitted: %llu completed, %llu failed, %llu cancelled, %llu "
           "preempted\n",
           u64(sched, "submitted"), u64(sched, "completed"), u64(sched, "failed"),
           u64(sched, "cancelled"), u64(sched, "preempted"));
    const cJSON *dl = get(sched, "deadlines");
    if (u64(dl, "met") || u64(dl, "missed") || u64(sched, "aborted_for_deadline"))
        printf("deadlines    %llu met, %llu missed, %llu aborted\n", u64(dl, "met"),
               u64(dl, "missed"), u64(sched, "aborted_for_deadline"));
    char line[512] = "";
    const cJSON *refused = get(sched, "refused");
    nonzero(line, sizeof line, refused, "of_which_at_dispatch");
    if (u64(refused, "of_which_at_dispatch")) {
        size_t at = strlen(line);
        snprintf(line + at, sizeof line - at, " (%llu at dispatch)",
                 u64(refused, "of_which_at_dispatch"));
    }
    char quota[256] = "";
    if (nonzero(quota, sizeof quota, get(get(get(j, "quotas"), "totals"), "refused"), NULL)) {
        size_t at = strlen(line);
        snprintf(line + at, sizeof line - at, "%squotas: %s", *line ? "; " : "", quota);
    }
    printf("refused      %s\n", *line ? line : "none");
    const cJSON *q = get(sched, "queued");
    printf("queues       %llu high, %llu medium, %llu low queued; %llu running on %llu "
           "worker%s\n",
           u64(q, "high"), u64(q, "medium"), u64(q, "low"), u64(sched, "running"),
           u64(sched, "workers"), plural(u64(sched, "workers")));
}

/* One line per priority whose histogram counted an execution. */
static void print_latency(const cJSON *sched) {
    const char *label = "latency";
    const cJSON *h;
    cJSON_ArrayForEach(h, get(sched, "latency_us")) {
        if (!u64(h, "count")) continue;
        char p50[24], p90[24], p99[24];
        printf("%-12s %-7s %llu execution%s: p50 %s, p90 %s, p99 %s\n", label, h->string,
               u64(h, "count"), plural(u64(h, "count")),
               tool_fmt_ms(p50, sizeof p50, num(h, "p50")),
               tool_fmt_ms(p90, sizeof p90, num(h, "p90")),
               tool_fmt_ms(p99, sizeof p99, num(h, "p99")));
        label = "";
    }
}

void nndctl_print_caps(const cJSON *caps, int indent) {
    const cJSON *e, *first = NULL;
    bool same = true;
    cJSON_ArrayForEach(e, caps) {
        if (!first) first = e;
        same &= num(e, "exec_time") == num(first, "exec_time") &&
                num(e, "power_usage") == num(first, "power_usage");
    }
    if (!first) return;
    if (same) {
        printf("%*scapabilities: exec time %g, power usage %g for every operand type, relaxed "
               "float16, IF and WHILE\n",
               indent, "", num(first, "exec_time"), num(first, "power_usage"));
        return;
    }
    printf("%*scapabilities (exec time, power usage):\n", indent, "");
    cJSON_ArrayForEach(e, caps) printf("%*s  %-30s %g, %g\n", indent, "", e->string,
                                       num(e, "exec_time"), num(e, "power_usage"));
}

void nndctl_print_held_partitions(const cJSON *list, int indent) {
    const cJSON *e;
    cJSON_ArrayForEach(e, list) {
        char held[32];
        unsigned long long first = u64(e, "first_operation"), n = u64(e, "operations");
        printf("%*spartition: operations #%llu..#%llu (%llu) of compilation %s, %s held, for %s "
               "(client %llu, pid %llu, uid %llu)\n",
               indent, "", first, first + (n ? n - 1 : 0), n, str(e, "compilation"),
               bytes(held, sizeof held, e, "held_bytes"), str(e, "app"), u64(e, "client"),
               u64(e, "pid"), u64(e, "uid"));
    }
}

static void print_devices(const cJSON *j) {
    const cJSON *devices = get(j, "devices"), *d;
    int width = 0;
    cJSON_ArrayForEach(d, devices) {
        int n = (int)strlen(str(d, "name"));
        if (n > width) width = n;
    }
    printf("devices      %d\n", cJSON_GetArraySize(devices));
    cJSON_ArrayForEach(d, devices) {
        char type[32];
        printf("  %-*s  %-11s  %llu prepared (%llu driver partitions), %llu executions, %llu "
               "running, %llu queued on %llu worker%s%s%s%s\n",
               width, str(d, "name"), tool_device_type_name(type, sizeof type, (int)num(d, "type")),
               u64(d, "prepares"), u64(d, "partitions"), u64(d, "executions"), u64(d, "running"),
               u64(d, "queue_depth"), u64(d, "workers"), plural(u64(d, "workers")),
               cJSON_IsTrue(get(d, "driver")) ? ", driver" : "",
               cJSON_IsTrue(get(d, "disabled")) ? ", disabled after a fault" : "",
               cJSON_IsTrue(get(d, "reference_only")) ? ", reference kernels only" : "");
        nndctl_print_caps(get(d, "capabilities"), 4);
        nndctl_print_held_partitions(get(d, "held_partitions"), 4);
    }
    cJSON_ArrayForEach(d, get(j, "drivers_refused"))
        printf("  refused driver %s: %s\n", str(d, "path"), str(d, "reason"));
    char line[512] = "";
    if (nonzero(line, sizeof line, get(j, "refused_operations"), NULL))
        printf("unsupported  %s (operations GetSupportedOperations refused)\n", line);
}

static void print_cache(const cJSON *c) {
    if (!cJSON_IsTrue(get(c, "enabled"))) {
        printf("cache        off: %s\n", str(c, "disabled_reason"));
        return;
    }
    char mem[32], store[32], max[32];
    printf("cache        %llu model%s in memory (%s), ", u64(c, "memory_models"),
           plural(u64(c, "memory_models")), bytes(mem, sizeof mem, c, "memory_bytes"));
    if (cJSON_IsTrue(get(c, "disk")))
        printf("%llu on disk (%s of %s)", u64(c, "store_entries"),
               bytes(store, sizeof store, c, "store_bytes"),
               bytes(max, sizeof max, c, "max_bytes"));
    else
        printf("none on disk (memory only)");
    printf("; %llu hits, %llu misses; content %llu hits, %llu misses\n", u64(c, "hits"),
           u64(c, "misses"), u64(c, "content_hits"), u64(c, "content_misses"));
}

static void print_extensions(const cJSON *x) {
    char line[512] = "";
    const cJSON *e;
    cJSON_ArrayForEach(e, get(x, "loaded")) {
        size_t at = strlen(line);
        snprintf(line + at, sizeof line - at, "%s%s %s%s", *line ? ", " : "", str(e, "name"),
                 str(e, "version"), cJSON_IsTrue(get(e, "faulted")) ? " (faulted)" : "");
    }
    int refused = cJSON_GetArraySize(get(x, "refused"));
    printf("extensions   %s", *line ? line : "none loaded");
    if (refused) printf("; %d refused", refused);
    if (*str(x, "allowlist"))
        printf("; allowlist %s (%llu entries)\n", str(x, "allowlist"), u64(x, "allowlist_entries"));
    else
        printf("; no allowlist\n");
}

static void print_clients(const cJSON *j) {
    char b[32];
    const cJSON *apps = get(get(j, "quotas"), "apps"), *e;
    int n = 0, total = cJSON_GetArraySize(apps);
    if (total) printf("apps         %d\n", total);
    cJSON_ArrayForEach(e, apps) {
        if (n++ == MAX_LISTED) break;
        printf("  uid %-8llu %llu connection%s, %llu prepared models, %llu queued, %llu mappings, "
               "%s in buffers\n",
               u64(e, "uid"), u64(e, "connections"), plural(u64(e, "connections")),
               u64(e, "prepared_models"), u64(e, "queued_executions"), u64(e, "mappings"),
               bytes(b, sizeof b, e, "buffer_bytes"));
    }
    if (total > MAX_LISTED) printf("  and %d more (--json lists all)\n", total - MAX_LISTED);
    const cJSON *clients = get(j, "clients");
    n = 0;
    total = cJSON_GetArraySize(clients);
    if (total) printf("clients      %d\n", total);
    cJSON_ArrayForEach(e, clients) {
        if (n++ == MAX_LISTED) break;
        /* A client outside the daemon's pid namespace, or another user's under the unit,
         * has no executable path. */
        const char *name = str(e, "name"), *exe = str(e, "exe");
        printf("  client %-4llu pid %llu, uid %llu, %s%s%s%s: %llu prepared models, %llu "
               "buffers\n",
               u64(e, "client"), u64(e, "pid"), u64(e, "uid"), *name ? name : "",
               *name && *exe ? " (" : "",
               *exe    ? exe
               : *name ? ""
                       : "?",
               *name && *exe ? ")" : "", u64(e, "prepared_models"), u64(e, "buffers"));
    }
    if (total > MAX_LISTED) printf("  and %d more (--json lists all)\n", total - MAX_LISTED);
}

static void print_summary(const cJSON *j) {
    char up[32], b1[32], b2[32];
    const cJSON *sched = get(j, "scheduler");
    printf("nnd %s, pid %llu, up %s\n", str(j, "version"), u64(j, "pid"),
           tool_fmt_uptime(up, sizeof up, u64(j, "uptime_s")));
    printf("socket       %s\n", str(j, "socket"));
    printf("state        %s\n", str(j, "state_dir"));
    print_activity(j, sched);
    print_latency(sched);
    print_devices(j);
    print_cache(get(j, "cache"));
    print_extensions(get(j, "extensions"));
    const cJSON *bursts = get(j, "bursts"), *reg = get(j, "registered_memory");
    if (u64(bursts, "live") || u64(bursts, "channels"))
        printf("bursts       %llu live (%llu slots), %llu channels, %llu channel executions\n",
               u64(bursts, "live"), u64(bursts, "slots"), u64(bursts, "channels"),
               u64(bursts, "channel_executions"));
    if (u64(reg, "live"))
        printf("memories     %llu registered, %llu uses\n", u64(reg, "live"), u64(reg, "uses"));
    const cJSON *m = get(j, "memory");
    printf("memory       %s resident, %s allocated\n", bytes(b1, sizeof b1, m, "resident_bytes"),
           bytes(b2, sizeof b2, m, "allocated_bytes"));
    print_clients(j);
}

int nndctl_status(const nndctl_opts *o, int argc, char **argv) {
    bool json = argc == 2 && !strcmp(argv[1], "--json");
    if (argc > 1 && !json) {
        fprintf(stderr, "usage: nndctl status [--json]\n");
        return 2;
    }
    char *text = nndctl_admin_or_say(o, "{\"cmd\":\"status\"}", 2000);
    if (!text) return 1;
    cJSON *j = cJSON_Parse(text);
    int rc = 0;
    if (!cJSON_IsObject(j)) {
        fprintf(stderr, "nndctl: the daemon's status is not a JSON object: %.200s\n", text);
        rc = 1;
    } else if (!cJSON_IsTrue(get(j, "ok"))) {
        if (json) puts(text);
        fprintf(stderr, "nndctl: %s\n", *str(j, "error") ? str(j, "error") : text);
        rc = 1;
    } else if (json) {
        /* The reply as the daemon wrote it: re-printing it through cJSON's doubles would
         * round 64-bit counters. */
        puts(text);
    } else {
        print_summary(j);
    }
    cJSON_Delete(j);
    free(text);
    return rc;
}
