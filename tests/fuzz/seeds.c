/* SPDX-License-Identifier: Apache-2.0 */
/* nnd-fuzz-seeds: seed corpora for the fuzz targets from the conformance vectors.
 * Usage: nnd-fuzz-seeds [--per-file N] [--max-bytes B] CONFORMANCE_PATH... OUT_DIR
 * Writes OUT_DIR/{frame,model,request,cache,burst,buffer,host}/ in each target's input format (see
 * the fuzz_*.c headers): the first N cases (default 3) of each vector file, first example, seeds of
 * at most B bytes (default 65536). Corpora are generated at fuzz time into the build tree, never
 * committed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tools/conformance/conformance.h"
#include "driverhost/wire_reply.h"
#include "driverhost/wire_request.h"
#include "daemon/wire/convert.h"
#include "proto/frame.h"
#include "tests/fuzz/fuzz_common.h"
#include "storage/serialize.h"

static size_t max_bytes = 65536;
#define N_TARGETS 7
#define T_HOST    6
static size_t written[N_TARGETS];
static const char *const targets[N_TARGETS] = {"frame", "model",  "request", "cache",
                                               "burst", "buffer", "host"};
static const char *out_dir;

static void save(int target, const char *name, const fz_buf *b) {
    if (b->len > max_bytes) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s/%s", out_dir, targets[target], name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->p, 1, b->len, f) != b->len || fclose(f) != 0) {
        fprintf(stderr, "nnd-fuzz-seeds: cannot write %s\n", path);
        exit(1);
    }
    written[target]++;
}

static void put_packed(fz_buf *b, const ProtobufCMessage *m) {
    size_t n = protobuf_c_message_get_packed_size(m);
    uint8_t *p = malloc(n + 1);
    if (!p) abort();
    protobuf_c_message_pack(m, p);
    fz_put_section(b, p, n);
    free(p);
}

static const tool_case_tensor *example_input(const tool_case_example *ex, uint32_t i) {
    for (size_t k = 0; k < ex->n_inputs; k++)
        if (ex->inputs[k].index == i) return &ex->inputs[k];
    return NULL;
}

/* The execution stream of fuzz_common.h for the example's inputs. */
static void put_stream(fz_buf *b, const tool_case *c, const tool_case_example *ex) {
    for (uint32_t i = 0; i < c->model->main->n_input_indexes; i++) {
        const tool_case_tensor *t = example_input(ex, i);
        if (!t || (!t->data && t->count == 0)) {
            fz_put_u8(b, 1);
            continue;
        }
        fz_put_u8(b, 2);
        fz_put_u8(b, (uint8_t)t->rank);
        for (uint32_t r = 0; r < t->rank; r++)
            fz_put_u32(b, t->dims[r]);
        fz_put(b, t->data, t->bytes);
    }
}

/* An ExecutionRequest with every input and output in pool 0; pool receives its bytes. */
static Nnd__ExecutionRequest *make_request(const tool_case *c, const tool_case_example *ex,
                                           fz_buf *pool) {
    const Nnd__Subgraph *g = c->model->main;
    Nnd__ExecutionRequest *r = calloc(1, sizeof *r);
    nnd__execution_request__init(r);
    r->n_inputs = g->n_input_indexes;
    r->n_outputs = g->n_output_indexes;
    r->inputs = calloc(r->n_inputs + 1, sizeof *r->inputs);
    r->outputs = calloc(r->n_outputs + 1, sizeof *r->outputs);
    for (size_t k = 0; k < r->n_inputs + r->n_outputs; k++) {
        bool in = k < r->n_inputs;
        uint32_t i = (uint32_t)(in ? k : k - r->n_inputs);
        Nnd__RequestArgument *a = calloc(1, sizeof *a);
        nnd__request_argument__init(a);
        (in ? r->inputs : r->outputs)[i] = a;
        const tool_case_tensor *t = NULL;
        if (in) {
            t = example_input(ex, i);
        } else {
            for (size_t j = 0; j < ex->n_outputs; j++)
                if (ex->outputs[j].index == i) t = &ex->outputs[j];
        }
        if (in && (!t || (!t->data && t->count == 0))) {
            a->has_no_value = true;
            continue;
        }
        a->location = calloc(1, sizeof *a->location);
        nnd__data_location__init(a->location);
        a->location->offset = pool->len;
        a->location->length = t ? t->bytes : 0;
        if (t && in) {
            a->n_dimensions = t->rank;
            a->dimensions = calloc(t->rank + 1, sizeof(uint32_t));
            memcpy(a->dimensions, t->dims, sizeof(uint32_t) * t->rank);
            fz_put(pool, t->data, t->bytes);
        } else if (t) {
            uint8_t *zero = calloc(1, t->bytes + 1);
            fz_put(pool, zero, t->bytes);
            free(zero);
        }
    }
    r->n_pools = 1;
    r->pools = calloc(1, sizeof *r->pools);
    r->pools[0] = calloc(1, sizeof *r->pools[0]);
    nnd__memory_pool__init(r->pools[0]);
    r->pools[0]->size = pool->len;
    return r;
}

