/* SPDX-License-Identifier: Apache-2.0 */
/* devices: the devices the daemon offers behind its one socket. A device is a way of
 * compiling and running a model; a PrepareModel names the devices it may use (NNAPI's
 * createForDevices) or none, meaning all of them.
 *
 * Contract:
 * - Two built-in devices come first: "nnd-cpu" (the XNNPACK fast paths where they apply,
 *   the reference kernels elsewhere) and "nnd-reference" (the reference kernels only:
 *   deterministic, the device to compare against, as Android's nnapi-reference). Both
 *   support every operation the engine has. Then one device per driver plugin loaded by
 *   srv_devices_load_drivers(), in the drivers directory's name order: each plugin in a
 *   driver host process of its own (driver_hosts.h), or, with in_process (the
 *   drivers_in_process key), loaded into the daemon (engine/backends/drivers/driver.h).
 *   A device whose host's restarts disabled it is out of every device set, the content
 *   cache's included (srv_device_runs_disabled(): the cache hands out no compilation
 *   with a step on one).
 * - Capabilities (nnd/driver.h): performance per operand type; nnd-cpu states 0.1 for time
 *   and power on every type, nnd-reference 1.0, a driver's devices what their driver says.
 * - srv_device_plan_for(): the device set of a compilation naming n devices (n == 0: all
 *   but disabled drivers): its drivers in table order, and its CPU device (nnd-cpu when
 *   named, else nnd-reference) with that device's capabilities; the engine partitions the
 *   model among them (engine.h, eng_model_desc.drivers: each operation to the device with
 *   the lowest figure for its type and the compilation's preference, ties to the CPU).
 *   A set the client named ranks its drivers only: the CPU device takes what none of
 *   them takes (a driver named is used, even one slower than the CPU). With no CPU device
 *   named, an operation no named driver takes fails the preparation.
 *   A name that is no device, or a name given twice, is SCHEMA_INVALID_ARGUMENT with a
 *   message naming it.
 * - srv_device_of(): the device that runs most of a prepared model's steps; the counters
 *   count a prepared model and each of its executions on every device it has steps on.
 * - The table is built at start, before clients, and constant after: any thread may read it.
 */
#ifndef SRV_DEVICES_DEVICES_H
#define SRV_DEVICES_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "driverhost/drvhost.h"
#include "engine/engine.h"
#include "nnd/driver.h"

/* At most this many devices; each reports NNAPI feature level 8 (1000008). */
#define SRV_MAX_DEVICES          16
#define SRV_DEVICE_FEATURE_LEVEL 1000008

typedef struct srv_device {
    const char *name;
    const char *what;                  /* one line for nndctl info */
    const char *version;               /* NULL: the daemon's */
    int type;                          /* NNAPI device type: 2 CPU, 3 GPU, 4 accelerator, 1 other */
    bool reference_only;               /* the CPU device of the reference kernels */
    const struct eng_backend *backend; /* a driver's; NULL for the built-in CPU devices */
    nnd_driver_capabilities caps;
} srv_device;

/* A device's one figure for GetDevices: its TENSOR_FLOAT32 execution time. */
static inline float srv_device_exec_time(const srv_device *d) {
    return d->caps.operand[NND_DRIVER_TENSOR_FLOAT32].exec_time;
}

/* Loads the drivers of dir as devices after the built-ins (once, at start); a missing dir
 * means none. Every refusal is logged and listed by srv_devices_json(). limits (NULL: the
 * defaults) bound their driver hosts. Returns how many. */
int srv_devices_load_drivers(const char *dir, bool in_process, const drvhost_limits *limits);
/* Unloads the drivers, after every prepared model is freed. */
void srv_devices_unload_drivers(void);

/* The devices, and how many there are. */
const srv_device *srv_devices(size_t *n);

typedef struct srv_device_plan {
    const struct eng_backend *drivers[SRV_MAX_DEVICES]; /* offered each step in this order */
    uint32_t n_drivers;
    bool reference_only; /* the CPU steps on the reference kernels */
    bool drivers_only;   /* no CPU device in the set */
    bool cpu_last;       /* a named set: the CPU device is the fallback only */
    const nnd_driver_capabilities *cpu_caps;
} srv_device_plan;

/* The partition plan for a compilation that names n devices (n == 0: all of them). */
schema_status srv_device_plan_for(char *const *names, size_t n, srv_device_plan *out, char *err,
                                  size_t errlen);
/* Whether d is a driver's device disabled after a fault (never for the built-ins). */
bool srv_device_disabled(const srv_device *d);
/* Whether p has a step on a driver's device disabled after a fault. */
bool srv_device_runs_disabled(const eng_prepared *p);
/* Puts the plan into a model description for eng_prepare(). */
void srv_device_plan_apply(const srv_device_plan *plan, eng_model_desc *desc);

const srv_device *srv_device_of(const eng_prepared *p);
/* lanes[k]: the index in the table of the device that runs step k of p (the scheduler's lane
 * for it: each device has its own queue and workers); eng_prepared_num_operations() entries. */
void srv_device_step_lanes(const eng_prepared *p, uint8_t *lanes);
/* "nnd-example 4, nnd-cpu 3": steps of p per device, devices with none left out. */
void srv_device_steps_text(const eng_prepared *p, char *buf, size_t len);

/* Device memory (nnd/driver.h): the first device, in table order, whose driver has device
 * memory and whose partitions use a client buffer in each of its n roles (each role's
 * tensor an input or output of one of them, eng_buffer_roles_on()); NULL when none (the
 * buffer then lives in daemon memory). */
const struct eng_backend *srv_device_memory_for(const eng_buffer_role *roles, size_t n);

void srv_device_count_prepare(const eng_prepared *p);
void srv_device_count_execution(const eng_prepared *p);

/* {"devices": [{"name", "what", "type", "reference_only", "exec_time", "driver",
 * "device_memory", "cache_blobs", "disabled", "capabilities": {"<TYPE>": {"exec_time",
 * "power_usage"}, ..., "relaxed_scalar", "relaxed_tensor", "if", "while"}, "prepares",
 * "partitions", "executions"}, ...]} goes in as the array (partitions: driver partitions
 * of the models prepared on it); refused drivers as [{"path", "reason"}]. */
cJSON *srv_devices_json(void);
cJSON *srv_devices_refused_json(void);

#endif
