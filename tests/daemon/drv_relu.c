/* SPDX-License-Identifier: Apache-2.0 */
/* drv_relu.c: RELU partitions and the call log of the test drivers. See drv_relu.h. */
#include "tests/daemon/drv_relu.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { AT_INPUT, AT_OUTPUT, AT_TEMP };

typedef struct place {
    int kind;
    uint64_t at;
    uint64_t elems;
} place;

struct drv_relu {
    int32_t type;
    uint32_t n_ops, n_operands;
    uint32_t *op_in, *op_out;
    place *places;
    uint64_t temp_elems;
};

static bool is_tensor(const nnd_driver_operand *o, int32_t type) {
    return o->type == type && o->rank > 0;
}

bool drv_relu_supported(const nnd_driver_model *m, uint32_t i) {
    const nnd_driver_operation *op = &m->operations[i];
    if (op->type != DRV_OP_RELU || op->n_inputs != 1 || op->n_outputs != 1) return false;
    const nnd_driver_operand *x = &m->operands[op->inputs[0]], *y = &m->operands[op->outputs[0]];
    bool f32 = is_tensor(x, NND_DRIVER_TENSOR_FLOAT32) && is_tensor(y, NND_DRIVER_TENSOR_FLOAT32);
    bool f16 = is_tensor(x, NND_DRIVER_TENSOR_FLOAT16) && is_tensor(y, NND_DRIVER_TENSOR_FLOAT16);
    return f32 || f16;
}

static uint64_t elements(const nnd_driver_operand *o) {
    uint64_t n = 1;
    for (uint32_t r = 0; r < o->rank; r++)
        n *= o->dims[r];
    return n;
}

void drv_relu_free(drv_relu *p) {
    if (!p) return;
    free(p->op_in);
    free(p->places);
    free(p);
}

int drv_relu_supported_operations(void *device, const nnd_driver_model *m, bool *supported,
                                  char *err, size_t errlen) {
    (void)device, (void)err, (void)errlen;
    for (uint32_t i = 0; i < m->n_operations; i++)
        supported[i] = drv_relu_supported(m, i);
    return NND_DRIVER_OK;
}

int drv_relu_prepare(const nnd_driver_model *m, drv_relu **out, char *err, size_t errlen) {
    *out = NULL;
    for (uint32_t i = 0; i < m->n_operations; i++)
        if (!drv_relu_supported(m, i)) {
            snprintf(err, errlen, "operation #%u is no RELU of this driver",
                     m->operations[i].index);
            return NND_DRIVER_UNSUPPORTED;
        }
    drv_relu *p = calloc(1, sizeof *p);
    if (p) p->op_in = malloc(sizeof(uint32_t) * 2 * (m->n_operations + 1));
    if (p) p->places = calloc(m->n_operands + 1, sizeof *p->places);
    if (!p || !p->op_in || !p->places) {
        drv_relu_free(p);
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    p->op_out = p->op_in + m->n_operations + 1;
    p->n_ops = m->n_operations;
    p->n_operands = m->n_operands;
    p->type = m->operands[m->operations[0].inputs[0]].type;
    for (uint32_t o = 0; o < m->n_operands; o++) {
        p->places[o] =
            (place){.kind = AT_TEMP, .at = p->temp_elems, .elems = elements(&m->operands[o])};
        p->temp_elems += p->places[o].elems;
    }
    for (uint32_t i = 0; i < m->n_inputs; i++)
        p->places[m->inputs[i]].kind = AT_INPUT, p->places[m->inputs[i]].at = i;
    for (uint32_t i = 0; i < m->n_outputs; i++)
        p->places[m->outputs[i]].kind = AT_OUTPUT, p->places[m->outputs[i]].at = i;
    for (uint32_t i = 0; i < m->n_operations; i++) {
        p->op_in[i] = m->operations[i].inputs[0];
        p->op_out[i] = m->operations[i].outputs[0];
    }
    *out = p;
    return NND_DRIVER_OK;
}

uint32_t drv_relu_ops(const drv_relu *p) {
    return p->n_ops;
}

static void *arg_bytes(const nnd_driver_arg *a, void *(*mem_at)(uint64_t, size_t)) {
    if (a->data) return a->data;
    return mem_at ? mem_at(a->memory, a->length) : NULL;
}

static void *bytes(const drv_relu *p, uint32_t o, nnd_driver_execution *x, char *temps,
                   void *(*mem_at)(uint64_t, size_t)) {
    const place *pl = &p->places[o];
    size_t elem = p->type == NND_DRIVER_TENSOR_FLOAT16 ? 2 : 4;
    if (pl->kind == AT_INPUT) return arg_bytes(&x->inputs[pl->at], mem_at);
    if (pl->kind == AT_OUTPUT) return arg_bytes(&x->outputs[pl->at], mem_at);
    return temps + pl->at * elem;
}

float drv_relu_first(const drv_relu *p, const nnd_driver_execution *x,
                     void *(*mem_at)(uint64_t handle, size_t bytes)) {
    const void *b = x->n_inputs ? arg_bytes(&x->inputs[0], mem_at) : NULL;
    if (!b || x->inputs[0].length < 4 || p->type != NND_DRIVER_TENSOR_FLOAT32) return 0;
    float v;
    memcpy(&v, b, sizeof v);
    return v;
}

int drv_relu_run(const drv_relu *p, nnd_driver_execution *x,
                 void *(*mem_at)(uint64_t handle, size_t bytes)) {
    size_t elem = p->type == NND_DRIVER_TENSOR_FLOAT16 ? 2 : 4;
    char *temps = malloc(p->temp_elems * elem + 1);
    if (!temps) return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    int rc = NND_DRIVER_OK;
    for (uint32_t i = 0; i < p->n_ops && rc == NND_DRIVER_OK; i++) {
        const char *in = bytes(p, p->op_in[i], x, temps, mem_at);
        char *out = bytes(p, p->op_out[i], x, temps, mem_at);
        uint64_t n = p->places[p->op_out[i]].elems;
        if (!in || !out) {
            snprintf(x->err, x->errlen, "no such device memory");
            rc = NND_DRIVER_GENERAL_FAILURE;
            break;
        }
        for (uint64_t k = 0; k < n; k++) {
            if (elem == 4) {
                float v;
                memcpy(&v, in + 4 * k, 4);
                v = v > 0 ? v : 0;
                memcpy(out + 4 * k, &v, 4);
            } else { /* FLOAT16: a set sign bit is a negative number or -0: 0 */
                uint16_t v;
                memcpy(&v, in + 2 * k, 2);
                if ((v & 0x8000) && (v & 0x7fff) <= 0x7c00) v = 0;
                memcpy(out + 2 * k, &v, 2);
            }
        }
    }
    free(temps);
    return rc;
}

void drv_note(const char *fmt, ...) {
    const char *path = getenv("NND_TEST_DRV_LOG");
    if (!path) return;
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > (int)sizeof line - 2) n = (int)sizeof line - 2;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (write(fd, line, (size_t)n) != n) { /* the test then counts one short */
    }
    close(fd);
}
