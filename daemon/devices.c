/* devices.c: the built-in devices and the choice among those a compilation names. */
#include "devices.h"

#include <stdatomic.h>
#include <string.h>

static const nnd_device g_devices[] = {
    {"nnd-cpu", "XNNPACK fast paths over the reference kernels", false, 0.1f},
    {"nnd-reference", "reference kernels only, deterministic", true, 1.0f},
};
#define N_DEVICES (sizeof g_devices / sizeof g_devices[0])

static atomic_uint_fast64_t g_prepares[N_DEVICES], g_executions[N_DEVICES];

const nnd_device *nnd_devices(size_t *n) {
    *n = N_DEVICES;
    return g_devices;
}

static const nnd_device *find(const char *name) {
    for (size_t i = 0; i < N_DEVICES; i++)
        if (name && !strcmp(g_devices[i].name, name)) return &g_devices[i];
    return NULL;
}

nnd_status nnd_device_choose(char *const *names, size_t n, const nnd_device **out, char *err,
                             size_t errlen) {
    const nnd_device *best = n ? NULL : &g_devices[0];
    for (size_t i = 0; i < n; i++) {
        const nnd_device *d = find(names[i]);
        if (!d) {
            nnd_errf(err, errlen,
                     "PrepareModel names device \"%s\", which this daemon does not have",
                     names[i] ? names[i] : "");
            return NND_INVALID_ARGUMENT;
        }
        for (size_t j = 0; j < i; j++)
            if (!strcmp(names[j], names[i])) {
                nnd_errf(err, errlen, "PrepareModel names device \"%s\" twice", names[i]);
                return NND_INVALID_ARGUMENT;
            }
        if (!best || d->exec_time < best->exec_time) best = d;
    }
    *out = best;
    return NND_OK;
}

const nnd_device *nnd_device_of(const nnd_prepared *p) {
    for (size_t i = 0; i < N_DEVICES; i++)
        if (g_devices[i].reference_only == nnd_prepared_reference_only(p)) return &g_devices[i];
    return &g_devices[0];
}

void nnd_device_count_prepare(const nnd_device *d) {
    atomic_fetch_add(&g_prepares[d - g_devices], 1);
}

void nnd_device_count_execution(const nnd_device *d) {
    atomic_fetch_add(&g_executions[d - g_devices], 1);
}

cJSON *nnd_devices_json(void) {
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; a && i < N_DEVICES; i++) {
        cJSON *d = cJSON_CreateObject();
        if (!d) break;
        cJSON_AddStringToObject(d, "name", g_devices[i].name);
        cJSON_AddStringToObject(d, "what", g_devices[i].what);
        cJSON_AddBoolToObject(d, "reference_only", g_devices[i].reference_only);
        cJSON_AddNumberToObject(d, "prepares", (double)atomic_load(&g_prepares[i]));
        cJSON_AddNumberToObject(d, "executions", (double)atomic_load(&g_executions[i]));
        cJSON_AddItemToArray(a, d);
    }
    return a;
}
