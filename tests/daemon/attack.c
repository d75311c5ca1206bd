/* SPDX-License-Identifier: Apache-2.0 */
/* attack.c: the hostile clients of test_isolation. See attack.h. */
#include "tests/daemon/attack.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/frame.h"
#include "tests/support/qos_models.h"
#include "tests/support/wire.h"

typedef struct tally {
    const char *name;
    double end, hard_end;
    /* Progress an attack needs before it may stop at `end` (a busy machine makes each
     * request slow): a refusal, and this many requests; past hard_end it stops anyway. */
    bool want_refusal;
    unsigned long want_requests;
    unsigned long requests, refused;
    unsigned printed[32]; /* refusals printed per status */
} tally;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool running(const tally *t) {
    double now = now_s();
    bool short_of_goal = (t->want_refusal && !t->refused) || t->requests < t->want_requests;
    return now < t->end || (short_of_goal && now < t->hard_end);
}

static const char *status_name(int st) {
    switch (st) {
    case NND__ERROR_STATUS__NONE: return "NONE";
    case NND__ERROR_STATUS__GENERAL_FAILURE: return "GENERAL_FAILURE";
    case NND__ERROR_STATUS__INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT: return "RESOURCE_EXHAUSTED_TRANSIENT";
    case NND__ERROR_STATUS__RESOURCE_EXHAUSTED_PERSISTENT: return "RESOURCE_EXHAUSTED_PERSISTENT";
    default: return "OTHER";
    }
}

/* Counts a reply (NULL: none came) and prints the first refusals of each status. Returns
 * its status, or -1 without a reply. */
static int note(tally *t, Nnd__Reply *r) {
    t->requests++;
    if (!r) return -1;
    int st = (int)r->status;
    if (st != NND__ERROR_STATUS__NONE) {
        t->refused++;
        if (st >= 0 && st < 32 && t->printed[st]++ < 3)
            printf("refused %s %s\n", status_name(st), r->message ? r->message : "");
    }
    wire_free(r);
    return st;
}

static int connect_to(const char *path) {
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof sa) < 0) {
        if (s >= 0) close(s);
        return -1;
    }
    return s;
}

/* A connection that said Hello, or -1 (its refusal counted). */
static int open_session(tally *t, const char *path) {
    int s = connect_to(path);
    if (s < 0) return -1;
    Nnd__Hello h = NND__HELLO__INIT;
    h.protocol_version = PROTO_PROTOCOL_VERSION;
    h.client_name = "attacker";
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 1;
    req.call_case = NND__REQUEST__CALL_HELLO;
    req.hello = &h;
    if (note(t, wire_call(s, &req, NULL, 0)) != NND__ERROR_STATUS__NONE) {
        close(s);
        return -1;
    }
    return s;
}

/* The two-input ADD of wire.h, prepared on s; 0 on failure. */
static uint64_t prepare_add(int s) {
    wire_add_model m;
    wire_add_model_init(&m, -1);
    return wire_prepare(s, &m.model, NULL, 0);
}

static void release(int s, uint64_t handle) {
    wire_free(wire_release(s, 7, handle));
}

/* ---- 1: mappings ------------------------------------------------------------------------ */

enum { MAP_CONNS = 64, MAP_BURSTS = 16, MAP_SLOTS = 64 };

