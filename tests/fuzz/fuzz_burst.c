/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_burst: the daemon's reading of a burst channel (daemon/binding/burst_take.h) while a hostile
 * client writes the shared memory, then the request's pools resolved through the burst's
 * slots (daemon/binding/burst.h) whose memory the client keeps writing too, and the answer's
 * publication against the client's words (proto/burst_chan.h). The slot memory is also
 * registered with the session (daemon/binding/memreg.h); since tokens are random, a
 * POOL_REGISTERED pool naming token 1 is given the real token before it is resolved, and
 * any other token stays unknown. The input is
 *   u8 flags: bit 0 runs the racing writer during the takes; bits 1-2: takes - 1
 *   section: the request area's first bytes
 *   section: the racing writes, which a second thread applies over and over while the
 *     daemon side reads (a data race on purpose: that is what a client can do)
 *   section: the burst slots' memory (slot 1: all of it, slot 2: a range inside)
 *   per take, from the stream: u32 req_seq, u32 req_len, u32 client_sleeping, then a
 *     section of writes applied before the take
 * A write is u16 offset (modulo the channel's plus the slots' bytes: offsets past the
 * channel land in the slot memory), u8 length, that many bytes (cut at the end).
 * The channel and the slot memory are memfds mapped twice, as the client and the daemon
 * each map them. Nothing may crash, leak or read outside the mappings; a request the taker
 * accepts must be a BurstExecute of this burst with a request. */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daemon/binding/burst.h"
#include "daemon/binding/burst_take.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_target.h"
#include "daemon/binding/memreg.h"

#define BURST_HANDLE 0x6275727374000001ull
#define SLOT_BYTES   (16u * 1024u)
#define REGION_BYTES (PROTO_CHAN_SIZE + SLOT_BYTES)
#define MAX_TAKES    4

static struct {
    bool ready;
    uint8_t *client_chan, *client_slots; /* the client's mappings, written by the writer */
    uint8_t *daemon_chan;                /* the daemon's mapping of the channel */
    uint8_t copy[PROTO_CHAN_AREA];
    uint8_t result[PROTO_CHAN_AREA];
    srv_session session;
    srv_burst_obj *burst;
    uint64_t token; /* the slot memory, registered */
    pthread_t writer;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    fz_in script; /* the racing writes of this iteration; under lock */
    int phase;    /* 0 idle, 1 writing (under lock); the writer sets 0 when it stopped */
    int stop;     /* atomic: the writer is to stop writing */
} fz;

/* Applies one write record of w to the client's mappings; false at the end of w. */
static bool apply_one(fz_in *w) {
    if (!w->len) return false;
    uint16_t off16;
    fz_bytes(w, &off16, sizeof off16);
    uint32_t off = off16 % REGION_BYTES;
    uint32_t n = fz_u8(w);
    if (n > w->len) n = (uint32_t)w->len;
    uint8_t *dst =
        off < PROTO_CHAN_SIZE ? fz.client_chan + off : fz.client_slots + off - PROTO_CHAN_SIZE;
    uint32_t room = off < PROTO_CHAN_SIZE ? PROTO_CHAN_SIZE - off : REGION_BYTES - off;
    memcpy(dst, w->p, n < room ? n : room);
    w->p += n;
    w->len -= n;
    return true;
}

static void apply_all(fz_in w) {
    while (apply_one(&w)) {
    }
}

static void *writer_thread(void *arg) {
    (void)arg;
    pthread_mutex_lock(&fz.lock);
    for (;;) {
        while (fz.phase != 1)
            pthread_cond_wait(&fz.cond, &fz.lock);
        fz_in script = fz.script;
        pthread_mutex_unlock(&fz.lock);
        while (!__atomic_load_n(&fz.stop, __ATOMIC_ACQUIRE))
            apply_all(script);
        pthread_mutex_lock(&fz.lock);
        fz.phase = 0;
        pthread_cond_broadcast(&fz.cond);
    }
    return NULL;
}

static void writer_start(fz_in script) {
    pthread_mutex_lock(&fz.lock);
    __atomic_store_n(&fz.stop, 0, __ATOMIC_RELEASE);
    fz.script = script;
    fz.phase = 1;
    pthread_cond_broadcast(&fz.cond);
    pthread_mutex_unlock(&fz.lock);
}

