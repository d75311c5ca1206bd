/* SPDX-License-Identifier: Apache-2.0 */
/* hal_names: the HAL spelling of operation and operand type codes (codes.h), both ways, as
 * the conformance vectors and recordings name them, and the byte size of an operand type's
 * element (the HAL's types only: no plugin's).
 *
 * Contract: lookups never fail loudly; an unknown code or name gives NULL, -1 or 0. */
#ifndef SCHEMA_HAL_NAMES_H
#define SCHEMA_HAL_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Name tables (HAL spelling) for the codes in schema/codes.h; NULL / -1 when unknown. */
const char *schema_hal_operation_name(int32_t code);
int32_t schema_hal_operation_code(const char *name);
const char *schema_hal_type_name(int32_t code);
int32_t schema_hal_type_code(const char *name);
/* Bytes of one element of an operand type, 0 when unknown. */
size_t schema_hal_element_size(int32_t type);

#endif