static int attack_mappings(tally *t, const char *path) {
    size_t size = (size_t)MAP_CONNS * MAP_BURSTS * MAP_SLOTS * 4096;
    int mfd = wire_memfd(NULL, 0, size);
    if (mfd < 0) return 1;
    int socks[MAP_CONNS];
    uint64_t bursts[MAP_CONNS][MAP_BURSTS] = {{0}};
    int n = 0;
    for (; n < MAP_CONNS && running(t); n++) {
        socks[n] = open_session(t, path);
        uint64_t model = socks[n] >= 0 ? prepare_add(socks[n]) : 0;
        if (!model) break;
        for (int b = 0; b < MAP_BURSTS; b++) {
            Nnd__ConfigureBurst cb = NND__CONFIGURE_BURST__INIT;
            cb.prepared_model = model;
            Nnd__Request req = NND__REQUEST__INIT;
            req.id = 2;
            req.call_case = NND__REQUEST__CALL_CONFIGURE_BURST;
            req.configure_burst = &cb;
            Nnd__Reply *r = wire_call(socks[n], &req, NULL, 0);
            if (r && r->result_case == NND__REPLY__RESULT_BURST) bursts[n][b] = r->burst->burst;
            note(t, r);
        }
    }
    /* Every slot another page of the memfd; once refused, over and over. */
    for (unsigned long round = 0; running(t); round++)
        for (int c = 0; c < n && running(t); c++)
            for (int b = 0; b < MAP_BURSTS && running(t); b++)
                for (int k = 0; k < MAP_SLOTS && running(t); k++) {
                    if (!bursts[c][b]) continue;
                    wire_exec e;
                    wire_exec_init(&e, 0, 2, 4096);
                    e.pool.offset =
                        (((uint64_t)c * MAP_BURSTS + (uint64_t)b) * MAP_SLOTS + (uint64_t)k) * 4096;
                    e.pool.slot = (uint64_t)k + 1 + (round % 2) * MAP_SLOTS;
                    Nnd__BurstExecute be = NND__BURST_EXECUTE__INIT;
                    be.burst = bursts[c][b];
                    be.request = &e.req;
                    Nnd__Request req = NND__REQUEST__INIT;
                    req.id = 3;
                    req.call_case = NND__REQUEST__CALL_BURST_EXECUTE;
                    req.burst_execute = &be;
                    note(t, wire_call(socks[c], &req, &mfd, 1));
                }
    for (int c = 0; c < n; c++)
        if (socks[c] >= 0) close(socks[c]);
    close(mfd);
    return 0;
}

/* ---- 2: descriptors --------------------------------------------------------------------- */

static int attack_descriptors(tally *t, const char *path) {
    int mfd = wire_memfd(NULL, 0, 4096);
    int socks[4], n = 0;
    uint64_t models[4];
    for (; n < 4; n++) {
        socks[n] = open_session(t, path);
        models[n] = socks[n] >= 0 ? prepare_add(socks[n]) : 0;
        if (!models[n]) return 1;
    }
    while (running(t)) {
        for (int c = 0; c < n && running(t); c++) {
            wire_exec e;
            wire_exec_init(&e, models[c], 2, 4096);
            Nnd__ExecuteFenced f = NND__EXECUTE_FENCED__INIT;
            f.prepared_model = models[c];
            f.request = &e.req;
            Nnd__Request req = NND__REQUEST__INIT;
            req.id = 4;
            req.call_case = NND__REQUEST__CALL_EXECUTE_FENCED;
            req.execute_fenced = &f;
            /* The reply's eventfd is closed here; the daemon's copy stays until Release. */
            note(t, wire_call(socks[c], &req, &mfd, 1));
        }
        /* More connections, each one more descriptor. */
        int extra = open_session(t, path);
        if (extra >= 0) close(extra);
    }
    for (int c = 0; c < n; c++)
        close(socks[c]);
    close(mfd);
    return 0;
}

/* ---- 3: decode amplification ------------------------------------------------------------ */

static size_t put_varint(uint8_t *p, uint64_t v) {
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* A sealed memfd of `size` bytes holding Request{id, execute{request{inputs: empty x N}}}. */
static int empty_arguments_spill(size_t size) {
    uint8_t head[64];
    size_t body = size - 32; /* room for the headers below */
    size_t args = body / 2;  /* "0a 00": field 1 (inputs), length 0 */
    body = args * 2;
    size_t req_len = 0, exec_len, h = 0;
    uint8_t tmp[16];
    req_len = body;
    exec_len = 1 + put_varint(tmp, req_len) + req_len; /* Execute.request = 2 */
    head[h++] = 0x08;                                  /* Request.id = 1 */
    head[h++] = 0x05;
    h += put_varint(head + h, (19u << 3) | 2); /* Request.execute = 19 */
    h += put_varint(head + h, exec_len);
    head[h++] = (2u << 3) | 2;
    h += put_varint(head + h, req_len);
    int fd = memfd_create("attack-spill", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)(h + body)) < 0) return -1;
    uint8_t *p = mmap(NULL, h + body, PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return -1;
    memcpy(p, head, h);
    for (size_t i = 0; i < args; i++)
        p[h + 2 * i] = 0x0a, p[h + 2 * i + 1] = 0x00;
    munmap(p, h + body);
    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL);
    return fd;
}

