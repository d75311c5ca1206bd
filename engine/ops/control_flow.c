/* SPDX-License-Identifier: Apache-2.0 */
/* control_flow.c: IF and WHILE in the operation table. The engine runs them itself
 * (engine/core/flow.h): their signature is checked against the subgraphs they name, which an
 * operation's check() cannot see, and they have no kernel of their own. */
#include "engine/ops/op_def.h"

ENG_OP_DEF(IF, NULL, NULL, 0, 0, {{0, NULL}});
ENG_OP_DEF(WHILE, NULL, NULL, 0, 0, {{0, NULL}});
