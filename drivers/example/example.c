/* SPDX-License-Identifier: Apache-2.0 */
/* example.c: nnd-example, a device driver with its own kernels (kernels.c) for float32
 * ADD, MUL, RELU, RELU6, CONV_2D, MAX_POOL_2D, AVERAGE_POOL_2D, FULLY_CONNECTED, RESHAPE
 * and SOFTMAX in NHWC: enough for a small CNN. The template for a driver
 * (docs/drivers.md): supports() says yes only to what execute() runs; prepare() reads the
 * step's constant parameters once and copies its constant tensors into the driver's own
 * memory (a real accelerator would upload them), which execute() then reads. Both optional
 * parts of the ABI are here too: device memory (memory.c; execute() finds operands there
 * by handle) and cache blobs (serialize() writes a prepared state out, deserialize() reads
 * it back instead of preparing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "memory.h"
#include "engine/backends/drivers/driver_abi1.h"

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

#define MAX_CONSTANTS 3

/* One prepared step. The copies of its constant tensor inputs follow it in memory: the
 * driver's "device memory" for this step. */
typedef struct ex_state {
    int32_t op;
    ex_window w; /* CONV_2D, pools; w.act is every operation's fused activation */
    float beta;  /* SOFTMAX */
    const float *constant[MAX_CONSTANTS]; /* the driver's copy of input j, or NULL */
    uint64_t memory_bytes;                /* of memory[] */
    float memory[];
} ex_state;

static const nnd_ext_operand *in(const nnd_driver_step *s, uint32_t j) {
    return j < s->n_inputs ? &s->inputs[j] : NULL;
}

static bool is_float_tensor(const nnd_ext_operand *o, uint32_t min_rank, uint32_t max_rank) {
    return o && !o->extension && o->type == NND_EXT_TENSOR_FLOAT32 && !o->omitted &&
           o->rank >= min_rank && o->rank <= max_rank;
}

/* A constant scalar parameter of the given type. */
static bool is_param(const nnd_ext_operand *o, int32_t type) {
    return o && !o->extension && o->type == type && o->data && !o->omitted;
}

static int32_t int_param(const nnd_driver_step *s, uint32_t j) {
    int32_t v;
    memcpy(&v, in(s, j)->data, sizeof v);
    return v;
}

static bool ints_from(const nnd_driver_step *s, uint32_t first, uint32_t n) {
    for (uint32_t j = first; j < first + n; j++)
        if (!is_param(in(s, j), NND_EXT_INT32) || int_param(s, j) < 0) return false;
    return true;
}

static bool valid_act(const nnd_driver_step *s, uint32_t j) {
    return is_param(in(s, j), NND_EXT_INT32) && int_param(s, j) >= 0 && int_param(s, j) <= 3;
}

/* CONV_2D and the pools: explicit padding, or a padding scheme (implicit)? Their layouts
 * differ from `explicit_at` inputs on; an NCHW flag or a dilation makes us decline. */
static bool read_window(const nnd_driver_step *s, uint32_t first, bool conv, ex_window *w) {
    const nnd_ext_operand *x = in(s, 0), *y = &s->outputs[0];
    bool expl = s->n_inputs > first + 6 && in(s, first + 6)->type == NND_EXT_INT32 &&
                !(conv && s->n_inputs == first + 7 && in(s, first + 4)->type == NND_EXT_BOOL);
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
        if (!is_param(in(s, rest), NND_EXT_BOOL) || *(const uint8_t *)in(s, rest)->data)
            return false;
        for (uint32_t j = rest + 1; j < s->n_inputs; j++)
            if (!conv || !is_param(in(s, j), NND_EXT_INT32) || int_param(s, j) != 1) return false;
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

static bool broadcastable(const nnd_ext_operand *a, const nnd_ext_operand *b,
                          const nnd_ext_operand *out) {
    for (uint32_t k = 1; k <= out->rank; k++) {
        uint32_t da = k <= a->rank ? a->dims[a->rank - k] : 1;
        uint32_t db = k <= b->rank ? b->dims[b->rank - k] : 1;
        if (da != db && da != 1 && db != 1) return false;
    }
    return true;
}

/* Checks the step and fills st's parameters (st may be a scratch copy). */
static bool understand(const nnd_driver_step *s, ex_state *st) {
    if (s->n_outputs != 1 || !is_float_tensor(&s->outputs[0], 1, 4)) return false;
    const nnd_ext_operand *x = in(s, 0), *y = &s->outputs[0];
    memset(st, 0, sizeof *st);
    st->op = s->operation;
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
            !is_param(in(s, 1), NND_EXT_FLOAT32))
            return false;
        memcpy(&st->beta, in(s, 1)->data, sizeof st->beta);
        if (s->n_inputs == 3) {
            if (!is_param(in(s, 2), NND_EXT_INT32)) return false;
            int32_t axis = int_param(s, 2);
            if (axis != -1 && axis != (int32_t)x->rank - 1) return false;
        }
        return st->beta > 0;
    default: return false;
    }
}

