/* SPDX-License-Identifier: Apache-2.0 */
/* extension: the registry of vendor extension plugins (ABI: include/nnd/extension.h) and
 * the engine's side of extension operand types and operations. The registry is
 * extension.c; a plugin's operations run through extension_op.h, under fault_guard.h.
 *
 * Contract:
 * - eng_ext_load_dir() loads every *.so in a directory, in name order, and makes them the
 *   current set, replacing the previous one (start and reload). A plugin is refused, with
 *   a reason (eng_ext_refused) and a log line, when it cannot be opened, lacks
 *   NND_EXTENSION_SYMBOL, has another ABI version or struct size, describes itself badly
 *   (name, codes, sizes, callbacks), repeats a name already loaded, claims OEM after
 *   another plugin did, or is writable by everyone. Plugins that prepared models still use
 *   stay loaded until those models are freed.
 * - Each loaded plugin gets a process-wide id in 1..SCHEMA_EXT_MAX_ID. The engine codes of
 *   its types and operations are id << 16 | code. The daemon rewrites each model's own
 *   prefixes into ids (eng_ext_resolve(), daemon/wire/convert.c), so the engine never sees a
 *   model's prefixes. Ids are handed out round-robin, so a stale id is not soon reused.
 * - Engine side: publishing a plugin installs its operand type and operation rows into the
 *   schema's tables (operand_type.h schema_types_install(), op_name.h schema_op_names_install())
 *   and the engine's operation table (op.h: eng_ops_install(), eng_ops_install_oem()),
 *   and freeing it removes them, so schema_type_size(), schema_type_is_tensor(),
 * schema_type_name(), schema_operation_name() and eng_op_lookup() answer for extension codes
 * without calling back here. An extension operation's eng_op_def runs the plugin's validate
 * (check), prepare (shape) and execute (kernel) under a fault guard: a SIGSEGV, SIGBUS, SIGFPE or
 * SIGILL inside the plugin fails the call with SCHEMA_GENERAL_FAILURE, logs, and disables the
 * plugin until it is loaded again. OEM_OPERATION resolves to the claiming plugin's handler, if any.
 * - A prepared model holds a reference on every plugin whose types or operations it uses
 *   (eng_ext_hold_model(), eng_ext_release()).
 * - Threads: loading, resolving and listing are serialized by a mutex (the daemon calls
 *   them from its loop). Code lookups are lock-free and may come from any thread for a
 *   plugin that is referenced. The signal handlers are installed at the first load,
 *   chaining to whatever handler was installed before (the pool SIGBUS guard).
 */
#ifndef ENG_PLUGINS_EXTENSION_H
#define ENG_PLUGINS_EXTENSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd/extension.h"
#include "engine/op.h"
#include "engine/plugins/loader.h"

#define ENG_EXT_MAX_LOADED 256

/* Log sink for load results and faults; level as daemon/base/log.h (0 error .. 3 debug). */
typedef eng_plugin_log_fn eng_ext_log_fn;
void eng_ext_set_log(eng_ext_log_fn fn);

/* Judges a plugin file before it is loaded: 0 to load it, or -1 with why filled. The
 * daemon sets its ownership and mode rule (daemon/clients/trust.h); without one, only files
 * writable by everyone are refused. */
typedef eng_plugin_file_check_fn eng_ext_file_check_fn;
void eng_ext_set_file_check(eng_ext_file_check_fn fn);

/* Loads dir as the current set. Each plugin is judged on an open descriptor, then loaded by
 * path and refused if that is no longer the file judged. Returns the number of plugins loaded, or
 * -1 when dir cannot be read (err says why; the current set is then empty). */
int eng_ext_load_dir(const char *dir, char *err, size_t errlen);
/* Empties the current set (at exit, after every prepared model is freed). */
void eng_ext_unload_all(void);

/* The current set, for GetSupportedExtensions and the admin bus. Pointers stay valid
 * until the next load. */
typedef struct eng_ext_info {
    const char *name;
    const char *version; /* "" when the plugin gives none */
    const char *path;
    uint32_t n_operand_types;
    const nnd_ext_operand_type *operand_types;
    uint32_t n_operations;
    bool oem;     /* claims OEM_OPERATION */
    bool faulted; /* disabled after a fault */
} eng_ext_info;
uint32_t eng_ext_count(void);
bool eng_ext_get(uint32_t i, eng_ext_info *out);
/* Plugins the last load refused: path and reason of the i-th (false past the last). */
bool eng_ext_refused(uint32_t i, const char **path, const char **reason);
/* Faults caught since startup. */
uint64_t eng_ext_faults(void);

/* The id of the current plugin with this name, or 0. */
uint16_t eng_ext_resolve(const char *name);
/* Whether a current plugin claims OEM_OPERATION and the OEM operand types. */
bool eng_ext_oem_claimed(void);

/* ---- engine side ---------------------------------------------------------------------- */

static inline bool eng_ext_is_code(int32_t code) {
    return ((uint32_t)code >> 16) != 0;
}

typedef struct eng_ext_plugin eng_ext_plugin;
/* References every plugin the model's types and operations use: *held gets a malloc'd
 * array of *n plugins (NULL and 0 when none). Fails only when out of memory or a code
 * names no plugin. */
schema_status eng_ext_hold_model(const eng_model_desc *m, eng_ext_plugin ***held, uint32_t *n,
                                 char *err, size_t errlen);
void eng_ext_release(eng_ext_plugin **held, uint32_t n);

#endif
