/* SPDX-License-Identifier: Apache-2.0 */
/* rtt.c: round trips pinned in two placements. See rtt.h. */
#include "bench/rtt.h"

#include <sched.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/timing.h"
#include "tests/support/wire.h"

static int pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

/* A child process pinned to echo_cpu echoes 64-byte datagrams, and this one times the round
 * trips. Raw: send and recv on both sides. With loop_calls, both sides make the system calls
 * of an Execute instead, with no work between them: the client sendmsg and recvmsg with room
 * for descriptors (as libnnd), the echo waiting in epoll_wait before each recvmsg with room
 * for descriptors and answering with sendmsg (as the daemon's event loop). */
static double pingpong_ns(int echo_cpu, bool loop_calls) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        char buf[64], cbuf[CMSG_SPACE(16 * sizeof(int))];
        close(sv[0]);
        int ep = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = sv[1]};
        if (pin_to(echo_cpu) != 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, sv[1], &ev) < 0)
            _exit(1);
        for (;;) {
            ssize_t n;
            if (!loop_calls) {
                n = recv(sv[1], buf, sizeof buf, 0);
                if (n <= 0 || send(sv[1], buf, (size_t)n, 0) != n) _exit(0);
                continue;
            }
            if (epoll_wait(ep, &ev, 1, -1) < 0) continue;
            struct iovec in = {buf, sizeof buf}, out = {buf, 0};
            struct msghdr m = {.msg_iov = &in,
                               .msg_iovlen = 1,
                               .msg_control = cbuf,
                               .msg_controllen = sizeof cbuf};
            n = recvmsg(sv[1], &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
            if (n <= 0) _exit(0);
            out.iov_len = (size_t)n;
            struct msghdr r = {.msg_iov = &out, .msg_iovlen = 1};
            if (sendmsg(sv[1], &r, MSG_DONTWAIT | MSG_NOSIGNAL) != n) _exit(0);
        }
    }
    close(sv[1]);
    static uint64_t t[BENCH_RTT_TRIALS];
    char buf[64] = {0}, cbuf[CMSG_SPACE(16 * sizeof(int))];
    double result = -1;
    for (int i = 0; i < BENCH_RTT_TRIALS; i++) {
        uint64_t t0 = bench_now_ns();
        if (!loop_calls) {
            if (send(sv[0], buf, sizeof buf, 0) != sizeof buf ||
                recv(sv[0], buf, sizeof buf, 0) <= 0)
                goto out;
        } else {
            struct iovec out = {buf, sizeof buf}, in = {buf, sizeof buf};
            struct msghdr s = {.msg_iov = &out, .msg_iovlen = 1};
            struct msghdr m = {.msg_iov = &in,
                               .msg_iovlen = 1,
                               .msg_control = cbuf,
                               .msg_controllen = sizeof cbuf};
            if (sendmsg(sv[0], &s, MSG_NOSIGNAL) != sizeof buf ||
                recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC) <= 0)
                goto out;
        }
        t[i] = bench_now_ns() - t0;
    }
    result = bench_median_u64(t, BENCH_RTT_TRIALS);
out:
    close(sv[0]);
    waitpid(pid, NULL, 0);
    return result;
}

/* Median round trip of the tiny model's execution: Execute with the memfd registered with
 * the connection (named by its token, no fd: as the NNAPI layer sends its memories), or
 * BurstExecute in one burst with the memfd named by a key of ours. */
