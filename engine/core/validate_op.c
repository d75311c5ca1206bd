/* SPDX-License-Identifier: Apache-2.0 */
/* validate_op.c: one operation's signature as it is added, by its row's check() or, for IF
 * and WHILE, by flow_check.c. See validate_op.h. */
#include "engine/core/validate_op.h"

#include <stdlib.h>
#include <string.h>

#include "engine/core/flow.h"

#define FAIL(...) (schema_errf(err, errlen, __VA_ARGS__), SCHEMA_INVALID_ARGUMENT)

bool eng_operand_dims_known(const eng_operand_desc *o) {
    if (!schema_type_is_tensor(o->type)) return true;
    if (o->rank == 0) return false;
    for (uint32_t i = 0; i < o->rank; i++)
        if (o->dims[i] == 0) return false;
    return true;
}

void eng_operand_tensor(const eng_operand_desc *o, eng_tensor *t, eng_channel_quant *cq) {
    memset(t, 0, sizeof *t);
    t->type = o->type;
    t->rank = o->rank;
    memcpy(t->dims, o->dims, sizeof t->dims);
    t->scale = o->scale;
    t->zero_point = o->zero_point;
    t->lifetime = (uint8_t)o->lifetime;
    t->known = eng_operand_dims_known(o);
    t->extension_data = o->extension_data;
    t->extension_len = o->extension_len;
    if (o->type == SCHEMA_TENSOR_QUANT8_SYMM_PER_CHANNEL) {
        *cq = o->channel_quant;
        t->channel_quant = cq;
    }
}

/* IF and WHILE as they are added: the subgraphs they name, as far as those are known. */
static schema_status validate_flow_operation(const eng_operand_desc *operands, uint32_t n_operands,
                                             const eng_operation_desc *op,
                                             const eng_subgraph_desc *referenced,
                                             uint32_t n_referenced, char *err, size_t errlen) {
    for (uint32_t j = 0; j < op->n_inputs + op->n_outputs; j++) {
        uint32_t i = j < op->n_inputs ? op->inputs[j] : op->outputs[j - op->n_inputs];
        if (i >= n_operands)
            return FAIL("%s: operand %u does not exist", schema_operation_name(op->type), i);
        if (operands[i].lifetime == SCHEMA_SUBGRAPH && operands[i].offset >= n_referenced)
            return FAIL("%s: operand %u names no subgraph", schema_operation_name(op->type), i);
    }
    eng_model_desc m = {.n_operands = n_operands,
                        .operands = operands,
                        .n_operations = 1,
                        .operations = op,
                        .n_referenced = n_referenced,
                        .referenced = referenced};
    return eng_flow_check_op(&m, 0, err, errlen);
}

schema_status eng_validate_operation(const eng_operand_desc *operands, uint32_t n_operands,
                                     const eng_operation_desc *op,
                                     const eng_subgraph_desc *referenced, uint32_t n_referenced,
                                     bool relaxed, char *err, size_t errlen) {
    if (eng_flow_is_op(op->type))
        return validate_flow_operation(operands, n_operands, op, referenced, n_referenced, err,
                                       errlen);
    const eng_op_def *def =
        op->type >= 0 && op->type < SCHEMA_OP_COUNT ? eng_op_lookup(op->type) : NULL;
    if (!def) return SCHEMA_UNSUPPORTED;
    if (op->n_inputs > 512 || op->n_outputs > 64) return FAIL("%s: too many operands", def->name);
    uint32_t n = op->n_inputs + op->n_outputs;
    eng_tensor *t = calloc(n ? n : 1, sizeof *t);
    eng_tensor **ptr = calloc(n ? n : 1, sizeof *ptr);
    eng_channel_quant *cq = calloc(n ? n : 1, sizeof *cq);
    schema_status s =
        !t || !ptr || !cq ? FAIL("out of memory validating %s", def->name) : SCHEMA_OK;
    for (uint32_t j = 0; !s && j < n; j++) {
        uint32_t i = j < op->n_inputs ? op->inputs[j] : op->outputs[j - op->n_inputs];
        if (i >= n_operands) {
            s = FAIL("%s: operand %u does not exist", def->name, i);
            break;
        }
        eng_operand_tensor(&operands[i], &t[j], &cq[j]); /* no values: the signature only */
        ptr[j] = &t[j];
    }
    if (!s) {
        eng_op_ctx c = {.def = def,
                        .in = ptr,
                        .n_in = op->n_inputs,
                        .out = ptr + op->n_inputs,
                        .n_out = op->n_outputs,
                        .relaxed = relaxed,
                        .model_rules_only = true,
                        .err = err,
                        .errlen = errlen};
        s = def->check ? def->check(&c) : SCHEMA_OK;
    }
    free(t);
    free(ptr);
    free(cq);
    return s;
}
