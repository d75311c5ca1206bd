/* SPDX-License-Identifier: Apache-2.0 */
/* qos.c: the scheduler's rows of `make bench`. See qos.h. */
#include "bench/qos.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "proto/frame.h"
#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/qos_models.h"
#include "tests/support/timing.h"

#define OUT_SLOTS 64
#define SEND_S    3 /* seconds of open-loop sending */
#define HIGH_RUNS 400

static void sleep_until(uint64_t t) {
    struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

/* scheduler.<key>[.<key2>] from the admin status, or -1. */
static double sched_stat2(const tst_daemon *d, const char *key, const char *key2) {
    cJSON *j = tst_admin(d->state_dir, "status");
    const cJSON *x = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "scheduler"), key);
    if (key2) x = cJSON_GetObjectItem(x, key2);
    double v = cJSON_IsNumber(x) ? x->valuedouble : -1;
    cJSON_Delete(j);
    return v;
}

static double sched_stat(const tst_daemon *d, const char *key) {
    return sched_stat2(d, key, NULL);
}

/* ---- raw frames: one socket, a sender thread and a receiving thread ---------------------- */

static int raw_send(int sock, Nnd__Request *req, const int *fds, size_t nfds) {
    static const int none[1] = {-1};
    char err[256];
    int rc = proto_frame_send(sock, &req->base, nfds ? fds : none, nfds, err, sizeof err);
    if (rc < 0) fprintf(stderr, "bench qos: send: %s\n", err);
    return rc;
}

static Nnd__Reply *raw_recv(int sock, uint8_t *buf, int timeout_ms) {
    for (;;) {
        struct pollfd p = {.fd = sock, .events = POLLIN};
        int n = poll(&p, 1, timeout_ms);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return NULL;
        proto_frame_in in;
        char err[256];
        int rc = proto_frame_recv(sock, &nnd__reply__descriptor, buf, &in, err, sizeof err);
        if (rc == -EAGAIN) continue;
        if (rc <= 0) return NULL;
        Nnd__Reply *r = (Nnd__Reply *)in.msg;
        in.msg = NULL;
        proto_frame_in_clear(&in);
        return r;
    }
}

typedef struct flood {
    int sock;
    int fd; /* the pool */
    uint64_t handle;
    qos_req req[OUT_SLOTS];
    uint8_t *buf;
    /* open loop */
    uint64_t n, t0, period_ns, deadline_ns;
    uint64_t *deadline; /* per id (1-based) */
} flood;

static int send_exec(flood *f, uint64_t id, uint64_t deadline) {
    Nnd__Execute x = NND__EXECUTE__INIT;
    x.prepared_model = f->handle;
    x.request = &f->req[id % OUT_SLOTS].req;
    x.deadline_ns = deadline;
    Nnd__Request r = NND__REQUEST__INIT;
    r.id = id;
    r.call_case = NND__REQUEST__CALL_EXECUTE;
    r.execute = &x;
    return raw_send(f->sock, &r, &f->fd, 1);
}

static void *sender(void *arg) {
    flood *f = arg;
    for (uint64_t i = 1; i <= f->n; i++) {
        uint64_t t = f->t0 + (i - 1) * f->period_ns;
        sleep_until(t);
        f->deadline[i] = t + f->deadline_ns; /* written before the request leaves */
        if (send_exec(f, i, f->deadline[i]) < 0) break;
    }
    return NULL;
}

/* Completions per second back to back, four in flight. */
static double capacity(flood *f) {
    uint64_t id = 0, t0 = 0;
    int done = 0, inflight = 0;
    enum { WARM = 50, MEASURE = 400 };
    while (done < WARM + MEASURE) {
        while (inflight < 4 && done + inflight < WARM + MEASURE) {
            if (send_exec(f, ++id, 0) < 0) return -1;
            inflight++;
        }
        Nnd__Reply *r = raw_recv(f->sock, f->buf, 30000);
        if (!r) return -1;
        int st = r->status;
        nnd__reply__free_unpacked(r, NULL);
        if (st != 0) return -1;
        inflight--;
        if (++done == WARM) t0 = bench_now_ns();
    }
    return MEASURE / ((double)(bench_now_ns() - t0) / 1e9);
}

