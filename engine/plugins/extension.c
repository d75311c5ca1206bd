/* SPDX-License-Identifier: Apache-2.0 */
/* extension.c: the plugin registry: checking extension plugins (opened through the loader,
 * loader.h), publishing them in the id table (extension_plugin.c), the current set and the
 * references prepared models hold. See extension.h; a plugin's operations run through
 * extension_op.c. */
#include "engine/plugins/refusals.h"
#include "engine/plugins/extension.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plugins/extension_op.h"
#include "engine/plugins/extension_plugin.h"
#include "engine/plugins/loader.h"

static _Atomic(eng_ext_plugin *) oem_owner;

/* The current set and the last load's refusals; guarded by reg_lock. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static eng_ext_plugin *current[ENG_EXT_MAX_LOADED];
static uint32_t n_current;
static eng_refusals refused;
static uint16_t next_id = 1;

void eng_ext_set_log(eng_ext_log_fn fn) {
    eng_plugin_set_log(fn);
}

uint64_t eng_ext_faults(void) {
    return eng_ext_fault_total();
}

/* ---- plugin records ---------------------------------------------------------------------- */

static void plugin_free(eng_ext_plugin *p) {
    if (!p) return;
    if (p->dl) dlclose(p->dl);
    free(p->types);
    free(p->type_names);
    free((void *)p->op_defs);
    free(p->op_names);
    free(p->info_types);
    free(p->ops);
    free(p->oem);
    free(p->path);
    free(p);
}

static void plugin_ref(eng_ext_plugin *p) {
    atomic_fetch_add(&p->refs, 1);
}

static void plugin_unref(eng_ext_plugin *p) {
    if (atomic_fetch_sub(&p->refs, 1) != 1) return;
    /* Nobody can look this id up any more: only holders do, and there are none. */
    eng_ext_slot_set(p->id, NULL);
    schema_types_install(p->id, NULL);
    schema_op_names_install(p->id, NULL);
    eng_ops_install(p->id, NULL);
    plugin_free(p);
}

/* ---- loading ------------------------------------------------------------------------------ */

/* Reverse domain: two or more labels of [a-z0-9_-], joined by single dots. */
static bool valid_name(const char *s) {
    size_t n = strnlen(s, ENG_EXT_MAX_NAME + 1);
    if (n == 0 || n > ENG_EXT_MAX_NAME || s[0] == '.' || s[n - 1] == '.') return false;
    int dots = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '.') {
            if (s[i + 1] == '.') return false;
            dots++;
        } else if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                     ch == '-')) {
            return false;
        }
    }
    return dots >= 1;
}

static bool valid_op(const nnd_ext_operation *op) {
    return op->validate && op->prepare && op->execute;
}

typedef struct check_args {
    const nnd_extension *x;
    char *why;
    size_t whylen;
} check_args;

/* Checks the descriptor a plugin exports. Runs under the guard: a plugin with wild
 * pointers in it is refused rather than taking the daemon down. */
