/* SPDX-License-Identifier: Apache-2.0 */
/* prom.c: status JSON to Prometheus text. See prom.h.
 *
 * The status tree is walked once. Each number or boolean has a path: its object keys
 * joined by '.', "[]" for the elements of an array, and '*' for a key that becomes a label
 * (the objects keyed by priority, reason or quota). The path finds the metric in the
 * table; samples with the same labels add up (the clients of one uid). */
#include "metrics/prom.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { GAUGE, COUNTER, HISTOGRAM } metric_type;

typedef struct metric {
    const char *path;
    const char *name;
    metric_type type;
    double scale; /* 0: the value as it is */
    const char *help;
} metric;

/* In the order they are printed. */
static const metric metrics[] = {
    {"", "nnd_info", GAUGE, 0, "The daemon's version, driver build and preemption mode (value 1)"},
    {"uptime_s", "nnd_uptime_seconds", GAUGE, 0, "Seconds since the daemon started"},
    {"connections", "nnd_connections", GAUGE, 0, "Client connections open now"},
    {"connections_dropped", "nnd_connections_dropped_total", COUNTER, 0,
     "Connections dropped for not reading their replies"},
    {"prepared_models", "nnd_prepared_models", GAUGE, 0, "Prepared models held by clients"},
    {"executions", "nnd_executions_total", COUNTER, 0, "Executions run"},
    {"buffers", "nnd_buffers", GAUGE, 0, "Driver buffers alive"},
    {"buffer_bytes", "nnd_buffer_bytes", GAUGE, 0, "Bytes of the driver buffers alive"},
    {"registered_memory.live", "nnd_registered_memories", GAUGE, 0,
     "Client memories registered with their connections"},
    {"registered_memory.registrations", "nnd_memory_registrations_total", COUNTER, 0,
     "Memories registered"},
    {"registered_memory.uses", "nnd_registered_memory_uses_total", COUNTER, 0,
     "Execution pools served from a registered memory without an fd"},
    {"bursts.live", "nnd_bursts", GAUGE, 0, "Bursts alive"},
    {"bursts.slots", "nnd_burst_slots", GAUGE, 0, "Memory slots cached by bursts"},
    {"bursts.slot_maps", "nnd_burst_slot_maps_total", COUNTER, 0, "Burst slots mapped"},
    {"bursts.slot_hits", "nnd_burst_slot_hits_total", COUNTER, 0,
     "Burst pools served from a slot without an fd"},
    {"bursts.channels", "nnd_burst_channels", GAUGE, 0, "Burst shared-memory channels alive"},
    {"bursts.channel_executions", "nnd_burst_channel_executions_total", COUNTER, 0,
     "Burst executions that came through a shared-memory channel"},
    {"bursts.channel_refused", "nnd_burst_channel_refused_total", COUNTER, 0,
     "Burst channel requests refused before running (malformed, out of order, invalid)"},
    {"bursts.channels_not_set_up", "nnd_burst_channels_not_set_up_total", COUNTER, 0,
     "Burst channels asked for that could not be set up (the burst uses the socket)"},
    {"supported_operation_types", "nnd_supported_operation_types", GAUGE, 0,
     "Operation types the daemon supports"},
    {"refused_operations.*", "nnd_refused_operations_total", COUNTER, 0,
     "Operations GetSupportedOperations answered as unsupported, by operation type"},
    {"cache.enabled", "nnd_cache_enabled", GAUGE, 0, "1 when compilation caching is on"},
    {"cache.disk", "nnd_cache_disk_enabled", GAUGE, 0, "1 when the cache writes to disk"},
    {"cache.hits", "nnd_cache_hits_total", COUNTER, 0, "Client cache files loaded"},
    {"cache.misses", "nnd_cache_misses_total", COUNTER, 0, "Client cache tokens not found"},
    {"cache.rejected", "nnd_cache_rejected_total", COUNTER, 0, "Client cache files refused"},
    {"cache.content_hits", "nnd_cache_content_hits_total", COUNTER, 0,
     "Preparations served by the content cache"},
    {"cache.content_misses", "nnd_cache_content_misses_total", COUNTER, 0,
     "Preparations the content cache did not hold"},
    {"cache.evicted", "nnd_cache_evicted_total", COUNTER, 0, "Content cache entries evicted"},
    {"cache.stored", "nnd_cache_stored_total", COUNTER, 0, "Client cache files written"},
    {"cache.store_errors", "nnd_cache_store_errors_total", COUNTER, 0,
     "Failed writes to the cache"},
    {"cache.saves_skipped", "nnd_cache_saves_skipped_total", COUNTER, 0,
     "Cache saves skipped with the disk side off"},
    {"cache.saves_over_limit", "nnd_cache_saves_over_limit_total", COUNTER, 0,
     "Cache saves skipped: the model's constants were over --cache-save-max-bytes"},
    {"cache.quota_skipped", "nnd_cache_quota_skipped_total", COUNTER, 0,
     "Models prepared uncached: their app was at quota.app.cache_bytes"},
    {"cache.rate_skipped", "nnd_cache_rate_skipped_total", COUNTER, 0,
     "Cache copies or token rows skipped: their app was over its rate"},
    {"cache.tokens_pruned", "nnd_cache_tokens_pruned_total", COUNTER, 0,
     "Token rows pruned at quota.app.cache_tokens, least recently used first"},
    {"cache.first_sightings", "nnd_cache_first_sightings_total", COUNTER, 0,
     "Large models prepared in place, unhashed, the first time the content cache saw them"},
    {"cache.hashed_bytes", "nnd_cache_hashed_bytes_total", COUNTER, 0,
     "Model bytes copied from clients and hashed for the cache"},
    {"memory.allocated_bytes", "nnd_memory_allocated_bytes", GAUGE, 0,
     "Heap bytes the daemon has allocated and not freed"},
    {"memory.free_in_heap_bytes", "nnd_memory_free_in_heap_bytes", GAUGE, 0,
     "Freed bytes the allocator keeps in the heap"},
    {"memory.engine_kept_bytes", "nnd_memory_engine_kept_bytes", GAUGE, 0,
     "Freed packed-weight blocks the engine keeps for the next preparation"},
    {"memory.resident_bytes", "nnd_memory_resident_bytes", GAUGE, 0,
     "The daemon's resident set in bytes"},
    {"cache.invalidated_at_start", "nnd_cache_invalidated_at_start", GAUGE, 0,
     "Index entries of other driver builds dropped at start"},
    {"cache.tokens", "nnd_cache_tokens", GAUGE, 0, "Client cache tokens in the index"},
    {"cache.max_bytes", "nnd_cache_max_bytes", GAUGE, 0, "The content cache's cap in bytes"},
    {"cache.save_max_bytes", "nnd_cache_save_max_bytes", GAUGE, 0,
     "Constants above which a model is not saved to client cache files (0: no limit)"},
    {"cache.store_entries", "nnd_cache_store_entries", GAUGE, 0, "Models in the content store"},
    {"cache.store_bytes", "nnd_cache_store_bytes", GAUGE, 0, "Bytes of the content store"},
    {"cache.memory_models", "nnd_cache_memory_models", GAUGE, 0,
     "Models the content cache keeps in memory"},
    {"cache.memory_bytes", "nnd_cache_memory_bytes", GAUGE, 0,
     "Bytes the content cache keeps in memory"},
    {"extensions.allowlist_entries", "nnd_extensions_allowlist_entries", GAUGE, 0,
     "Entries of the extensions allowlist"},
    {"extensions.faults", "nnd_extension_faults_total", COUNTER, 0,
     "Faults caught in extension plugins"},
    {"extensions.loaded[]", "nnd_extensions_loaded", GAUGE, 0, "Extension plugins loaded"},
    {"extensions.refused[]", "nnd_extensions_refused", GAUGE, 0,
     "Extension plugins refused at the last load"},
    {"drivers_refused[]", "nnd_drivers_refused", GAUGE, 0,
     "Device driver plugins refused at start"},
    {"scheduler.workers", "nnd_scheduler_workers", GAUGE, 0, "Worker threads"},
    {"scheduler.running", "nnd_scheduler_running", GAUGE, 0, "Executions running now"},
    {"scheduler.queued.*", "nnd_scheduler_queued", GAUGE, 0, "Executions queued now"},
    {"scheduler.latency_us.*", "nnd_execution_latency_seconds", HISTOGRAM, 0,
     "Executions from submission to completion"},
    {"scheduler.latency_us.*.p", "nnd_execution_latency_percentile_seconds", GAUGE, 1e-6,
     "Percentiles 50, 90 and 99 of the execution latency (upper bucket edges)"},
    {"scheduler.submitted", "nnd_scheduler_submitted_total", COUNTER, 0, "Executions submitted"},
    {"scheduler.completed", "nnd_scheduler_completed_total", COUNTER, 0, "Executions completed"},
    {"scheduler.failed", "nnd_scheduler_failed_total", COUNTER, 0, "Executions failed"},
    {"scheduler.cancelled", "nnd_scheduler_cancelled_total", COUNTER, 0, "Executions cancelled"},
    {"scheduler.preempted", "nnd_scheduler_preempted_total", COUNTER, 0,
     "Executions suspended at a checkpoint for more urgent work"},
    {"scheduler.aborted_for_deadline", "nnd_scheduler_aborted_for_deadline_total", COUNTER, 0,
     "Executions stopped at a checkpoint because they would miss their deadline"},
    {"scheduler.deadlines.*", "nnd_scheduler_deadlines_total", COUNTER, 0,
     "Executions with a deadline, by whether they met it"},
    {"scheduler.refused.*", "nnd_scheduler_refused_total", COUNTER, 0,
     "Executions refused, by reason"},
    {"scheduler.refused.of_which_at_dispatch", "nnd_scheduler_refused_at_dispatch_total", COUNTER,
     0, "Of the refusals, those decided when a worker took the execution"},
    {"scheduler.limits.app_queue", "nnd_scheduler_app_queue_limit", GAUGE, 0,
     "Queued executions allowed per app"},
    {"scheduler.limits.app_memory", "nnd_scheduler_app_memory_limit_bytes", GAUGE, 0,
     "Execution memory allowed per app"},
    {"scheduler.limits.device_memory", "nnd_scheduler_device_memory_limit_bytes", GAUGE, 0,
     "Execution memory allowed for one execution"},
    {"scheduler.device.gflops", "nnd_device_gflops", GAUGE, 0,
     "Measured arithmetic throughput, GFLOP/s"},
    {"scheduler.device.gbytes_per_s", "nnd_device_gbytes_per_second", GAUGE, 0,
     "Measured memory throughput, GB/s"},
    {"scheduler.device.us_per_operation", "nnd_device_operation_overhead_seconds", GAUGE, 1e-6,
     "Measured fixed cost of one operation"},
    {"quotas.limits.*.*", "nnd_quota_limit", GAUGE, 0, "Quota limits (0: unlimited)"},
    {"quotas.totals.*", "nnd_quota_used", GAUGE, 0, "Quota usage of all apps together"},
    {"quotas.totals.refused.*", "nnd_quota_refused_total", COUNTER, 0,
     "Requests refused over a quota"},
    {"quotas.apps[].*", "nnd_app_quota_used", GAUGE, 0, "Quota usage per app (uid)"},
    {"quotas.apps[].refused.*", "nnd_app_quota_refused_total", COUNTER, 0,
     "Requests refused over a quota, per app (uid)"},
    {"clients[].bursts", "nnd_app_bursts", GAUGE, 0, "Bursts held, per app (uid)"},
    {"clients[].burst_slots", "nnd_app_burst_slots", GAUGE, 0, "Burst slots held, per app (uid)"},
    {"clients[].registered_memories", "nnd_app_registered_memories", GAUGE, 0,
     "Registered memories held, per app (uid)"},
    {"devices[].prepares", "nnd_device_prepares_total", COUNTER, 0, "Models prepared, per device"},
    {"devices[].executions", "nnd_device_executions_total", COUNTER, 0,
     "Executions finished, per device"},
    {"devices[].partitions", "nnd_device_partitions_total", COUNTER, 0,
     "Driver partitions of the models prepared, per device"},
    {"devices[].disabled", "nnd_device_disabled", GAUGE, 0,
     "1 for a driver's device disabled after a fault"},
    {"devices[].host.restarts", "nnd_driver_host_restarts_total", COUNTER, 0,
     "Restarts of the driver host serving the device"},
    {"devices[].host.calls", "nnd_driver_host_calls_total", COUNTER, 0,
     "Calls sent to the driver host serving the device"},
    {"devices[].host.staged_calls", "nnd_driver_host_staged_calls_total", COUNTER, 0,
     "Calls to the driver host with a tensor copied through staging memory"},
    {"devices[].host.staged_bytes", "nnd_driver_host_staged_bytes_total", COUNTER, 0,
     "Bytes copied through staging memory to and from the driver host"},
    {"devices[].host.pool_shrinks", "nnd_driver_host_pool_shrinks_total", COUNTER, 0,
     "Calls failed because a client shrank a pool the driver host read"},
    {"devices[].workers", "nnd_device_workers", GAUGE, 0, "Worker threads, per device"},
    {"devices[].running", "nnd_device_running", GAUGE, 0, "Executions running now, per device"},
    {"devices[].queue_depth", "nnd_device_queue_depth", GAUGE, 0,
     "Executions queued now, per device"},
    {"devices[].run_segments", "nnd_device_run_segments_total", COUNTER, 0,
     "Runs of (part of) an execution started, per device"},
    {"devices[].arrived", "nnd_device_arrivals_total", COUNTER, 0,
     "Executions that came to the device's queue from another device mid-run"},
    {"devices[].latency_us", "nnd_device_execution_latency_seconds", HISTOGRAM, 0,
     "Executions from submission to completion, per device that ran them"},
    {"prepare_time_us", "nnd_prepare_duration_seconds", HISTOGRAM, 0,
     "Compile time of the models prepared (from a cache too)"},
    {"app_totals[].executions", "nnd_app_executions_total", COUNTER, 0,
     "Executions finished or refused, per app (uid), since the daemon started"},
    {"app_totals[].failed", "nnd_app_executions_failed_total", COUNTER, 0,
     "Executions that did not end with NONE, per app (uid), since the daemon started"},
    {"app_totals_untracked.executions", "nnd_app_untracked_executions_total", COUNTER, 0,
     "Executions of apps beyond the uids the daemon keeps counts for"},
    {"app_totals_untracked.failed", "nnd_app_untracked_executions_failed_total", COUNTER, 0,
     "Failed executions of apps beyond the uids the daemon keeps counts for"},
    {"process.cpu_seconds", "process_cpu_seconds_total", COUNTER, 0,
     "The daemon's user and system CPU time in seconds"},
    {"process.resident_bytes", "process_resident_memory_bytes", GAUGE, 0,
     "The daemon's resident memory size in bytes"},
    {"process.virtual_bytes", "process_virtual_memory_bytes", GAUGE, 0,
     "The daemon's virtual memory size in bytes"},
    {"process.open_fds", "process_open_fds", GAUGE, 0, "The daemon's open file descriptors"},
    {"process.max_fds", "process_max_fds", GAUGE, 0, "The daemon's limit of open file descriptors"},
    {"process.start_time_seconds", "process_start_time_seconds", GAUGE, 0,
     "The daemon's start time in seconds since the epoch"},
};
#define N_METRICS (sizeof metrics / sizeof metrics[0])

