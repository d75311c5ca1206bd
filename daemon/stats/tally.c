/* SPDX-License-Identifier: Apache-2.0 */
/* tally.c: the daemon's lifetime counts. See tally.h. */
#include "daemon/stats/tally.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "daemon/base/bus.h"
#include "sched/estimate.h"
#include "sched/scheduler.h"

typedef struct app_count {
    uint32_t uid;
    bool used;
    uint64_t executions, failed;
} app_count;

/* Open addressing with twice the slots of the uids kept: a probe ends at an empty slot. */
#define UID_SLOTS (2 * SRV_TALLY_UIDS)

static struct {
    pthread_mutex_t lock;
    char device[SRV_TALLY_DEVICES][64];
    qos_hist device_latency[SRV_TALLY_DEVICES];
    unsigned n_devices;
    qos_hist prepare;
    app_count app[UID_SLOTS];
    unsigned n_apps;
    uint64_t untracked_executions, untracked_failed;
} t = {.lock = PTHREAD_MUTEX_INITIALIZER};

static app_count *app_of(uint32_t uid) {
    unsigned i = (uid * 2654435761u) % UID_SLOTS;
    while (t.app[i].used && t.app[i].uid != uid)
        i = (i + 1) % UID_SLOTS;
    if (t.app[i].used) return &t.app[i];
    if (t.n_apps == SRV_TALLY_UIDS) return NULL;
    t.n_apps++;
    t.app[i] = (app_count){.uid = uid, .used = true};
    return &t.app[i];
}

static qos_hist *device_hist(const char *name) {
    for (unsigned i = 0; i < t.n_devices; i++)
        if (!strcmp(t.device[i], name)) return &t.device_latency[i];
    if (t.n_devices == SRV_TALLY_DEVICES || strlen(name) >= sizeof t.device[0]) return NULL;
    snprintf(t.device[t.n_devices], sizeof t.device[0], "%s", name);
    return &t.device_latency[t.n_devices++];
}

void srv_tally_execution(uint32_t uid, const char *device, uint64_t latency_ns, bool failed) {
    pthread_mutex_lock(&t.lock);
    app_count *a = app_of(uid);
    if (a) {
        a->executions++;
        a->failed += failed;
    } else {
        t.untracked_executions++;
        t.untracked_failed += failed;
    }
    qos_hist *h = device ? device_hist(device) : NULL;
    if (h) qos_hist_add(h, latency_ns);
    pthread_mutex_unlock(&t.lock);
}

void srv_tally_prepare(uint64_t compile_ns) {
    pthread_mutex_lock(&t.lock);
    qos_hist_add(&t.prepare, compile_ns);
    pthread_mutex_unlock(&t.lock);
}

/* {count, sum_us, below: {bound_us: n}}, the scheduler's exported bounds. */
static cJSON *hist_json(const qos_hist *h) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    srv_json_add_u64(o, "count", h ? h->count : 0);
    srv_json_add_u64(o, "sum_us", h ? h->sum_ns / 1000 : 0);
    cJSON *below = cJSON_AddObjectToObject(o, "below");
    for (unsigned i = 0; below && i < QOS_LATENCY_BOUNDS; i++) {
        char bound[24];
        snprintf(bound, sizeof bound, "%llu", QOS_LATENCY_BOUND_NS(i) / 1000);
        srv_json_add_u64(below, bound, h ? qos_hist_count_below(h, QOS_LATENCY_BOUND_NS(i)) : 0);
    }
    return o;
}

void srv_tally_devices_json(cJSON *devices) {
    cJSON *e;
    pthread_mutex_lock(&t.lock);
    cJSON_ArrayForEach(e, devices) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        const qos_hist *h = NULL;
        for (unsigned i = 0; cJSON_IsString(name) && i < t.n_devices; i++)
            if (!strcmp(t.device[i], name->valuestring)) h = &t.device_latency[i];
        cJSON_AddItemToObject(e, "latency_us", hist_json(h));
    }
    pthread_mutex_unlock(&t.lock);
}

void srv_tally_json(cJSON *status) {
    pthread_mutex_lock(&t.lock);
    cJSON_AddItemToObject(status, "prepare_time_us", hist_json(&t.prepare));
    cJSON *apps = cJSON_AddArrayToObject(status, "app_totals");
    for (unsigned i = 0; apps && i < UID_SLOTS; i++) {
        if (!t.app[i].used) continue;
        cJSON *a = cJSON_CreateObject();
        if (!a) break;
        srv_json_add_u64(a, "uid", t.app[i].uid);
        srv_json_add_u64(a, "executions", t.app[i].executions);
        srv_json_add_u64(a, "failed", t.app[i].failed);
        cJSON_AddItemToArray(apps, a);
    }
    cJSON *u = cJSON_AddObjectToObject(status, "app_totals_untracked");
    srv_json_add_u64(u, "executions", t.untracked_executions);
    srv_json_add_u64(u, "failed", t.untracked_failed);
    pthread_mutex_unlock(&t.lock);
}