/* A frame seed: the message inline, or spilled into a sealed memfd (fd kind 0). */
static void save_frame(const char *name, const ProtobufCMessage *m, bool reply, size_t extra_fds) {
    fz_buf b = {0};
    char err[256];
    proto_packed p;
    int placeholders[4] = {0}; /* the extra fds come first; only their number matters */
    if (proto_frame_pack(m, placeholders, extra_fds, &p, err, sizeof err) < 0) return;
    bool spilled = p.spill_fd >= 0;
    fz_put_u8(&b, reply ? 1 : 0);
    fz_put_u8(&b, (uint8_t)(extra_fds + spilled));
    for (size_t i = 0; i < extra_fds + spilled; i++)
        fz_put_u8(&b, 0);
    fz_put_section(&b, proto_packed_bytes(&p), p.len);
    for (size_t i = 0; i < extra_fds; i++)
        fz_put_section(&b, "pool", 4);
    if (spilled) put_packed(&b, m);
    proto_packed_clear(&p);
    save(0, name, &b);
    free(b.p);
}

/* A vector this build cannot read (an operation it does not know yet, say) seeds nothing. */
static void note_skip(void *ctx, const char *file, const char *case_name, const char *reason) {
    (void)ctx;
    fprintf(stderr, "nnd-fuzz-seeds: skipped %s%s%s: %s\n", file, case_name ? ": case " : "",
            case_name ? case_name : "", reason);
}

/* Burst channel seeds (fuzz_burst.c): r as a BurstExecute in the request area, its pool
 * named as burst slot 1 (or, registered, as the target's registered memory, token 1)
 * holding the pool's bytes; one take, then the same with a racing writer rewriting the
 * request's length and first bytes. */
static void save_burst(const char *name, Nnd__ExecutionRequest *r, const fz_buf *pool,
                       bool registered) {
    Nnd__MemoryPool *mp = r->pools[0];
    Nnd__PoolKind kind = mp->kind;
    mp->kind = registered ? NND__POOL_KIND__POOL_REGISTERED : NND__POOL_KIND__POOL_BURST_SLOT;
    mp->slot = registered ? 0 : 1;
    mp->token = registered ? 1 : 0;
    Nnd__BurstExecute x = NND__BURST_EXECUTE__INIT;
    x.burst = 0x6275727374000001ull; /* fuzz_burst.c's BURST_HANDLE */
    x.request = r;
    Nnd__Request rq = NND__REQUEST__INIT;
    rq.id = 3;
    rq.call_case = NND__REQUEST__CALL_BURST_EXECUTE;
    rq.burst_execute = &x;
    size_t n = protobuf_c_message_get_packed_size(&rq.base);
    uint8_t *packed = malloc(n + 1);
    if (!packed) abort();
    protobuf_c_message_pack(&rq.base, packed);
    for (int racing = 0; racing < 2; racing++) {
        fz_buf b = {0}, w = {0};
        if (racing) { /* the length word, then the first bytes of the request area */
            fz_put(&w, &(uint16_t){8 * 4 + 4}, 2);
            fz_put_u8(&w, 4);
            fz_put_u32(&w, (uint32_t)n / 2);
            fz_put(&w, &(uint16_t){256}, 2);
            fz_put_u8(&w, 2);
            fz_put(&w, "\xff\x01", 2);
        }
        fz_put_u8(&b, (uint8_t)racing);
        fz_put_section(&b, packed, n);
        fz_put_section(&b, w.p, w.len);
        fz_put_section(&b, pool->p, pool->len);
        fz_put_u32(&b, 1);
        fz_put_u32(&b, (uint32_t)n);
        fz_put_u32(&b, 0);
        fz_put_section(&b, NULL, 0);
        char fname[600];
        snprintf(fname, sizeof fname, "%s%s%s", name, registered ? "-registered" : "",
                 racing ? "-racing" : "");
        save(4, fname, &b);
        free(b.p);
        free(w.p);
    }
    free(packed);
    mp->kind = kind;
    mp->slot = 0;
    mp->token = 0;
}

