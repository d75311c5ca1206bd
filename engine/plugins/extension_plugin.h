/* SPDX-License-Identifier: Apache-2.0 */
/* extension_plugin: the record of one loaded plugin, shared by the registry
 * (extension.c), which loads, publishes, references and frees it, and the operation
 * bridge (extension_op.c), which runs its operations; driver.c borrows its log sink and
 * fault guard set-up. Nothing else includes this. It is the bottom of the three: it
 * includes neither extension.h nor extension_op.h, and its functions (extension_plugin.c:
 * the id table, the fault count) call neither of them.
 *
 * Contract: a record is immutable once published except for refs and faulted, which are
 * atomic. eng_ext_plugin_of() is lock-free and safe for a plugin the caller holds a
 * reference on (a prepared model's, or the current set's under the registry lock).
 */
#ifndef ENG_PLUGINS_EXTENSION_PLUGIN_H
#define ENG_PLUGINS_EXTENSION_PLUGIN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "nnd/extension.h"
#include "engine/op.h"

#define ENG_EXT_MAX_NAME 128 /* of an extension's reverse-domain name */

typedef struct eng_ext_plugin eng_ext_plugin; /* as extension.h names it */
struct eng_ext_op;                            /* extension_op.h */

/* "com.example.fibonacci:TEST_VENDOR_TENSOR": the name of a type row. */
typedef char eng_ext_type_name[ENG_EXT_MAX_NAME + 80];

struct eng_ext_plugin {
    atomic_int refs; /* the current set's, plus one per prepared model using it */
    uint16_t id;
    void *dl;
    const nnd_extension *x;
    char name[ENG_EXT_MAX_NAME + 1];
    char version[64];
    char *path;
    atomic_bool faulted;
    uint32_t n_types;
    schema_type_row *types;        /* installed into the engine's type table */
    eng_ext_type_name *type_names; /* what the rows' names point to */
    schema_type_rows type_rows;
    const eng_op_def **op_defs; /* &ops[i].def, installed into the operation table */
    eng_op_rows op_rows;
    schema_op_name_row *op_names; /* installed into the schema's name table (op_name.h) */
    schema_op_name_rows op_name_rows;
    nnd_ext_operand_type *info_types; /* copies for eng_ext_info */
    uint32_t n_ops;
    struct eng_ext_op *ops;
    struct eng_ext_op *oem; /* NULL unless the plugin claims OEM_OPERATION */
};

/* The plugin whose id an engine code carries, or NULL. */
eng_ext_plugin *eng_ext_plugin_of(int32_t code);
/* The published plugin of an id (0 and ids over SCHEMA_EXT_MAX_ID: none), and publishing one
 * (p NULL: withdrawn); the registry publishes under its lock, readers need none. */
eng_ext_plugin *eng_ext_slot_get(uint16_t id);
void eng_ext_slot_set(uint16_t id, eng_ext_plugin *p);
/* Counts one fault caught inside a plugin; the count so far (eng_ext_faults()). */
void eng_ext_count_fault(void);
uint64_t eng_ext_fault_total(void);
/* The driver loader's names for eng_plugin_guard_once() and eng_plugin_logf() (loader.h),
 * until it moves onto loader.h. */
void eng_ext_guard_once(void);
void eng_ext_logf(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
