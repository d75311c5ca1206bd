/* SPDX-License-Identifier: Apache-2.0 */
/* example.c: nnd-example, a device driver with its own kernels (kernels.c) for float32
 * ADD, MUL, RELU, RELU6, CONV_2D, MAX_POOL_2D, AVERAGE_POOL_2D, FULLY_CONNECTED, RESHAPE
 * and SOFTMAX in NHWC: enough for a small CNN. The template for a driver of ABI 2
 * (include/nnd/driver.h, docs/drivers.md):
 * - open() reports one device, with capabilities that rank it after nnd-cpu for every
 *   type (plain C loops are slower than XNNPACK): a compilation that names no device
 *   never lands here; one that names nnd-example does.
 * - supported_operations() says yes only to what execute() runs; prepare() compiles a
 *   partition (a submodel: several operations whose temporaries stay here) into a list of
 *   nodes with their parameters read once, and the bytes the temporaries need. Constants
 *   are used in place: the daemon keeps them valid while the partition lives.
 * - execute() runs the nodes in order, temporaries in memory of its own.
 * - Both optional parts of the ABI are here too: device memory (memory.c; execute() finds
 *   inputs and outputs there by handle; allocate() checks each role against the live
 *   partitions, partitions.c) and cache blobs (cache_save() writes the nodes'
 *   parameters, cache_load() reads them back instead of preparing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "memory.h"
#include "partitions.h"
#include "nnd/driver.h"

/* NNAPI OperationCode values of the operations this driver runs. */
enum {
    OP_ADD = 0,
    OP_AVERAGE_POOL_2D = 1,
    OP_CONV_2D = 3,
    OP_FULLY_CONNECTED = 9,
    OP_MAX_POOL_2D = 17,
    OP_MUL = 18,
    OP_RELU = 19,
    OP_RELU6 = 21,
    OP_RESHAPE = 22,
    OP_SOFTMAX = 25,
};

#define MAX_INPUTS 16

/* One operation of a submodel, its operands looked up. */
typedef struct ex_step {
    int32_t operation;
    uint32_t n_inputs;
    const nnd_driver_operand *inputs[MAX_INPUTS];
    const nnd_driver_operand *outputs[1];
} ex_step;

/* What preparing one operation found: its parameters. */
typedef struct ex_state {
    int32_t op;
    ex_window w; /* CONV_2D, pools; w.act is every operation's fused activation */
    float beta;  /* SOFTMAX */
} ex_state;

static const nnd_driver_operand *in(const ex_step *s, uint32_t j) {
    return j < s->n_inputs ? s->inputs[j] : NULL;
}

static bool is_float_tensor(const nnd_driver_operand *o, uint32_t min_rank, uint32_t max_rank) {
    return o && o->type == NND_DRIVER_TENSOR_FLOAT32 && o->lifetime != NND_DRIVER_OMITTED &&
           o->rank >= min_rank && o->rank <= max_rank;
}

/* A constant scalar parameter of the given type. */
static bool is_param(const nnd_driver_operand *o, int32_t type) {
    return o && o->type == type && o->lifetime == NND_DRIVER_CONSTANT && o->data &&
           o->length >= (type == NND_DRIVER_BOOL ? 1u : 4u);
}

static int32_t int_param(const ex_step *s, uint32_t j) {
    int32_t v;
    memcpy(&v, in(s, j)->data, sizeof v);
    return v;
}

static bool ints_from(const ex_step *s, uint32_t first, uint32_t n) {
    for (uint32_t j = first; j < first + n; j++)
        if (!is_param(in(s, j), NND_DRIVER_INT32) || int_param(s, j) < 0) return false;
    return true;
}

static bool valid_act(const ex_step *s, uint32_t j) {
    return is_param(in(s, j), NND_DRIVER_INT32) && int_param(s, j) >= 0 && int_param(s, j) <= 3;
}

/* CONV_2D and the pools: explicit padding, or a padding scheme (implicit)? Their layouts
 * differ from `explicit_at` inputs on; an NCHW flag or a dilation makes us decline. */