static void writer_stop(void) {
    __atomic_store_n(&fz.stop, 1, __ATOMIC_RELEASE);
    pthread_mutex_lock(&fz.lock);
    while (fz.phase != 0)
        pthread_cond_wait(&fz.cond, &fz.lock);
    pthread_mutex_unlock(&fz.lock);
}

static int sealed_memfd(size_t size) {
    int fd = memfd_create("fuzz-burst", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, (off_t)size) < 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
        abort();
    return fd;
}

static uint8_t *map_shared(int fd, size_t size) {
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) abort();
    return p;
}

/* Caches the slot memory in the burst as a client's first BurstExecute would. */
static void cache_slots(int slots_fd) {
    Nnd__MemoryPool p1 = NND__MEMORY_POOL__INIT, p2 = NND__MEMORY_POOL__INIT;
    p1.kind = p2.kind = NND__POOL_KIND__POOL_MEMFD;
    p1.size = SLOT_BYTES;
    p1.slot = 1;
    p2.fd_index = 1;
    p2.offset = 4096;
    p2.size = 8192;
    p2.slot = 2;
    Nnd__MemoryPool *pools[2] = {&p1, &p2};
    Nnd__ExecutionRequest r = NND__EXECUTION_REQUEST__INIT;
    r.n_pools = 2;
    r.pools = pools;
    proto_frame_in in;
    memset(&in, 0, sizeof in);
    in.fds[0] = fcntl(slots_fd, F_DUPFD_CLOEXEC, 0);
    in.fds[1] = fcntl(slots_fd, F_DUPFD_CLOEXEC, 0);
    in.nfds = 2;
    srv_pool views[2];
    char err[SCHEMA_ERR_LEN];
    if (srv_burst_map_pools(fz.burst, &r, &in, views, err, sizeof err) != SCHEMA_OK) {
        fprintf(stderr, "fuzz_burst: cannot cache the slots: %s\n", err);
        abort();
    }
    srv_burst_commit(fz.burst);
    srv_pools_release(views, 2);
    proto_frame_in_clear(&in);
}

/* Registers the slot memory with the session, as RegisterMemory would. */
static void register_slots(int slots_fd) {
    Nnd__MemoryPool p = NND__MEMORY_POOL__INIT;
    p.kind = NND__POOL_KIND__POOL_MEMFD;
    p.size = SLOT_BYTES;
    proto_frame_in in;
    memset(&in, 0, sizeof in);
    in.fds[0] = fcntl(slots_fd, F_DUPFD_CLOEXEC, 0);
    in.nfds = 1;
    char err[SCHEMA_ERR_LEN];
    if (srv_memreg_register(&fz.session, &p, &in, &fz.token, err, sizeof err) != SCHEMA_OK) {
        fprintf(stderr, "fuzz_burst: cannot register the slot memory: %s\n", err);
        abort();
    }
    proto_frame_in_clear(&in);
}

static void setup(void) {
    pthread_mutex_init(&fz.lock, NULL);
    pthread_cond_init(&fz.cond, NULL);
    int chan_fd = sealed_memfd(PROTO_CHAN_SIZE), slots_fd = sealed_memfd(SLOT_BYTES);
    fz.client_chan = map_shared(chan_fd, PROTO_CHAN_SIZE);
    fz.daemon_chan = map_shared(chan_fd, PROTO_CHAN_SIZE);
    fz.client_slots = map_shared(slots_fd, SLOT_BYTES);
    close(chan_fd);
    srv_session_init(&fz.session, -1, 1);
    if (!(fz.burst = srv_burst_new(&fz.session, 1))) abort();
    cache_slots(slots_fd);
    register_slots(slots_fd);
    close(slots_fd);
    if (pthread_create(&fz.writer, NULL, writer_thread, NULL) != 0) abort();
    fz.ready = true;
}

/* Resolves the accepted request's pools through the burst and reads every byte of them, as
 * a kernel would while the client writes them. */
