/* SPDX-License-Identifier: Apache-2.0 */
/* device_sync: which copy of a model input or output bound to device memory is the newest
 * (backend.h, "Device memory"; eng_tensor.device_sync), for the step loop (exec_steps.c)
 * and driver partitions (partition_run.c).
 * - eng_exec_inputs_to_host(): before a step on runs_on (NULL: the CPU; all: whatever the
 *   step's device) reads in[0..n), the host copies of those the device holds newer are
 *   read back (SCHEMA_OK, or the backend's failure with err).
 * - eng_exec_outputs_written(): after a step on runs_on wrote out[0..n). */
#ifndef ENG_CORE_DEVICE_SYNC_H
#define ENG_CORE_DEVICE_SYNC_H

#include "engine/backend.h"

schema_status eng_exec_inputs_to_host(eng_tensor **in, uint32_t n, const eng_backend *runs_on,
                                      bool all, char *err, size_t errlen);
void eng_exec_outputs_written(eng_tensor **out, uint32_t n, const eng_backend *runs_on);

#endif