/* Objects whose keys are label values; `except` keys keep their own path. */
static const struct {
    const char *path, *label, *except;
} keyed[] = {
    {"refused_operations", "operation", ""},
    {"scheduler.queued", "priority", ""},
    {"scheduler.latency_us", "priority", ""},
    {"scheduler.deadlines", "outcome", ""},
    {"scheduler.refused", "reason", " of_which_at_dispatch "},
    {"quotas.limits", "scope", ""},
    {"quotas.limits.*", "quota", ""},
    {"quotas.totals", "quota", " refused "},
    {"quotas.totals.refused", "quota", ""},
    {"quotas.apps[]", "quota", " uid refused "},
    {"quotas.apps[].refused", "quota", ""},
};

/* Numbers that are not measurements, or that another metric already carries. */
static const char *const not_exported[] = {
    "ok",  /* the reply's own flag */
    "pid", /* the daemon's process id */
    /* Who a client is: its id, pid and uid (the uid is the label of what it holds). */
    "clients[].client", "clients[].pid", "clients[].uid", "quotas.apps[].uid", "app_totals[].uid",
    /* Held per uid already in nnd_app_quota_used (quota usage is counted per client). */
    "clients[].prepared_models", "clients[].buffers", "clients[].buffer_bytes",
    "clients[].queued_executions",
    /* What a device is, not how it is used. */
    "devices[].reference_only", "devices[].type", "devices[].driver", "devices[].exec_time",
    "devices[].device_memory", "devices[].cache_blobs", "devices[].host.pid", /* a process id */
};