/* The datagram naming a spill: SpillFrame{id, spill{fd_index 0, size}}. */
static void send_spill(tally *t, int s, int fd) {
    struct stat st;
    fstat(fd, &st);
    Nnd__Spill sp = NND__SPILL__INIT;
    sp.fd_index = 0;
    sp.size = (uint64_t)st.st_size;
    Nnd__SpillFrame f = NND__SPILL_FRAME__INIT;
    f.id = 5;
    f.spill = &sp;
    uint8_t buf[64];
    size_t len = nnd__spill_frame__pack(&f, buf);
    if (proto_frame_send_bytes(s, buf, len, &fd, 1, 0) < 0) return;
    note(t, wire_recv(s, WIRE_TIMEOUT_MS));
}

static int attack_decode(tally *t, const char *path) {
    int at_limit = empty_arguments_spill((size_t)PROTO_FRAME_SPILL_MAX);
    int past_limit = empty_arguments_spill((size_t)PROTO_FRAME_SPILL_MAX * 2);
    if (at_limit < 0 || past_limit < 0) return 1;
    int socks[8];
    for (int c = 0; c < 8; c++)
        if ((socks[c] = open_session(t, path)) < 0) return 1;
    for (unsigned long k = 0; running(t); k++)
        send_spill(t, socks[k % 8], k % 16 == 15 ? past_limit : at_limit);
    for (int c = 0; c < 8; c++)
        close(socks[c]);
    close(at_limit);
    close(past_limit);
    return 0;
}

/* ---- 4: content-cache copies ------------------------------------------------------------ */

enum { CACHE_MODELS = 40, CACHE_FLOATS = 15u << 20 /* 60 MiB */ };

static uint64_t prepare_constants_at(tally *t, int s, int mfd, uint64_t offset) {
    wire_add_model m;
    wire_add_model_init_n(&m, CACHE_FLOATS, 0);
    m.pool.offset = offset;
    Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
    pm.model = &m.model;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 6;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &pm;
    Nnd__Reply *r = wire_call(s, &req, &mfd, 1);
    uint64_t h = r && r->result_case == NND__REPLY__RESULT_PREPARED ? r->prepared->handle : 0;
    note(t, r);
    return h;
}

/* The content cache copies a large model from its second sighting on: each model comes
 * twice, and the second prepared model is kept. */
static uint64_t prepare_copied_at(tally *t, int s, int mfd, uint64_t offset) {
    uint64_t first = prepare_constants_at(t, s, mfd, offset);
    if (first) release(s, first);
    return prepare_constants_at(t, s, mfd, offset);
}

static int attack_cache(tally *t, const char *path) {
    size_t size = 65u << 20;
    int mfd = wire_memfd(NULL, 0, size);
    uint8_t *p = mfd >= 0 ? mmap(NULL, size, PROT_WRITE, MAP_SHARED, mfd, 0) : MAP_FAILED;
    if (p == MAP_FAILED) return 1;
    uint64_t x = 0x9e3779b97f4a7c15u; /* every offset below makes other constants */
    for (size_t i = 0; i + 8 <= size; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(p + i, &x, 8);
    }
    munmap(p, size);
    int s = open_session(t, path);
    if (s < 0) return 1;
    uint64_t held[CACHE_MODELS] = {0};
    for (unsigned k = 0; k < CACHE_MODELS && running(t); k++)
        held[k] = prepare_copied_at(t, s, mfd, (uint64_t)k * 65536);
    for (unsigned long k = 0; running(t); k++) { /* replaced one by one, new offsets */
        unsigned i = (unsigned)(k % CACHE_MODELS);
        if (held[i]) release(s, held[i]);
        held[i] = prepare_copied_at(t, s, mfd, 4096 + (k % 1200) * 4096);
    }
    close(s);
    close(mfd);
    return 0;
}

