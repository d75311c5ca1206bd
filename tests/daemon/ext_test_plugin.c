/* SPDX-License-Identifier: Apache-2.0 */
/* ext_test_plugin.c: com.example.test, a plugin that misbehaves on purpose, for
 * test_extensions. Built twice: libnnd_test_ext.so, and with TST_BAD_ABI as
 * libnnd_test_badabi.so, which claims an ABI version the daemon does not speak.
 *
 * - TEST_CHECKED (0): k (constant INT32) -> TENSOR_FLOAT32 [1] holding k. validate()
 *   refuses a negative k with a message of its own.
 * - TEST_CRASH (1): TENSOR_FLOAT32 -> TENSOR_FLOAT32 of the same shape; execute() writes
 *   to a page it may not touch (a real SIGSEGV, which the sanitizers let through).
 * - OEM_OPERATION: TENSOR_OEM_BYTE -> TENSOR_OEM_BYTE of the same shape, copied. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "nnd/extension.h"

static bool base(const nnd_ext_operand *o, int32_t type) {
    return !o->extension && o->type == type;
}

static int checked_validate(const nnd_ext_call *c) {
    if (c->n_inputs != 1 || c->n_outputs != 1 || !base(&c->inputs[0], NND_EXT_INT32) ||
        !base(&c->outputs[0], NND_EXT_TENSOR_FLOAT32)) {
        snprintf(c->err, c->errlen, "TEST_CHECKED takes an INT32 and gives a TENSOR_FLOAT32");
        return NND_EXT_INVALID;
    }
    int32_t k;
    if (c->inputs[0].data) {
        memcpy(&k, c->inputs[0].data, sizeof k);
        if (k < 0) {
            snprintf(c->err, c->errlen, "TEST_CHECKED refuses k = %d: k must not be negative", k);
            return NND_EXT_INVALID;
        }
    }
    return NND_EXT_OK;
}

static int one_element(nnd_ext_call *c) {
    c->outputs[0].rank = 1;
    c->outputs[0].dims[0] = 1;
    return NND_EXT_OK;
}

static int checked_execute(nnd_ext_call *c) {
    int32_t k;
    memcpy(&k, c->inputs[0].data, sizeof k);
    float f = (float)k;
    memcpy(c->outputs[0].data, &f, sizeof f);
    return NND_EXT_OK;
}

static int same_validate(const nnd_ext_call *c) {
    if (c->n_inputs != 1 || c->n_outputs != 1 || c->inputs[0].type != c->outputs[0].type ||
        c->inputs[0].extension || c->outputs[0].extension) {
        snprintf(c->err, c->errlen, "one input and one output of the same base type");
        return NND_EXT_INVALID;
    }
    return NND_EXT_OK;
}

static int same_shape(nnd_ext_call *c) {
    c->outputs[0].rank = c->inputs[0].rank;
    memcpy(c->outputs[0].dims, c->inputs[0].dims, sizeof c->outputs[0].dims);
    return NND_EXT_OK;
}

static int crash_execute(nnd_ext_call *c) {
    (void)c;
    volatile char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) return NND_EXT_FAILED;
    page[0] = 1; /* SIGSEGV */
    return NND_EXT_OK;
}

static int oem_execute(nnd_ext_call *c) {
    memcpy(c->outputs[0].data, c->inputs[0].data, c->inputs[0].length);
    return NND_EXT_OK;
}

static const nnd_ext_operation operations[] = {
    {.code = 0,
     .name = "TEST_CHECKED",
     .validate = checked_validate,
     .prepare = one_element,
     .execute = checked_execute},
    {.code = 1,
     .name = "TEST_CRASH",
     .validate = same_validate,
     .prepare = same_shape,
     .execute = crash_execute},
};

static const nnd_ext_operation oem = {
    .code = 0,
    .name = "TEST_OEM_COPY",
    .validate = same_validate,
    .prepare = same_shape,
    .execute = oem_execute,
};

NND_EXTENSION_EXPORT = {
#ifdef TST_BAD_ABI
    .abi_version = NND_EXTENSION_ABI_VERSION + 41,
#else
    .abi_version = NND_EXTENSION_ABI_VERSION,
#endif
    .struct_size = sizeof(nnd_extension),
    .name = "com.example.test",
    .n_operations = 2,
    .operations = operations,
    .oem_operation = &oem,
};
