/* SPDX-License-Identifier: Apache-2.0 */
/* test_faults (integration): faults around a real daemon.
 * - A client SIGKILLed with executions queued, one running, one waiting on a fence and a
 *   driver buffer: everything it had is freed (admin status, fds, memfd mappings, allocated
 *   bytes back at the baseline) while another client's executions go on, right, throughout.
 * - A client that sends executions and never reads its replies: dropped once its outbox
 *   is full, with a warning and an event, the daemon's RSS bounded, another client served.
 * - The state directory full at startup (RLIMIT_FSIZE), filling up later (RLIMIT_FSIZE
 *   lowered on the running daemon) and read-only (the daemon as uid 65534 on a directory
 *   it cannot write; root only): caching goes off with one warning (and a status field and
 *   an event where the bus lives), prepares with cache files and executions keep working.
 * The daemon SIGKILLed in the middle of a cache write is test_cache's test_kill_mid_write. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/cache_model.h"
#include "proto/frame.h"
#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/observe.h"
#include "tests/support/qos_models.h"
#include "tests/support/wire.h"

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static nnd_client *connect_to(const tst_daemon *d, const char *name) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, name, err, sizeof err);
    if (!c) fail_msg("connect: %s", err);
    return c;
}

/* Polls a status number until it equals want (10 s at most); returns the last value. */
static double wait_status(const tst_daemon *d, const char *path, double want) {
    double v = NAN;
    for (int i = 0; i < 1000; i++) {
        v = obs_status_num(d->state_dir, path);
        if (v == want) break;
        sleep_ms(10);
    }
    return v;
}

/* ---- a bystander: another client executing all along, checking every result ---------- */

typedef struct bystander {
    const tst_daemon *d;
    atomic_bool stop;
    atomic_long ok, refused, bad; /* refused: RESOURCE_EXHAUSTED_TRANSIENT, try again */
    char why[320];
    pthread_t t;
} bystander;

static void *bystander_main(void *arg) {
    bystander *b = arg;
    enum { LEN = 64, N = 4 };
    char err[256];
    nnd_client *c = nnd_client_connect(b->d->socket_path, "faults-bystander", err, sizeof err);
    qos_chain chain;
    qos_chain_init(&chain, N, LEN);
    uint64_t h = 0;
    size_t bytes = LEN * sizeof(float);
    float *f = NULL;
    int fd = nnd_memfd_create("bystander", 3 * bytes, (void **)&f);
    if (!c || fd < 0 ||
        nnd_client_prepare(c, &chain.model, NULL, 0, 0, NND__PRIORITY__PRIORITY_HIGH, 0, &h, err,
                           sizeof err) != 0) {
        snprintf(b->why, sizeof b->why, "setup: %s", err);
        b->bad++;
        b->stop = true;
    }
    qos_req req;
    qos_req_init(&req, LEN, 3 * bytes, 0, bytes, 2 * bytes);
    for (uint32_t k = 0; !b->stop; k++) {
        for (uint32_t i = 0; i < LEN; i++)
            f[i] = (float)((k + i) % 1000), f[LEN + i] = 0.5f, f[2 * LEN + i] = -1;
        int st = nnd_client_execute(c, h, &req.req, &fd, 1, false, 0, NULL, err, sizeof err);
        bool right = st == 0;
        for (uint32_t i = 0; right && i < LEN; i++)
            right = f[2 * LEN + i] == (float)((k + i) % 1000) + 0.5f * N;
        if (st == NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT) {
            b->refused++;
            sleep_ms(1);
        } else if (right) {
            b->ok++;
        } else {
            if (b->bad++ == 0)
                snprintf(b->why, sizeof b->why, "status %d (%s) or wrong output", st, err);
            if (st < 0) break; /* the connection is gone */
        }
    }
    if (f) munmap(f, 3 * bytes);
    if (fd >= 0) close(fd);
    qos_chain_free(&chain);
    if (c) nnd_client_close(c);
    return NULL;
}

static void bystander_start(bystander *b, const tst_daemon *d) {
    memset(b, 0, sizeof *b);
    b->d = d;
    assert_int_equal(pthread_create(&b->t, NULL, bystander_main, b), 0);
    for (int i = 0; i < 1000 && b->ok == 0 && b->bad == 0; i++)
        sleep_ms(5);
    if (b->ok == 0) fail_msg("the bystander never ran: %s", b->why);
}

