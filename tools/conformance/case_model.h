/* SPDX-License-Identifier: Apache-2.0 */
/* case_model: a vector case's "model" object into a wire model. Internal to
 * tools/conformance.
 *
 * Contract: the model's every part is malloc'd on its own, so
 * nnd__model__free_unpacked(model, NULL) releases it. Operand types, operation types and
 * lifetimes are mapped from their HAL names to their codes; operand and input/output
 * indexes are checked against the operand count; CONSTANT_COPY values (base64
 * "operandValues") ride inline in operand_values. A name it does not know or a malformed
 * field gives NULL with err naming it (the operand or operation index first). */
#ifndef TOOL_CONFORMANCE_CASE_MODEL_H
#define TOOL_CONFORMANCE_CASE_MODEL_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "nnd.pb-c.h"

Nnd__Model *case_model_from_json(const cJSON *j, char *err, size_t errlen);

#endif