/* A buffer seed (fuzz_buffer.c): a buffer for input 0's role, filled from the example
 * (BufferCopyTo), an execution reading input 0 from it (its argument moved to a
 * POOL_DRIVER_BUFFER pool with token 1), and a BufferCopyFrom of it. */
static void save_buffer(const char *name, const tool_case *c, const tool_case_example *ex,
                        Nnd__ExecutionRequest *r, const fz_buf *pool) {
    const tool_case_tensor *t = example_input(ex, 0);
    if (!t || !t->data || !r->n_inputs || !r->inputs[0]->location) return;
    uint64_t model = 1;
    Nnd__BufferRole role = NND__BUFFER_ROLE__INIT, *roles[1] = {&role};
    Nnd__Allocate a = NND__ALLOCATE__INIT;
    a.n_prepared_models = 1;
    a.prepared_models = &model;
    a.n_input_roles = 1;
    a.input_roles = roles;
    fz_buf b = {0};
    fz_put_u8(&b, 0);
    put_packed(&b, &c->model->base);
    put_packed(&b, &a.base);
    fz_put_u8(&b, 0); /* BufferCopyTo */
    fz_put_u8(&b, (uint8_t)t->rank);
    for (uint32_t k = 0; k < t->rank; k++)
        fz_put_u32(&b, t->dims[k]);
    fz_put_u32(&b, (uint32_t)t->bytes);
    fz_put(&b, t->data, t->bytes);
    fz_put_u8(&b, 2); /* Execute */
    Nnd__MemoryPool buffer = NND__MEMORY_POOL__INIT, **pools = r->pools;
    buffer.kind = NND__POOL_KIND__POOL_DRIVER_BUFFER;
    buffer.token = 1;
    Nnd__MemoryPool *two[2] = {pools[0], &buffer};
    Nnd__DataLocation *loc = r->inputs[0]->location, none = NND__DATA_LOCATION__INIT;
    none.pool_index = 1;
    r->inputs[0]->location = &none;
    r->pools = two;
    r->n_pools = 2;
    put_packed(&b, &r->base);
    r->pools = pools;
    r->n_pools = 1;
    r->inputs[0]->location = loc;
    fz_put(&b, pool->p, pool->len);
    fz_put_u8(&b, 1); /* BufferCopyFrom */
    fz_put_u8(&b, 0);
    fz_put_u32(&b, (uint32_t)t->bytes);
    save(5, name, &b);
    free(b.p);
}