/* Waits up to 10 s for the bystander to get past `ok` right executions. */
static bool bystander_past(const bystander *b, long ok) {
    for (int i = 0; i < 1000 && b->ok <= ok; i++)
        sleep_ms(10);
    return b->ok > ok;
}

static void bystander_stop(bystander *b) {
    b->stop = true;
    pthread_join(b->t, NULL);
    if (b->bad) fail_msg("bystander: %ld bad executions: %s", (long)b->bad, b->why);
}

/* The daemon's figures once no client is connected. */
typedef struct figures {
    long rss_kib;
    int fds, memfd_maps;
    double allocated; /* admin status memory.allocated_bytes */
} figures;

/* What the daemon may still hold of a client's after releasing everything: the resident
 * set also counts what the allocator keeps of freed memory and other threads' arenas, so
 * leaks are judged on allocated bytes. */
#define HELD_SLACK_BYTES (256.0 * 1024)

static figures settle(const tst_daemon *d, const figures *base) {
    assert_int_equal(wait_status(d, "connections", 0), 0);
    assert_int_equal(wait_status(d, "prepared_models", 0), 0);
    assert_int_equal(wait_status(d, "buffers", 0), 0);
    /* What the daemon closes a moment later is not held: the loop finishing what it
     * released, the admin bus's thread closing the connection of the status just asked.
     * A descriptor or mapping still there after two seconds is. */
    figures f;
    for (int i = 0; i < 100; i++) {
        sleep_ms(20);
        f = (figures){obs_rss_kib(d->pid), wire_count_fds(d->pid), obs_memfd_maps(d->pid),
                      obs_status_num(d->state_dir, "memory.allocated_bytes")};
        if (!base || (f.fds == base->fds && f.memfd_maps == base->memfd_maps &&
                      f.allocated <= base->allocated + HELD_SLACK_BYTES))
            break;
    }
    assert_true(f.rss_kib > 0 && f.fds > 0 && f.memfd_maps >= 0);
    return f;
}

/* ---- files of the test ---------------------------------------------------------------- */

static char work[256]; /* logs and cache directories */

static int group_setup(void **state) {
    (void)state;
    snprintf(work, sizeof work, "/tmp/nnd-faults-XXXXXX");
    if (!mkdtemp(work)) return -1;
    return chmod(work, 0755);
}

static int group_teardown(void **state) {
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", work);
    return system(cmd) == 0 ? 0 : -1;
}

static void path_in_work(char *out, size_t len, const char *name) {
    snprintf(out, len, "%s/%s", work, name);
}

/* Lines of the file holding needle. */
static int count_in_file(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, needle)) n++;
    fclose(f);
    return n;
}

/* count_in_file() once it reaches want (5 s at most: the daemon may still be starting). */
static int wait_in_file(const char *path, const char *needle, int want) {
    int n = -1;
    for (int i = 0; i < 500 && (n = count_in_file(path, needle)) < want; i++)
        sleep_ms(10);
    return n;
}

/* ---- client SIGKILL with work in flight ------------------------------------------------- */

/* Executions submitted to the scheduler and not finished in any way. */
static double in_flight(const tst_daemon *d) {
    cJSON *st = tst_admin(d->state_dir, "status");
    double n = obs_num(st, "scheduler.submitted") - obs_num(st, "scheduler.completed") -
               obs_num(st, "scheduler.failed") - obs_num(st, "scheduler.cancelled");
    cJSON_Delete(st);
    return n;
}

enum { SLOW_OPS = 4000, SLOW_LEN = 65536, QUEUED = 40 }; /* a run: tens of ms */
enum { BIG_LEN = 4 << 20 };                              /* a 16 MiB driver buffer */

/* The victim: a slow LOW model with one execution running and QUEUED more behind it, one
 * fenced execution waiting for a fence nobody signals, and a 16 MiB driver buffer it filled.
 * Says 'R' on ready_fd, then waits to be killed. With ready_fd < 0 it runs one execution
 * and returns (the warm-up that sets the baseline). */
