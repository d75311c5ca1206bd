/* SPDX-License-Identifier: Apache-2.0 */
/* admin.c: the admin commands. See admin.h. */
#include "daemon/admin/admin.h"
#include "daemon/admin/partitions.h"

#include "engine/engine.h"

#include <malloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/binding/buffer.h"
#include "daemon/devices/devices.h"
#include "daemon/binding/burst.h"
#include "daemon/calls/burst_channel.h"
#include "daemon/base/bus.h"
#include "daemon/cache/cache.h"
#include "daemon/devices/extensions.h"
#include "daemon/base/log.h"
#include "daemon/binding/memreg.h"
#include "daemon/calls/execution.h"
#include "daemon/clients/quota.h"
#include "daemon/devices/refused.h"
#include "daemon/net/server.h"
#include "daemon/clients/session.h"
#include "daemon/stats/process.h"
#include "daemon/stats/tally.h"

typedef struct tally {
    cJSON *clients;
    size_t prepared;
} tally;

static void add_client(srv_session *s, void *ctx) {
    tally *t = ctx;
    size_t prepared = srv_session_count(s, SRV_OBJ_PREPARED);
    t->prepared += prepared;
    cJSON *c = cJSON_CreateObject();
    if (!c) return;
    srv_json_add_client(c, s->serial, s->pid, s->uid);
    cJSON_AddStringToObject(c, "exe", s->exe);
    cJSON_AddStringToObject(c, "name", s->name);
    cJSON_AddNumberToObject(c, "prepared_models", (double)prepared);
    cJSON_AddNumberToObject(c, "buffers", (double)srv_session_count(s, SRV_OBJ_BUFFER));
    srv_json_add_u64(c, "buffer_bytes", s->quota.used[SRV_QUOTA_BUFFER_BYTES]);
    srv_json_add_u64(c, "queued_executions", s->quota.used[SRV_QUOTA_QUEUED_EXECUTIONS]);
    cJSON_AddNumberToObject(c, "bursts", (double)srv_session_count(s, SRV_OBJ_BURST));
    cJSON_AddNumberToObject(c, "burst_slots", (double)s->burst_slots);
    cJSON_AddNumberToObject(c, "registered_memories", (double)srv_session_count(s, SRV_OBJ_MEMORY));
    cJSON_AddItemToArray(t->clients, c);
}

static cJSON *error(cJSON *reply, const char *msg) {
    cJSON_AddBoolToObject(reply, "ok", 0);
    cJSON_AddStringToObject(reply, "error", msg);
    return reply;
}

/* What the daemon's memory holds: allocated and not freed (the heap's arenas and the blocks
 * mapped on their own) beside the resident set, which also counts what the allocator
 * keeps of freed memory; the first is what tells a leak. */
static void add_memory(cJSON *reply) {
    cJSON *m = cJSON_AddObjectToObject(reply, "memory");
    struct mallinfo2 mi = mallinfo2();
    srv_json_add_u64(m, "allocated_bytes",
                     (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd + eng_mapped_bytes());
    srv_json_add_u64(m, "engine_kept_bytes", eng_kept_bytes());
    srv_json_add_u64(m, "free_in_heap_bytes", (uint64_t)mi.fordblks);
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "re");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    srv_json_add_u64(m, "resident_bytes", (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE));
}

