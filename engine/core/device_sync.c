/* SPDX-License-Identifier: Apache-2.0 */
/* device_sync.c: host copies of operands bound to device memory. See device_sync.h. */
#include "engine/core/device_sync.h"

#include "engine/core/internal.h"

schema_status eng_exec_inputs_to_host(eng_tensor **in, uint32_t n, const eng_backend *runs_on,
                                      bool all, char *err, size_t errlen) {
    for (uint32_t j = 0; j < n; j++) {
        eng_tensor *t = in[j];
        if (!t->device || !(t->device_sync & ENG_HOST_STALE) || (t->device == runs_on && !all))
            continue;
        schema_status s = t->device->mem_read(t->device, t->device_handle, 0, t->data,
                                              eng_tensor_bytes(t), err, errlen);
        if (s) return s;
        t->device_sync &= (uint8_t)~ENG_HOST_STALE;
    }
    return SCHEMA_OK;
}

void eng_exec_outputs_written(eng_tensor **out, uint32_t n, const eng_backend *runs_on) {
    for (uint32_t j = 0; j < n; j++) {
        eng_tensor *t = out[j];
        if (!t->device) continue;
        bool on_device = t->device == runs_on && !(t->device_sync & ENG_HOST_ONLY);
        t->device_sync = (uint8_t)((t->device_sync & ENG_HOST_ONLY) |
                                   (on_device ? ENG_HOST_STALE : ENG_DEVICE_STALE));
    }
}