static int victim(const tst_daemon *d, int ready_fd) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, "faults-victim", err, sizeof err);
    if (!c) return 1;
    qos_chain slow, big;
    qos_chain_init(&slow, SLOW_OPS, SLOW_LEN);
    qos_chain_init(&big, 1, BIG_LEN);
    uint64_t h, hbig, buffer, token, ticket, ex;
    if (nnd_client_prepare(c, &slow.model, NULL, 0, 0, NND__PRIORITY__PRIORITY_LOW, 0, &h, err,
                           sizeof err) ||
        nnd_client_prepare(c, &big.model, NULL, 0, 0, 0, 0, &hbig, err, sizeof err))
        return 2;
    size_t bytes = SLOW_LEN * sizeof(float);
    float *f;
    int fd = nnd_memfd_create("victim", 3 * bytes, (void **)&f);
    for (uint32_t i = 0; i < SLOW_LEN; i++)
        f[i] = 1, f[SLOW_LEN + i] = 1;
    qos_req req;
    qos_req_init(&req, SLOW_LEN, 3 * bytes, 0, bytes, 2 * bytes);
    nnd_buffer_role role = {0, 0, 0};
    uint32_t dims[1] = {BIG_LEN};
    int bigfd = nnd_memfd_create("victim-big", BIG_LEN * sizeof(float), NULL);
    if (nnd_client_allocate(c, dims, 1, &hbig, 1, &role, 1, NULL, 0, &buffer, &token, err,
                            sizeof err) ||
        nnd_client_buffer_copy_to(c, buffer, NND__POOL_KIND__POOL_MEMFD, bigfd, 0,
                                  BIG_LEN * sizeof(float), NULL, 0, err, sizeof err))
        return 3;
    close(bigfd);
    if (ready_fd < 0) {
        int st = nnd_client_execute(c, h, &req.req, &fd, 1, false, 0, NULL, err, sizeof err);
        nnd_client_close(c);
        bool right = st == 0 && f[3 * SLOW_LEN - 1] == 1 + SLOW_OPS;
        if (!right)
            fprintf(stderr, "victim: status %d (%s), out %g\n", st, err, f[3 * SLOW_LEN - 1]);
        munmap(f, 3 * bytes);
        close(fd);
        qos_chain_free(&slow);
        qos_chain_free(&big);
        return right ? 0 : 4;
    }
    int gate = eventfd(0, EFD_CLOEXEC), sync_fd;
    if (nnd_client_execute_fenced(c, h, &req.req, &fd, 1, &gate, 1, NULL, 0, &ex, &sync_fd, err,
                                  sizeof err))
        return 5;
    for (int i = 0; i < 1 + QUEUED; i++)
        if (nnd_client_execute_start(c, h, &req.req, &fd, 1, NULL, &ticket, err, sizeof err))
            return 6;
    if (write(ready_fd, "R", 1) != 1) return 7;
    for (;;)
        pause();
}

static void test_client_killed(void **state) {
    (void)state;
    tst_daemon d;
    const char *args[] = {"--app-queue", "256", NULL};
    assert_int_equal(tst_daemon_start(&d, args), 0);
    assert_int_equal(victim(&d, -1), 0); /* the same work once, finished: the baseline */
    figures before = settle(&d, NULL);
    double cancelled0 = obs_status_num(d.state_dir, "scheduler.cancelled");
    assert_int_equal(in_flight(&d), 0);

    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        _exit(victim(&d, p[1]));
    }
    close(p[1]);
    char r = 0;
    struct pollfd pfd = {.fd = p[0], .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 20000), 1);
    assert_int_equal(read(p[0], &r, 1), 1);
    close(p[0]);
    assert_int_equal(r, 'R');

    static bystander b; /* static: a failed assertion must not leave it writing a dead frame */
    bystander_start(&b, &d);
    cJSON *st = NULL;
    for (int i = 0; i < 500; i++) { /* the victim's work is in: one running, the rest queued */
        cJSON_Delete(st);
        st = tst_admin(d.state_dir, "status");
        if (obs_num(st, "scheduler.queued.low") >= QUEUED - 1) break;
        sleep_ms(10);
    }
    assert_true(obs_num(st, "scheduler.queued.low") >= QUEUED - 1);
    assert_int_equal(obs_num(st, "connections"), 2);
    assert_int_equal(obs_num(st, "prepared_models"), 3);
    assert_int_equal(obs_num(st, "buffers"), 1);
    cJSON_Delete(st);
    /* What the victim holds shows in the figures (its fence, its pools, its buffer). */
    figures during = {obs_rss_kib(d.pid), wire_count_fds(d.pid), obs_memfd_maps(d.pid),
                      obs_status_num(d.state_dir, "memory.allocated_bytes")};
    assert_true(during.fds > before.fds && during.memfd_maps > before.memfd_maps);
    assert_true(!OBS_RSS_MEANINGFUL || during.allocated >= before.allocated + 16 * 1024 * 1024);
    long ok_at_kill = b.ok;

    assert_int_equal(kill(pid, SIGKILL), 0);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    assert_int_equal(wait_status(&d, "connections", 1), 1);
    assert_int_equal(wait_status(&d, "scheduler.queued.low", 0), 0);
    assert_int_equal(wait_status(&d, "prepared_models", 1), 1); /* the bystander's */
    assert_int_equal(wait_status(&d, "buffers", 0), 0);
    assert_int_equal(wait_status(&d, "buffer_bytes", 0), 0);
    double cancelled = obs_status_num(d.state_dir, "scheduler.cancelled") - cancelled0;
    assert_true(cancelled >= QUEUED - 1); /* the queue at least; the running one stops too: */
    for (int i = 0; i < 1000 && in_flight(&d) > 1; i++) /* the bystander's, at most */
        sleep_ms(10);
    assert_true(in_flight(&d) <= 1);
    assert_true(bystander_past(&b, b.ok)); /* still served, after as before */
    long ok_after = b.ok - ok_at_kill;
    bystander_stop(&b);

    figures after = settle(&d, &before);
    print_message(
        "# victim killed: %.0f executions cancelled; bystander %ld right (%ld after the "
        "kill), 0 wrong; fds %d -> %d -> %d, memfd maps %d -> %d -> %d, allocated %.0f -> "
        "%.0f -> %.0f KiB, RSS %ld -> %ld -> %ld KiB (before, with the victim, after)\n",
        cancelled, (long)b.ok, ok_after, before.fds, during.fds, after.fds, before.memfd_maps,
        during.memfd_maps, after.memfd_maps, before.allocated / 1024, during.allocated / 1024,
        after.allocated / 1024, before.rss_kib, during.rss_kib, after.rss_kib);
    assert_int_equal(after.fds, before.fds);
    assert_int_equal(after.memfd_maps, before.memfd_maps);
    /* The victim cost over 16 MiB (its buffer, temporaries, 42 jobs); all of it is freed. */
    assert_true(!OBS_RSS_MEANINGFUL || after.allocated <= before.allocated + HELD_SLACK_BYTES);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- a client that never reads its replies --------------------------------------------- */

