/* SPDX-License-Identifier: Apache-2.0 */
/* extension_plugin.c: the id table of published extension plugins and the fault count,
 * which the registry (extension.c) and the operation bridge (extension_op.c) share, apart
 * from both so that neither calls the other back. See extension_plugin.h. */
#include "engine/plugins/extension_plugin.h"

#include <stdarg.h>
#include <stdio.h>

#include "schema/operand_type.h"
#include "engine/plugins/loader.h"

static _Atomic(eng_ext_plugin *) slots[SCHEMA_EXT_MAX_ID + 1];
static atomic_uint_fast64_t n_faults;

eng_ext_plugin *eng_ext_slot_get(uint16_t id) {
    return id && id <= SCHEMA_EXT_MAX_ID ? atomic_load(&slots[id]) : NULL;
}

void eng_ext_slot_set(uint16_t id, eng_ext_plugin *p) {
    if (id && id <= SCHEMA_EXT_MAX_ID) atomic_store(&slots[id], p);
}

eng_ext_plugin *eng_ext_plugin_of(int32_t code) {
    uint32_t id = (uint32_t)code >> 16;
    return id <= SCHEMA_EXT_MAX_ID ? eng_ext_slot_get((uint16_t)id) : NULL;
}

void eng_ext_count_fault(void) {
    atomic_fetch_add(&n_faults, 1);
}

uint64_t eng_ext_fault_total(void) {
    return atomic_load(&n_faults);
}

/* The driver loader's names for the loader's log and guard, until it moves onto loader.h
 * (driver ABI 2). */
void eng_ext_logf(int level, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    eng_plugin_logf(level, "%s", msg);
}

void eng_ext_guard_once(void) {
    eng_plugin_guard_once();
}
