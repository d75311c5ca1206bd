/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_buffer: driver-owned buffers, the memory domains a client reaches with Allocate,
 * BufferCopyTo, BufferCopyFrom and executions whose pools name a buffer
 * (daemon/binding/buffer.h). The input is
 *   u8 flags (bit 0: reference kernels only), section: a wire Nnd__Model (no pools),
 *   section: a wire Nnd__Allocate (every prepared_models entry names the one model),
 *   then the stream: up to MAX_STEPS steps, each a u8 kind (modulo 3):
 *   0 BufferCopyTo:   u8 rank (modulo 5), rank u32 dimensions, u32 bytes (modulo
 *                     FZ_MAX_POOL + 1), then those bytes;
 *   1 BufferCopyFrom: u8 rank (modulo 5), rank u32 dimensions, u32 bytes (likewise);
 *   2 Execute:        section: a wire Nnd__ExecutionRequest whose POOL_DRIVER_BUFFER pools
 *                     with token 1 name the buffer (other tokens stay unknown), then the
 *                     bytes of each other pool, as large as its size says (at most
 *                     FZ_MAX_POOL).
 * Each step goes through what the daemon's handler calls: srv_buffer_copy_in/_out over a
 * pool of exactly that many bytes, or srv_request_from_proto(), srv_buffers_bind(), the
 * run (again once after srv_buffers_regrow()) and srv_buffers_finish(). The buffer is
 * dropped at the end as the owner's Release does. Nothing may crash, leak or touch memory
 * outside the pools and the buffer. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/binding/buffer.h"
#include "daemon/clients/session.h"
#include "daemon/wire/convert.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_target.h"

#define MAX_POOLS    16
#define MAX_MODELS   8
#define MAX_STEPS    6
#define MODEL_HANDLE 1

static eng_prepared *prepare(fz_in ms) {
    Nnd__Model *m = nnd__model__unpack(NULL, ms.len, ms.p);
    if (!m) return NULL;
    eng_prepared *p = NULL;
    eng_model_desc d;
    char err[SCHEMA_ERR_LEN];
    if (srv_model_from_proto(m, NULL, 0, &d, err, sizeof err) == SCHEMA_OK) {
        if (eng_prepare(&d, &p, err, sizeof err) != SCHEMA_OK) p = NULL;
        srv_model_desc_clear(&d);
    }
    nnd__model__free_unpacked(m, NULL);
    return p;
}

/* A writable pool of exactly n bytes (malloc'd): from the stream, or zeros. */
static bool make_pool(fz_in *in, size_t n, bool from_stream, srv_pool *out) {
    uint8_t *b = calloc(1, n ? n : 1);
    if (!b) return false;
    if (from_stream) fz_bytes(in, b, n);
    *out = (srv_pool){.view = {.base = b, .size = n, .release = free, .ctx = b}, .writable = true};
    return true;
}

/* BufferCopyTo (to) or BufferCopyFrom. */
static void copy_step(srv_buffer *b, fz_in *in, bool to) {
    uint32_t rank = fz_u8(in) % 5, dims[4];
    for (uint32_t r = 0; r < rank; r++)
        dims[r] = fz_u32(in);
    size_t n = fz_u32(in) % (FZ_MAX_POOL + 1);
    srv_pool pool;
    if (!make_pool(in, n, to, &pool)) return;
    char err[SCHEMA_ERR_LEN];
    eng_output_shape shape;
    if (to)
        srv_buffer_copy_in(b, &pool, dims, rank, err, sizeof err);
    else
        srv_buffer_copy_out(b, &pool, dims, rank, &shape, err, sizeof err);
    srv_pool_release(&pool);
}