static void test_slow_client_dropped(void **state) {
    (void)state;
    char log[512];
    path_in_work(log, sizeof log, "slow-client.log");
    tst_daemon_opts o = {.log_path = log};
    tst_daemon d;
    assert_int_equal(tst_daemon_start_opts(&d, &o), 0);
    obs_events *ev_dropped = obs_events_start(&d, "dropped");
    assert_non_null(ev_dropped);
    int s = tst_connect_raw(&d);
    assert_true(s >= 0);
    assert_int_equal(wire_hello(s, 1), 0);
    wire_add_model m;
    wire_add_model_init(&m, -1);
    uint64_t h = wire_prepare(s, &m.model, NULL, 0);
    assert_true(h != 0);
    float io[6] = {1, 2, 3, 4, 0, 0};
    int pool = wire_memfd(io, sizeof io, sizeof io);
    wire_exec e;
    wire_exec_init(&e, h, 2, sizeof io);
    Nnd__Request req = NND__REQUEST__INIT;
    req.call_case = NND__REQUEST__CALL_EXECUTE;
    req.execute = &e.exec;
    req.id = 2;
    Nnd__Reply *r = wire_call(s, &req, &pool, 1); /* once, read: the baseline has done it all */
    assert_non_null(r);
    assert_int_equal(r->status, 0);
    wire_free(r);
    long rss0 = obs_rss_kib(d.pid), peak = rss0;

    static bystander b;
    bystander_start(&b, &d);
    long ok0 = b.ok;
    fcntl(s, F_SETFL, fcntl(s, F_GETFL) | O_NONBLOCK);
    long sent = 0;
    bool dropped = false;
    char err[256];
    for (time_t end = time(NULL) + 30; !dropped && time(NULL) < end;) {
        req.id = 3 + (uint64_t)sent;
        int rc = proto_frame_send(s, &req.base, &pool, 1, err, sizeof err);
        if (rc == 0) {
            if (++sent % 256 == 0) {
                long rss = obs_rss_kib(d.pid);
                if (rss > peak) peak = rss;
            }
        } else if (rc == -EAGAIN) {
            struct pollfd pfd = {.fd = s, .events = POLLOUT};
            poll(&pfd, 1, 10);
        } else {
            dropped = rc == -EPIPE || rc == -ECONNRESET;
            if (!dropped) fail_msg("send: %s", err);
        }
    }
    long ok_during = b.ok - ok0;
    assert_true(dropped);
    /* The event, unless this subscriber lost events to the flood (the bystander's
     * executions go on publishing, so a lost "dropped" shows as a gap soon after). */
    cJSON *ev = obs_events_next(ev_dropped, 5000);
    for (int i = 0; !ev && i < 250 && !obs_events_lost(ev_dropped); i++)
        ev = obs_events_next(ev_dropped, 20);
    if (ev)
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(ev, "reason")->valuestring,
                            "does not read its replies");
    else
        print_message("# the dropped event was among %lu events this subscriber lost\n",
                      obs_events_lost(ev_dropped));
    assert_true(ev || obs_events_lost(ev_dropped) > 0);
    cJSON_Delete(ev);
    assert_int_equal(obs_status_num(d.state_dir, "connections_dropped"), 1);
    assert_int_equal(wait_in_file(log, "does not read its replies", 1), 1);
    assert_int_equal(wait_status(&d, "connections", 1), 1); /* the bystander goes on */
    assert_true(bystander_past(&b, ok0 + ok_during));
    bystander_stop(&b);
    print_message("# a client that never reads: dropped after %ld executions sent; daemon RSS "
                  "%ld KiB, at most %ld KiB meanwhile; the bystander ran %ld meanwhile (%ld "
                  "refused as busy)\n",
                  sent, rss0, peak, ok_during, (long)b.refused);
    assert_true(ok_during > 0);
    /* The outbox holds at most SRV_OUTBOX_MAX_FRAMES (4096) small replies: well under 16 MiB
     * however long the client keeps sending. */
    assert_true(!OBS_RSS_MEANINGFUL || peak - rss0 < 16 * 1024);
    close(s);
    close(pool);
    obs_events_stop(ev_dropped);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- the state directory full or read-only ---------------------------------------------- */

