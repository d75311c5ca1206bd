/* SPDX-License-Identifier: Apache-2.0 */
/* driver_hosts: driver plugins in driver hosts (driver_hosts.h). */
#include "daemon/devices/driver_hosts.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/base/log.h"
#include "daemon/clients/trust.h"
#include "engine/backends/drivers/driver.h"
#include "engine/engine.h"
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

/* A partition arena: a memfd mapped here and registered as a shared region, so the hosts
 * map it once and the tensors crossing partitions reach them without a copy. The first 64
 * bytes keep the region's id; the arena starts after them (64-byte aligned). */
#define ARENA_HEAD 64u

static void *arena_alloc(size_t bytes) {
    int fd = memfd_create("nnd-partition-arena", MFD_CLOEXEC);
    if (fd < 0) return NULL;
    size_t len = ARENA_HEAD + bytes;
    uint8_t *base = ftruncate(fd, (off_t)len) == 0
                        ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                        : MAP_FAILED;
    int region = base == MAP_FAILED
                     ? -1
                     : drvhost_register_region(fd, ARENA_HEAD, base + ARENA_HEAD, bytes, true);
    close(fd); /* the registry keeps its own */
    if (region <= 0) {
        if (base != MAP_FAILED) munmap(base, len);
        return NULL;
    }
    memcpy(base, &region, sizeof region);
    return base + ARENA_HEAD;
}

static void arena_release(void *mem, size_t bytes) {
    if (!mem) return;
    uint8_t *base = (uint8_t *)mem - ARENA_HEAD;
    int region;
    memcpy(&region, base, sizeof region);
    drvhost_unregister_region(region);
    munmap(base, ARENA_HEAD + bytes);
}

static const eng_arena_allocator shared_arena = {.alloc = arena_alloc, .release = arena_release};

int srv_driver_hosts_load_dir(const char *dir, const drvhost_limits *limits,
                              const char *const *reserved, size_t n_reserved, char *err,
                              size_t errlen) {
    load_ctx l = {.limits = limits, .reserved = reserved, .n_reserved = n_reserved};
    if (eng_plugin_scan_dir(dir, "drivers directory", load_one, &l, err, errlen) < 0) return -1;
    if (l.devices) eng_set_partition_arena_allocator(&shared_arena);
    return l.devices;
}