static double daemon_execute_ns(const tst_daemon *d, bool burst) {
    char err[256];
    nnd_client *c = nnd_client_connect(d->socket_path, "nnd-bench", err, sizeof err);
    if (!c) {
        fprintf(stderr, "bench: connect: %s\n", err);
        return -1;
    }
    wire_add_model m; /* [2] + [2] */
    wire_add_model_init(&m, -1);
    uint64_t handle = 0;
    nnd_burst *b = NULL;
    if (nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &handle, err, sizeof err) != 0 ||
        (burst && nnd_client_burst_configure(c, handle, &b, err, sizeof err) != 0)) {
        fprintf(stderr, "bench: prepare: %s\n", err);
        nnd_client_close(c);
        return -1;
    }
    void *map;
    int fd = nnd_memfd_create("bench-io", 4096, &map);
    float *io = map;
    wire_exec e;
    wire_exec_init(&e, handle, 2, 4096);
    io[0] = 1, io[1] = 2, io[2] = 10, io[3] = 20;
    static uint64_t t[BENCH_RTT_TRIALS];
    double result = -1;
    uint64_t token = 0;
    if (!burst) {
        if (nnd_client_register_memory(c, NND__POOL_KIND__POOL_MEMFD, fd, 0, 4096, &token, err,
                                       sizeof err) != 0) {
            fprintf(stderr, "bench: register: %s\n", err);
            goto out;
        }
        e.pool.kind = NND__POOL_KIND__POOL_REGISTERED;
        e.pool.token = token;
        e.pool.size = 0;
    }
    for (int i = 0; i < BENCH_RTT_TRIALS; i++) {
        Nnd__Reply *r = NULL;
        uint64_t key = 1;
        uint64_t t0 = bench_now_ns();
        int s =
            burst
                ? nnd_client_burst_execute_keyed(b, &e.req, &fd, &key, 1, NULL, &r, err, sizeof err)
                : nnd_client_execute(c, handle, &e.req, NULL, 0, false, 0, &r, err, sizeof err);
        t[i] = bench_now_ns() - t0;
        if (r) nnd__reply__free_unpacked(r, NULL);
        if (s != 0) {
            fprintf(stderr, "bench: execute: %s\n", err);
            goto out;
        }
    }
    if (io[4] != 11 || io[5] != 22) {
        fprintf(stderr, "bench: wrong ADD result %g %g\n", io[4], io[5]);
        goto out;
    }
    result = bench_median_u64(t, BENCH_RTT_TRIALS);
out:
    if (token) nnd_client_unregister_memory(c, token, NULL, 0);
    nnd_client_burst_free(b);
    nnd_client_release(c, handle);
    nnd_client_close(c);
    close(fd);
    return result;
}

/* One placement: a daemon started on daemon_cpu, this process on client_cpu. */
static int measure(bench_rtt_place *p, bool exec, bool burst) {
    tst_daemon d;
    if (pin_to(p->daemon_cpu) != 0 || tst_daemon_start(&d, NULL) != 0) {
        fprintf(stderr, "bench: cannot start the daemon on CPU %d\n", p->daemon_cpu);
        return -1;
    }
    int rc = pin_to(p->client_cpu);
    p->raw_ns = rc ? -1 : pingpong_ns(p->daemon_cpu, false);
    p->floor_ns = exec && p->raw_ns > 0 ? pingpong_ns(p->daemon_cpu, true) : 1;
    p->exec_ns = exec && p->raw_ns > 0 ? daemon_execute_ns(&d, false) : 1;
    p->burst_ns = burst && p->exec_ns > 0 ? daemon_execute_ns(&d, true) : 1;
    tst_daemon_stop(&d);
    p->measured = true;
    return p->raw_ns > 0 && p->floor_ns > 0 && p->exec_ns > 0 && p->burst_ns > 0 ? 0 : -1;
}

int bench_rtt_rows(bench_rtt *out, bool exec, bool burst) {
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) return -1;
    int cpus[2] = {-1, -1}, n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
        if (CPU_ISSET(c, &mine)) cpus[n++] = c;
    *out = (bench_rtt){.same = {.client_cpu = cpus[0], .daemon_cpu = cpus[0]},
                       .cross = {.client_cpu = cpus[1], .daemon_cpu = cpus[0]}};
    int rc = measure(&out->same, exec, burst);
    if (rc == 0 && n == 2) rc = measure(&out->cross, exec, burst);
    sched_setaffinity(0, sizeof mine, &mine);
    return rc;
}