static void seeds_of(const tool_case *c, size_t n) {
    if (!c->n_examples) return;
    const tool_case_example *ex = &c->examples[0];
    const char *base = strrchr(c->file, '/') ? strrchr(c->file, '/') + 1 : c->file;
    char name[512];
    snprintf(name, sizeof name, "%.*s-%zu", (int)strcspn(base, "."), base, n);

    fz_buf b = {0};
    fz_put_u8(&b, 0);
    put_packed(&b, &c->model->base);
    put_stream(&b, c, ex);
    save(1, name, &b);

    fz_buf pool = {0};
    Nnd__ExecutionRequest *r = make_request(c, ex, &pool);
    b.len = 0;
    fz_put_u8(&b, 0);
    put_packed(&b, &c->model->base);
    put_packed(&b, &r->base);
    fz_put(&b, pool.p, pool.len);
    save(2, name, &b);
    save_buffer(name, c, ex, r, &pool);

    eng_model_desc d;
    char err[SCHEMA_ERR_LEN];
    if (srv_model_from_proto(c->model, NULL, 0, &d, err, sizeof err) == SCHEMA_OK) {
        store_buf mc, dc;
        if (store_ser_encode(&d, 0, "fuzz", &mc, &dc, err, sizeof err) == SCHEMA_OK) {
            b.len = 0;
            fz_put_u8(&b, 0);
            fz_put_section(&b, mc.p, mc.len);
            fz_put_section(&b, dc.p, dc.len);
            put_stream(&b, c, ex);
            save(3, name, &b);
            store_buf_free(&mc);
            store_buf_free(&dc);
        }
        srv_model_desc_clear(&d);
    }

    if (n == 0) { /* frames: one PrepareModel and one Execute per vector file */
        Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
        pm.model = c->model;
        Nnd__Request rq = NND__REQUEST__INIT;
        rq.id = 1;
        rq.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
        rq.prepare_model = &pm;
        char fname[600];
        snprintf(fname, sizeof fname, "%s-prepare", name);
        save_frame(fname, &rq.base, false, 0);
        Nnd__Execute exe = NND__EXECUTE__INIT;
        exe.prepared_model = 1;
        exe.request = r;
        rq.call_case = NND__REQUEST__CALL_EXECUTE;
        rq.execute = &exe;
        snprintf(fname, sizeof fname, "%s-execute", name);
        save_frame(fname, &rq.base, false, 1);
        save_burst(name, r, &pool, false);
        save_burst(name, r, &pool, true);
    }
    nnd__execution_request__free_unpacked(r, NULL);
    free(pool.p);
    free(b.p);
}

/* ---- driver host protocol seeds (fuzz_host.c): one valid message of each kind ---- */

/* fuzz_host.c's kinds. */
enum {
    H_HELLO,
    H_SUPPORTED,
    H_PREPARED,
    H_EXECUTE,
    H_ALLOCATE,
    H_SAVED,
    H_COPY,
    H_MODEL,
    H_DATAGRAM,
    H_REGIONS,
    H_PREPARE_REQ,
    H_ALLOCATE_REQ,
    H_EXEC_REQ,
    H_COPY_REQ,
    H_SAVE_REQ
};

static void save_host(const char *name, uint8_t kind, const void *pre, size_t n_pre,
                      const dh_wbuf *w) {
    fz_buf b = {0};
    fz_put_u8(&b, kind);
    fz_put(&b, pre, n_pre);
    fz_put(&b, w->p, w->len);
    save(T_HOST, name, &b);
    free(b.p);
}

/* A reply: status and message, then what put_part writes. */
static void host_reply_seed(const char *name, uint8_t kind, const void *pre, size_t n_pre,
                            int status, const char *err, const dh_wbuf *part) {
    dh_wbuf w = {0};
    dh_reply_head_put(&w, status, err);
    if (part) dh_put(&w, part->p, part->len);
    save_host(name, kind, pre, n_pre, &w);
    dh_wbuf_free(&w);
}

/* A partition with its constants inline: ADD of an input and a constant, and a per-channel
 * quantized constant. */
static void host_model(dh_wbuf *w) {
    static const float scales[2] = {0.5f, 0.25f};
    static const int8_t inline_data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const float addend[4] = {1.0f, -2.0f, 0.5f, 4.0f};
    nnd_driver_operand o[4];
    memset(o, 0, sizeof o);
    for (int i = 0; i < 4; i++)
        o[i].type = 3 /* TENSOR_FLOAT32 */, o[i].rank = 2, o[i].dims[0] = 2, o[i].dims[1] = 2;
    o[1].lifetime = 2 /* CONSTANT_COPY */, o[1].length = 16;
    o[1].data = addend;
    o[3].type = 11, o[3].lifetime = 2, o[3].data = inline_data, o[3].length = sizeof inline_data;
    o[3].n_channel_scales = 2, o[3].channel_scales = scales;
    uint32_t ins[3] = {0, 1, 3}, outs[1] = {2}, model_in[1] = {0};
    nnd_driver_operation op = {
        .type = 0 /* ADD */, .n_inputs = 3, .n_outputs = 1, .inputs = ins, .outputs = outs};
    nnd_driver_model m = {.n_operands = 4,
                          .operands = o,
                          .n_operations = 1,
                          .operations = &op,
                          .n_inputs = 1,
                          .inputs = model_in,
                          .n_outputs = 1,
                          .outputs = outs};
    dh_put_model(w, &m, NULL, NULL);
}

