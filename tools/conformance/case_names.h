/* SPDX-License-Identifier: Apache-2.0 */
/* case_names: the HAL spelling of operation and operand type codes (schema/codes.h), as
 * the conformance vectors name them, and the byte size of an operand type's element.
 *
 * Contract: lookups never fail loudly; an unknown code or name gives NULL, -1 or 0. */
#ifndef NND_CASE_NAMES_H
#define NND_CASE_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Name tables (HAL spelling) for the codes in schema/codes.h; NULL / -1 when unknown. */
const char *tool_case_operation_name(int32_t code);
int32_t tool_case_operation_code(const char *name);
const char *tool_case_operand_type_name(int32_t code);
int32_t tool_case_operand_type_code(const char *name);
/* Bytes of one element of an operand type, 0 when unknown. */
size_t tool_case_element_size(int32_t type);

#endif
