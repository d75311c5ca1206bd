/* devices: the devices the daemon offers behind its one socket. A device is a way of
 * compiling and running a model; a PrepareModel names the devices it may use (NNAPI's
 * createForDevices) or none, meaning all of them.
 *
 * Contract:
 * - Two built-in devices, in this order: "nnd-cpu" (the XNNPACK fast paths where they
 *   apply, the reference kernels elsewhere) and "nnd-reference" (the reference kernels
 *   only: deterministic, the device to compare against, as Android's nnapi-reference).
 *   Both support every operation the engine has.
 * - nnd_device_choose(): the device a compilation runs on, the fastest (lowest exec_time)
 *   of those named, or of all when none is named. A name that is no device, or a name
 *   given twice, is NND_INVALID_ARGUMENT with a message naming it.
 * - nnd_device_of(): the device a prepared model was prepared for.
 * - Counters: prepared models and executions per device, counted from any thread, read
 *   by nnd_devices_json() for `nndctl status` and `metrics`.
 * - The table is constant: any thread may read it.
 */
#ifndef NND_DEVICES_H
#define NND_DEVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine.h"

/* At most this many devices; each reports NNAPI feature level 7 (1000007). */
#define NND_MAX_DEVICES          16
#define NND_DEVICE_FEATURE_LEVEL 1000007

typedef struct nnd_device {
    const char *name;
    const char *what;    /* one line for nndctl info */
    bool reference_only; /* prepares with nnd_model_desc.reference_only set */
    float exec_time;     /* relative cost of an operation; ranks devices */
} nnd_device;

/* The devices, and how many there are. */
const nnd_device *nnd_devices(size_t *n);

/* The device for a compilation that names n devices (n == 0: all of them). */
nnd_status nnd_device_choose(char *const *names, size_t n, const nnd_device **out, char *err,
                             size_t errlen);

const nnd_device *nnd_device_of(const nnd_prepared *p);

void nnd_device_count_prepare(const nnd_device *d);
void nnd_device_count_execution(const nnd_device *d);

/* [{"name", "what", "reference_only", "prepares", "executions"}, ...] */
cJSON *nnd_devices_json(void);

#endif