/* Arrays whose elements are labelled by one of their string fields (the others by uid). */
static const struct {
    const char *path, *key, *label;
} named_arrays[] = {
    {"devices[]", "name", "device"},
};

/* The label an element of array `sub` takes from its string field, if it takes one. */
static bool named_label(const char *sub, const cJSON *e, const char **label, const char **value) {
    for (size_t i = 0; i < sizeof named_arrays / sizeof named_arrays[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, named_arrays[i].key);
        if (strcmp(named_arrays[i].path, sub) || !cJSON_IsString(v)) continue;
        *label = named_arrays[i].label;
        *value = v->valuestring;
        return true;
    }
    return false;
}

/* String fields that are labels of nnd_info. */
static const struct {
    const char *path, *label;
} info_labels[] = {
    {"version", "version"},
    {"cache.build_id", "driver_build"},
    {"scheduler.preempted_work", "preempted_work"},
};

typedef struct sample {
    char *labels; /* "{a=\"b\",...}" or "" */
    double value;
} sample;

typedef struct family {
    sample *s;
    size_t n, cap;
} family;

typedef struct render {
    family fam[N_METRICS];
    FILE *hist[N_METRICS]; /* each histogram's lines, in the order of its label values */
    char *hist_text[N_METRICS];
    size_t hist_len[N_METRICS];
    FILE *info; /* nnd_info's labels */
    char *info_text;
    size_t info_len;
    FILE *unmapped;
    char *unmapped_text;
    size_t unmapped_len;
    bool oom;
} render;

