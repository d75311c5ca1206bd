/* SPDX-License-Identifier: Apache-2.0 */
/* extension_op: a plugin's operation as an engine operation. The eng_op_def built here
 * runs the plugin's validate (as check), prepare (as shape) and execute (as the kernel,
 * for any input type).
 *
 * Contract:
 * - Each stage hands the plugin its operands in the ABI's form (include/nnd/extension.h):
 *   extension types by the plugin's own codes, constants and omitted inputs marked, and
 *   data pointers into the engine's tensors, not copies.
 * - The call runs under the fault guard (fault_guard.h). A fault disables the plugin
 *   until it is loaded again, counts in eng_ext_faults() and fails this and every later
 *   call with SCHEMA_GENERAL_FAILURE and a message saying so.
 * - The plugin's status maps to the engine's: OK, DEFER (prepare only), INVALID,
 *   UNSUPPORTED, FAILED; anything else is a failure naming the status. Its message, when
 *   it gives one, is passed on behind "OPERATION #index: ".
 * - prepare() may set output shapes; they are accepted only when every dimension is known,
 *   the rank is within NND_EXT_MAX_RANK and the byte size is bounded.
 * - An operation with no inputs is refused before the plugin is called.
 */
#ifndef ENG_PLUGINS_EXTENSION_OP_H
#define ENG_PLUGINS_EXTENSION_OP_H

#include <stdint.h>

#include "engine/plugins/extension_plugin.h"
#include "engine/op.h"

/* One operation of a plugin, as the engine sees it. def comes first: the engine hands
 * &def to the stages as c->def, which they cast back. */
typedef struct eng_ext_op {
    eng_op_def def;
    const nnd_ext_operation *op;
    eng_ext_plugin *plugin;
    char name[ENG_EXT_MAX_NAME + 80]; /* "com.example.fibonacci:TEST_VENDOR_FIBONACCI" */
} eng_ext_op;

/* Makes x the engine operation `code` for the plugin's operation op. */
void eng_ext_op_init(eng_ext_op *x, eng_ext_plugin *p, const nnd_ext_operation *op, int32_t code);

#endif