/* Prepares m with caching in dir, checks its outputs, releases it; returns from_cache. */
static bool cached_run(nnd_client *c, const cache_model *m, const char *dir, uint8_t seed) {
    uint8_t token[NND_CACHE_TOKEN_BYTES];
    for (int i = 0; i < NND_CACHE_TOKEN_BYTES; i++)
        token[i] = (uint8_t)(seed + i);
    uint64_t h = 0;
    bool from_cache = false;
    char err[512];
    int st = nnd_client_prepare_cached(c, &m->add.model, &m->pool_fd, 1, 0, 0, 0, dir, token, &h,
                                       &from_cache, err, sizeof err);
    if (st != 0) fail_msg("prepare with cache files: %s", err);
    assert_int_equal(cache_model_run(c, m, h, NULL), 0);
    assert_int_equal(nnd_client_release(c, h), 0);
    return from_cache;
}

/* A model of n floats prepared with caching and run, then a plain one: the service works. */
static void still_serving(const tst_daemon *d, const char *dir, uint32_t n, float seed) {
    nnd_client *c = connect_to(d, "faults-cache");
    cache_model m;
    assert_int_equal(cache_model_init(&m, n, seed), 0);
    assert_false(cached_run(c, &m, dir, (uint8_t)seed));
    uint64_t h;
    char err[256];
    assert_int_equal(
        nnd_client_prepare(c, &m.add.model, &m.pool_fd, 1, 0, 0, 0, &h, err, sizeof err), 0);
    assert_int_equal(cache_model_run(c, &m, h, NULL), 0);
    cache_model_clear(&m);
    nnd_client_close(c);
}

/* Starts d with its warnings in <work>/<name>.log; <work>/<name> is a cache directory. */
static void start_warning(tst_daemon *d, const char *name, tst_daemon_opts *o, char log[512],
                          char dir[512]) {
    static const char *const args[] = {"--log-level", "warn", NULL};
    snprintf(log, 512, "%s/%s.log", work, name);
    snprintf(dir, 512, "%s/%s", work, name);
    assert_int_equal(mkdir(dir, 0755), 0);
    o->log_path = log;
    if (!o->extra_args) o->extra_args = args;
    assert_int_equal(tst_daemon_start_opts(d, o), 0);
}

