/* SPDX-License-Identifier: Apache-2.0 */
/* schema_test (unit): the schema's tables on their own, linked with nothing of the engine:
 * operand types, sizes and names, plugins' rows installed and removed, operation names,
 * status names and error messages, and the bound on tensor sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "schema/op_name.h"
#include "schema/operand_type.h"
#include "schema/status.h"

static void base_types(void **state) {
    (void)state;
    assert_int_equal(schema_type_size(SCHEMA_TENSOR_FLOAT32), 4);
    assert_true(schema_type_is_tensor(SCHEMA_TENSOR_FLOAT32));
    assert_int_equal(schema_type_size(SCHEMA_FLOAT16), 2);
    assert_false(schema_type_is_tensor(SCHEMA_FLOAT16));
    assert_int_equal(schema_type_size(SCHEMA_TENSOR_QUANT8_ASYMM_SIGNED), 1);
    assert_string_equal(schema_type_name(SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL),
                        "TENSOR_QUANT8_SYMM_PER_CHANNEL");
    assert_int_equal(schema_type_size(SCHEMA_SUBGRAPH_TYPE), 0);
    assert_string_equal(schema_type_name(SCHEMA_SUBGRAPH_TYPE), "SUBGRAPH");
    assert_int_equal(schema_type_size(SCHEMA_TENSOR_OEM_BYTE), 1);
    assert_true(schema_type_is_tensor(SCHEMA_TENSOR_OEM_BYTE));
    assert_string_equal(schema_type_name(SCHEMA_OEM_SCALAR), "OEM");
    assert_int_equal(schema_type_size(16), 0);
    assert_int_equal(schema_type_size(-1), 0);
    assert_string_equal(schema_type_name(9999), "UNKNOWN_TYPE");
}

static void plugin_type_rows(void **state) {
    (void)state;
    const schema_type_row rows[] = {{.code = 7, .tensor = true, .size = 2, .name = "com.x:HALF"},
                                    {.code = 8, .tensor = false, .size = 8, .name = "com.x:WIDE"}};
    const schema_type_rows set = {2, rows};
    int32_t half = 5 << 16 | 7, wide = 5 << 16 | 8, other = 6 << 16 | 7;
    assert_int_equal(schema_type_size(half), 0);
    schema_types_install(5, &set);
    assert_int_equal(schema_type_size(half), 2);
    assert_true(schema_type_is_tensor(half));
    assert_string_equal(schema_type_name(half), "com.x:HALF");
    assert_int_equal(schema_type_size(wide), 8);
    assert_false(schema_type_is_tensor(wide));
    assert_int_equal(schema_type_size(5 << 16 | 9), 0); /* a code the plugin did not define */
    assert_int_equal(schema_type_size(other), 0);       /* another plugin's id */
    schema_types_install(0, &set);                      /* id 0 is nobody's: ignored */
    assert_string_equal(schema_type_name(7), "TENSOR_QUANT16_SYMM"); /* still the HAL's */
    schema_types_install(5, NULL);
    assert_int_equal(schema_type_size(half), 0);
    assert_string_equal(schema_type_name(half), "UNKNOWN_TYPE");
}

static void operation_names(void **state) {
    (void)state;
    assert_string_equal(schema_operation_name(SCHEMA_OP_ADD), "ADD");
    assert_string_equal(schema_operation_name(SCHEMA_OP_REVERSE), "REVERSE");
    assert_string_equal(schema_operation_name(SCHEMA_OP_OEM_OPERATION), "OEM_OPERATION");
    assert_string_equal(schema_operation_name(SCHEMA_OP_COUNT), "UNKNOWN_OPERATION");
    const schema_op_name_row rows[] = {{9 << 16 | 1, "com.x:FIB"}};
    const schema_op_name_rows set = {1, rows};
    schema_op_names_install(9, &set);
    assert_string_equal(schema_operation_name(9 << 16 | 1), "com.x:FIB");
    assert_string_equal(schema_operation_name(9 << 16 | 2), "UNKNOWN_OPERATION");
    schema_op_names_install(SCHEMA_EXT_MAX_ID + 1, &set); /* past the ids: ignored */
    schema_op_names_install(9, NULL);
    assert_string_equal(schema_operation_name(9 << 16 | 1), "UNKNOWN_OPERATION");
}

static void statuses_and_messages(void **state) {
    (void)state;
    assert_string_equal(schema_engine_status_name(SCHEMA_OK), "NONE");
    assert_string_equal(schema_engine_status_name(SCHEMA_INVALID_ARGUMENT), "INVALID_ARGUMENT");
    assert_string_equal(schema_engine_status_name(SCHEMA_UNSUPPORTED), "UNSUPPORTED");
    assert_string_equal(schema_engine_status_name((schema_status)42), "UNKNOWN_STATUS");
    char err[8];
    assert_int_equal(schema_failf(err, sizeof err, SCHEMA_GENERAL_FAILURE, "operand %d", 12345),
                     SCHEMA_GENERAL_FAILURE);
    assert_string_equal(err, "operand"); /* cut to the buffer, terminated */
    assert_int_equal(schema_failf(NULL, 0, SCHEMA_INVALID_ARGUMENT, "x"), SCHEMA_INVALID_ARGUMENT);
    schema_errf(err, sizeof err, "%s", "ok");
    assert_string_equal(err, "ok");
}

static void tensor_bytes_bounded(void **state) {
    (void)state;
    uint32_t dims[] = {2, 3, 4};
    assert_int_equal(schema_shape_bytes(SCHEMA_TENSOR_FLOAT32, 3, dims), 96);
    uint32_t unknown[] = {2, 0, 4};
    assert_int_equal(schema_shape_bytes(SCHEMA_TENSOR_FLOAT32, 3, unknown), 0);
    /* An unknown dimension does not excuse the others from the bound. */
    uint32_t huge[] = {0, UINT32_MAX, UINT32_MAX};
    assert_true(schema_shape_bytes(SCHEMA_TENSOR_FLOAT32, 3, huge) == UINT64_MAX);
    uint32_t edge[] = {1u << 16, 1u << 16, 1u << 14}; /* 2^46 elements of 4 bytes: 2^48 */
    assert_true(schema_shape_bytes(SCHEMA_TENSOR_FLOAT32, 3, edge) == SCHEMA_MAX_TENSOR_BYTES);
    edge[2]++;
    assert_true(schema_shape_bytes(SCHEMA_TENSOR_FLOAT32, 3, edge) == UINT64_MAX);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(base_types),           cmocka_unit_test(plugin_type_rows),
        cmocka_unit_test(operation_names),      cmocka_unit_test(statuses_and_messages),
        cmocka_unit_test(tensor_bytes_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