static const metric *find(const char *path, size_t *index) {
    for (size_t i = 0; i < N_METRICS; i++)
        if (!strcmp(metrics[i].path, path)) {
            *index = i;
            return &metrics[i];
        }
    return NULL;
}

static bool listed(const char *list, const char *word) {
    char w[80];
    snprintf(w, sizeof w, " %s ", word);
    return strstr(list, w) != NULL;
}

static void escape(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void note_unmapped(render *r, const char *path) {
    fprintf(r->unmapped, "%s%s", ftell(r->unmapped) ? "," : "", path);
}

/* labels: ",k=\"v\"" pieces; stored as "{k=\"v\",...}". */
static void add_sample(render *r, size_t m, const char *labels, double v) {
    family *f = &r->fam[m];
    char wrapped[512];
    snprintf(wrapped, sizeof wrapped, *labels ? "{%s}" : "", labels + (*labels == ','));
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->s[i].labels, wrapped)) {
            f->s[i].value += v;
            return;
        }
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 8;
        sample *s = realloc(f->s, cap * sizeof *s);
        if (!s) {
            r->oom = true;
            return;
        }
        f->s = s;
        f->cap = cap;
    }
    if (!(f->s[f->n].labels = strdup(wrapped))) {
        r->oom = true;
        return;
    }
    f->s[f->n++].value = v;
}