static bool read_window(const ex_step *s, uint32_t first, bool conv, ex_window *w) {
    const nnd_driver_operand *x = in(s, 0), *y = s->outputs[0];
    bool expl = s->n_inputs > first + 6 && in(s, first + 6)->type == NND_DRIVER_INT32 &&
                !(conv && s->n_inputs == first + 7 && in(s, first + 4)->type == NND_DRIVER_BOOL);
    uint32_t pads = expl ? 4 : 1, strides = first + pads, after;
    if (!ints_from(s, first, pads + 2)) return false;
    w->stride_w = (uint32_t)int_param(s, strides);
    w->stride_h = (uint32_t)int_param(s, strides + 1);
    after = strides + 2;
    if (!conv) { /* filter size */
        if (!ints_from(s, after, 2)) return false;
        w->kw = (uint32_t)int_param(s, after);
        w->kh = (uint32_t)int_param(s, after + 1);
        after += 2;
    }
    if (!valid_act(s, after)) return false;
    w->act = int_param(s, after);
    uint32_t rest = after + 1; /* layout, then (CONV_2D) dilation w, h */
    if (s->n_inputs > rest) {
        if (!is_param(in(s, rest), NND_DRIVER_BOOL) ||
            (in(s, rest)->length < 1 || *(const uint8_t *)in(s, rest)->data))
            return false;
        for (uint32_t j = rest + 1; j < s->n_inputs; j++)
            if (!conv || !is_param(in(s, j), NND_DRIVER_INT32) || int_param(s, j) != 1)
                return false;
    }
    if (w->stride_w == 0 || w->stride_h == 0 || w->kw == 0 || w->kh == 0) return false;
    if (expl) {
        w->pad_left = (uint32_t)int_param(s, first);
        w->pad_top = (uint32_t)int_param(s, first + 2);
    } else { /* SAME: the total pad the output size needs, the smaller half first */
        int32_t scheme = int_param(s, first);
        if (scheme != 1 && scheme != 2) return false;
        int64_t need_w = ((int64_t)y->dims[2] - 1) * w->stride_w + w->kw - x->dims[2];
        int64_t need_h = ((int64_t)y->dims[1] - 1) * w->stride_h + w->kh - x->dims[1];
        w->pad_left = scheme == 1 && need_w > 0 ? (uint32_t)(need_w / 2) : 0;
        w->pad_top = scheme == 1 && need_h > 0 ? (uint32_t)(need_h / 2) : 0;
    }
    return true;
}

static bool broadcastable(const nnd_driver_operand *a, const nnd_driver_operand *b,
                          const nnd_driver_operand *out) {
    for (uint32_t k = 1; k <= out->rank; k++) {
        uint32_t da = k <= a->rank ? a->dims[a->rank - k] : 1;
        uint32_t db = k <= b->rank ? b->dims[b->rank - k] : 1;
        if (da != db && da != 1 && db != 1) return false;
    }
    return true;
}

