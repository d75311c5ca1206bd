/* SPDX-License-Identifier: Apache-2.0 */
/* devices.c: the device table (built-ins, then drivers) and partition plans. */
#include "daemon/devices/devices.h"
#include "daemon/devices/driver_hosts.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/backends/drivers/driver.h"
#include "daemon/base/log.h"
#include "daemon/clients/trust.h"

static srv_device g_devices[SRV_MAX_DEVICES] = {
    {.name = "nnd-cpu", .what = "XNNPACK fast paths over the reference kernels", .type = 2},
    {.name = "nnd-reference",
     .what = "reference kernels only, deterministic",
     .type = 2,
     .reference_only = true},
};
#define N_BUILTIN 2
static size_t n_devices = N_BUILTIN;
static char driver_what[SRV_MAX_DEVICES][300];
static char dir_refusal[600]; /* the drivers directory itself, when untrusted */

static atomic_uint_fast64_t g_prepares[SRV_MAX_DEVICES], g_executions[SRV_MAX_DEVICES];
static atomic_uint_fast64_t g_partitions[SRV_MAX_DEVICES];

static void uniform_caps(nnd_driver_capabilities *c, float v) {
    nnd_driver_perf p = {v, v};
    for (int t = 0; t < NND_DRIVER_OPERAND_TYPES; t++)
        c->operand[t] = p;
    c->relaxed_scalar = c->relaxed_tensor = c->if_perf = c->while_perf = p;
}

/* The built-ins' capabilities: nnd-cpu 0.1 and nnd-reference 1.0 for every type. */
static void builtin_caps(void) {
    static bool done;
    if (done) return;
    uniform_caps(&g_devices[0].caps, 0.1f);
    uniform_caps(&g_devices[1].caps, 1.0f);
    done = true;
}

static void driver_log(int level, const char *msg) {
    srv_log((srv_log_level)level, "%s", msg);
}

int srv_devices_load_drivers(const char *dir, bool in_process, const drvhost_limits *limits) {
    builtin_caps();
    struct stat st;
    if (!dir || stat(dir, &st) < 0) {
        srv_log_info("no device drivers: %s %s", dir ? dir : "(no directory)",
                     dir ? strerror(errno) : "");
        return 0;
    }
    char err[512];
    if (srv_trust_path(dir, "drivers directory", SRV_TRUST_DIR, err, sizeof err) < 0) {
        snprintf(dir_refusal, sizeof dir_refusal, "%s", err);
        srv_log_error("no device drivers loaded: %s", err);
        return 0;
    }
    eng_ext_set_log(driver_log);
    const char *reserved[N_BUILTIN];
    for (size_t i = 0; i < N_BUILTIN; i++)
        reserved[i] = g_devices[i].name;
    drvhost_limits dflt = {0}; /* the defaults: docs/driver-host.md */
    int n = in_process
                ? eng_drivers_load_dir(dir, srv_trust_fd, reserved, N_BUILTIN, err, sizeof err)
                : srv_driver_hosts_load_dir(dir, limits ? limits : &dflt, reserved, N_BUILTIN, err,
                                            sizeof err);
    if (n < 0) {
        srv_log_error("no device drivers: %s", err);
        return 0;
    }
    eng_driver_info_view v;
    for (uint32_t i = 0; n_devices < SRV_MAX_DEVICES && eng_drivers_get(i, &v); i++) {
        size_t at = n_devices++;
        snprintf(driver_what[at], sizeof driver_what[0], "driver %s", v.path);
        g_devices[at] = (srv_device){.name = v.name,
                                     .what = driver_what[at],
                                     .version = *v.version ? v.version : NULL,
                                     .type = v.type,
                                     .reference_only = false,
                                     .backend = v.backend,
                                     .caps = *v.caps};
    }
    if (n) srv_log_info("%d device driver%s loaded from %s", n, n == 1 ? "" : "s", dir);
    return n;
}

void srv_devices_unload_drivers(void) {
    n_devices = N_BUILTIN;
    eng_drivers_unload_all();
    drvhost_stop_all();
}

const srv_device *srv_devices(size_t *n) {
    builtin_caps();
    *n = n_devices;
    return g_devices;
}

static const srv_device *find(const char *name) {
    for (size_t i = 0; i < n_devices; i++)
        if (name && !strcmp(g_devices[i].name, name)) return &g_devices[i];
    return NULL;
}

