/* SPDX-License-Identifier: Apache-2.0 */
/* registry.c: the operation table, generated from the operation codes (schema/codes.h):
 * adding an operation is its code there and one kernel file writing its row (op_def.h). */
#include <stdatomic.h>

#include "engine/op.h"

/* Every NNAPI operation's row, eng_op_<NAME>, named by its code's spelling (codes.h): a
 * code without a row is a link error, not a silent gap. */
#define ROW_DECLARE(name, code) extern const eng_op_def eng_op_##name;
SCHEMA_OPERATIONS(ROW_DECLARE)
#undef ROW_DECLARE

static const eng_op_def *const table[SCHEMA_OP_COUNT] = {
#define ROW_ENTRY(name, code) [code] = &eng_op_##name,
    SCHEMA_OPERATIONS(ROW_ENTRY)
#undef ROW_ENTRY
};

/* Plugins' operations by plugin id, and a plugin's OEM_OPERATION, installed by the extension
 * loader (op.h). */
static _Atomic(const eng_op_rows *) ext_ops[SCHEMA_EXT_MAX_ID + 1];
static _Atomic(const eng_op_def *) oem_op;

void eng_ops_install(uint16_t id, const eng_op_rows *rows) {
    if (id && id <= SCHEMA_EXT_MAX_ID) atomic_store(&ext_ops[id], rows);
}

void eng_ops_install_oem(const eng_op_def *def) {
    atomic_store(&oem_op, def);
}

const eng_op_def *eng_op_lookup(int32_t code) {
    if (code >= 0 && code < SCHEMA_OP_COUNT) return table[code];
    if (code == SCHEMA_OP_OEM_OPERATION) return atomic_load(&oem_op);
    uint32_t id = (uint32_t)code >> 16;
    const eng_op_rows *r = id && id <= SCHEMA_EXT_MAX_ID ? atomic_load(&ext_ops[id]) : NULL;
    for (uint32_t i = 0; r && i < r->n; i++)
        if (r->defs[i]->code == code) return r->defs[i];
    return NULL;
}

uint32_t eng_supported_operation_count(void) {
    uint32_t n = 0;
    for (int32_t i = 0; i < SCHEMA_OP_COUNT; i++)
        if (table[i]) n++;
    return n;
}

/* A base operation's optional inputs are its row's; the engine refuses NO_VALUE everywhere
 * else. Extension operations see omitted inputs themselves (nnd_ext_operand.omitted). */
uint64_t eng_op_optional_inputs(int32_t code) {
    if (code < 0 || code >= SCHEMA_OP_COUNT) return UINT64_MAX;
    return table[code] ? table[code]->optional_inputs : 0;
}
