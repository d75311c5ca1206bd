/* SPDX-License-Identifier: Apache-2.0 */
/* refused: the operations GetSupportedOperations answered false for, so that an operator
 * can tell why a model ran partly on the application's CPU (an NNAPI delegate hands the
 * daemon only what it supports).
 *
 * Contract:
 * - srv_refused_note() is called once per answered GetSupportedOperations with the model's
 *   description, its flags and the reasons the engine gave (reasons[k] for operation k, may
 *   be NULL). Each operation answered false adds one to its type's counter, and is named in
 *   one debug log line: client, operation index and type, its operand types (inputs ->
 *   outputs) and the reason.
 * - Counters are per operation type since the daemon started: standard types by their
 *   name, OEM_OPERATION, and every vendor extension operation under "EXTENSION" (their
 *   codes depend on the client's extension prefixes, so one bucket keeps the set bounded).
 *   Thread-safe.
 * - srv_refused_json() returns a new object, one member per type refused at least once
 *   ({"MAX_POOL_2D": 3}), for the status "refused_operations"; NULL when memory runs out.
 */
#ifndef SRV_DEVICES_REFUSED_H
#define SRV_DEVICES_REFUSED_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/engine.h"

void srv_refused_note(uint64_t client, const eng_model_desc *m, const bool *supported,
                      char *const *reasons);
cJSON *srv_refused_json(void);

#endif