schema_status srv_device_plan_for(char *const *names, size_t n, srv_device_plan *out, char *err,
                                  size_t errlen) {
    const srv_device *set[SRV_MAX_DEVICES];
    size_t m = 0;
    builtin_caps();
    if (n == 0) /* all: but drivers disabled after a fault */
        for (size_t i = 0; i < n_devices; i++)
            if (!g_devices[i].backend || !srv_device_disabled(&g_devices[i]))
                set[m++] = &g_devices[i];
    for (size_t i = 0; i < n; i++) {
        const srv_device *d = find(names[i]);
        if (!d) {
            schema_errf(err, errlen,
                        "the request names device \"%s\", which this daemon does not have",
                        names[i] ? names[i] : "");
            return SCHEMA_INVALID_ARGUMENT;
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names[j], names[i])) {
                schema_errf(err, errlen, "the request names device \"%s\" twice", names[i]);
                return SCHEMA_INVALID_ARGUMENT;
            }
        set[m++] = d;
    }
    memset(out, 0, sizeof *out);
    out->drivers_only = true;
    const srv_device *cpu = NULL;
    for (size_t i = 0; i < m; i++) {
        if (set[i]->backend) {
            out->drivers[out->n_drivers++] = set[i]->backend;
        } else if (!cpu || !set[i]->reference_only) {
            cpu = set[i]; /* nnd-cpu over nnd-reference when both are named */
        }
    }
    /* Drivers in table order: ties between them go to the one listed first. */
    for (uint32_t a = 1; a < out->n_drivers; a++)
        for (uint32_t b = a; b > 0 && out->drivers[b] < out->drivers[b - 1]; b--) {
            const struct eng_backend *x = out->drivers[b];
            out->drivers[b] = out->drivers[b - 1];
            out->drivers[b - 1] = x;
        }
    out->cpu_last = n > 0;
    if (cpu) {
        out->drivers_only = false;
        out->reference_only = cpu->reference_only;
        out->cpu_caps = &cpu->caps;
    }
    return SCHEMA_OK;
}

void srv_device_plan_apply(const srv_device_plan *plan, eng_model_desc *desc) {
    desc->reference_only = plan->reference_only;
    desc->drivers = plan->n_drivers ? plan->drivers : NULL;
    desc->n_drivers = plan->n_drivers;
    desc->drivers_only = plan->drivers_only;
    desc->cpu_caps = plan->cpu_caps;
    desc->cpu_last = plan->cpu_last;
}

/* The engine's view of a driver's device; false for the built-in devices. */
static bool driver_view(const srv_device *d, eng_driver_info_view *out) {
    for (uint32_t i = 0; d->backend && i < eng_drivers_count(); i++)
        if (eng_drivers_get(i, out) && out->backend == d->backend) return true;
    return false;
}

bool srv_device_disabled(const srv_device *d) {
    eng_driver_info_view v;
    return driver_view(d, &v) && (v.faulted || drvhost_device_disabled(v.device));
}

bool srv_device_runs_disabled(const eng_prepared *p) {
    for (size_t i = N_BUILTIN; p && i < n_devices; i++)
        if (eng_prepared_steps_on(p, g_devices[i].backend) && srv_device_disabled(&g_devices[i]))
            return true;
    return false;
}

/* Steps of p on device i. */
static uint32_t steps_on(const eng_prepared *p, size_t i) {
    const srv_device *d = &g_devices[i];
    if (d->backend) return eng_prepared_steps_on(p, d->backend);
    if (d->reference_only != eng_prepared_reference_only(p)) return 0;
    return eng_prepared_steps_on(p, NULL);
}

const struct eng_backend *srv_device_memory_for(const eng_buffer_role *roles, size_t n) {
    for (size_t i = 0; i < n_devices; i++) {
        const eng_backend *b = g_devices[i].backend;
        if (b && eng_buffer_roles_on(b, roles, n)) return b;
    }
    return NULL;
}

const srv_device *srv_device_of(const eng_prepared *p) {
    size_t best = eng_prepared_reference_only(p) ? 1 : 0;
    uint32_t most = steps_on(p, best);
    for (size_t i = N_BUILTIN; i < n_devices; i++) {
        uint32_t k = steps_on(p, i);
        if (k > most) most = k, best = i;
    }
    return &g_devices[best];
}

void srv_device_step_lanes(const eng_prepared *p, uint8_t *lanes) {
    uint8_t cpu = eng_prepared_reference_only(p) ? 1 : 0;
    uint32_t n = eng_prepared_num_operations(p);
    for (uint32_t k = 0; k < n; k++) {
        const struct eng_backend *b = eng_prepared_step_backend(p, k);
        lanes[k] = cpu;
        for (size_t i = N_BUILTIN; b && i < n_devices; i++)
            if (g_devices[i].backend == b) lanes[k] = (uint8_t)i;
    }
}

void srv_device_steps_text(const eng_prepared *p, char *buf, size_t len) {
    size_t at = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < n_devices; k++) {
        size_t i = (k + N_BUILTIN) % n_devices; /* drivers first, as the plan offers */
        uint32_t n = steps_on(p, i);
        if (!n || at >= len) continue;
        int w = snprintf(buf + at, len - at, "%s%s %u", at ? ", " : "", g_devices[i].name, n);
        if (w > 0) at += (size_t)w;
    }
}

static void count(atomic_uint_fast64_t *counters, const eng_prepared *p) {
    bool any = false;
    for (size_t i = 0; i < n_devices; i++)
        if (steps_on(p, i)) atomic_fetch_add(&counters[i], 1), any = true;
    if (!any) atomic_fetch_add(&counters[srv_device_of(p) - g_devices], 1); /* no steps */
}

