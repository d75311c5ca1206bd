/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_common.c: see fuzz_common.h. */
#include "tests/fuzz/fuzz_common.h"

#include <stdlib.h>
#include <string.h>

fz_in fz_section(fz_in *in) {
    uint32_t n = fz_u32(in);
    if (n > in->len) n = (uint32_t)in->len;
    fz_in s = {in->p, n};
    in->p += n;
    in->len -= n;
    return s;
}

uint8_t fz_u8(fz_in *in) {
    uint8_t v = 0;
    fz_bytes(in, &v, 1);
    return v;
}

uint32_t fz_u32(fz_in *in) {
    uint8_t b[4];
    fz_bytes(in, b, 4);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

void fz_bytes(fz_in *in, void *dst, size_t n) {
    size_t k = n < in->len ? n : in->len;
    if (k) memcpy(dst, in->p, k);
    if (n > k) memset((uint8_t *)dst + k, 0, n - k);
    in->p += k;
    in->len -= k;
}

/* Bytes of a tensor of this type and shape, or SIZE_MAX past max. */
static size_t shape_bytes(int32_t type, uint32_t rank, const uint32_t *dims, size_t max) {
    size_t n = schema_type_size(type);
    for (uint32_t r = 0; r < rank; r++) {
        if (dims[r] && n > max / dims[r]) return SIZE_MAX;
        n *= dims[r];
    }
    return n > max ? SIZE_MAX : n;
}

static int dims_known(const eng_operand_desc *d) {
    if (!schema_type_is_tensor(d->type)) return 1;
    if (d->rank == 0) return 0;
    for (uint32_t r = 0; r < d->rank; r++)
        if (!d->dims[r]) return 0;
    return 1;
}

int fz_exec_affordable(const eng_prepared *p) {
    if (eng_prepared_arena_bytes(p) > FZ_MAX_ARENA) return 0;
    double flops = 0;
    for (uint32_t k = 0; k < eng_prepared_num_operations(p); k++) {
        eng_cost c = eng_prepared_step_cost(p, k);
        flops += c.flops + c.bytes;
    }
    return flops <= FZ_MAX_FLOPS;
}

typedef struct stop_at {
    uint32_t step;
    int fired;
} stop_at;

static schema_status checkpoint(void *ctx, uint32_t next_op) {
    stop_at *s = ctx;
    if (s->fired || next_op != s->step) return SCHEMA_OK;
    s->fired = 1;
    return SCHEMA_MISSED_DEADLINE_TRANSIENT;
}

void fz_exec_bound(const eng_prepared *p, const eng_io *inputs, const eng_io *outputs) {
    uint32_t n_out = eng_prepared_num_outputs(p);
    eng_exec *e = eng_exec_create(p);
    eng_io *outs = calloc(n_out + 1, sizeof *outs);
    void **grown = calloc(n_out + 1, sizeof *grown);
    eng_output_shape *shapes = calloc(n_out + 1, sizeof *shapes);
    if (!e || !outs || !grown || !shapes) goto out;
    memcpy(outs, outputs, sizeof *outs * n_out);
    char err[SCHEMA_ERR_LEN];
    /* First run: stopped by a checkpoint half way and resumed, as a scheduler does. */
    stop_at stop = {eng_prepared_num_operations(p) / 2, 0};
    eng_checkpoint cp = {.check = checkpoint, .ctx = &stop, .loop_timeout_ns = FZ_LOOP_TIMEOUT_NS};
    eng_checkpoint loops = {.loop_timeout_ns = FZ_LOOP_TIMEOUT_NS};
    schema_status s = eng_exec_run(e, inputs, outs, shapes, &cp, err, sizeof err);
    if (s == SCHEMA_MISSED_DEADLINE_TRANSIENT && stop.fired)
        s = eng_exec_resume(e, stop.step, shapes, &loops, err, sizeof err);
    if (s != SCHEMA_OUTPUT_INSUFFICIENT_SIZE) goto out;
    /* Second run with every short output grown to what the shapes say it needs. */
    size_t total = 0;
    for (uint32_t i = 0; i < n_out; i++) {
        if (shapes[i].sufficient) continue;
        const eng_operand_desc *d = eng_prepared_output(p, i);
        size_t need = shape_bytes(d->type, shapes[i].rank, shapes[i].dims, FZ_MAX_IO_BYTES);
        if (need == SIZE_MAX || (total += need) > FZ_MAX_IO_BYTES) goto out;
        grown[i] = calloc(1, need ? need : 1);
        if (!grown[i]) goto out;
        outs[i].data = grown[i];
        outs[i].length = need;
    }
    eng_exec_run(e, inputs, outs, shapes, &loops, err, sizeof err);
out:
    for (uint32_t i = 0; grown && i < n_out; i++)
        free(grown[i]);
    free(grown);
    free(outs);
    free(shapes);
    eng_exec_free(e);
}

void fz_exec_prepared(const eng_prepared *p, fz_in *stream) {
    if (!fz_exec_affordable(p)) return;
    uint32_t n_in = eng_prepared_num_inputs(p), n_out = eng_prepared_num_outputs(p);
    eng_io *ins = calloc(n_in + 1, sizeof *ins), *outs = calloc(n_out + 1, sizeof *outs);
    void **bufs = calloc((size_t)n_in + n_out + 1, sizeof *bufs);
    if (!ins || !outs || !bufs) goto out;
    size_t total = 0;
    for (uint32_t i = 0; i < n_in; i++) {
        const eng_operand_desc *d = eng_prepared_input(p, i);
        eng_io *io = &ins[i];
        uint8_t mode = fz_u8(stream);
        if (mode & 1) {
            io->has_no_value = true;
            continue;
        }
        uint32_t rank = 0, dims[ENG_MAX_RANK] = {0};
        if (mode & 2) {
            rank = fz_u8(stream) % (ENG_MAX_RANK + 1);
            for (uint32_t r = 0; r < rank; r++)
                dims[r] = fz_u32(stream);
            io->rank = rank;
        } else if (schema_type_is_tensor(d->type)) {
            rank = d->rank ? d->rank : 1u + (mode >> 2) % 4u;
            for (uint32_t r = 0; r < rank; r++)
                dims[r] = d->rank && d->dims[r] ? d->dims[r] : 1u + fz_u8(stream) % 8u;
            if (!dims_known(d)) io->rank = rank;
        }
        memcpy(io->dims, dims, sizeof dims);
        if (!rank && d->rank) rank = d->rank, memcpy(dims, d->dims, sizeof dims);
        size_t bytes = shape_bytes(d->type, rank, dims, FZ_MAX_IO_BYTES);
        if (bytes == SIZE_MAX || (total += bytes) > FZ_MAX_IO_BYTES) goto out;
        if (!(bufs[i] = malloc(bytes ? bytes : 1))) goto out;
        fz_bytes(stream, bufs[i], bytes);
        io->data = bufs[i];
        io->length = bytes;
    }
    total = 0;
    for (uint32_t i = 0; i < n_out; i++) {
        const eng_operand_desc *d = eng_prepared_output(p, i);
        size_t bytes =
            dims_known(d) ? shape_bytes(d->type, d->rank, d->dims, FZ_MAX_IO_BYTES) : 256;
        if (bytes == SIZE_MAX || (total += bytes) > FZ_MAX_IO_BYTES) goto out;
        if (!(bufs[n_in + i] = calloc(1, bytes ? bytes : 1))) goto out;
        outs[i].data = bufs[n_in + i];
        outs[i].length = bytes;
    }
    fz_exec_bound(p, ins, outs);
out:
    for (size_t i = 0; bufs && i < (size_t)n_in + n_out; i++)
        free(bufs[i]);
    free(bufs);
    free(ins);
    free(outs);
}

void fz_put(fz_buf *b, const void *v, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) abort();
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, v, n);
    b->len += n;
}

void fz_put_u8(fz_buf *b, uint8_t v) {
    fz_put(b, &v, 1);
}

void fz_put_u32(fz_buf *b, uint32_t v) {
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    fz_put(b, x, 4);
}

void fz_put_section(fz_buf *b, const void *v, size_t n) {
    fz_put_u32(b, (uint32_t)n);
    fz_put(b, v, n);
}