static int open_loop(const tst_daemon *d, flood *f, bench_qos *out) {
    out->service_ns = 1e9 / out->capacity;
    out->offered = 2 * out->capacity;
    f->period_ns = (uint64_t)(1e9 / out->offered);
    f->deadline_ns = (uint64_t)(10 * out->service_ns);
    f->n = (uint64_t)(out->offered * SEND_S);
    f->deadline = calloc(f->n + 1, sizeof *f->deadline);
    if (!f->deadline) return -1;
    double submitted0 = sched_stat(d, "submitted");
    f->t0 = bench_now_ns() + 20000000;
    pthread_t th;
    if (pthread_create(&th, NULL, sender, f) != 0) return -1;
    uint64_t got = 0;
    while (got < f->n) {
        Nnd__Reply *r = raw_recv(f->sock, f->buf, 10000);
        if (!r) break;
        uint64_t t = bench_now_ns(), id = r->id;
        got++;
        if (r->status == 0 && id && id <= f->n) {
            if (t <= f->deadline[id])
                out->met++;
            else
                out->late++;
        } else {
            out->failed++; /* refused at admission, or admitted and then missed */
        }
        nnd__reply__free_unpacked(r, NULL);
    }
    pthread_join(th, NULL);
    out->sent = f->n;
    out->admitted = (uint64_t)(sched_stat(d, "submitted") - submitted0);
    free(f->deadline);
    if (got < f->n) {
        fprintf(stderr, "bench qos: %llu of %llu replies\n", (unsigned long long)got,
                (unsigned long long)f->n);
        return -1;
    }
    out->refused = f->n - out->admitted;
    out->daemon_met = (uint64_t)sched_stat2(d, "deadlines", "met");
    out->daemon_aborted = (uint64_t)sched_stat(d, "aborted_for_deadline");
    out->daemon_refused_late = (uint64_t)sched_stat2(d, "refused", "of_which_at_dispatch");
    out->met_share = out->admitted ? (double)out->met / (double)out->admitted : 0;
    out->goodput = ((double)out->met / ((double)f->n * (double)f->period_ns / 1e9)) / out->capacity;
    return 0;
}

static int deadline_rows(const tst_daemon *d, bench_qos *out) {
    flood f;
    memset(&f, 0, sizeof f);
    f.sock = tst_connect_raw(d);
    f.buf = malloc(PROTO_FRAME_RECV_BUF);
    if (f.sock < 0 || !f.buf) return -1;
    enum { N = 800, LEN = 16384 }; /* about a millisecond and a half */
    qos_chain m;
    qos_chain_init(&m, N, LEN);
    Nnd__PrepareModel pm = NND__PREPARE_MODEL__INIT;
    pm.model = &m.model;
    Nnd__Request r = NND__REQUEST__INIT;
    r.id = 1ull << 62;
    r.call_case = NND__REQUEST__CALL_PREPARE_MODEL;
    r.prepare_model = &pm;
    int rc = -1;
    Nnd__Reply *rep = NULL;
    if (raw_send(f.sock, &r, NULL, 0) == 0) rep = raw_recv(f.sock, f.buf, 60000);
    if (!rep || rep->status != 0) {
        fprintf(stderr, "bench qos: prepare failed: %s\n", rep ? rep->message : "no reply");
        goto out;
    }
    f.handle = rep->prepared->handle;
    size_t bytes = (size_t)LEN * sizeof(float), size = bytes * (2 + OUT_SLOTS);
    void *map;
    f.fd = nnd_memfd_create("bench-qos", size, &map);
    if (f.fd < 0) goto out;
    float *x = map;
    for (size_t i = 0; i < 2 * (size_t)LEN; i++)
        x[i] = 1.0f;
    for (int s = 0; s < OUT_SLOTS; s++)
        qos_req_init(&f.req[s], LEN, size, 0, bytes, bytes * (2 + (uint64_t)s));
    out->capacity = capacity(&f);
    if (out->capacity > 0) rc = open_loop(d, &f, out);
    munmap(map, size);
    close(f.fd);
out:
    if (rep) nnd__reply__free_unpacked(rep, NULL);
    qos_chain_free(&m);
    free(f.buf);
    close(f.sock);
    return rc;
}