static void test_state_dir_full_at_start(void **state) {
    (void)state;
    char log[512], dir[512];
    /* 16 KiB per file: the index cannot even write its tables. The log stays far smaller. */
    tst_daemon_opts o = {.max_file_bytes = 16384};
    tst_daemon d;
    start_warning(&d, "full-start", &o, log, dir);
    assert_int_equal(wait_in_file(log, "compilation caching is off", 1), 1);
    cJSON *st = tst_admin(d.state_dir, "status");
    const cJSON *cache = cJSON_GetObjectItemCaseSensitive(st, "cache");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cache, "enabled")));
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(cache, "disabled_reason");
    assert_true(cJSON_IsString(why) && why->valuestring[0]);
    print_message("# full at start: %s\n", why->valuestring);
    cJSON_Delete(st);
    nnd_client *c = connect_to(&d, "faults-cache");
    uint32_t nm = 9, nd = 9;
    char err[256];
    assert_int_equal(nnd_client_cache_files_needed(c, &nm, &nd, err, sizeof err), 0);
    assert_true(nm == 0 && nd == 0); /* no caching offered */
    nnd_client_close(c);
    still_serving(&d, dir, 4096, 1.0f);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

static void test_state_dir_fills_later(void **state) {
    (void)state;
    char log[512], dir[512];
    tst_daemon_opts o = {0};
    tst_daemon d;
    start_warning(&d, "full-later", &o, log, dir);
    obs_events *ev_off = obs_events_start(&d, "cache_disabled");
    assert_non_null(ev_off);
    /* A first model is cached everywhere while there is room. */
    enum { N = 65536 }; /* 256 KiB of weights */
    nnd_client *c = connect_to(&d, "faults-cache");
    cache_model first;
    assert_int_equal(cache_model_init(&first, N, 1.0f), 0);
    assert_false(cached_run(c, &first, dir, 1));
    assert_true(cached_run(c, &first, dir, 1));
    assert_int_equal(wait_status(&d, "cache.store_entries", 1), 1);

    /* The disk fills: no file of the daemon's may grow past 64 KiB any more. */
    struct rlimit rl = {64 * 1024, RLIM_INFINITY};
    assert_int_equal(prlimit(d.pid, RLIMIT_FSIZE, &rl, NULL), 0);
    for (int i = 0; i < 3; i++) {
        cache_model m;
        assert_int_equal(cache_model_init(&m, N, 2.0f + (float)i), 0);
        assert_false(cached_run(c, &m, dir, (uint8_t)(2 + i))); /* prepared all the same */
        cache_model_clear(&m);
        if (i == 0) {
            cJSON *ev = obs_events_next(ev_off, 5000);
            assert_non_null(ev);
            print_message("# filled later: %s\n",
                          cJSON_GetObjectItemCaseSensitive(ev, "reason")->valuestring);
            cJSON_Delete(ev);
        }
    }
    cJSON *st = tst_admin(d.state_dir, "status");
    const cJSON *cache = cJSON_GetObjectItemCaseSensitive(st, "cache");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cache, "enabled")));
    assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cache, "disk")));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(cache, "disabled_reason")));
    assert_int_equal(obs_num(st, "cache.store_entries"), 1);
    cJSON_Delete(st);
    assert_int_equal(wait_in_file(log, "caching on disk is off", 1), 1); /* one warning */
    /* What was saved before still loads; plain preparation and execution go on. */
    assert_true(cached_run(c, &first, dir, 1));
    cache_model_clear(&first);
    nnd_client_close(c);
    still_serving(&d, dir, 4096, 9.0f);
    assert_null(obs_events_next(ev_off, 200)); /* said once */
    obs_events_stop(ev_off);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

static void test_state_dir_read_only(void **state) {
    (void)state;
    if (geteuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0) {
        print_message("# skipped: needs root and setpriv to run the daemon as another uid\n");
        skip();
    }
    char log[512], dir[512], ro[512];
    path_in_work(ro, sizeof ro, "read-only-state");
    assert_int_equal(mkdir(ro, 0755), 0); /* root's: uid 65534 may read it, not write it */
    const char *args[] = {"--state-dir", ro, NULL};
    tst_daemon_opts o = {.extra_args = args, .uid = 65534};
    tst_daemon d;
    start_warning(&d, "read-only", &o, log, dir);
    assert_int_equal(wait_in_file(log, "compilation caching is off", 1), 1);
    assert_int_equal(wait_in_file(log, "admin and event bus off", 1), 1);
    still_serving(&d, dir, 4096, 3.0f);
    still_serving(&d, dir, 4096, 4.0f);
    assert_int_equal(count_in_file(log, "compilation caching is off"), 1);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_client_killed),
        cmocka_unit_test(test_slow_client_dropped),
        cmocka_unit_test(test_state_dir_full_at_start),
        cmocka_unit_test(test_state_dir_fills_later),
        cmocka_unit_test(test_state_dir_read_only),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
