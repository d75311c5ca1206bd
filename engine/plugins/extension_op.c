/* SPDX-License-Identifier: Apache-2.0 */
/* extension_op.c: a plugin's operations as engine operations. See extension_op.h. */
#include "engine/plugins/extension_op.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plugins/fault_guard.h"

enum { STAGE_VALIDATE, STAGE_PREPARE, STAGE_EXECUTE };
static const char *const stage_names[] = {"validate", "prepare", "execute"};

typedef struct ext_invocation {
    const nnd_ext_operation *op;
    int stage;
    nnd_ext_call *call;
} ext_invocation;

static int invoke(void *arg) {
    ext_invocation *v = arg;
    switch (v->stage) {
    case STAGE_VALIDATE: return v->op->validate(v->call);
    case STAGE_PREPARE: return v->op->prepare(v->call);
    default: return v->op->execute(v->call);
    }
}

static void describe(nnd_ext_operand *o, const eng_tensor *t) {
    memset(o, 0, sizeof *o);
    const eng_ext_plugin *p = eng_ext_plugin_of(t->type);
    o->extension = p ? p->name : NULL;
    o->type = p ? (int32_t)(uint16_t)t->type : t->type;
    o->is_tensor = schema_type_is_tensor(t->type);
    o->element_size = (uint32_t)schema_type_size(t->type);
    o->rank = t->rank <= NND_EXT_MAX_RANK ? t->rank : NND_EXT_MAX_RANK;
    memcpy(o->dims, t->dims, sizeof(uint32_t) * o->rank);
    o->scale = t->scale;
    o->zero_point = t->zero_point;
    o->extension_data = t->extension_data;
    o->extension_len = t->extension_len;
    o->data = t->data;
    o->length = t->bytes;
    o->is_constant =
        t->lifetime == SCHEMA_CONSTANT_COPY || t->lifetime == SCHEMA_CONSTANT_REFERENCE;
    o->omitted = t->lifetime == SCHEMA_NO_VALUE;
}

/* Outputs a plugin's prepare() may set: bounded rank, every dimension known, and a byte
 * size that cannot overflow the engine's arithmetic. */
static bool shape_ok(const nnd_ext_operand *o) {
    if (!o->is_tensor) return o->rank == 0;
    if (o->rank == 0 || o->rank > NND_EXT_MAX_RANK) return false;
    uint64_t bytes = o->element_size ? o->element_size : 1;
    for (uint32_t r = 0; r < o->rank; r++) {
        if (o->dims[r] == 0 || bytes > (UINT64_C(1) << 48) / o->dims[r]) return false;
        bytes *= o->dims[r];
    }
    return true;
}