/* ---- HIGH under a LOW flood of the same app ----------------------------------------------- */

typedef struct lowflood {
    nnd_client *c;
    uint64_t handle;
    int fd;
    qos_req req;
    atomic_bool stop;
    int rc;
} lowflood;

static void *low_main(void *arg) {
    lowflood *l = arg;
    nnd_exec_opts lowp = {.priority = NND__PRIORITY__PRIORITY_LOW};
    uint64_t t[4];
    char err[256];
    for (int i = 0; i < 4; i++)
        if (nnd_client_execute_start(l->c, l->handle, &l->req.req, &l->fd, 1, &lowp, &t[i], err,
                                     sizeof err) < 0)
            return NULL;
    for (int i = 0;; i = (i + 1) % 4) {
        int st = nnd_client_execute_wait(l->c, t[i], 60000, NULL, err, sizeof err);
        if (st != 0) {
            fprintf(stderr, "bench qos: LOW flood: %s\n", err);
            l->rc = -1;
        }
        if (atomic_load(&l->stop)) {
            for (int k = 1; k < 4; k++)
                nnd_client_execute_wait(l->c, t[(i + k) % 4], 60000, NULL, err, sizeof err);
            return NULL;
        }
        if (nnd_client_execute_start(l->c, l->handle, &l->req.req, &l->fd, 1, &lowp, &t[i], err,
                                     sizeof err) < 0)
            return NULL;
    }
}

/* p99 of HIGH_RUNS executions, a pause of a few ms (varied) before each; *median and
 * *driver_p99 (the daemon's time_in_driver) too. */
static double high_p99(nnd_client *c, uint64_t h, int fd, qos_req *req, double *median,
                       double *driver_p99) {
    static uint64_t t[HIGH_RUNS], drv[HIGH_RUNS];
    char err[256];
    nnd_exec_opts hp = {.priority = NND__PRIORITY__PRIORITY_HIGH, .measure_timing = true};
    for (int i = 0; i < HIGH_RUNS; i++) {
        struct timespec ts = {0, 1000000 + (i * 7919 % 3000) * 1000};
        nanosleep(&ts, NULL);
        uint64_t t0 = bench_now_ns();
        Nnd__Reply *r = NULL;
        if (nnd_client_execute_opts(c, h, &req->req, &fd, 1, &hp, &r, err, sizeof err) != 0) {
            fprintf(stderr, "bench qos: HIGH: %s\n", err);
            return -1;
        }
        t[i] = bench_now_ns() - t0;
        drv[i] = r->executed->timing->time_in_driver_ns;
        nnd__reply__free_unpacked(r, NULL);
    }
    qsort(t, HIGH_RUNS, sizeof t[0], bench_cmp_u64);
    qsort(drv, HIGH_RUNS, sizeof t[0], bench_cmp_u64);
    *driver_p99 = (double)drv[HIGH_RUNS * 99 / 100];
    if (median) *median = (double)t[HIGH_RUNS / 2];
    return (double)t[HIGH_RUNS * 99 / 100];
}