/* Runs p with the request's arguments bound as srv_bind() binds them. */
static void run_bound(const srv_session *s, const eng_prepared *p, const Nnd__ExecutionRequest *r,
                      const srv_pool *pools, size_t n_pools) {
    uint32_t n_in = eng_prepared_num_inputs(p), n_out = eng_prepared_num_outputs(p);
    eng_io *ins = calloc(n_in + 1, sizeof *ins), *outs = calloc(n_out + 1, sizeof *outs);
    eng_output_shape *shapes = calloc(n_out + 1, sizeof *shapes);
    eng_memory_view views[MAX_POOLS];
    for (size_t i = 0; i < n_pools; i++)
        views[i] = pools[i].view;
    char err[SCHEMA_ERR_LEN];
    srv_buffer_binding *bb = NULL;
    if (!ins || !outs || !shapes ||
        srv_request_from_proto(r, p, views, n_pools, ins, outs, err, sizeof err) != SCHEMA_OK ||
        srv_buffers_bind(s, MODEL_HANDLE, p, r, ins, outs, &bb, err, sizeof err) != SCHEMA_OK)
        goto out;
    schema_status st = SCHEMA_GENERAL_FAILURE;
    bool ran = false;
    eng_exec *e = fz_exec_affordable(p) ? eng_exec_create(p) : NULL;
    if (e) {
        eng_checkpoint loops = {.loop_timeout_ns = FZ_LOOP_TIMEOUT_NS};
        st = eng_exec_run(e, ins, outs, shapes, &loops, err, sizeof err);
        if (st == SCHEMA_OUTPUT_INSUFFICIENT_SIZE && srv_buffers_regrow(bb, shapes, outs))
            st = eng_exec_run(e, ins, outs, shapes, &loops, err, sizeof err);
        ran = true;
        eng_exec_free(e);
    }
    srv_buffers_finish(bb, ran, &st, shapes, err, sizeof err);
out:
    free(ins), free(outs), free(shapes);
}

/* A driver-buffer pool's view, as pool.c gives it: no bytes, a base that is not NULL. */
static const uint8_t driver_buffer_placeholder[1];

static void execute_step(const srv_session *s, const eng_prepared *p, srv_buffer *b, fz_in *in) {
    fz_in rs = fz_section(in);
    Nnd__ExecutionRequest *r = nnd__execution_request__unpack(NULL, rs.len, rs.p);
    if (!r) return;
    srv_pool pools[MAX_POOLS];
    size_t n = 0;
    bool ok = r->n_pools <= MAX_POOLS;
    for (; ok && n < r->n_pools; n++) {
        Nnd__MemoryPool *mp = r->pools[n];
        if (mp->kind == NND__POOL_KIND__POOL_DRIVER_BUFFER) {
            if (mp->token == 1) mp->token = srv_buffer_token(b);
            pools[n] = (srv_pool){
                .view = {.base = driver_buffer_placeholder},
                .driver_buffer = true,
                .writable = true,
            };
            continue;
        }
        ok = mp->size <= FZ_MAX_POOL && make_pool(in, mp->size, true, &pools[n]);
        if (!ok) break;
    }
    if (ok) run_bound(s, p, r, pools, n);
    srv_pools_release(pools, n);
    nnd__execution_request__free_unpacked(r, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_in in = {data, size};
    fz_set_reference_kernels(fz_u8(&in) & 1);
    fz_in ms = fz_section(&in), as = fz_section(&in);
    eng_prepared *p = prepare(ms);
    if (!p) return 0;
    Nnd__Allocate *a = nnd__allocate__unpack(NULL, as.len, as.p);
    srv_session s;
    srv_session_init(&s, -1, 1);
    srv_buffer *b = NULL;
    if (a && a->n_prepared_models <= MAX_MODELS) {
        srv_buffer_model models[MAX_MODELS];
        for (size_t i = 0; i < a->n_prepared_models; i++)
            models[i] = (srv_buffer_model){.handle = MODEL_HANDLE, .prepared = p};
        char err[SCHEMA_ERR_LEN];
        if (srv_buffer_allocate(&s, a, models, NULL, &b, err, sizeof err) != SCHEMA_OK) b = NULL;
    }
    for (int step = 0; b && step < MAX_STEPS && in.len; step++) {
        switch (fz_u8(&in) % 3) {
        case 0: copy_step(b, &in, true); break;
        case 1: copy_step(b, &in, false); break;
        default: execute_step(&s, p, b, &in); break;
        }
    }
    if (b) srv_buffer_drop(b);
    srv_session_clear(&s);
    if (a) nnd__allocate__free_unpacked(a, NULL);
    eng_prepared_free(p);
    return 0;
}