static bool ex_supports(const nnd_driver_step *s) {
    ex_state st;
    return understand(s, &st);
}

static void *ex_prepare(const nnd_driver_step *s) {
    ex_state probe;
    if (!understand(s, &probe)) return NULL;
    size_t bytes = 0;
    for (uint32_t j = 0; j < MAX_CONSTANTS && j < s->n_inputs; j++)
        if (in(s, j)->is_constant && in(s, j)->is_tensor) bytes += in(s, j)->length;
    ex_state *st = malloc(sizeof *st + bytes);
    if (!st) return NULL;
    *st = probe;
    st->memory_bytes = bytes;
    float *at = st->memory;
    for (uint32_t j = 0; j < MAX_CONSTANTS && j < s->n_inputs; j++) {
        const nnd_ext_operand *o = in(s, j);
        if (!o->is_constant || !o->is_tensor) continue;
        memcpy(at, o->data, o->length);
        st->constant[j] = at;
        at += o->length / sizeof(float);
    }
    return st;
}

static ex_shape shape_of(const nnd_ext_operand *o) {
    ex_shape s = {.rank = o->rank};
    memcpy(s.dims, o->dims, sizeof(uint32_t) * o->rank);
    return s;
}

static uint64_t elements(const nnd_ext_operand *o) {
    uint64_t n = 1;
    for (uint32_t r = 0; r < o->rank; r++)
        n *= o->dims[r];
    return n;
}

/* Where operand o is: the daemon's memory (data), or ours (a handle, data NULL). */
static void *bytes_of(const nnd_ext_operand *o, uint64_t handle) {
    return handle ? ex_memory_at(handle, o->length) : o->data;
}

static int ex_execute(void *state, nnd_driver_step *s) {
    const ex_state *st = state;
    const float *data[MAX_CONSTANTS] = {NULL};
    for (uint32_t j = 0; j < MAX_CONSTANTS && j < s->n_inputs; j++)
        data[j] = st->constant[j] ? st->constant[j]
                                  : (const float *)bytes_of(&s->inputs[j], s->input_memory[j]);
    const nnd_ext_operand *x = &s->inputs[0], *y = &s->outputs[0];
    float *out = bytes_of(y, s->output_memory[0]);
    if (!out || (!data[0] && x->length)) {
        snprintf(s->err, s->errlen, "an operand's device memory is missing");
        return NND_EXT_FAILED;
    }
    switch (st->op) {
    case OP_ADD:
    case OP_MUL: {
        ex_shape sa = shape_of(x), sb = shape_of(&s->inputs[1]), so = shape_of(y);
        ex_binary(st->op == OP_MUL, data[0], &sa, data[1], &sb, out, &so, st->w.act);
        return 0;
    }
    case OP_RELU: ex_clamp(data[0], out, elements(y), 0, 3.4e38f); return 0;
    case OP_RELU6: ex_clamp(data[0], out, elements(y), 0, 6); return 0;
    case OP_CONV_2D:
        ex_conv2d(data[0], x->dims, data[1], data[2], y->dims[3], out, y->dims, &st->w);
        return 0;
    case OP_MAX_POOL_2D:
    case OP_AVERAGE_POOL_2D:
        ex_pool2d(st->op == OP_MAX_POOL_2D, data[0], x->dims, out, y->dims, &st->w);
        return 0;
    case OP_FULLY_CONNECTED: {
        uint32_t size = s->inputs[1].dims[1];
        ex_fully_connected(data[0], (uint32_t)(elements(x) / size), size, data[1], data[2],
                           y->dims[1], out, st->w.act);
        return 0;
    }
    case OP_RESHAPE: memcpy(out, data[0], y->length); return 0;
    case OP_SOFTMAX: {
        uint32_t depth = x->dims[x->rank - 1];
        ex_softmax(data[0], depth ? elements(x) / depth : 0, depth, st->beta, out);
        return 0;
    }
    default: snprintf(s->err, s->errlen, "operation %d was never prepared", st->op);
    }
    return NND_EXT_FAILED;
}

