/* SPDX-License-Identifier: Apache-2.0 */
/* driver_hosts: driver plugins in driver hosts (driver_hosts.h). */
#include "daemon/devices/driver_hosts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/log.h"
#include "daemon/clients/trust.h"
#include "engine/backends/drivers/driver.h"

#define MAX_PLUGINS 64

static struct {
    const struct eng_backend *backend;
    drvhost *host;
} g_devices[NND_DRIVER_DEVICES_MAX];
static size_t g_n;

static void host_log(void *ctx, const char *msg) {
    (void)ctx;
    srv_log_warn("%s", msg);
}

static void stop_host(void *ctx) {
    drvhost_stop(ctx);
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One plugin: judged, started in its host, its table given to the engine. */
static int load_one(const char *path, const drvhost_limits *limits, const char *const *reserved,
                    size_t n_reserved) {
    char err[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        srv_log_error("driver %s refused: %s", path, strerror(errno));
        return 0;
    }
    if (srv_trust_fd(fd, path, err, sizeof err) < 0) {
        srv_log_error("driver %s refused: %s", path, err);
        close(fd);
        return 0;
    }
    drvhost_limits lim = *limits;
    lim.plugin_fd = fd;
    lim.log = host_log;
    drvhost *h = NULL;
    const nnd_driver *table = drvhost_start(path, &lim, &h, err, sizeof err);
    close(fd);
    if (!table) {
        srv_log_error("driver %s refused: %s", path, err);
        return 0;
    }
    uint32_t before = eng_drivers_count();
    int n = eng_drivers_add_table(table, path, stop_host, h, reserved, n_reserved, err, sizeof err);
    if (n < 0) {
        srv_log_error("driver %s refused: %s", path, err);
        return 0; /* the engine stopped the host through stop_host, or it is ours to stop */
    }
    eng_driver_info_view v;
    for (uint32_t i = before; i < eng_drivers_count() && g_n < NND_DRIVER_DEVICES_MAX; i++)
        if (eng_drivers_get(i, &v)) g_devices[g_n].backend = v.backend, g_devices[g_n++].host = h;
    srv_log_info("driver %s: %d device%s in its driver host", path, n, n == 1 ? "" : "s");
    return n;
}

int srv_driver_hosts_load_dir(const char *dir, const drvhost_limits *limits,
                              const char *const *reserved, size_t n_reserved, char *err,
                              size_t errlen) {
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    char *names[MAX_PLUGINS];
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < MAX_PLUGINS;) {
        size_t len = strlen(e->d_name);
        if (len > 3 && !strcmp(e->d_name + len - 3, ".so") && (names[n] = strdup(e->d_name))) n++;
    }
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    int devices = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        devices += load_one(path, limits, reserved, n_reserved);
        free(names[i]);
    }
    return devices;
}

bool srv_driver_hosts_disabled(const struct eng_backend *b) {
    for (size_t i = 0; b && i < g_n; i++)
        if (g_devices[i].backend == b) return drvhost_disabled(g_devices[i].host);
    return false;
}
