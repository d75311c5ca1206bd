/* SPDX-License-Identifier: Apache-2.0 */
/* control_flow.c: IF and WHILE in the operation table. The engine runs them itself
 * (engine/core/flow.h): their signature is checked against the subgraphs they name, which an
 * operation's check() cannot see, and they have no kernel of their own. */
#include "engine/op.h"

const eng_op_def eng_op_if = {.code = NND_OP_IF, .name = "IF"};
const eng_op_def eng_op_while = {.code = NND_OP_WHILE, .name = "WHILE"};