cJSON *srv_admin_handle(void *ctx, const cJSON *req) {
    srv_daemon *d = ctx;
    cJSON *reply = cJSON_CreateObject();
    if (!reply) return NULL;
    const cJSON *cmd = req ? cJSON_GetObjectItemCaseSensitive(req, "cmd") : NULL;
    if (!cJSON_IsString(cmd))
        return error(reply, "request must be a JSON object with a \"cmd\" string");

    tally t = {.clients = cJSON_CreateArray()};
    if (t.clients) srv_server_foreach(d->server, add_client, &t);
    if (strcmp(cmd->valuestring, "status") == 0) {
        cJSON_AddBoolToObject(reply, "ok", 1);
        cJSON_AddStringToObject(reply, "version", SRV_VERSION);
        srv_json_add_u64(reply, "uptime_s", (srv_now_ns() - d->start_ns) / 1000000000ull);
        cJSON_AddNumberToObject(reply, "connections", (double)srv_server_connections(d->server));
        srv_json_add_u64(reply, "connections_dropped", srv_server_dropped(d->server));
        cJSON_AddNumberToObject(reply, "prepared_models", (double)t.prepared);
        srv_json_add_u64(reply, "executions", d->executions);
        uint64_t buffers, buffer_bytes; /* live driver buffers, released or not */
        srv_buffer_stats(&buffers, &buffer_bytes);
        srv_json_add_u64(reply, "buffers", buffers);
        srv_json_add_u64(reply, "buffer_bytes", buffer_bytes);
        srv_memreg_stats ms;
        srv_memreg_stats_get(&ms);
        cJSON *reg = cJSON_AddObjectToObject(reply, "registered_memory");
        srv_json_add_u64(reg, "live", ms.live);
        srv_json_add_u64(reg, "registrations", ms.registrations);
        srv_json_add_u64(reg, "uses", ms.uses);
        srv_burst_stats bs;
        srv_burst_stats_get(&bs);
        cJSON *bursts = cJSON_AddObjectToObject(reply, "bursts");
        srv_json_add_u64(bursts, "live", bs.bursts);
        srv_json_add_u64(bursts, "slots", bs.slots);
        srv_json_add_u64(bursts, "slot_maps", bs.slot_maps);
        srv_json_add_u64(bursts, "slot_hits", bs.slot_hits);
        srv_burst_channel_stats cs;
        srv_burst_channel_stats_get(&cs);
        srv_json_add_u64(bursts, "channels", cs.channels);
        srv_json_add_u64(bursts, "channel_executions", cs.executions);
        srv_json_add_u64(bursts, "channel_refused", cs.refused);
        srv_json_add_u64(bursts, "channels_not_set_up", cs.not_set_up);
        cJSON_AddNumberToObject(reply, "supported_operation_types",
                                (double)eng_supported_operation_count());
        cJSON_AddItemToObject(reply, "refused_operations", srv_refused_json());
        cJSON_AddNumberToObject(reply, "pid", getpid());
        cJSON_AddStringToObject(reply, "socket", d->socket_path);
        cJSON_AddStringToObject(reply, "state_dir", d->state_dir);
        srv_cache_status(d->cache, d->cache_off, reply);
        cJSON *devices = srv_devices_json();
        srv_executions_devices_status(d, devices);
        srv_tally_devices_json(devices);
        srv_admin_partitions(d, devices);
        cJSON_AddItemToObject(reply, "devices", devices);
        cJSON_AddItemToObject(reply, "drivers_refused", srv_devices_refused_json());
        cJSON_AddItemToObject(reply, "extensions", srv_extensions_json(d));
        cJSON_AddItemToObject(reply, "scheduler", srv_executions_status(d));
        cJSON_AddItemToObject(reply, "quotas", srv_quota_status(d->quota));
        add_memory(reply);
        srv_process_json(reply);
        srv_tally_json(reply);
        cJSON_AddItemToObject(reply, "clients", t.clients);
    } else if (strcmp(cmd->valuestring, "clients") == 0) {
        cJSON_AddBoolToObject(reply, "ok", 1);
        cJSON_AddItemToObject(reply, "clients", t.clients);
    } else if (strcmp(cmd->valuestring, "cache list") == 0 ||
               strcmp(cmd->valuestring, "cache purge") == 0) {
        cJSON_Delete(t.clients);
        cJSON_Delete(reply);
        return cmd->valuestring[6] == 'l' ? srv_cache_list(d->cache) : srv_cache_purge(d->cache);
    } else if (strcmp(cmd->valuestring, "reload") == 0) {
        /* The configuration, the plugins and the allowlist afresh (reload.h); models
         * prepared before keep their plugins. */
        cJSON_Delete(t.clients);
        srv_log_info("admin: reloading the configuration, vendor extensions and the allowlist");
        char err[512];
        int rc =
            d->reload ? d->reload(d, err, sizeof err) : srv_extensions_load(d, err, sizeof err);
        if (rc < 0 && !d->reload) srv_log_error("%s", err); /* reload logs its own */
        cJSON_AddBoolToObject(reply, "ok", rc == 0);
        if (rc < 0) cJSON_AddStringToObject(reply, "error", err);
        cJSON_AddItemToObject(reply, "extensions", srv_extensions_json(d));
    } else {
        cJSON_Delete(t.clients);
        char msg[256];
        snprintf(msg, sizeof msg, "unknown command %s", cmd->valuestring);
        return error(reply, msg);
    }
    return reply;
}