static void ex_release(void *state) {
    free(state);
}

/* ---- cache blobs --------------------------------------------------------------------------
 * A blob: a version, the state's parameters, and for each input j the offset of its
 * constant copy in the memory that follows (or -1), then that memory. Offsets, never
 * pointers: the blob is read back by another process, maybe after a restart. A blob
 * of another version is refused, so the daemon's load fails and the client compiles
 * again. */

#define BLOB_VERSION 1

typedef struct ex_blob {
    uint32_t version;
    int32_t op;
    ex_window w;
    float beta;
    int64_t constant_at[MAX_CONSTANTS]; /* in floats from memory[0], or -1 */
    uint64_t memory_bytes;
} ex_blob;

static size_t ex_serialize(const void *state, void *buf, size_t cap) {
    const ex_state *st = state;
    ex_blob b = {.version = BLOB_VERSION, .op = st->op, .w = st->w, .beta = st->beta};
    for (uint32_t j = 0; j < MAX_CONSTANTS; j++)
        b.constant_at[j] = st->constant[j] ? st->constant[j] - st->memory : -1;
    b.memory_bytes = st->memory_bytes;
    size_t need = sizeof b + b.memory_bytes;
    if (cap >= need) {
        memcpy(buf, &b, sizeof b);
        memcpy((char *)buf + sizeof b, st->memory, b.memory_bytes);
    }
    return need;
}

static void *ex_deserialize(const nnd_driver_step *s, const void *blob, size_t size) {
    ex_blob b;
    ex_state probe;
    if (size < sizeof b || !understand(s, &probe)) return NULL;
    memcpy(&b, blob, sizeof b);
    if (b.version != BLOB_VERSION || b.op != s->operation || b.memory_bytes != size - sizeof b)
        return NULL;
    ex_state *st = malloc(sizeof *st + b.memory_bytes);
    if (!st) return NULL;
    *st = probe;
    st->w = b.w;
    st->beta = b.beta;
    st->memory_bytes = b.memory_bytes;
    memcpy(st->memory, (const char *)blob + sizeof b, b.memory_bytes);
    for (uint32_t j = 0; j < MAX_CONSTANTS; j++) {
        const nnd_ext_operand *o = in(s, j);
        bool fits = b.constant_at[j] >= 0 && o &&
                    (uint64_t)b.constant_at[j] * sizeof(float) + o->length <= b.memory_bytes;
        if (b.constant_at[j] >= 0 && !fits) return free(st), NULL;
        st->constant[j] = fits ? st->memory + b.constant_at[j] : NULL;
    }
    return st;
}

NND_DRIVER_EXPORT = {
    .abi_version = NND_DRIVER_ABI_VERSION,
    .struct_size = sizeof(nnd_driver),
    .name = "nnd-example",
    .version = "example 1.0",
    .type = NND_DRIVER_TYPE_ACCELERATOR,
    .exec_time = 0.05f,
    .supports = ex_supports,
    .prepare = ex_prepare,
    .execute = ex_execute,
    .release = ex_release,
    .memory_allocate = ex_memory_allocate,
    .memory_free = ex_memory_free,
    .memory_read = ex_memory_read,
    .memory_write = ex_memory_write,
    .serialize = ex_serialize,
    .deserialize = ex_deserialize,
};
