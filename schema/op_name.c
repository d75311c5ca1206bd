/* SPDX-License-Identifier: Apache-2.0 */
/* op_name.c: the operation name table and plugins' installed names. See op_name.h. */
#include "schema/op_name.h"

#include <stdatomic.h>
#include <string.h>

static const char *const op_names[SCHEMA_OP_COUNT] = {
#define SCHEMA_OP_NAME(name, code) [code] = #name,
    SCHEMA_OPERATIONS(SCHEMA_OP_NAME)
#undef SCHEMA_OP_NAME
};

int32_t schema_operation_code(const char *name) {
    for (int32_t code = 0; name && code < SCHEMA_OP_COUNT; code++)
        if (!strcmp(op_names[code], name)) return code;
    return -1;
}

/* Plugins' operation names by plugin id, installed by the extension loader. */
static _Atomic(const schema_op_name_rows *) ext_names[SCHEMA_EXT_MAX_ID + 1];

void schema_op_names_install(uint16_t id, const schema_op_name_rows *rows) {
    if (id && id <= SCHEMA_EXT_MAX_ID) atomic_store(&ext_names[id], rows);
}

const char *schema_operation_name(int32_t type) {
    if (type >= 0 && type < SCHEMA_OP_COUNT) return op_names[type];
    if (type == SCHEMA_OP_OEM_OPERATION) return "OEM_OPERATION";
    uint32_t id = (uint32_t)type >> 16;
    const schema_op_name_rows *r =
        id && id <= SCHEMA_EXT_MAX_ID ? atomic_load(&ext_names[id]) : NULL;
    for (uint32_t i = 0; r && i < r->n; i++)
        if (r->rows[i].code == type) return r->rows[i].name;
    return "UNKNOWN_OPERATION";
}