static bool put_place(void *ctx, const void *data, size_t length, uint32_t *region,
                      uint64_t *offset) {
    (void)ctx, (void)length;
    if ((uintptr_t)data != 0x1000) return false;
    *region = 1, *offset = 64;
    return true;
}

static void host_seeds(void) {
    dh_wbuf part = {0};
    static dh_hello hello;
    hello.has = DH_HAS_EXECUTE | DH_HAS_MEMORY | DH_HAS_CACHE, hello.n_devices = 2;
    snprintf(hello.devices[0].name, sizeof hello.devices[0].name, "fuzz-npu");
    snprintf(hello.devices[1].name, sizeof hello.devices[1].name, "fuzz-dsp");
    snprintf(hello.devices[0].version, sizeof hello.devices[0].version, "1.0");
    dh_hello_put(&part, &hello);
    host_reply_seed("hello", H_HELLO, NULL, 0, 0, "", &part);
    host_reply_seed("hello-refused", H_HELLO, NULL, 0, 4, "no device found", NULL);
    dh_wbuf_free(&part);
    bool sup[5] = {true, false, true, true, false};
    dh_supported_put(&part, sup, 5);
    uint8_t n_ops[2] = {5, 0};
    host_reply_seed("supported", H_SUPPORTED, n_ops, 2, 0, "", &part);
    dh_wbuf_free(&part);
    dh_prepared_put(&part, 0x7f0012345670ull, 1u << 20);
    host_reply_seed("prepared", H_PREPARED, NULL, 0, 0, "", &part);
    dh_wbuf_free(&part);
    nnd_driver_arg outs[2] = {{.rank = 2, .dims = {1, 4}}, {.rank = 4, .dims = {1, 8, 8, 3}}};
    dh_exec_reply_put(&part, 1200, 3400, outs, 2);
    uint8_t n_out = 2;
    host_reply_seed("executed", H_EXECUTE, &n_out, 1, 0, "", &part);
    host_reply_seed("execute-short", H_EXECUTE, &n_out, 1, 7 /* OUTPUT_INSUFFICIENT_SIZE */,
                    "output 1 too small", &part);
    dh_wbuf_free(&part);
    dh_allocated_put(&part, 3);
    host_reply_seed("allocated", H_ALLOCATE, NULL, 0, 0, "", &part);
    dh_wbuf_free(&part);
    dh_saved_put(&part, 4096);
    host_reply_seed("saved", H_SAVED, NULL, 0, 0, "", &part);
    dh_wbuf_free(&part);
    host_reply_seed("copied", H_COPY, NULL, 0, 0, "", NULL);
    host_model(&part);
    save_host("model-inline", H_MODEL, NULL, 0, &part);
    dh_wbuf_free(&part);
    /* A partition with a constant in region 1 (fuzz_host.c's regions, at offset 64). */
    {
        dh_wbuf w = {0};
        static const float scales[2] = {0.5f, 0.25f};
        nnd_driver_operand o[2];
        memset(o, 0, sizeof o);
        o[0].type = 3, o[0].rank = 1, o[0].dims[0] = 4;
        o[1] = o[0];
        o[1].lifetime = 2, o[1].data = (const void *)(uintptr_t)0x1000, o[1].length = 16;
        o[1].n_channel_scales = 2, o[1].channel_scales = scales;
        uint32_t ins[2] = {0, 1}, outs[1] = {0};
        nnd_driver_operation op = {.n_inputs = 2, .n_outputs = 1, .inputs = ins, .outputs = outs};
        nnd_driver_model m = {.n_operands = 2,
                              .operands = o,
                              .n_operations = 1,
                              .operations = &op,
                              .n_inputs = 1,
                              .inputs = ins,
                              .n_outputs = 1,
                              .outputs = outs,
                              .relaxed = true};
        dh_put_model(&w, &m, put_place, NULL);
        save_host("model-region", H_MODEL, NULL, 0, &w);
        dh_wbuf_free(&w);
    }
    /* A datagram: header and inline body (a copy's reply), then with a staging memfd. */
    {
        dh_wbuf body = {0};
        dh_reply_head_put(&body, 0, "");
        dh_msg_header hd = {.type = DH_MSG_REPLY, .call = 5, .body_len = body.len};
        dh_wbuf w = {0};
        dh_put(&w, &hd, sizeof hd);
        dh_put(&w, body.p, body.len);
        uint8_t pre[3] = {0, 0, 0};
        save_host("datagram", H_DATAGRAM, pre, 3, &w);
        ((dh_msg_header *)w.p)->flags = DH_FLAG_STAGING;
        pre[0] = 1, pre[2] = 16; /* one memfd of 4 KiB */
        save_host("datagram-staging", H_DATAGRAM, pre, 3, &w);
        hd.flags = DH_FLAG_BODY_FD, hd.body_len = 64;
        dh_wbuf_free(&w);
        dh_put(&w, &hd, sizeof hd);
        save_host("datagram-body-fd", H_DATAGRAM, pre, 3, &w);
        dh_wbuf_free(&w);
        dh_wbuf_free(&body);
    }
    /* The proxy's calls: a prepare and a cache_load with their partition, an allocate,
     * an execution with an argument in region 1, one staged, one in device memory, a
     * copy and a cache_save. */
    {
        nnd_driver_prepare_args args = {.deadline_ns = NND_DRIVER_NO_DEADLINE};
        static const uint8_t blob[32] = {1, 2, 3};
        nnd_driver_blob blobs[2] = {{blob, sizeof blob}, {blob, 7}};
        for (uint8_t load = 0; load < 2; load++) {
            dh_wbuf w = {0};
            dh_prepare_req_put(&w, 0, &args, load, blobs, 2);
            host_model(&w);
            save_host(load ? "cache-load-req" : "prepare-req", H_PREPARE_REQ, &load, 1, &w);
            dh_wbuf_free(&w);
        }
        nnd_driver_buffer_role roles[2] = {{.index = 0, .frequency = 1.0f},
                                           {.is_output = true, .index = 1, .frequency = 0.5f}};
        nnd_driver_buffer_desc desc = {.operand = {.type = 3, .rank = 2, .dims = {4, 4}},
                                       .bytes = 64,
                                       .n_roles = 2,
                                       .roles = roles};
        uint64_t remotes[2] = {0x7f0012345670ull, 0x7f0012345670ull};
        dh_wbuf w = {0};
        dh_allocate_req_put(&w, 1, &desc, remotes);
        save_host("allocate-req", H_ALLOCATE_REQ, NULL, 0, &w);
        dh_wbuf_free(&w);
        dh_exec_head head = {.prepared = 0x7f0012345670ull,
                             .n_inputs = 2,
                             .n_outputs = 1,
                             .measure = 1,
                             .deadline_ns = NND_DRIVER_NO_DEADLINE};
        dh_arg a[3] = {
            {.region = 1, .rank = 2, .offset = 128, .length = 64, .dims = {4, 4}},
            {.region = DH_REGION_STAGING, .rank = 1, .offset = 0, .length = 16, .dims = {4}},
            {.region = DH_REGION_NONE, .rank = 2, .length = 64, .memory = 3, .dims = {4, 4}}};
        dh_put(&w, &head, sizeof head);
        dh_put(&w, a, sizeof a);
        save_host("execute-req", H_EXEC_REQ, NULL, 0, &w);
        dh_wbuf_free(&w);
        dh_copy_req_put(&w, 0, 3, 16, &a[1]);
        save_host("copy-req", H_COPY_REQ, NULL, 0, &w);
        dh_wbuf_free(&w);
        dh_save_req_put(&w, 0x7f0012345670ull, 0, 4096, &a[0]);
        save_host("cache-save-req", H_SAVE_REQ, NULL, 0, &w);
        dh_wbuf_free(&w);
    }
    /* Two region introductions. */
    {
        dh_region_intro in[2] = {{.id = 7, .writable = 1, .file_offset = 0, .length = 4096},
                                 {.id = 8, .writable = 0, .file_offset = 4096 + 8, .length = 100}};
        dh_wbuf w = {0};
        dh_put(&w, in, sizeof in);
        save_host("regions", H_REGIONS, NULL, 0, &w);
        dh_wbuf_free(&w);
    }
}