/* ---- 4b: prepared models' memory ------------------------------------------------------- */

enum { HELD_MODELS = 40, HELD_FLOATS = 16u << 20 /* 64 MiB */ };

/* 40 PrepareModels of 64 MiB constants at 40 offsets of one memfd, each prepared once (in
 * place, as a first sighting) and all held: every other one 2 bytes off the alignment of
 * its floats, which the engine must copy (the others it reads in place). Past
 * quota.app.prepared_bytes they are refused. All 40 are asked whatever the seconds. */
static int attack_held(tally *t, const char *path) {
    size_t size = (size_t)HELD_FLOATS * 4 + (size_t)HELD_MODELS * 65536;
    int mfd = wire_memfd(NULL, 0, size);
    uint8_t *p = mfd >= 0 ? mmap(NULL, size, PROT_WRITE, MAP_SHARED, mfd, 0) : MAP_FAILED;
    if (p == MAP_FAILED) return 1;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i + 8 <= size; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(p + i, &x, 8);
    }
    munmap(p, size);
    int s = open_session(t, path);
    if (s < 0) return 1;
    for (unsigned k = 0; k < HELD_MODELS; k++) {
        wire_add_model m;
        wire_add_model_init_n(&m, HELD_FLOATS, 0);
        m.pool.offset = (uint64_t)k * 65536;
        m.pool.size += 4096;
        m.locs[1].offset = k % 2 ? 2 : 0;
        Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
        pm.model = &m.model;
        Nnd__Request req = NND__REQUEST__INIT;
        req.id = 9;
        req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
        req.prepare_model = &pm;
        note(t, wire_call(s, &req, &mfd, 1));
    }
    printf("held: %lu prepared\n", t->requests - 1 - t->refused);
    close(s);
    close(mfd);
    return 0;
}

/* ---- 4c: large graphs in the content cache ----------------------------------------------- */

enum { GRAPH_MODELS = 4, GRAPH_OPS = 12000 };

/* Four chains of 12,000 ADDs (about 1.7 MB each on the wire, some 36 MB each once
 * prepared), each prepared twice (the content cache copies a large model from its second
 * sighting on) and released: the daemon keeps what its cache limit allows after this
 * client leaves. All are asked whatever the seconds. (Issue 39 measured 50,000-operation
 * chains; preparing those takes seconds each while planning is quadratic.) */
static int attack_graphs(tally *t, const char *path) {
    int s = open_session(t, path);
    if (s < 0) return 1;
    for (unsigned k = 0; k < GRAPH_MODELS; k++) {
        qos_chain c;
        qos_chain_init(&c, GRAPH_OPS, 2 + k); /* another length: another model */
        for (int twice = 0; twice < 2; twice++) {
            Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
            pm.model = &c.model;
            Nnd__Request req = NND__REQUEST__INIT;
            req.id = 10;
            req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
            req.prepare_model = &pm;
            if (wire_send(s, &req, NULL, 0) < 0) break;
            Nnd__Reply *r = wire_recv(s, 120000); /* a quadratic plan takes seconds */
            uint64_t h =
                r && r->result_case == NND__REPLY__RESULT_PREPARED ? r->prepared->handle : 0;
            note(t, r);
            if (h) release(s, h);
        }
        qos_chain_free(&c);
    }
    close(s);
    return 0;
}

/* ---- 5: token index growth -------------------------------------------------------------- */

static int attack_tokens(tally *t, const char *path) {
    char dir[] = "/tmp/nnd-attack-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char mpath[64], dpath[64];
    snprintf(mpath, sizeof mpath, "%s/model", dir);
    snprintf(dpath, sizeof dpath, "%s/data", dir);
    int fds[2] = {open(mpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600),
                  open(dpath, O_RDWR | O_CREAT | O_CLOEXEC, 0600)};
    int s = open_session(t, path);
    if (s < 0 || fds[0] < 0 || fds[1] < 0) return 1;
    wire_add_model m;
    wire_add_model_init(&m, -1);
    uint32_t mc = 0, dc = 1;
    uint8_t token[32];
    while (running(t)) {
        getrandom(token, sizeof token, 0);
        Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
        pm.model = &m.model;
        pm.n_model_cache_fds = 1;
        pm.model_cache_fds = &mc;
        pm.n_data_cache_fds = 1;
        pm.data_cache_fds = &dc;
        pm.token.data = token;
        pm.token.len = sizeof token;
        Nnd__Request req = NND__REQUEST__INIT;
        req.id = 8;
        req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
        req.prepare_model = &pm;
        Nnd__Reply *r = wire_call(s, &req, fds, 2);
        if (r && r->result_case == NND__REPLY__RESULT_PREPARED) release(s, r->prepared->handle);
        note(t, r);
    }
    close(s);
    close(fds[0]);
    close(fds[1]);
    unlink(mpath);
    unlink(dpath);
    rmdir(dir);
    return 0;
}