static int check_descriptor(void *arg) {
    check_args *a = arg;
    const nnd_extension *x = a->x;
    if (eng_plugin_check_abi(x, "extension", NND_EXTENSION_ABI_VERSION, sizeof(nnd_extension),
                             a->why, a->whylen) < 0)
        return -1;
    if (!x->name || !valid_name(x->name)) {
        snprintf(a->why, a->whylen, "bad extension name \"%.*s\" (want a reverse domain name)",
                 ENG_EXT_MAX_NAME, x->name ? x->name : "");
        return -1;
    }
    if ((x->n_operand_types && !x->operand_types) || (x->n_operations && !x->operations) ||
        x->n_operand_types > 0x10000 || x->n_operations > 0x10000) {
        snprintf(a->why, a->whylen, "operand type or operation table missing or too long");
        return -1;
    }
    for (uint32_t i = 0; i < x->n_operand_types; i++) {
        const nnd_ext_operand_type *t = &x->operand_types[i];
        if (t->byte_size == 0) {
            snprintf(a->why, a->whylen, "operand type %u has byte size 0", t->code);
            return -1;
        }
        for (uint32_t k = 0; k < i; k++)
            if (x->operand_types[k].code == t->code) {
                snprintf(a->why, a->whylen, "operand type code %u appears twice", t->code);
                return -1;
            }
    }
    for (uint32_t i = 0; i < x->n_operations; i++) {
        const nnd_ext_operation *op = &x->operations[i];
        if (!valid_op(op)) {
            snprintf(a->why, a->whylen, "operation %u lacks validate, prepare or execute",
                     op->code);
            return -1;
        }
        for (uint32_t k = 0; k < i; k++)
            if (x->operations[k].code == op->code) {
                snprintf(a->why, a->whylen, "operation code %u appears twice", op->code);
                return -1;
            }
    }
    if (x->oem_operation && !valid_op(x->oem_operation)) {
        snprintf(a->why, a->whylen, "its OEM operation lacks validate, prepare or execute");
        return -1;
    }
    /* Touch every name now, so that a bad pointer faults here rather than later. */
    for (uint32_t i = 0; i < x->n_operand_types; i++)
        if (x->operand_types[i].name) (void)strlen(x->operand_types[i].name);
    for (uint32_t i = 0; i < x->n_operations; i++)
        if (x->operations[i].name) (void)strlen(x->operations[i].name);
    if (x->version) (void)strlen(x->version);
    return 0;
}