/* Checks the step and fills st's parameters (st may be a scratch copy). */
static bool understand(const ex_step *s, ex_state *st) {
    if (!is_float_tensor(s->outputs[0], 1, 4)) return false;
    const nnd_driver_operand *x = in(s, 0), *y = s->outputs[0];
    memset(st, 0, sizeof *st);
    st->op = s->operation;
    for (uint32_t j = 0; j < s->n_inputs; j++)
        if (!s->inputs[j]) return false;
    switch (s->operation) {
    case OP_ADD:
    case OP_MUL:
        if (s->n_inputs != 3 || !is_float_tensor(x, 1, 4) || !is_float_tensor(in(s, 1), 1, 4) ||
            !valid_act(s, 2) || !broadcastable(x, in(s, 1), y))
            return false;
        st->w.act = int_param(s, 2);
        return true;
    case OP_RELU:
    case OP_RELU6: return s->n_inputs == 1 && is_float_tensor(x, 1, 4);
    case OP_CONV_2D:
        if (s->n_inputs < 7 || !is_float_tensor(x, 4, 4) || !is_float_tensor(in(s, 1), 4, 4) ||
            !is_float_tensor(in(s, 2), 1, 1) || y->rank != 4)
            return false;
        st->w.kh = in(s, 1)->dims[1];
        st->w.kw = in(s, 1)->dims[2];
        return in(s, 1)->dims[3] == x->dims[3] && in(s, 2)->dims[0] == in(s, 1)->dims[0] &&
               y->dims[3] == in(s, 1)->dims[0] && read_window(s, 3, true, &st->w);
    case OP_MAX_POOL_2D:
    case OP_AVERAGE_POOL_2D:
        return s->n_inputs >= 7 && is_float_tensor(x, 4, 4) && y->rank == 4 &&
               y->dims[3] == x->dims[3] && read_window(s, 1, false, &st->w);
    case OP_FULLY_CONNECTED:
        if (s->n_inputs != 4 || !is_float_tensor(x, 2, 4) || !is_float_tensor(in(s, 1), 2, 2) ||
            !is_float_tensor(in(s, 2), 1, 1) || !valid_act(s, 3) || y->rank != 2)
            return false;
        st->w.act = int_param(s, 3);
        return in(s, 1)->dims[1] && y->dims[1] == in(s, 1)->dims[0] &&
               in(s, 2)->dims[0] == in(s, 1)->dims[0];
    case OP_RESHAPE: return s->n_inputs == 2 && is_float_tensor(x, 1, 4);
    case OP_SOFTMAX:
        if (s->n_inputs < 2 || s->n_inputs > 3 || !is_float_tensor(x, 1, 4) ||
            !is_param(in(s, 1), NND_DRIVER_FLOAT32))
            return false;
        memcpy(&st->beta, in(s, 1)->data, sizeof st->beta);
        if (s->n_inputs == 3) {
            if (!is_param(in(s, 2), NND_DRIVER_INT32)) return false;
            int32_t axis = int_param(s, 2);
            if (axis != -1 && axis != (int32_t)x->rank - 1) return false;
        }
        return st->beta > 0;
    default: return false;
    }
}

/* The view of operation i of m; false when it does not fit one (too many operands). */
static bool view(const nnd_driver_model *m, uint32_t i, ex_step *s) {
    const nnd_driver_operation *op = &m->operations[i];
    if (op->n_inputs > MAX_INPUTS || op->n_outputs != 1) return false;
    s->operation = op->type;
    s->n_inputs = op->n_inputs;
    for (uint32_t j = 0; j < op->n_inputs; j++)
        s->inputs[j] = op->inputs[j] < m->n_operands ? &m->operands[op->inputs[j]] : NULL;
    s->outputs[0] = op->outputs[0] < m->n_operands ? &m->operands[op->outputs[0]] : NULL;
    return s->outputs[0] != NULL;
}

static int ex_supported(void *device, const nnd_driver_model *m, bool *supported, char *err,
                        size_t errlen) {
    (void)device, (void)err, (void)errlen;
    for (uint32_t i = 0; i < m->n_operations; i++) {
        ex_step s;
        ex_state st;
        supported[i] = !m->relaxed && view(m, i, &s) && understand(&s, &st);
    }
    return NND_DRIVER_OK;
}

/* ---- prepared partitions ------------------------------------------------------------------ */

/* Where an operand's bytes are during an execution. */
enum { AT_INPUT, AT_OUTPUT, AT_CONSTANT, AT_TEMP, AT_NONE };

typedef struct ex_place {
    int kind;
    uint64_t at;      /* input or output index, byte offset of a temporary */
    const void *data; /* a constant's, valid while the partition lives */
    nnd_driver_operand shape;
} ex_place;

typedef struct ex_node {
    ex_state st;
    uint32_t n_inputs;
    uint32_t in[MAX_INPUTS], out;
} ex_node;

typedef struct ex_prepared {
    uint32_t n_nodes, n_operands;
    ex_node *nodes;
    ex_place *places;
    uint64_t temp_bytes; /* temporaries, one after another */
} ex_prepared;

static void ex_release(void *prepared) {
    ex_prepared *p = prepared;
    if (!p) return;
    ex_partitions_drop(p);
    free(p->nodes);
    free(p->places);
    free(p);
}