/* PrepareModel of `model` on device `dev`: its handle, or 0 (the reply noted either way). */
static uint64_t prepare_on(tally *t, int s, Nnd__Model *model, char *dev) {
    Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
    pm.model = model;
    pm.n_devices = 1;
    pm.devices = &dev;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 6;
    req.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    req.prepare_model = &pm;
    Nnd__Reply *r = wire_call(s, &req, NULL, 0);
    uint64_t h = r && r->result_case == NND__REPLY__RESULT_PREPARED ? r->prepared->handle : 0;
    return note(t, r) == NND__ERROR_STATUS__NONE ? h : 0;
}

/* An execution's input and output pools: a memfd each, both mapped here. */
typedef struct io_pools {
    int fds[2];
    void *in, *out;
    size_t in_size, out_size;
} io_pools;

static void *map_pool(int fd, size_t size) {
    return fd >= 0 ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
}

static void io_pools_close(io_pools *p) {
    if (p->in != MAP_FAILED) munmap(p->in, p->in_size);
    if (p->out != MAP_FAILED) munmap(p->out, p->out_size);
    for (int i = 0; i < 2; i++)
        if (p->fds[i] >= 0) close(p->fds[i]);
}

/* A session and an execution's two pools, each mapped: the session's socket, or -1 with
 * nothing left open. */
static int session_with_pools(tally *t, const char *path, io_pools *p, size_t in_size,
                              size_t out_size) {
    *p = (io_pools){.fds = {wire_memfd(NULL, 0, in_size), wire_memfd(NULL, 0, out_size)},
                    .in_size = in_size,
                    .out_size = out_size};
    p->in = map_pool(p->fds[0], in_size);
    p->out = map_pool(p->fds[1], out_size);
    int s = p->in != MAP_FAILED && p->out != MAP_FAILED ? open_session(t, path) : -1;
    if (s < 0) io_pools_close(p);
    return s;
}

/* ---- 6: RESIZE_BILINEAR sampling past its input ----------------------------------------- */

/* [1, 32, 1, 64] 8-bit input resized to [1, 65536, 1, 64]: the fixed-point step rounds
 * 32/65536 up to 1/1024, which once sent source rows to about twice the input height. The
 * input sits at the very end of a 4 KiB memfd (a read past it faults), or is followed by a
 * marker byte that no input element holds (a read past it shows in the output). */
enum { RZ_IN_H = 32, RZ_C = 64, RZ_OUT_H = 65536, RZ_MARK = 0x40 };

typedef struct resize_model {
    Nnd__Model model;
    Nnd__Subgraph main;
    Nnd__Operand operands[4];
    Nnd__Operand *operand_ptrs[4];
    Nnd__DataLocation locs[4];
    Nnd__Operation op;
    Nnd__Operation *op_ptr;
    uint32_t in_dims[4], out_dims[4], op_inputs[3], op_outputs[1], inputs[1], outputs[1];
    int32_t values[2];
} resize_model;

