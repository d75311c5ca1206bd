/* SPDX-License-Identifier: Apache-2.0 */
/* driver_hosts: the daemon's driver plugins, each in a driver host of its own
 * (driverhost/drvhost.h, docs/driver-host.md), the default; `drivers_in_process = 1`
 * loads them into the daemon instead (engine/backends/drivers/driver.h).
 *
 * Contract:
 * - srv_driver_hosts_load_dir() reads dir as the in-process loader does (the engine's
 *   eng_plugin_scan_dir: every *.so in name order). Each file is opened once and judged by
 *   the daemon's trust rule on that open file (srv_trust_fd), which is the very file its
 *   host loads (drvhost_limits.plugin_fd). Each plugin's proxy table goes to the engine
 *   (eng_drivers_add_table), which makes its devices; the host is stopped when the engine
 *   unloads the table. A refusal (the trust rule, a plugin its host cannot load or open, a
 *   table the engine refuses) is logged with its reason and the daemon serves on. Returns
 *   the devices added, or -1 with err when dir cannot be read.
 * - Once a host serves a device, the execs of models with driver partitions keep their
 *   arenas (the tensors crossing partitions) in memfds registered as shared regions
 *   (eng_set_partition_arena_allocator), which each host maps once: no copy per call.
 * - Whether a host's restarts disabled its devices is drvhost_device_disabled() of the
 *   device's pointer (devices.c asks it for every driver device).
 */
#ifndef SRV_DEVICES_DRIVER_HOSTS_H
#define SRV_DEVICES_DRIVER_HOSTS_H

#include <stddef.h>

#include "driverhost/drvhost.h"

int srv_driver_hosts_load_dir(const char *dir, const drvhost_limits *limits,
                              const char *const *reserved, size_t n_reserved, char *err,
                              size_t errlen);

#endif