static uint64_t bytes_of_shape(const nnd_driver_operand *o) {
    uint64_t n = sizeof(float);
    for (uint32_t r = 0; r < o->rank; r++)
        n *= o->dims[r];
    return n;
}

/* Builds a prepared partition; with blob (cache_load) the nodes' parameters come from it. */
static int build(const nnd_driver_model *m, const ex_state *from_blob,
                 nnd_driver_prepared_info *out, char *err, size_t errlen) {
    ex_prepared *p = calloc(1, sizeof *p);
    if (p) p->nodes = calloc(m->n_operations + 1, sizeof *p->nodes);
    if (p) p->places = calloc(m->n_operands + 1, sizeof *p->places);
    if (!p || !p->nodes || !p->places) {
        ex_release(p);
        snprintf(err, errlen, "out of memory");
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    p->n_nodes = m->n_operations;
    p->n_operands = m->n_operands;
    for (uint32_t o = 0; o < m->n_operands; o++) {
        ex_place *pl = &p->places[o];
        pl->shape = m->operands[o];
        pl->kind = AT_NONE;
        if (m->operands[o].lifetime == NND_DRIVER_CONSTANT) {
            pl->kind = AT_CONSTANT;
            pl->data = m->operands[o].data;
        } else if (m->operands[o].lifetime == NND_DRIVER_TEMPORARY) {
            pl->kind = AT_TEMP;
            pl->at = p->temp_bytes;
            p->temp_bytes += (bytes_of_shape(&m->operands[o]) + 63) & ~63ull;
        }
    }
    for (uint32_t i = 0; i < m->n_inputs; i++)
        p->places[m->inputs[i]].kind = AT_INPUT, p->places[m->inputs[i]].at = i;
    for (uint32_t i = 0; i < m->n_outputs; i++)
        p->places[m->outputs[i]].kind = AT_OUTPUT, p->places[m->outputs[i]].at = i;
    for (uint32_t i = 0; i < m->n_operations; i++) {
        ex_step s;
        ex_node *n = &p->nodes[i];
        if (!view(m, i, &s) || !understand(&s, &n->st) ||
            (from_blob && from_blob[i].op != n->st.op)) {
            ex_release(p);
            snprintf(err, errlen, "operation #%u is not one this driver runs",
                     m->operations[i].index);
            return from_blob ? NND_DRIVER_GENERAL_FAILURE : NND_DRIVER_UNSUPPORTED;
        }
        if (from_blob) n->st = from_blob[i];
        n->n_inputs = s.n_inputs;
        memcpy(n->in, m->operations[i].inputs, sizeof(uint32_t) * s.n_inputs);
        n->out = m->operations[i].outputs[0];
    }
    /* Known by allocate(), which checks the roles it gets against it (partitions.h). */
    if (!ex_partitions_add(p, m->n_inputs, m->n_outputs)) {
        ex_release(p);
        snprintf(err, errlen, "out of memory");
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    out->prepared = p;
    out->held_bytes = sizeof *p + sizeof(ex_node) * p->n_nodes + sizeof(ex_place) * p->n_operands;
    return NND_DRIVER_OK;
}

static int ex_prepare(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                      nnd_driver_prepared_info *out, char *err, size_t errlen) {
    (void)device, (void)a; /* one speed here: preference, priority and deadline change nothing */
    return build(m, NULL, out, err, errlen);
}

/* ---- execution ---------------------------------------------------------------------------- */

static ex_shape shape_of(const nnd_driver_operand *o) {
    ex_shape s = {.rank = o->rank};
    memcpy(s.dims, o->dims, sizeof(uint32_t) * o->rank);
    return s;
}

static uint64_t elements(const nnd_driver_operand *o) {
    uint64_t n = 1;
    for (uint32_t r = 0; r < o->rank; r++)
        n *= o->dims[r];
    return n;
}

/* Where an execution's argument is: the daemon's memory (data), or ours (a handle). */
static void *arg_bytes(const nnd_driver_arg *a) {
    return a->data ? a->data : ex_memory_at(a->memory, a->length);
}

static void *place_bytes(const ex_prepared *p, uint32_t o, nnd_driver_execution *x, char *temps) {
    const ex_place *pl = &p->places[o];
    switch (pl->kind) {
    case AT_INPUT: return arg_bytes(&x->inputs[pl->at]);
    case AT_OUTPUT: return arg_bytes(&x->outputs[pl->at]);
    case AT_CONSTANT: return (void *)pl->data;
    case AT_TEMP: return temps + pl->at;
    default: return NULL;
    }
}

static int run_node(const ex_prepared *p, const ex_node *n, nnd_driver_execution *x, char *temps) {
    const float *data[3] = {NULL};
    for (uint32_t j = 0; j < 3 && j < n->n_inputs; j++)
        data[j] = place_bytes(p, n->in[j], x, temps);
    const nnd_driver_operand *xs = &p->places[n->in[0]].shape, *y = &p->places[n->out].shape;
    float *out = place_bytes(p, n->out, x, temps);
    if (!out || !data[0]) {
        snprintf(x->err, x->errlen, "an operand's memory is missing");
        return NND_DRIVER_GENERAL_FAILURE;
    }
    const ex_state *st = &n->st;
    switch (st->op) {
    case OP_ADD:
    case OP_MUL: {
        ex_shape sa = shape_of(xs), sb = shape_of(&p->places[n->in[1]].shape), so = shape_of(y);
        ex_binary(st->op == OP_MUL, data[0], &sa, data[1], &sb, out, &so, st->w.act);
        break;
    }
    case OP_RELU: ex_clamp(data[0], out, elements(y), 0, 3.4e38f); break;
    case OP_RELU6: ex_clamp(data[0], out, elements(y), 0, 6); break;
    case OP_CONV_2D:
        ex_conv2d(data[0], xs->dims, data[1], data[2], y->dims[3], out, y->dims, &st->w);
        break;
    case OP_MAX_POOL_2D:
    case OP_AVERAGE_POOL_2D:
        ex_pool2d(st->op == OP_MAX_POOL_2D, data[0], xs->dims, out, y->dims, &st->w);
        break;
    case OP_FULLY_CONNECTED: {
        uint32_t size = p->places[n->in[1]].shape.dims[1];
        ex_fully_connected(data[0], (uint32_t)(elements(xs) / size), size, data[1], data[2],
                           y->dims[1], out, st->w.act);
        break;
    }
    case OP_RESHAPE: memmove(out, data[0], bytes_of_shape(y)); break;
    case OP_SOFTMAX: {
        uint32_t depth = xs->dims[xs->rank - 1];
        ex_softmax(data[0], depth ? elements(xs) / depth : 0, depth, st->beta, out);
        break;
    }
    default:
        snprintf(x->err, x->errlen, "operation %d was never prepared", st->op);
        return NND_DRIVER_GENERAL_FAILURE;
    }
    return NND_DRIVER_OK;
}

static int ex_execute(nnd_driver_execution *x) {
    const ex_prepared *p = x->prepared;
    /* Every output's shape is known at prepare here; a buffer too small is the caller's. */
    bool short_of_room = false;
    for (uint32_t i = 0; i < x->n_outputs; i++)
        for (uint32_t o = 0; o < p->n_operands; o++)
            if (p->places[o].kind == AT_OUTPUT && p->places[o].at == i) {
                nnd_driver_arg *a = &x->outputs[i];
                a->rank = p->places[o].shape.rank;
                memcpy(a->dims, p->places[o].shape.dims, sizeof(uint32_t) * a->rank);
                short_of_room |= a->length < bytes_of_shape(&p->places[o].shape);
            }
    if (short_of_room) return NND_DRIVER_OUTPUT_INSUFFICIENT_SIZE;
    char *temps = malloc(p->temp_bytes + 64);
    if (!temps) {
        snprintf(x->err, x->errlen, "out of memory for %llu bytes of temporaries",
                 (unsigned long long)p->temp_bytes);
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    int rc = NND_DRIVER_OK;
    for (uint32_t i = 0; i < p->n_nodes && rc == NND_DRIVER_OK; i++)
        rc = run_node(p, &p->nodes[i], x, temps);
    free(temps);
    return rc; /* x->measure: the times stay NND_DRIVER_NO_TIME, which is allowed */
}

/* ---- cache blobs --------------------------------------------------------------------------
 * One blob per partition: a version, the node count, then each node's parameters. No
 * pointers: the blob is read back by another process, maybe after a restart. A blob of
 * another version is refused, and the daemon prepares the partition again. */

#define BLOB_VERSION 2

static size_t ex_cache_save(void *prepared, uint32_t blob, void *buf, size_t cap) {
    const ex_prepared *p = prepared;
    size_t need = 8 + sizeof(ex_state) * p->n_nodes;
    if (blob != 0) return 0;
    if (cap >= need) {
        uint32_t head[2] = {BLOB_VERSION, p->n_nodes};
        memcpy(buf, head, sizeof head);
        for (uint32_t i = 0; i < p->n_nodes; i++)
            memcpy((char *)buf + 8 + sizeof(ex_state) * i, &p->nodes[i].st, sizeof(ex_state));
    }
    return need;
}

static int ex_cache_load(void *device, const nnd_driver_model *m, const nnd_driver_prepare_args *a,
                         const nnd_driver_blob *blobs, uint32_t n_blobs,
                         nnd_driver_prepared_info *out, char *err, size_t errlen) {
    (void)device, (void)a;
    uint32_t head[2];
    if (n_blobs != 1 || blobs[0].size < sizeof head) {
        snprintf(err, errlen, "not a blob of this driver");
        return NND_DRIVER_GENERAL_FAILURE;
    }
    memcpy(head, blobs[0].data, sizeof head);
    if (head[0] != BLOB_VERSION || head[1] != m->n_operations ||
        blobs[0].size != 8 + sizeof(ex_state) * head[1]) {
        snprintf(err, errlen, "a blob of another version or partition");
        return NND_DRIVER_GENERAL_FAILURE;
    }
    ex_state *st = malloc(sizeof *st * (head[1] + 1));
    if (!st) return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    memcpy(st, (const char *)blobs[0].data + 8, sizeof *st * head[1]);
    int rc = build(m, st, out, err, errlen);
    free(st);
    return rc;
}

/* ---- the device ----------------------------------------------------------------------------- */

static int ex_open(nnd_driver_device_info *devices, uint32_t max, char *err, size_t errlen) {
    (void)err, (void)errlen;
    if (max < 1) return 0;
    nnd_driver_device_info *d = &devices[0];
    snprintf(d->name, sizeof d->name, "nnd-example");
    snprintf(d->version, sizeof d->version, "example 2.0");
    d->type = NND_DRIVER_TYPE_ACCELERATOR;
    /* After nnd-cpu (0.1) for every type, power too: a template, not a fast device. */
    nnd_driver_perf slow = {.exec_time = 0.5f, .power_usage = 0.5f};
    for (int t = 0; t < NND_DRIVER_OPERAND_TYPES; t++)
        d->caps.operand[t] = slow;
    d->caps.relaxed_scalar = d->caps.relaxed_tensor = slow;
    d->caps.if_perf = d->caps.while_perf = slow;
    d->caps.cache_blobs = 1;
    d->device = NULL; /* one device: nothing to tell apart */
    return 1;
}

static void ex_close(void) {
    ex_partitions_clear();
}

NND_DRIVER_EXPORT = {
    .abi_version = NND_DRIVER_ABI_VERSION,
    .struct_size = sizeof(nnd_driver),
    .name = "example",
    .open = ex_open,
    .close = ex_close,
    .supported_operations = ex_supported,
    .prepare = ex_prepare,
    .release = ex_release,
    .execute = ex_execute,
    .allocate = ex_memory_allocate,
    .memory_free = ex_memory_free,
    .memory_read = ex_memory_read,
    .memory_write = ex_memory_write,
    .cache_save = ex_cache_save,
    .cache_load = ex_cache_load,
};
