/* SPDX-License-Identifier: Apache-2.0 */
/* refused.c: counters and log lines of refused operations. See refused.h. */
#include "daemon/devices/refused.h"

#include <stdio.h>

#include "engine/plugins/extension.h"
#include "daemon/base/log.h"

/* Standard types first, then OEM_OPERATION, then every extension operation. */
enum { SLOT_OEM = SCHEMA_OP_COUNT, SLOT_EXTENSION, N_SLOTS };

static uint64_t counts[N_SLOTS];

static int slot_of(int32_t type) {
    if (type >= 0 && type < SCHEMA_OP_COUNT) return type;
    if (type == SCHEMA_OP_OEM_OPERATION) return SLOT_OEM;
    if (eng_ext_is_code(type)) return SLOT_EXTENSION;
    return -1; /* an unknown type fails the whole call, it is never refused alone */
}

static const char *slot_name(int slot) {
    if (slot == SLOT_EXTENSION) return "EXTENSION";
    return slot == SLOT_OEM ? "OEM_OPERATION" : schema_operation_name(slot);
}

/* "TENSOR_FLOAT32, INT32 -> TENSOR_FLOAT32" into buf, cut short with "..." if need be. */
static void operand_types(const eng_model_desc *m, const eng_operation_desc *op, char *buf,
                          size_t len) {
    size_t n = 0;
    buf[0] = 0;
    for (uint32_t j = 0; j < op->n_inputs + op->n_outputs && n < len; j++) {
        bool input = j < op->n_inputs;
        uint32_t index = input ? op->inputs[j] : op->outputs[j - op->n_inputs];
        const char *sep = j == 0 ? "" : j == op->n_inputs ? " -> " : ", ";
        const char *type = index < m->n_operands ? schema_type_name(m->operands[index].type) : "?";
        int w = snprintf(buf + n, len - n, "%s%s", sep, type);
        n += w > 0 ? (size_t)w : 0;
    }
    if (n >= len && len > 4) snprintf(buf + len - 4, 4, "...");
}

void srv_refused_note(uint64_t client, const eng_model_desc *m, const bool *supported,
                      char *const *reasons) {
    bool debug = srv_log_enabled(SRV_LOG_DEBUG);
    for (uint32_t k = 0; k < m->n_operations; k++) {
        if (supported[k]) continue;
        const eng_operation_desc *op = &m->operations[k];
        int slot = slot_of(op->type);
        if (slot >= 0) __atomic_add_fetch(&counts[slot], 1, __ATOMIC_RELAXED);
        if (!debug) continue;
        char types[256];
        operand_types(m, op, types, sizeof types);
        srv_log_debug("client %llu: GetSupportedOperations refused operation %u %s (%s): %s",
                      (unsigned long long)client, k, schema_operation_name(op->type), types,
                      reasons && reasons[k] ? reasons[k] : "no reason given");
    }
}

cJSON *srv_refused_json(void) {
    cJSON *o = cJSON_CreateObject();
    for (int slot = 0; o && slot < N_SLOTS; slot++) {
        uint64_t n = __atomic_load_n(&counts[slot], __ATOMIC_RELAXED);
        if (n && !cJSON_AddNumberToObject(o, slot_name(slot), (double)n)) {
            cJSON_Delete(o);
            return NULL;
        }
    }
    return o;
}