void srv_device_count_prepare(const eng_prepared *p) {
    count(g_prepares, p);
    for (size_t i = N_BUILTIN; i < n_devices; i++)
        atomic_fetch_add(&g_partitions[i], eng_prepared_partitions_on(p, g_devices[i].backend));
}

void srv_device_count_execution(const eng_prepared *p) {
    count(g_executions, p);
}

/* A float as the digits it carries (0.1, not 0.100000001490116 as a double prints it). */
static double float_digits(float v) {
    char s[32];
    snprintf(s, sizeof s, "%.7g", (double)v);
    return strtod(s, NULL);
}

static cJSON *perf_json(const nnd_driver_perf *p) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddNumberToObject(o, "exec_time", float_digits(p->exec_time));
    cJSON_AddNumberToObject(o, "power_usage", float_digits(p->power_usage));
    return o;
}

static cJSON *caps_json(const nnd_driver_capabilities *c) {
    cJSON *o = cJSON_CreateObject();
    for (int t = 0; o && t < NND_DRIVER_OPERAND_TYPES; t++)
        cJSON_AddItemToObject(o, schema_type_name(t), perf_json(&c->operand[t]));
    if (!o) return NULL;
    cJSON_AddItemToObject(o, "relaxed_scalar", perf_json(&c->relaxed_scalar));
    cJSON_AddItemToObject(o, "relaxed_tensor", perf_json(&c->relaxed_tensor));
    cJSON_AddItemToObject(o, "if", perf_json(&c->if_perf));
    cJSON_AddItemToObject(o, "while", perf_json(&c->while_perf));
    return o;
}

/* A driver host's figures (drvhost.h) for the device it serves. */
static cJSON *host_json(const drvhost_stats *st) {
    cJSON *h = cJSON_CreateObject();
    if (!h) return NULL;
    cJSON_AddNumberToObject(h, "pid", st->pid);
    cJSON_AddNumberToObject(h, "restarts", st->restarts);
    cJSON_AddNumberToObject(h, "calls", (double)st->calls);
    cJSON_AddNumberToObject(h, "staged_calls", (double)st->staged_calls);
    cJSON_AddNumberToObject(h, "staged_bytes", (double)st->staged_bytes);
    cJSON_AddNumberToObject(h, "pool_shrinks", (double)st->pool_shrinks);
    cJSON_AddStringToObject(h, "last_fault", st->last_fault);
    return h;
}

cJSON *srv_devices_json(void) {
    builtin_caps();
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < n_devices; i++) {
        cJSON *d = cJSON_CreateObject();
        if (!d) break;
        cJSON_AddStringToObject(d, "name", g_devices[i].name);
        cJSON_AddStringToObject(d, "what", g_devices[i].what);
        cJSON_AddNumberToObject(d, "type", g_devices[i].type);
        cJSON_AddBoolToObject(d, "reference_only", g_devices[i].reference_only);
        cJSON_AddBoolToObject(d, "driver", g_devices[i].backend != NULL);
        const eng_backend *b = g_devices[i].backend;
        cJSON_AddBoolToObject(d, "device_memory", b && b->mem_alloc);
        cJSON_AddNumberToObject(d, "cache_blobs", b ? b->cache_blobs : 0);
        cJSON_AddBoolToObject(d, "disabled", b && srv_device_disabled(&g_devices[i]));
        cJSON_AddNumberToObject(d, "exec_time", float_digits(srv_device_exec_time(&g_devices[i])));
        cJSON_AddItemToObject(d, "capabilities", caps_json(&g_devices[i].caps));
        cJSON_AddNumberToObject(d, "prepares", (double)atomic_load(&g_prepares[i]));
        cJSON_AddNumberToObject(d, "partitions", (double)atomic_load(&g_partitions[i]));
        cJSON_AddNumberToObject(d, "executions", (double)atomic_load(&g_executions[i]));
        eng_driver_info_view v;
        drvhost_stats st;
        if (driver_view(&g_devices[i], &v) && drvhost_device_stats(v.device, &st))
            cJSON_AddItemToObject(d, "host", host_json(&st));
        cJSON_AddItemToArray(a, d);
    }
    return a;
}

cJSON *srv_devices_refused_json(void) {
    cJSON *a = cJSON_CreateArray();
    const char *path, *why;
    if (a && dir_refusal[0]) {
        cJSON *e = cJSON_CreateObject();
        if (e) {
            cJSON_AddStringToObject(e, "path", "");
            cJSON_AddStringToObject(e, "reason", dir_refusal);
            cJSON_AddItemToArray(a, e);
        }
    }
    for (uint32_t i = 0; a && eng_drivers_refused(i, &path, &why); i++) {
        cJSON *e = cJSON_CreateObject();
        if (!e) break;
        cJSON_AddStringToObject(e, "path", path);
        cJSON_AddStringToObject(e, "reason", why);
        cJSON_AddItemToArray(a, e);
    }
    return a;
}