static void leaf(render *r, const char *path, const char *labels, double v) {
    for (size_t i = 0; i < sizeof not_exported / sizeof not_exported[0]; i++)
        if (!strcmp(path, not_exported[i])) return;
    /* A device's capabilities: what it is, not how it is used. */
    if (!strncmp(path, "devices[].capabilities.", 23)) return;
    size_t m;
    const metric *d = find(path, &m);
    if (!d || d->type == HISTOGRAM) {
        note_unmapped(r, path);
        return;
    }
    add_sample(r, m, labels, d->scale ? v * d->scale : v);
}

static char *with_label(char *buf, size_t len, const char *labels, const char *k, const char *v) {
    char *p = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&p, &n);
    if (!f) return NULL;
    fprintf(f, "%s,%s=\"", labels, k);
    escape(f, v);
    fputc('"', f);
    fclose(f);
    snprintf(buf, len, "%s", p ? p : "");
    free(p);
    return buf;
}

/* One histogram object ({count, sum_us, below: {bound_us: n}}, percentiles p50.. beside
 * them where path.p is a metric): its lines under the labels. */
static void histogram(render *r, size_t m, const cJSON *o, const char *path, const char *labels) {
    const cJSON *count = cJSON_GetObjectItemCaseSensitive(o, "count");
    const cJSON *sum = cJSON_GetObjectItemCaseSensitive(o, "sum_us");
    const cJSON *below = cJSON_GetObjectItemCaseSensitive(o, "below");
    const char *l = labels + (*labels == ',');
    const char *name = metrics[m].name;
    FILE *h = r->hist[m];
    const cJSON *e;
    cJSON_ArrayForEach(e, o) {
        char sub[160], lab[512];
        if (e == count || e == sum || e == below) continue;
        size_t pm;
        snprintf(sub, sizeof sub, "%s.p", path);
        if (cJSON_IsNumber(e) && e->string[0] == 'p' && find(sub, &pm)) { /* p50, p90, p99 */
            if (with_label(lab, sizeof lab, labels, "percentile", e->string + 1))
                add_sample(r, pm, lab, e->valuedouble * metrics[pm].scale);
            continue;
        }
        snprintf(sub, sizeof sub, "%s.%s", path, e->string);
        note_unmapped(r, sub);
    }
    if (!cJSON_IsNumber(count) || !cJSON_IsNumber(sum) || !cJSON_IsObject(below)) {
        char sub[200];
        snprintf(sub, sizeof sub, "%s (count, sum_us and below expected)", path);
        note_unmapped(r, sub);
        return;
    }
    cJSON_ArrayForEach(e, below) {
        fprintf(h, "%s_bucket{%s%sle=\"%.9g\"} %.15g\n", name, l, *l ? "," : "",
                atof(e->string) * 1e-6, e->valuedouble);
    }
    fprintf(h, "%s_bucket{%s%sle=\"+Inf\"} %.15g\n", name, l, *l ? "," : "", count->valuedouble);
    fprintf(h, "%s_sum%s%s%s %.15g\n", name, *l ? "{" : "", l, *l ? "}" : "",
            sum->valuedouble * 1e-6);
    fprintf(h, "%s_count%s%s%s %.15g\n", name, *l ? "{" : "", l, *l ? "}" : "", count->valuedouble);
}