static void frame_basics(void) {
    Nnd__Hello hello = NND__HELLO__INIT;
    hello.protocol_version = PROTO_PROTOCOL_VERSION;
    hello.client_name = "fuzz";
    Nnd__Request rq = NND__REQUEST__INIT;
    rq.id = 7;
    rq.call_case = NND__REQUEST__CALL_HELLO;
    rq.hello = &hello;
    save_frame("hello", &rq.base, false, 0);
    Nnd__Release rel = NND__RELEASE__INIT;
    rel.handle = 42;
    rq.call_case = NND__REQUEST__CALL_RELEASE;
    rq.release = &rel;
    save_frame("release", &rq.base, false, 0);
    Nnd__ExecuteFenced ef = NND__EXECUTE_FENCED__INIT;
    uint32_t wait[2] = {0, 1};
    ef.n_wait_for_fds = 2;
    ef.wait_for_fds = wait;
    rq.call_case = NND__REQUEST__CALL_EXECUTE_FENCED;
    rq.execute_fenced = &ef;
    save_frame("fenced", &rq.base, false, 2);
    Nnd__Reply rp = NND__REPLY__INIT;
    rp.id = 9;
    rp.status = NND__ERROR_STATUS__INVALID_ARGUMENT;
    rp.message = "operand 3: rank 9 over the limit";
    save_frame("reply-error", &rp.base, true, 0);
    Nnd__OutputShape sh = NND__OUTPUT_SHAPE__INIT, *shp = &sh;
    uint32_t dims[3] = {1, 2, 3};
    sh.n_dimensions = 3;
    sh.dimensions = dims;
    sh.is_sufficient = true;
    Nnd__ExecuteReply er = NND__EXECUTE_REPLY__INIT;
    er.n_output_shapes = 1;
    er.output_shapes = &shp;
    rp.status = NND__ERROR_STATUS__NONE;
    rp.message = "";
    rp.result_case = NND__REPLY__RESULT_EXECUTED;
    rp.executed = &er;
    save_frame("reply-executed", &rp.base, true, 0);
}