static void refuse(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(const char *path, const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    eng_plugin_logf(0, "extension %s refused: %s", path, why);
    eng_refusals_add(&refused, path, why);
}

static bool take_id(uint16_t *id) {
    for (uint32_t k = 0; k < SCHEMA_EXT_MAX_ID; k++) {
        uint16_t i = next_id;
        next_id = next_id == SCHEMA_EXT_MAX_ID ? 1 : next_id + 1;
        if (!eng_ext_slot_get(i)) {
            *id = i;
            return true;
        }
    }
    return false;
}

/* Builds the record for a checked descriptor; NULL when out of memory. */
static eng_ext_plugin *plugin_make(void *dl, const nnd_extension *x, const char *path) {
    eng_ext_plugin *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->dl = dl;
    p->x = x;
    snprintf(p->name, sizeof p->name, "%s", x->name);
    snprintf(p->version, sizeof p->version, "%s", x->version ? x->version : "");
    p->path = strdup(path);
    p->n_types = x->n_operand_types;
    p->types = calloc(p->n_types + 1, sizeof *p->types);
    p->type_names = calloc(p->n_types + 1, sizeof *p->type_names);
    p->info_types = calloc(p->n_types + 1, sizeof *p->info_types);
    p->n_ops = x->n_operations;
    p->ops = calloc(p->n_ops + 1, sizeof *p->ops);
    p->op_defs = calloc(p->n_ops + 1, sizeof *p->op_defs);
    p->op_names = calloc(p->n_ops + 1, sizeof *p->op_names);
    if (x->oem_operation) p->oem = malloc(sizeof *p->oem);
    if (!p->path || !p->types || !p->type_names || !p->info_types || !p->ops || !p->op_defs ||
        !p->op_names || (x->oem_operation && !p->oem)) {
        p->dl = NULL; /* the caller closes it */
        plugin_free(p);
        return NULL;
    }
    atomic_init(&p->refs, 1);
    atomic_init(&p->faulted, false);
    return p;
}

/* Gives p its id and the engine codes of its operations, and publishes it. */
static void plugin_publish(eng_ext_plugin *p, uint16_t id) {
    const nnd_extension *x = p->x;
    p->id = id;
    for (uint32_t i = 0; i < p->n_types; i++) {
        const nnd_ext_operand_type *t = &x->operand_types[i];
        p->types[i].code = t->code;
        p->types[i].tensor = t->is_tensor;
        p->types[i].size = t->byte_size;
        snprintf(p->type_names[i], sizeof p->type_names[i], "%s:%s", p->name,
                 t->name ? t->name : "?");
        p->types[i].name = p->type_names[i];
        p->info_types[i] = *t;
    }
    for (uint32_t i = 0; i < p->n_ops; i++) {
        eng_ext_op_init(&p->ops[i], p, &x->operations[i],
                        (int32_t)((uint32_t)id << 16 | x->operations[i].code));
        p->op_defs[i] = &p->ops[i].def;
        p->op_names[i] = (schema_op_name_row){p->ops[i].def.code, p->ops[i].def.name};
    }
    if (p->oem) eng_ext_op_init(p->oem, p, x->oem_operation, SCHEMA_OP_OEM_OPERATION);
    p->type_rows = (schema_type_rows){p->n_types, p->types};
    p->op_rows = (eng_op_rows){p->n_ops, p->op_defs};
    p->op_name_rows = (schema_op_name_rows){p->n_ops, p->op_names};
    schema_types_install(id, &p->type_rows);
    schema_op_names_install(id, &p->op_name_rows);
    eng_ops_install(id, &p->op_rows);
    eng_ext_slot_set(id, p);
}

static eng_ext_file_check_fn file_check;

void eng_ext_set_file_check(eng_ext_file_check_fn fn) {
    file_check = fn;
}

static void load_one(const char *path) {
    char why[300] = "";
    void *dl = eng_plugin_open(path, file_check, NULL, why, sizeof why);
    if (!dl) {
        refuse(path, "%s", why);
        return;
    }
    const nnd_extension *x = eng_plugin_symbol(dl, NND_EXTENSION_SYMBOL, why, sizeof why);
    if (!x) {
        refuse(path, "%s", why);
        dlclose(dl);
        return;
    }
    check_args a = {.x = x, .why = why, .whylen = sizeof why};
    if (eng_plugin_guarded(check_descriptor, &a, "reading its descriptor", why, sizeof why)) {
        refuse(path, "%s", why);
        dlclose(dl);
        return;
    }
    for (uint32_t i = 0; i < n_current; i++)
        if (!strcmp(current[i]->name, x->name)) {
            refuse(path, "duplicate extension name %s (already loaded from %s)", x->name,
                   current[i]->path);
            dlclose(dl);
            return;
        }
    if (x->oem_operation)
        for (uint32_t i = 0; i < n_current; i++)
            if (current[i]->oem) {
                refuse(path, "claims OEM_OPERATION, already claimed by %s", current[i]->name);
                dlclose(dl);
                return;
            }
    uint16_t id;
    if (n_current == ENG_EXT_MAX_LOADED || !take_id(&id)) {
        refuse(path, "too many extensions loaded");
        dlclose(dl);
        return;
    }
    eng_ext_plugin *p = plugin_make(dl, x, path);
    if (!p) {
        refuse(path, "out of memory");
        dlclose(dl);
        return;
    }
    plugin_publish(p, id);
    current[n_current++] = p;
    if (p->oem) {
        atomic_store(&oem_owner, p);
        eng_ops_install_oem(&p->oem->def);
    }
    eng_plugin_logf(2, "extension %s%s%s loaded from %s: %u operand types, %u operations%s",
                    p->name, *p->version ? " " : "", p->version, path, p->n_types, p->n_ops,
                    p->oem ? ", claims OEM_OPERATION" : "");
}

/* Drops the current set and the refusals. Called with reg_lock held. */
static void clear_locked(void) {
    atomic_store(&oem_owner, NULL);
    eng_ops_install_oem(NULL);
    for (uint32_t i = 0; i < n_current; i++)
        plugin_unref(current[i]);
    n_current = 0;
    eng_refusals_clear(&refused);
}

static void load_each(const char *path, void *ctx) {
    (void)ctx;
    load_one(path);
}

int eng_ext_load_dir(const char *dir, char *err, size_t errlen) {
    eng_plugin_guard_once();
    pthread_mutex_lock(&reg_lock);
    /* The old set goes first: a plugin that no model holds is closed, so a file replaced
     * on disk is opened afresh (dlopen hands back an object still open by path). */
    clear_locked();
    int n = eng_plugin_scan_dir(dir, "extensions", load_each, NULL, err, errlen);
    int loaded = n < 0 ? -1 : (int)n_current;
    pthread_mutex_unlock(&reg_lock);
    return loaded;
}

void eng_ext_unload_all(void) {
    pthread_mutex_lock(&reg_lock);
    clear_locked();
    pthread_mutex_unlock(&reg_lock);
}

uint32_t eng_ext_count(void) {
    pthread_mutex_lock(&reg_lock);
    uint32_t n = n_current;
    pthread_mutex_unlock(&reg_lock);
    return n;
}

bool eng_ext_get(uint32_t i, eng_ext_info *out) {
    pthread_mutex_lock(&reg_lock);
    bool ok = i < n_current;
    if (ok) {
        const eng_ext_plugin *p = current[i];
        out->name = p->name;
        out->version = p->version;
        out->path = p->path;
        out->n_operand_types = p->n_types;
        out->operand_types = p->info_types;
        out->n_operations = p->n_ops;
        out->oem = p->oem != NULL;
        out->faulted = atomic_load(&p->faulted);
    }
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

bool eng_ext_refused(uint32_t i, const char **path, const char **reason) {
    pthread_mutex_lock(&reg_lock);
    bool ok = eng_refusals_get(&refused, i, path, reason);
    pthread_mutex_unlock(&reg_lock);
    return ok;
}

uint16_t eng_ext_resolve(const char *name) {
    pthread_mutex_lock(&reg_lock);
    uint16_t id = 0;
    for (uint32_t i = 0; i < n_current && !id; i++)
        if (!strcmp(current[i]->name, name)) id = current[i]->id;
    pthread_mutex_unlock(&reg_lock);
    return id;
}

bool eng_ext_oem_claimed(void) {
    return atomic_load(&oem_owner) != NULL;
}

/* ---- references from prepared models ---------------------------------------------------- */

static schema_status hold_code(int32_t code, eng_ext_plugin **held, uint32_t *n, char *err,
                               size_t errlen) {
    eng_ext_plugin *p;
    if (code == SCHEMA_OP_OEM_OPERATION || code == SCHEMA_OEM_SCALAR ||
        code == SCHEMA_TENSOR_OEM_BYTE)
        p = atomic_load(&oem_owner);
    else if (eng_ext_is_code(code))
        p = eng_ext_plugin_of(code);
    else
        return SCHEMA_OK;
    if (!p) {
        /* OEM types without a claimant are checked (and refused) elsewhere. */
        if (!eng_ext_is_code(code)) return SCHEMA_OK;
        schema_errf(err, errlen, "extension code 0x%08x names no loaded extension", (unsigned)code);
        return SCHEMA_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < *n; i++)
        if (held[i] == p) return SCHEMA_OK;
    plugin_ref(p);
    held[(*n)++] = p;
    return SCHEMA_OK;
}

schema_status eng_ext_hold_model(const eng_model_desc *m, eng_ext_plugin ***out, uint32_t *n_out,
                                 char *err, size_t errlen) {
    *out = NULL;
    *n_out = 0;
    /* At most one entry per loaded plugin; the current set bounds it. */
    eng_ext_plugin **held = NULL;
    uint32_t n = 0, cap = 0;
    schema_status s = SCHEMA_OK;
    for (uint32_t i = 0; i < m->n_operands + m->n_operations && !s; i++) {
        int32_t code =
            i < m->n_operands ? m->operands[i].type : m->operations[i - m->n_operands].type;
        if (!eng_ext_is_code(code) && code != SCHEMA_OP_OEM_OPERATION &&
            code != SCHEMA_OEM_SCALAR && code != SCHEMA_TENSOR_OEM_BYTE)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 4;
            eng_ext_plugin **h = realloc(held, sizeof *h * cap);
            if (!h) {
                schema_errf(err, errlen, "out of memory");
                s = SCHEMA_GENERAL_FAILURE;
                break;
            }
            held = h;
        }
        s = hold_code(code, held, &n, err, errlen);
    }
    if (s || n == 0) {
        eng_ext_release(held, n);
        return s;
    }
    *out = held;
    *n_out = n;
    return SCHEMA_OK;
}

void eng_ext_release(eng_ext_plugin **held, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        plugin_unref(held[i]);
    free(held);
}