static void resolve_pools(const Nnd__ExecutionRequest *r) {
    for (size_t i = 0; i < r->n_pools; i++)
        if (r->pools[i] && r->pools[i]->kind == NND__POOL_KIND__POOL_REGISTERED &&
            r->pools[i]->token == 1)
            r->pools[i]->token = fz.token;
    srv_pool *views = calloc(r->n_pools + 1, sizeof *views);
    if (!views) return;
    proto_frame_in in;
    memset(&in, 0, sizeof in); /* fds cannot travel in the channel */
    char err[SCHEMA_ERR_LEN];
    if (srv_burst_map_pools(fz.burst, r, &in, views, err, sizeof err) == SCHEMA_OK) {
        uint8_t sum = 0;
        for (size_t i = 0; i < r->n_pools; i++)
            for (size_t k = 0; k < views[i].view.size; k++)
                sum += ((const uint8_t *)views[i].view.base)[k];
        __asm__ volatile("" : : "r"(sum)); /* the reads are kept */
        srv_burst_commit(fz.burst);
        srv_pools_release(views, r->n_pools);
    }
    free(views);
}

/* Packs an answer into the result area and publishes it, as write_result does. */
static void answer(proto_chan_hdr *h, uint32_t seq, uint64_t id, schema_status st,
                   const char *msg) {
    Nnd__Reply rp = NND__REPLY__INIT;
    rp.id = id;
    rp.status = (Nnd__ErrorStatus)st;
    rp.message = (char *)msg;
    size_t n = protobuf_c_message_get_packed_size(&rp.base);
    if (n <= sizeof fz.result) protobuf_c_message_pack(&rp.base, fz.result);
    __atomic_store_n(&h->res_len, (uint32_t)n, __ATOMIC_RELAXED);
    if (proto_chan_publish(&h->res_seq, seq, &h->client_sleeping)) proto_chan_wake(&h->res_seq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!fz.ready) setup();
    fz_in in = {data, size};
    uint8_t flags = fz_u8(&in);
    fz_in area = fz_section(&in), script = fz_section(&in), slots = fz_section(&in);
    memset(fz.client_chan, 0, PROTO_CHAN_SIZE);
    proto_chan_init((proto_chan_hdr *)fz.client_chan);
    memcpy(fz.client_chan + PROTO_CHAN_HEADER, area.p,
           area.len < PROTO_CHAN_AREA ? area.len : PROTO_CHAN_AREA);
    memset(fz.client_slots, 0, SLOT_BYTES);
    memcpy(fz.client_slots, slots.p, slots.len < SLOT_BYTES ? slots.len : SLOT_BYTES);

    proto_chan_hdr *h = (proto_chan_hdr *)fz.daemon_chan;
    srv_burst_take_state t = {.h = h,
                              .req_area = fz.daemon_chan + PROTO_CHAN_HEADER,
                              .copy = fz.copy,
                              .handle = BURST_HANDLE,
                              .expected = 1};
    bool racing = (flags & 1) && script.len;
    if (racing) writer_start(script);
    int takes = 1 + ((flags >> 1) & 3);
    for (int i = 0; i < takes && i < MAX_TAKES; i++) {
        proto_chan_hdr *ch = (proto_chan_hdr *)fz.client_chan;
        uint32_t seq = fz_u32(&in), len = fz_u32(&in), sleeping = fz_u32(&in);
        __atomic_store_n(&ch->req_len, len, __ATOMIC_RELAXED);
        __atomic_store_n(&ch->client_sleeping, sleeping, __ATOMIC_RELAXED);
        __atomic_store_n(&ch->req_seq, seq, __ATOMIC_RELEASE);
        apply_all(fz_section(&in));
        Nnd__Request *req;
        schema_status st;
        char err[SCHEMA_ERR_LEN];
        if (!srv_burst_take(&t, &req, &st, err, sizeof err)) continue;
        if (st == SCHEMA_OK) {
            if (!req || req->call_case != NND__REQUEST__CALL_BURST_EXECUTE || !req->burst_execute ||
                req->burst_execute->burst != BURST_HANDLE || !req->burst_execute->request) {
                fprintf(stderr, "fuzz_burst: the taker accepted what is not this burst's\n");
                abort();
            }
            resolve_pools(req->burst_execute->request);
        }
        answer(h, t.taken, req ? req->id : 0, st, st == SCHEMA_OK ? "" : err);
        if (req) protobuf_c_message_free_unpacked(&req->base, NULL);
    }
    if (racing) writer_stop();
    return 0;
}