static void resize_model_init(resize_model *m, int32_t type) {
    memset(m, 0, sizeof *m);
    nnd__model__init(&m->model);
    nnd__subgraph__init(&m->main);
    nnd__operation__init(&m->op);
    const uint32_t in_dims[4] = {1, RZ_IN_H, 1, RZ_C}, out_dims[4] = {1, RZ_OUT_H, 1, RZ_C};
    memcpy(m->in_dims, in_dims, sizeof in_dims);
    memcpy(m->out_dims, out_dims, sizeof out_dims);
    for (int i = 0; i < 4; i++) {
        nnd__operand__init(&m->operands[i]);
        nnd__data_location__init(&m->locs[i]);
        m->operand_ptrs[i] = &m->operands[i];
    }
    Nnd__Operand *o = m->operands;
    o[0].type = o[3].type = type;
    o[0].scale = o[3].scale = 0.5f;
    o[0].n_dimensions = o[3].n_dimensions = 4;
    o[0].dimensions = m->in_dims;
    o[3].dimensions = m->out_dims;
    o[0].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    o[3].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    m->values[0] = 1;        /* output width */
    m->values[1] = RZ_OUT_H; /* output height */
    for (int i = 1; i <= 2; i++) {
        o[i].type = 1; /* INT32 */
        o[i].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_COPY;
        o[i].location = &m->locs[i];
        m->locs[i].offset = (uint64_t)(i - 1) * 4;
        m->locs[i].length = 4;
    }
    m->op.type = 23; /* RESIZE_BILINEAR */
    m->op_inputs[0] = 0, m->op_inputs[1] = 1, m->op_inputs[2] = 2;
    m->op_outputs[0] = 3;
    m->op.n_inputs = 3;
    m->op.inputs = m->op_inputs;
    m->op.n_outputs = 1;
    m->op.outputs = m->op_outputs;
    m->op_ptr = &m->op;
    m->inputs[0] = 0;
    m->outputs[0] = 3;
    m->main.n_operands = 4;
    m->main.operands = m->operand_ptrs;
    m->main.n_operations = 1;
    m->main.operations = &m->op_ptr;
    m->main.n_input_indexes = 1;
    m->main.input_indexes = m->inputs;
    m->main.n_output_indexes = 1;
    m->main.output_indexes = m->outputs;
    m->model.main = &m->main;
    m->model.operand_values.data = (uint8_t *)m->values;
    m->model.operand_values.len = sizeof m->values;
}

/* One execution: n_in input bytes in pool 0 (in_pool bytes) at in_off, n_out output bytes
 * at the start of pool 1. Returns the status, or -1. */
static int execute_in_out(tally *t, int s, uint64_t handle, const int fds[2], uint64_t in_off,
                          uint64_t n_in, uint64_t in_pool, uint64_t n_out) {
    Nnd__DataLocation locs[2];
    Nnd__RequestArgument args[2], *in_ptr = &args[0], *out_ptr = &args[1];
    Nnd__MemoryPool pools[2], *pool_ptrs[2] = {&pools[0], &pools[1]};
    for (int i = 0; i < 2; i++) {
        nnd__data_location__init(&locs[i]);
        nnd__request_argument__init(&args[i]);
        nnd__memory_pool__init(&pools[i]);
        args[i].location = &locs[i];
        pools[i].kind = NND__POOL_KIND__POOL_MEMFD;
        pools[i].fd_index = (uint32_t)i;
    }
    locs[0].offset = in_off, locs[0].length = n_in;
    locs[1].pool_index = 1, locs[1].length = n_out;
    pools[0].size = in_pool, pools[1].size = n_out;
    Nnd__ExecutionRequest er = NND__EXECUTION_REQUEST__INIT;
    er.n_inputs = 1, er.inputs = &in_ptr;
    er.n_outputs = 1, er.outputs = &out_ptr;
    er.n_pools = 2, er.pools = pool_ptrs;
    Nnd__Execute ex = NND__EXECUTE__INIT;
    ex.prepared_model = handle;
    ex.request = &er;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 9;
    req.call_case = NND__REQUEST__CALL_EXECUTE;
    req.execute = &ex;
    return note(t, wire_call(s, &req, fds, 2));
}

/* Prints "wrong ..." for an output byte outside its channel's range in the input (rows
 * rise, so the first and last rows bound it); the marker (64, or -64 read as unsigned) is
 * outside every channel's range. */