/* Runs one stage of an extension operation for the engine context c. */
static schema_status run_stage(eng_op_ctx *c, int stage) {
    const eng_ext_op *x = (const eng_ext_op *)c->def;
    eng_ext_plugin *p = x->plugin;
    if (atomic_load(&p->faulted)) {
        schema_errf(
            c->err, c->errlen,
            "%s #%u: extension %s is disabled after a fault; `nndctl reload` loads it again",
            x->def.name, c->index, p->name);
        return SCHEMA_GENERAL_FAILURE;
    }
    if (c->n_in == 0) {
        schema_errf(c->err, c->errlen, "%s #%u: extension operations need at least one input",
                    x->def.name, c->index);
        return SCHEMA_INVALID_ARGUMENT;
    }
    uint32_t n = c->n_in + c->n_out;
    nnd_ext_operand small[16];
    nnd_ext_operand *ops = n <= 16 ? small : malloc(sizeof *ops * n);
    if (!ops) {
        schema_errf(c->err, c->errlen, "%s #%u: out of memory", x->def.name, c->index);
        return SCHEMA_GENERAL_FAILURE;
    }
    for (uint32_t j = 0; j < c->n_in; j++)
        describe(&ops[j], c->in[j]);
    for (uint32_t j = 0; j < c->n_out; j++)
        describe(&ops[c->n_in + j], c->out[j]);
    char msg[SCHEMA_ERR_LEN] = "";
    nnd_ext_call call = {.operation = x == p->oem ? SCHEMA_OP_OEM_OPERATION : x->op->code,
                         .index = c->index,
                         .n_inputs = c->n_in,
                         .n_outputs = c->n_out,
                         .inputs = ops,
                         .outputs = ops + c->n_in,
                         .relaxed = c->relaxed,
                         .err = msg,
                         .errlen = sizeof msg};
    ext_invocation v = {.op = x->op, .stage = stage, .call = &call};
    int sig = 0;
    int rc = eng_fault_guarded(invoke, &v, &sig);
    msg[sizeof msg - 1] = '\0';
    schema_status s;
    if (sig) {
        atomic_store(&p->faulted, true);
        eng_ext_count_fault();
        eng_ext_logf(0,
                     "extension %s (%s): %s in %s of %s #%u; the plugin is disabled until reload",
                     p->name, p->path, eng_fault_signal_name(sig), stage_names[stage], x->def.name,
                     c->index);
        schema_errf(
            c->err, c->errlen,
            "%s #%u: the extension faulted (%s in %s) and is disabled until `nndctl reload`",
            x->def.name, c->index, eng_fault_signal_name(sig), stage_names[stage]);
        s = SCHEMA_GENERAL_FAILURE;
    } else if (rc == NND_EXT_OK) {
        s = SCHEMA_OK;
    } else if (rc == NND_EXT_DEFER && stage == STAGE_PREPARE) {
        s = ENG_DEFER;
    } else if (rc == NND_EXT_INVALID || rc == NND_EXT_UNSUPPORTED || rc == NND_EXT_FAILED) {
        s = rc == NND_EXT_INVALID  ? SCHEMA_INVALID_ARGUMENT
            : rc == NND_EXT_FAILED ? SCHEMA_GENERAL_FAILURE
                                   : SCHEMA_UNSUPPORTED;
        schema_errf(c->err, c->errlen, "%s #%u: %s", x->def.name, c->index,
                    *msg ? msg
                         : (rc == NND_EXT_UNSUPPORTED ? "not supported by the extension"
                                                      : "refused by the extension"));
    } else {
        schema_errf(c->err, c->errlen, "%s #%u: the extension's %s returned an unknown status %d",
                    x->def.name, c->index, stage_names[stage], rc);
        s = SCHEMA_GENERAL_FAILURE;
    }
    if (s == SCHEMA_OK && stage == STAGE_PREPARE) {
        for (uint32_t j = 0; j < c->n_out && s == SCHEMA_OK; j++) {
            const nnd_ext_operand *o = &ops[c->n_in + j];
            if (!shape_ok(o)) {
                schema_errf(c->err, c->errlen,
                            "%s #%u: the extension gave output %u an invalid or too large shape",
                            x->def.name, c->index, j);
                s = SCHEMA_GENERAL_FAILURE;
                break;
            }
            eng_tensor *t = c->out[j];
            memset(t->dims, 0, sizeof t->dims);
            t->rank = o->rank;
            memcpy(t->dims, o->dims, sizeof(uint32_t) * o->rank);
        }
    }
    if (ops != small) free(ops);
    return s;
}

static schema_status ext_check(eng_op_ctx *c) {
    return run_stage(c, STAGE_VALIDATE);
}
static schema_status ext_shape(eng_op_ctx *c) {
    return run_stage(c, STAGE_PREPARE);
}
static schema_status ext_run(eng_op_ctx *c) {
    return run_stage(c, STAGE_EXECUTE);
}

void eng_ext_op_init(eng_ext_op *x, eng_ext_plugin *p, const nnd_ext_operation *op, int32_t code) {
    memset(x, 0, sizeof *x);
    x->op = op;
    x->plugin = p;
    snprintf(x->name, sizeof x->name, "%s:%s", p->name, op->name ? op->name : "?");
    x->def.code = code;
    x->def.name = x->name;
    x->def.check = ext_check;
    x->def.shape = ext_shape;
    x->def.kernels[0].type = ENG_KERNEL_ANY_TYPE;
    x->def.kernels[0].run = ext_run;
    x->def.key_input = 0;
}