static void walk(render *r, const cJSON *node, const char *path, const char *labels);

static void walk_object(render *r, const cJSON *o, const char *path, const char *labels) {
    const char *label = NULL, *except = "";
    for (size_t i = 0; i < sizeof keyed / sizeof keyed[0]; i++)
        if (!strcmp(keyed[i].path, path)) {
            label = keyed[i].label;
            except = keyed[i].except;
        }
    const cJSON *e;
    cJSON_ArrayForEach(e, o) {
        char sub[256], lab[512];
        if (label && !listed(except, e->string)) {
            snprintf(sub, sizeof sub, "%s%s*", path, *path ? "." : "");
            if (!with_label(lab, sizeof lab, labels, label, e->string)) {
                r->oom = true;
                return;
            }
            walk(r, e, sub, lab);
        } else {
            snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", e->string);
            walk(r, e, sub, labels);
        }
    }
}

static void walk(render *r, const cJSON *node, const char *path, const char *labels) {
    if (cJSON_IsNumber(node)) {
        leaf(r, path, labels, node->valuedouble);
    } else if (cJSON_IsBool(node)) {
        leaf(r, path, labels, cJSON_IsTrue(node) ? 1 : 0);
    } else if (cJSON_IsString(node)) {
        for (size_t i = 0; i < sizeof info_labels / sizeof info_labels[0]; i++)
            if (!strcmp(info_labels[i].path, path)) {
                fprintf(r->info, "%s%s=\"", ftell(r->info) ? "," : "", info_labels[i].label);
                escape(r->info, node->valuestring);
                fputc('"', r->info);
            }
    } else if (cJSON_IsObject(node)) {
        size_t m;
        const metric *d = find(path, &m);
        if (d && d->type == HISTOGRAM)
            histogram(r, m, node, path, labels);
        else
            walk_object(r, node, path, labels);
    } else if (cJSON_IsArray(node)) {
        char sub[256];
        snprintf(sub, sizeof sub, "%s[]", path);
        const cJSON *e = node->child;
        const cJSON *uid = cJSON_GetObjectItemCaseSensitive(e, "uid");
        size_t m;
        if (!e && !find(sub, &m)) return; /* no app holds anything */
        const char *label, *value;
        if (cJSON_IsObject(e) && named_label(sub, e, &label, &value)) {
            cJSON_ArrayForEach(e, node) { /* one label each, from the element's name */
                char lab[512];
                if (named_label(sub, e, &label, &value) &&
                    with_label(lab, sizeof lab, labels, label, value))
                    walk(r, e, sub, lab);
            }
            return;
        }
        if (!cJSON_IsObject(e) || !cJSON_IsNumber(uid)) {
            leaf(r, sub, labels, (double)cJSON_GetArraySize(node)); /* a list: its length */
            return;
        }
        cJSON_ArrayForEach(e, node) { /* per app: one uid label each */
            char u[24], lab[512];
            uid = cJSON_GetObjectItemCaseSensitive(e, "uid");
            snprintf(u, sizeof u, "%.0f", cJSON_IsNumber(uid) ? uid->valuedouble : -1.0);
            if (with_label(lab, sizeof lab, labels, "uid", u)) walk(r, e, sub, lab);
        }
    }
}