static bool resize_output_ok(const int8_t *out, const int8_t *in) {
    for (size_t r = 0; r < RZ_OUT_H; r++)
        for (size_t c = 0; c < RZ_C; c++) {
            int8_t v = out[r * RZ_C + c];
            if (v < in[c] || v > in[(RZ_IN_H - 1) * RZ_C + c]) {
                printf("wrong resize output row %zu channel %zu: %d\n", r, c, v);
                return false;
            }
        }
    return true;
}

static int attack_resize(tally *t, const char *path) {
    const size_t n_in = (size_t)RZ_IN_H * RZ_C, n_out = (size_t)RZ_OUT_H * RZ_C;
    const size_t page = 4096, in_pool = 2 * page;
    io_pools pools;
    int s = session_with_pools(t, path, &pools, in_pool, n_out);
    if (s < 0) return 1;
    int8_t *in = pools.in, *out = pools.out;
    const int *fds = pools.fds;
    /* Values rise by one a row and by one every two channels: all in [-40, 22]. */
    int8_t image[RZ_IN_H * RZ_C];
    for (size_t r = 0; r < RZ_IN_H; r++)
        for (size_t c = 0; c < RZ_C; c++)
            image[r * RZ_C + c] = (int8_t)((int)r + (int)c / 2 - 40);
    static const char *const devices[] = {"nnd-cpu", "nnd-reference"};
    static const int32_t types[] = {14 /* QUANT8_ASYMM_SIGNED */, 5 /* QUANT8_ASYMM */};
    int rc = 0;
    for (unsigned long k = 0; running(t) && !rc; k++) {
        resize_model m;
        resize_model_init(&m, types[k % 2]);
        char *dev = (char *)devices[(k / 2) % 2];
        uint64_t h = prepare_on(t, s, &m.model, dev);
        if (!h) {
            printf("resize: prepare on %s failed\n", dev);
            rc = 1;
            break;
        }
        /* At the end of the pool, then followed by marker bytes. Unsigned values are the
         * signed ones plus 128 as stored bytes; the check reads them back the same way. */
        uint8_t bias = types[k % 2] == 5 ? 0x80 : 0;
        for (int at_end = 1; at_end >= 0 && !rc; at_end--) {
            uint64_t off = at_end ? in_pool - n_in : page - n_in - 64;
            memset(in, RZ_MARK, in_pool);
            for (size_t i = 0; i < n_in; i++)
                in[off + i] = (int8_t)((uint8_t)image[i] ^ bias);
            memset(out, RZ_MARK, n_out);
            if (execute_in_out(t, s, h, fds, off, n_in, in_pool, n_out) !=
                NND__ERROR_STATUS__NONE) {
                printf("resize: execute on %s failed\n", dev);
                rc = 1;
            }
            if (bias)
                for (size_t i = 0; i < n_out; i++)
                    out[i] = (int8_t)((uint8_t)out[i] ^ bias);
            if (!rc && !resize_output_ok(out, image)) rc = 1;
        }
        release(s, h);
    }
    close(s);
    io_pools_close(&pools);
    return rc;
}

/* ---- 7: an 8-bit SOFTMAX whose row sum wraps 32 bits -------------------------------------- */

/* [1, 1024] unsigned 8-bit, every value equal: XNNPACK's table gives each exponential its
 * largest entry, 2^22, and 1,024 of them summed to 2^32, 0 in its 32 bits, which it asserts
 * against: the daemon aborted. The outputs must all be equal, 0 or 1 (1/1024 at a scale of
 * 1/256 is 0.25: within the one step the kernel sets may differ by). */
enum { SM_C = 1024 };

