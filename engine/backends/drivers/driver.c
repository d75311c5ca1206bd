/* SPDX-License-Identifier: Apache-2.0 */
/* driver.c: loading device driver plugins (through the plugin loader, engine/plugins/
 * loader.h: the trust check, the constructors and the table read first in a forked child,
 * the symbol), checking driver tables, and the registry of their devices. See driver.h. */
#include "engine/backends/drivers/driver.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/backends/drivers/driver_backend.h"
#include "engine/plugins/extension_plugin.h"
#include "engine/plugins/fault_guard.h"
#include "engine/plugins/loader.h"
#include "engine/plugins/refusals.h"

static eng_driver_lib *libs[ENG_DRIVERS_MAX];
static uint32_t n_libs;
static eng_driver_dev *devs[ENG_DRIVER_DEVICES_MAX];
static uint32_t n_devs;
static eng_refusals refused;

static void refuse(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(const char *path, const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    eng_driver_logf(0, "driver %s refused: %s", path, why);
    eng_refusals_add(&refused, path, why);
}

static bool valid_name(const char *s) {
    size_t n = strnlen(s, NND_DRIVER_MAX_NAME + 1);
    if (n == 0 || n > NND_DRIVER_MAX_NAME) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

typedef struct check_args {
    const nnd_driver *d;
    char *why;
    size_t whylen;
} check_args;

/* Checks the table; runs under the fault guard (wild pointers refuse the driver). */
static int check_table(void *arg) {
    check_args *a = arg;
    const nnd_driver *d = a->d;
    if (d->abi_version == 1) {
        snprintf(a->why, a->whylen,
                 "built for driver ABI 1, which this daemon no longer loads: rebuild it against "
                 "nnd/driver.h of ABI %d (docs/drivers.md)",
                 NND_DRIVER_ABI_VERSION);
        return -1;
    }
    if (eng_plugin_check_abi(d, "driver", NND_DRIVER_ABI_VERSION, sizeof(nnd_driver), a->why,
                             a->whylen) < 0)
        return -1;
    if (!d->open || !d->close || !d->supported_operations || !d->prepare || !d->release) {
        snprintf(a->why, a->whylen, "lacks open, close, supported_operations, prepare or release");
        return -1;
    }
    if (!d->execute && !d->start) {
        snprintf(a->why, a->whylen, "has neither execute nor start");
        return -1;
    }
    if (!d->start != !d->cancel) {
        snprintf(a->why, a->whylen, "has one of start and cancel");
        return -1;
    }
    int memory = !!d->allocate + !!d->memory_free + !!d->memory_read + !!d->memory_write;
    if (memory != 0 && memory != 4) {
        snprintf(a->why, a->whylen, "has %d of the 4 device memory callbacks", memory);
        return -1;
    }
    if (!d->cache_save != !d->cache_load) {
        snprintf(a->why, a->whylen, "has one of cache_save and cache_load");
        return -1;
    }
    if (d->name) (void)strlen(d->name); /* a bad pointer faults here, not later */
    return 0;
}

/* In the loader's probe child, after the plugin's constructors: reads the table the way
 * the daemon will, so a table whose pointers fault refuses the plugin there. Its verdict
 * is found again, with its reason, in the daemon. */
static int probe_table(void *dl) {
    const nnd_driver *d = dlsym(dl, NND_DRIVER_SYMBOL);
    char ignored[8];
    check_args a = {.d = d, .why = ignored, .whylen = sizeof ignored};
    if (d) (void)check_table(&a);
    return 0;
}

static bool name_taken(const char *name, const char *const *reserved, size_t n_reserved,
                       const char **by) {
    for (size_t i = 0; i < n_reserved; i++)
        if (!strcmp(reserved[i], name)) return *by = "a built-in device", true;
    for (uint32_t i = 0; i < n_devs; i++)
        if (!strcmp(devs[i]->info.name, name)) return *by = devs[i]->lib->path, true;
    return false;
}

typedef struct open_args {
    const nnd_driver *d;
    nnd_driver_device_info *devices;
    char *err;
    size_t errlen;
    int n;
} open_args;

static int call_open(void *arg) {
    open_args *a = arg;
    a->n = a->d->open(a->devices, NND_DRIVER_MAX_DEVICES, a->err, a->errlen);
    return 0;
}

static int call_close(void *arg) {
    ((const nnd_driver *)arg)->close();
    return 0;
}

static bool perf_ok(const nnd_driver_perf *p) {
    return isfinite(p->exec_time) && p->exec_time >= 0 && isfinite(p->power_usage) &&
           p->power_usage >= 0;
}

/* Why device i of a table cannot be one of the daemon's, or NULL. */
static const char *device_fault(const nnd_driver_device_info *v, const char *const *reserved,
                                size_t n_reserved, char *why, size_t whylen) {
    const char *by;
    if (!valid_name(v->name)) {
        snprintf(why, whylen, "bad device name \"%.*s\" (want 1 to %d of [a-z0-9-])",
                 NND_DRIVER_MAX_NAME, v->name, NND_DRIVER_MAX_NAME);
        return why;
    }
    if (name_taken(v->name, reserved, n_reserved, &by)) {
        snprintf(why, whylen, "device name %.*s is taken by %.200s", NND_DRIVER_MAX_NAME, v->name,
                 by);
        return why;
    }
    if (v->type < NND_DRIVER_TYPE_OTHER || v->type > NND_DRIVER_TYPE_ACCELERATOR) {
        snprintf(why, whylen, "device %.*s: unknown device type %d", NND_DRIVER_MAX_NAME, v->name,
                 v->type);
        return why;
    }
    const nnd_driver_capabilities *c = &v->caps;
    bool ok = perf_ok(&c->relaxed_scalar) && perf_ok(&c->relaxed_tensor) && perf_ok(&c->if_perf) &&
              perf_ok(&c->while_perf);
    for (int t = 0; t < NND_DRIVER_OPERAND_TYPES; t++)
        ok = ok && perf_ok(&c->operand[t]);
    if (!ok) {
        snprintf(why, whylen, "device %.*s: a performance figure is negative or not finite",
                 NND_DRIVER_MAX_NAME, v->name);
        return why;
    }
    return NULL;
}

static void unload_lib(eng_driver_lib *lib, bool opened) {
    int sig = 0;
    if (opened && !atomic_load(&lib->faulted)) eng_fault_guarded(call_close, (void *)lib->d, &sig);
    if (lib->unload) lib->unload(lib->unload_ctx);
    if (lib->dl) dlclose(lib->dl);
    free(lib->path);
    free(lib);
}

/* add_table with the plugin's dlopen handle (NULL for a table from elsewhere). */
static int add_table(const nnd_driver *d, const char *path, void *dl, void (*unload)(void *),
                     void *unload_ctx, const char *const *reserved, size_t n_reserved, char *why,
                     size_t whylen) {
    char buf[512];
    eng_plugin_guard_once(); /* one set of fault handlers for extensions and drivers */
    check_args a = {.d = d, .why = buf, .whylen = sizeof buf};
    int sig = 0;
    if (!d) snprintf(buf, sizeof buf, "no driver table");
    if (!d || eng_fault_guarded(check_table, &a, &sig) != 0) {
        if (sig)
            snprintf(buf, sizeof buf, "%s while reading its table", eng_fault_signal_name(sig));
        goto refused;
    }
    if (n_libs == ENG_DRIVERS_MAX) {
        snprintf(buf, sizeof buf, "too many drivers loaded (%d)", ENG_DRIVERS_MAX);
        goto refused;
    }
    eng_driver_lib *lib = calloc(1, sizeof *lib);
    if (lib) lib->path = strdup(path ? path : "(unnamed)");
    if (!lib || !lib->path) {
        free(lib);
        snprintf(buf, sizeof buf, "out of memory");
        goto refused;
    }
    lib->d = d;
    lib->dl = dl;
    lib->unload = unload;
    lib->unload_ctx = unload_ctx;
    lib->has_memory = d->allocate != NULL;
    lib->has_cache = d->cache_save != NULL;
    atomic_init(&lib->faulted, false);
    nnd_driver_device_info info[NND_DRIVER_MAX_DEVICES];
    memset(info, 0, sizeof info);
    char err[256] = "";
    open_args o = {.d = d, .devices = info, .err = err, .errlen = sizeof err};
    if (eng_fault_guarded(call_open, &o, &sig) != 0 || sig) {
        snprintf(buf, sizeof buf, "%s in open()", eng_fault_signal_name(sig));
        lib->unload = NULL; /* the caller keeps what it gave on a refusal */
        lib->dl = NULL;
        unload_lib(lib, false);
        goto refused;
    }
    if (o.n < 0 || o.n > NND_DRIVER_MAX_DEVICES) {
        err[sizeof err - 1] = '\0';
        snprintf(buf, sizeof buf, "open() failed: %s",
                 o.n < 0 && err[0] ? err : "bad device count");
        lib->unload = NULL;
        lib->dl = NULL;
        unload_lib(lib, o.n > NND_DRIVER_MAX_DEVICES);
        goto refused;
    }
    int added = 0;
    for (int i = 0; i < o.n; i++) {
        info[i].name[NND_DRIVER_MAX_NAME] = '\0';
        info[i].version[sizeof info[i].version - 1] = '\0';
        if (device_fault(&info[i], reserved, n_reserved, buf, sizeof buf) ||
            n_devs == ENG_DRIVER_DEVICES_MAX) {
            if (n_devs == ENG_DRIVER_DEVICES_MAX) snprintf(buf, sizeof buf, "too many devices");
            refuse(lib->path, "%s", buf);
            continue;
        }
        eng_driver_dev *v = calloc(1, sizeof *v);
        if (!v) break;
        v->lib = lib;
        v->info = info[i];
        if (!lib->has_cache) v->info.caps.cache_blobs = 0;
        eng_driver_backend_init(v);
        devs[n_devs++] = v;
        lib->n_devices++;
        added++;
        eng_driver_logf(2, "driver %s: device %s%s%s (type %d) from %s", d->name ? d->name : "",
                        v->info.name, v->info.version[0] ? " " : "", v->info.version, v->info.type,
                        lib->path);
    }
    libs[n_libs++] = lib; /* kept even with no device: close() comes at unload */
    return added;
refused:
    snprintf(why, whylen, "%s", buf);
    refuse(path ? path : "(unnamed)", "%s", buf);
    return -1;
}

int eng_drivers_add_table(const nnd_driver *table, const char *path, void (*unload)(void *ctx),
                          void *unload_ctx, const char *const *reserved, size_t n_reserved,
                          char *why, size_t whylen) {
    return add_table(table, path, NULL, unload, unload_ctx, reserved, n_reserved, why, whylen);
}

typedef struct load_ctx {
    eng_ext_file_check_fn check;
    const char *const *reserved;
    size_t n_reserved;
} load_ctx;

static void load_one(const char *path, void *arg) {
    const load_ctx *c = arg;
    char why[512] = "";
    void *dl = eng_plugin_open(path, c->check, probe_table, why, sizeof why);
    if (!dl) return refuse(path, "%s", why);
    const nnd_driver *d = eng_plugin_symbol(dl, NND_DRIVER_SYMBOL, why, sizeof why);
    if (!d) {
        dlclose(dl);
        return refuse(path, "%s", why);
    }
    if (add_table(d, path, dl, NULL, NULL, c->reserved, c->n_reserved, why, sizeof why) < 0)
        dlclose(dl);
}

int eng_drivers_load_dir(const char *dir, eng_ext_file_check_fn check, const char *const *reserved,
                         size_t n_reserved, char *err, size_t errlen) {
    eng_plugin_guard_once();
    uint32_t before = n_devs;
    load_ctx c = {.check = check, .reserved = reserved, .n_reserved = n_reserved};
    if (eng_plugin_scan_dir(dir, "drivers", load_one, &c, err, errlen) < 0) return -1;
    return (int)(n_devs - before);
}

void eng_drivers_unload_all(void) {
    for (uint32_t i = 0; i < n_devs; i++)
        free(devs[i]);
    n_devs = 0;
    for (uint32_t i = 0; i < n_libs; i++)
        unload_lib(libs[i], true);
    n_libs = 0;
    eng_refusals_clear(&refused);
}

uint32_t eng_drivers_count(void) {
    return n_devs;
}

bool eng_drivers_get(uint32_t i, eng_driver_info_view *out) {
    if (i >= n_devs) return false;
    const eng_driver_dev *v = devs[i];
    *out = (eng_driver_info_view){.name = v->info.name,
                                  .version = v->info.version,
                                  .path = v->lib->path,
                                  .type = v->info.type,
                                  .caps = &v->info.caps,
                                  .backend = &v->backend,
                                  .device = v->info.device,
                                  .faulted = atomic_load(&v->lib->faulted)};
    return true;
}

bool eng_drivers_refused(uint32_t i, const char **path, const char **reason) {
    return eng_refusals_get(&refused, i, path, reason);
}