static int priority_rows(const tst_daemon *d, bench_qos *out) {
    char err[256];
    nnd_client *hc = nnd_client_connect(d->socket_path, "bench-high", err, sizeof err);
    lowflood l = {.c = nnd_client_connect(d->socket_path, "bench-low", err, sizeof err)};
    if (!hc || !l.c) return -1;
    enum { HN = 200, HLEN = 16384, LN = 400, LLEN = 65536 };
    qos_chain hm, lm;
    qos_chain_init(&hm, HN, HLEN);
    qos_chain_init(&lm, LN, LLEN);
    uint64_t hh = 0;
    int rc = -1;
    if (nnd_client_prepare(hc, &hm.model, NULL, 0, 0, NND__PRIORITY__PRIORITY_HIGH, 0, &hh, err,
                           sizeof err) ||
        nnd_client_prepare(l.c, &lm.model, NULL, 0, 0, NND__PRIORITY__PRIORITY_LOW, 0, &l.handle,
                           err, sizeof err)) {
        fprintf(stderr, "bench qos: prepare: %s\n", err);
        goto out;
    }
    size_t hb = (size_t)HLEN * sizeof(float), lb = (size_t)LLEN * sizeof(float);
    int hfd = nnd_memfd_create("bench-high", 3 * hb, NULL);
    l.fd = nnd_memfd_create("bench-low", 3 * lb, NULL);
    qos_req hreq;
    qos_req_init(&hreq, HLEN, 3 * hb, 0, hb, 2 * hb);
    qos_req_init(&l.req, LLEN, 3 * lb, 0, lb, 2 * lb);
    double idle_median, flood_median;
    out->high_idle_p99 = high_p99(hc, hh, hfd, &hreq, &idle_median, &out->high_idle_driver_p99);
    double pre0 = sched_stat(d, "preempted");
    pthread_t th;
    if (out->high_idle_p99 > 0 && pthread_create(&th, NULL, low_main, &l) == 0) {
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
        out->high_flood_p99 =
            high_p99(hc, hh, hfd, &hreq, &flood_median, &out->high_flood_driver_p99);
        atomic_store(&l.stop, true);
        pthread_join(th, NULL);
        out->preempted = (uint64_t)(sched_stat(d, "preempted") - pre0);
        out->high_service_ns = idle_median;
        rc = out->high_flood_p99 > 0 && l.rc == 0 ? 0 : -1;
    }
    /* One LOW run alone, for the record. */
    uint64_t t0 = bench_now_ns();
    nnd_client_execute_opts(l.c, l.handle, &l.req.req, &l.fd, 1, NULL, NULL, err, sizeof err);
    out->low_service_ns = (double)(bench_now_ns() - t0);
    close(hfd);
    close(l.fd);
out:
    qos_chain_free(&hm);
    qos_chain_free(&lm);
    nnd_client_close(hc);
    nnd_client_close(l.c);
    return rc;
}

static int one_run(bench_qos *out) {
    memset(out, 0, sizeof *out);
    tst_daemon d;
    if (tst_daemon_start(&d, NULL) != 0) {
        fprintf(stderr, "bench qos: cannot start the daemon\n");
        return -1;
    }
    int rc = deadline_rows(&d, out);
    if (rc == 0) rc = priority_rows(&d, out);
    tst_daemon_stop(&d);
    return rc;
}

int bench_qos_rows(bench_qos *out) {
    static bench_qos runs[BENCH_QOS_REPEATS];
    double met[BENCH_QOS_REPEATS], good[BENCH_QOS_REPEATS], high[BENCH_QOS_REPEATS];
    for (int r = 0; r < BENCH_QOS_REPEATS; r++) {
        if (one_run(&runs[r]) != 0) return -1;
        met[r] = runs[r].met_share;
        good[r] = runs[r].goodput;
        high[r] = runs[r].high_flood_p99 / runs[r].high_idle_p99;
    }
    /* Deadline figures from the run with the median met share, priority figures from
     * the run with the median ratio; goodput is its own median. */
    const bench_qos *dl = &runs[bench_median_index(met, BENCH_QOS_REPEATS)];
    const bench_qos *pr = &runs[bench_median_index(high, BENCH_QOS_REPEATS)];
    *out = *dl;
    out->goodput = good[bench_median_index(good, BENCH_QOS_REPEATS)];
    out->high_idle_p99 = pr->high_idle_p99;
    out->high_flood_p99 = pr->high_flood_p99;
    out->high_idle_driver_p99 = pr->high_idle_driver_p99;
    out->high_flood_driver_p99 = pr->high_flood_driver_p99;
    out->high_service_ns = pr->high_service_ns;
    out->low_service_ns = pr->low_service_ns;
    out->preempted = pr->preempted;
    memcpy(out->met_share_runs, met, sizeof met);
    memcpy(out->goodput_runs, good, sizeof good);
    memcpy(out->high_ratio_runs, high, sizeof high);
    return 0;
}
