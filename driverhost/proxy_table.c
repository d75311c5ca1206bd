/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_table: the nnd_driver table of a driver host (drvhost.h), and drvhost_start(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driverhost/proxy_internal.h"

/* ---- open() and close(): no argument says which host, so each slot has its own pair ---- */

static int table_open(int slot, nnd_driver_device_info *devices, uint32_t max, char *err,
                      size_t errlen) {
    drvhost *h = dhp_slot_host(slot);
    if (!h) {
        snprintf(err, errlen, "driver host slot %d is empty", slot);
        return -1;
    }
    uint32_t n = h->n_devices < max ? h->n_devices : max;
    memcpy(devices, h->devices, n * sizeof *devices);
    return (int)n;
}

static void table_close(int slot) {
    drvhost *h = dhp_slot_host(slot);
    if (h) dhp_table_close(h);
}

#define SLOT_PAIR(i)                                                                               \
    static int open_##i(nnd_driver_device_info *d, uint32_t max, char *e, size_t n) {              \
        return table_open(i, d, max, e, n);                                                        \
    }                                                                                              \
    static void close_##i(void) {                                                                  \
        table_close(i);                                                                            \
    }
SLOT_PAIR(0)
SLOT_PAIR(1)
SLOT_PAIR(2)
SLOT_PAIR(3)
SLOT_PAIR(4)
SLOT_PAIR(5)
SLOT_PAIR(6)
SLOT_PAIR(7)
SLOT_PAIR(8)
SLOT_PAIR(9)
SLOT_PAIR(10)
SLOT_PAIR(11)
SLOT_PAIR(12)
SLOT_PAIR(13)
SLOT_PAIR(14)
SLOT_PAIR(15)

typedef int (*open_fn)(nnd_driver_device_info *, uint32_t, char *, size_t);
static const open_fn g_open[DRVHOST_MAX_HOSTS] = {
    open_0, open_1, open_2,  open_3,  open_4,  open_5,  open_6,  open_7,
    open_8, open_9, open_10, open_11, open_12, open_13, open_14, open_15};
static void (*const g_close[DRVHOST_MAX_HOSTS])(void) = {
    close_0, close_1, close_2,  close_3,  close_4,  close_5,  close_6,  close_7,
    close_8, close_9, close_10, close_11, close_12, close_13, close_14, close_15};

void dhp_table_init(drvhost *h) {
    nnd_driver *t = &h->table;
    memset(t, 0, sizeof *t);
    t->abi_version = NND_DRIVER_ABI_VERSION;
    t->struct_size = sizeof *t;
    t->name = h->plugin;
    t->open = g_open[h->slot];
    t->close = g_close[h->slot];
    t->supported_operations = dhp_supported;
    t->prepare = dhp_prepare;
    t->release = dhp_release;
    /* Both forms: across a process, every call is asynchronous underneath. */
    t->execute = dhp_execute;
    t->start = dhp_start;
    t->cancel = dhp_cancel;
    if (h->has & DH_HAS_MEMORY) {
        t->allocate = dhp_allocate;
        t->memory_free = dhp_memory_free;
        t->memory_read = dhp_memory_read;
        t->memory_write = dhp_memory_write;
    }
    if (h->has & DH_HAS_CACHE) {
        t->cache_save = dhp_cache_save;
        t->cache_load = dhp_cache_load;
    }
}

const nnd_driver *drvhost_start(const char *plugin_path, const drvhost_limits *limits,
                                drvhost **out, char *err, size_t errlen) {
    drvhost *h = dhp_host_start(plugin_path, limits, err, errlen);
    *out = h;
    if (!h) return NULL;
    dhp_table_init(h);
    return &h->table;
}
