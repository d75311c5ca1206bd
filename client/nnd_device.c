/* nnd_device.c: the devices a model can be prepared for, and preparing for a chosen set of
 * them. See include/nnd/nnd.h, "devices". The daemon is one device today: the names and
 * the check of a device set live here, so that more devices change this file, not its
 * callers (the NDK's createForDevices, `nndctl conformance --device`). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client_internal.h"

static const char *const device_names[] = {NND_DEVICE_NAME};
#define N_DEVICES (sizeof device_names / sizeof *device_names)

size_t nnd_client_device_count(nnd_client *c) {
    (void)c;
    return N_DEVICES;
}

const char *nnd_client_device_name(nnd_client *c, size_t index) {
    (void)c;
    return index < N_DEVICES ? device_names[index] : NULL;
}

/* "nnd" or "a, b and c": the names there are, for messages. */
static void list_names(char *buf, size_t len) {
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < N_DEVICES && at < len; i++) {
        const char *sep = !i ? "" : i + 1 == N_DEVICES ? " and " : ", ";
        int n = snprintf(buf + at, len - at, "%s%s", sep, device_names[i]);
        if (n < 0) break;
        at += (size_t)n;
    }
}

int nnd_client_device_find(nnd_client *c, const char *name, uint32_t *index, char *err,
                           size_t errlen) {
    (void)c;
    for (size_t i = 0; name && i < N_DEVICES; i++)
        if (!strcmp(name, device_names[i])) {
            *index = (uint32_t)i;
            return 0;
        }
    char names[256];
    list_names(names, sizeof names);
    nnd_client_set_err(err, errlen, "no device named \"%s\": the daemon has %zu device%s: %s",
                       name ? name : "", N_DEVICES, N_DEVICES == 1 ? "" : "s", names);
    return -ENODEV;
}

int nnd_client_prepare_on(nnd_client *c, const uint32_t *devices, size_t n_devices,
                          const Nnd__Model *model, const int *pool_fds, size_t n_pool_fds,
                          int preference, int priority, uint64_t deadline_ns, uint64_t *handle,
                          char *err, size_t errlen) {
    *handle = 0;
    if (!devices || !n_devices) {
        nnd_client_set_err(err, errlen, "no device to prepare the model for");
        return -EINVAL;
    }
    for (size_t i = 0; i < n_devices; i++)
        if (devices[i] >= N_DEVICES) {
            nnd_client_set_err(err, errlen, "device index %u: the daemon has %zu device%s",
                               devices[i], N_DEVICES, N_DEVICES == 1 ? "" : "s");
            return -EINVAL;
        }
    /* Every device set is the one device: the daemon prepares as it always does. */
    return nnd_client_prepare(c, model, pool_fds, n_pool_fds, preference, priority, deadline_ns,
                              handle, err, errlen);
}