static uint64_t prepare_softmax(tally *t, int s, char *dev) {
    uint32_t dims[2] = {1, SM_C}, op_in[2] = {0, 1}, op_out[1] = {2}, ins[1] = {0}, outs[1] = {2};
    float beta = 1.f;
    Nnd__Operand o[3], *o_ptrs[3] = {&o[0], &o[1], &o[2]};
    for (int i = 0; i < 3; i++)
        nnd__operand__init(&o[i]);
    Nnd__DataLocation beta_at = NND__DATA_LOCATION__INIT;
    beta_at.length = sizeof beta;
    o[0].type = o[2].type = 5; /* TENSOR_QUANT8_ASYMM */
    o[0].n_dimensions = o[2].n_dimensions = 2;
    o[0].dimensions = o[2].dimensions = dims;
    o[0].scale = 0.5f, o[2].scale = 1.f / 256;
    o[0].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_INPUT;
    o[2].lifetime = NND__OPERAND_LIFE_TIME__SUBGRAPH_OUTPUT;
    o[1].type = 0; /* FLOAT32: beta */
    o[1].lifetime = NND__OPERAND_LIFE_TIME__CONSTANT_COPY;
    o[1].location = &beta_at;
    Nnd__Operation op = NND__OPERATION__INIT, *op_ptr = &op;
    op.type = 25; /* SOFTMAX */
    op.n_inputs = 2, op.inputs = op_in, op.n_outputs = 1, op.outputs = op_out;
    Nnd__Subgraph main = NND__SUBGRAPH__INIT;
    main.n_operands = 3, main.operands = o_ptrs, main.n_operations = 1, main.operations = &op_ptr;
    main.n_input_indexes = 1, main.input_indexes = ins;
    main.n_output_indexes = 1, main.output_indexes = outs;
    Nnd__Model model = NND__MODEL__INIT;
    model.main = &main;
    model.operand_values.data = (uint8_t *)&beta;
    model.operand_values.len = sizeof beta;
    return prepare_on(t, s, &model, dev);
}

static int attack_softmax(tally *t, const char *path) {
    io_pools pools;
    int s = session_with_pools(t, path, &pools, SM_C, SM_C);
    if (s < 0) return 1;
    uint8_t *in = pools.in, *out = pools.out;
    const int *fds = pools.fds;
    static const char *const devices[] = {"nnd-cpu", "nnd-reference"};
    int rc = 0;
    for (unsigned long k = 0; running(t) && !rc; k++) {
        char *dev = (char *)devices[k % 2];
        uint64_t h = prepare_softmax(t, s, dev);
        memset(in, 7 + (int)(k % 200), SM_C);
        memset(out, 0x55, SM_C);
        if (!h || execute_in_out(t, s, h, fds, 0, SM_C, SM_C, SM_C) != NND__ERROR_STATUS__NONE) {
            printf("softmax: %s on %s failed\n", h ? "execute" : "prepare", dev);
            rc = 1;
        }
        for (size_t i = 0; !rc && i < SM_C; i++)
            if (out[i] > 1 || out[i] != out[0]) {
                printf("wrong softmax output %zu on %s: %u (output 0: %u)\n", i, dev, out[i],
                       out[0]);
                rc = 1;
            }
        if (h) release(s, h);
    }
    close(s);
    io_pools_close(&pools);
    return rc;
}

int attack_run(const char *name, const char *socket_path, double seconds) {
    static const struct {
        const char *name;
        int (*run)(tally *, const char *);
        bool want_refusal;           /* it is done once refused */
        unsigned long want_requests; /* and once it made this many requests */
    } attacks[] = {{"mappings", attack_mappings, true, 0},
                   {"descriptors", attack_descriptors, true, 0},
                   {"decode", attack_decode, true, 0},
                   {"cache", attack_cache, false, 4},     /* two models copied by the cache */
                   {"tokens", attack_tokens, false, 24},  /* past 8 rows at 8 a second */
                   {"resize", attack_resize, false, 12},  /* both devices, both types */
                   {"softmax", attack_softmax, false, 8}, /* both devices */
                   {"held", attack_held, false, 0},       /* a fixed count, whatever the time */
                   {"graphs", attack_graphs, false, 0}};
    for (size_t i = 0; i < sizeof attacks / sizeof *attacks; i++) {
        if (strcmp(name, attacks[i].name)) continue;
        double start = now_s();
        tally t = {.name = name,
                   .end = start + seconds,
                   .hard_end = start + 10 * seconds,
                   .want_refusal = attacks[i].want_refusal,
                   .want_requests = attacks[i].want_requests};
        setvbuf(stdout, NULL, _IOLBF, 0);
        int rc = attacks[i].run(&t, socket_path);
        printf("attack %s: %lu requests, %lu refused\n", name, t.requests, t.refused);
        return rc;
    }
    fprintf(stderr, "unknown attack %s\n", name);
    return 1;
}
