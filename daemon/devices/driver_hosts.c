/* SPDX-License-Identifier: Apache-2.0 */
/* driver_hosts: driver plugins in driver hosts (driver_hosts.h). */
#include "daemon/devices/driver_hosts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/base/log.h"
#include "daemon/clients/trust.h"
#include "engine/backends/drivers/driver.h"
#include "engine/plugins/loader.h"

typedef struct load_ctx {
    const drvhost_limits *limits;
    const char *const *reserved;
    size_t n_reserved;
    int devices;
} load_ctx;

static void host_log(void *ctx, const char *msg) {
    (void)ctx;
    srv_log_warn("%s", msg);
}

static void stop_host(void *ctx) {
    drvhost_stop(ctx);
}

/* One plugin: judged, started in its host, its table given to the engine. */
static void load_one(const char *path, void *arg) {
    load_ctx *l = arg;
    char err[512];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        srv_log_error("driver %s refused: %s", path, strerror(errno));
        return;
    }
    if (srv_trust_fd(fd, path, err, sizeof err) < 0) {
        srv_log_error("driver %s refused: %s", path, err);
        close(fd);
        return;
    }
    drvhost_limits lim = *l->limits;
    lim.plugin_fd = fd;
    lim.log = host_log;
    drvhost *h = NULL;
    const nnd_driver *table = drvhost_start(path, &lim, &h, err, sizeof err);
    close(fd);
    if (!table) {
        srv_log_error("driver %s refused: %s", path, err);
        return;
    }
    int n = eng_drivers_add_table(table, path, stop_host, h, l->reserved, l->n_reserved, err,
                                  sizeof err);
    if (n < 0) {
        srv_log_error("driver %s refused: %s", path, err);
        drvhost_stop(h); /* a refused table stays its caller's */
        return;
    }
    srv_log_info("driver %s: %d device%s in its driver host", path, n, n == 1 ? "" : "s");
    l->devices += n;
}

int srv_driver_hosts_load_dir(const char *dir, const drvhost_limits *limits,
                              const char *const *reserved, size_t n_reserved, char *err,
                              size_t errlen) {
    load_ctx l = {.limits = limits, .reserved = reserved, .n_reserved = n_reserved};
    if (eng_plugin_scan_dir(dir, "drivers directory", load_one, &l, err, errlen) < 0) return -1;
    return l.devices;
}
