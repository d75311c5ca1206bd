/* SPDX-License-Identifier: Apache-2.0 */
/* operand_type: the operand types a model may declare, their element sizes, whether they
 * are tensors, and their names; plugins' types beside the HAL's.
 *
 * Contract:
 * - schema_type_size() is the byte size of one element (0 for a type nobody defined; 1 for
 *   TENSOR_OEM_BYTE), schema_type_is_tensor() whether the type has dimensions,
 *   schema_type_name() its name ("UNKNOWN_TYPE" for a type nobody defined).
 * - Codes with nonzero high bits, id << 16 | code, are the types of the plugin the
 *   extension loader gave that id (engine/plugins/extension.h). The loader installs a plugin's
 *   rows with schema_types_install() when it publishes the plugin and removes them (rows
 *   NULL) before freeing it; the functions above answer for those codes from the rows
 *   alone and never call the loader. Installed rows stay unchanged until removed;
 *   lookups are lock-free.
 * - schema_shape_bytes() is a tensor's byte size, bounded so that no size or step computed
 *   from a client's dimensions overflows. */
#ifndef SCHEMA_OPERAND_TYPE_H
#define SCHEMA_OPERAND_TYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "schema/codes.h"

size_t schema_type_size(int32_t type);
bool schema_type_is_tensor(int32_t type);
const char *schema_type_name(int32_t type);

/* The largest tensor in bytes: sizes are computed without overflow below it. */
#define SCHEMA_MAX_TENSOR_BYTES ((uint64_t)1 << 48)
/* Bytes of a tensor of this type and shape, or UINT64_MAX past SCHEMA_MAX_TENSOR_BYTES
 * (dimensions from a client multiply past any integer width otherwise). An unknown (0)
 * dimension makes the size 0, but the other dimensions are bounded all the same. */
uint64_t schema_shape_bytes(int32_t type, uint32_t rank, const uint32_t *dims);

/* ---- rows installed by the extension loader ---------------------------------------- */
#define SCHEMA_EXT_MAX_ID 0x7fff /* keeps extension codes positive */

/* One extension operand type: code is the plugin's own (the low 16 bits). */
typedef struct schema_type_row {
    uint16_t code;
    bool tensor;
    uint32_t size;
    const char *name;
} schema_type_row;
typedef struct schema_type_rows {
    uint32_t n;
    const schema_type_row *rows;
} schema_type_rows;
void schema_types_install(uint16_t id, const schema_type_rows *rows);

#endif