static void print_family(FILE *out, const metric *d, const char *body, const family *f) {
    static const char *const types[] = {"gauge", "counter", "histogram"};
    fprintf(out, "# HELP %s %s.\n# TYPE %s %s\n", d->name, d->help, d->name, types[d->type]);
    if (body) fputs(body, out);
    for (size_t i = 0; f && i < f->n; i++)
        fprintf(out, "%s%s %.15g\n", d->name, f->s[i].labels, f->s[i].value);
}

char *met_prom_render(const cJSON *status, char **unmapped) {
    if (unmapped) *unmapped = NULL;
    if (!cJSON_IsObject(status)) return NULL;
    render *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    bool streams = true;
    for (size_t i = 0; i < N_METRICS; i++)
        if (metrics[i].type == HISTOGRAM &&
            !(r->hist[i] = open_memstream(&r->hist_text[i], &r->hist_len[i])))
            streams = false;
    r->info = open_memstream(&r->info_text, &r->info_len);
    r->unmapped = open_memstream(&r->unmapped_text, &r->unmapped_len);
    char *text = NULL;
    size_t len = 0;
    FILE *out = streams && r->info && r->unmapped ? open_memstream(&text, &len) : NULL;
    if (out) walk(r, status, "", "");
    for (size_t i = 0; i < N_METRICS; i++)
        if (r->hist[i]) fclose(r->hist[i]);
    if (r->info) fclose(r->info);
    if (r->unmapped) fclose(r->unmapped);
    for (size_t i = 0; out && i < N_METRICS; i++) {
        const metric *d = &metrics[i];
        if (i == 0) {
            fprintf(out, "# HELP %s %s.\n# TYPE %s gauge\n%s{%s} 1\n", d->name, d->help, d->name,
                    d->name, r->info_text ? r->info_text : "");
        } else if (d->type == HISTOGRAM) {
            if (r->hist_len[i]) print_family(out, d, r->hist_text[i], NULL);
        } else if (r->fam[i].n) {
            print_family(out, d, NULL, &r->fam[i]);
        }
    }
    if (out && fclose(out) != 0) r->oom = true;
    for (size_t i = 0; i < N_METRICS; i++) {
        for (size_t k = 0; k < r->fam[i].n; k++)
            free(r->fam[i].s[k].labels);
        free(r->fam[i].s);
    }
    if (unmapped && r->unmapped_len) {
        *unmapped = r->unmapped_text;
        r->unmapped_text = NULL;
    }
    if (!out || r->oom) {
        free(text);
        text = NULL;
    }
    for (size_t i = 0; i < N_METRICS; i++)
        free(r->hist_text[i]);
    free(r->info_text);
    free(r->unmapped_text);
    free(r);
    return text;
}