int main(int argc, char **argv) {
    size_t per_file = 3;
    int first = 1;
    for (; first < argc - 1 && argv[first][0] == '-'; first += 2) {
        if (strcmp(argv[first], "--per-file") == 0)
            per_file = strtoul(argv[first + 1], NULL, 10);
        else if (strcmp(argv[first], "--max-bytes") == 0)
            max_bytes = strtoul(argv[first + 1], NULL, 10);
        else
            break;
    }
    if (argc - first < 2) {
        fprintf(stderr, "usage: nnd-fuzz-seeds [--per-file N] [--max-bytes B] CONFORMANCE_PATH... "
                        "OUT_DIR\n");
        return 2;
    }
    out_dir = argv[argc - 1];
    mkdir(out_dir, 0777);
    for (int t = 0; t < N_TARGETS; t++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", out_dir, targets[t]);
        if (mkdir(path, 0777) < 0 && errno != EEXIST) {
            perror(path);
            return 1;
        }
    }
    frame_basics();
    host_seeds();
    for (int a = first; a < argc - 1; a++) {
        tool_case *cases = NULL;
        size_t n = 0;
        char err[512];
        if (tool_cases_load(argv[a], &cases, &n, note_skip, NULL, err, sizeof err) < 0) {
            fprintf(stderr, "nnd-fuzz-seeds: %s\n", err);
            tool_cases_free(cases, n);
            return 1;
        }
        for (size_t i = 0, k = 0; i < n; i++) {
            k = i && strcmp(cases[i].file, cases[i - 1].file) == 0 ? k + 1 : 0;
            if (k < per_file) seeds_of(&cases[i], k);
        }
        tool_cases_free(cases, n);
    }
    printf("nnd-fuzz-seeds: %zu frame, %zu model, %zu request, %zu cache, %zu burst, %zu buffer, "
           "%zu host seeds in %s\n",
           written[0], written[1], written[2], written[3], written[4], written[5], written[6],
           out_dir);
    return 0;
}
