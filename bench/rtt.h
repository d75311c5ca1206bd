/* SPDX-License-Identifier: Apache-2.0 */
/* rtt: the round-trip rows of nnd-bench, each measured with client and daemon pinned, in
 * two placements, each against a raw SOCK_SEQPACKET ping-pong in the same placement.
 *
 * Contract:
 * - bench_rtt_rows() takes the first two CPUs this process may run on (nnd-bench pins it
 *   to $NND_BENCH_CPUS first): "same" puts the daemon (every thread of it: it is started
 *   with that one CPU as its affinity) and the client on the first; "cross" puts the
 *   daemon on the first and the client on the second. The raw ping-pong's echoing process
 *   stands where the daemon stands. With one CPU only, "cross" is not measured
 *   (measured = false) and its rows are reported as not measurable.
 * - Per placement: medians of BENCH_RTT_TRIALS round trips of a tiny ADD model through a
 *   fresh daemon: Execute with its memfd registered (a token, no fd), and BurstExecute in one burst
 * with its memfd named by a key of ours (after the first trial it is a slot: libnnd sends it
 * through the burst's shared-memory channel when the daemon gave one), and the raw ping-pong's.
 * With the Execute rows, also the floor: the same ping-pong making the system calls an
 * Execute makes on each side (sendmsg and recvmsg with room for descriptors; the echo waits
 * in epoll_wait as the daemon's loop does) with no work between them.
 * - The process's own affinity is restored before returning. Returns 0, or -1 (with a
 *   message on stderr) when a measurement failed.
 */
#ifndef BENCH_RTT_H
#define BENCH_RTT_H

#include <stdbool.h>

#define BENCH_RTT_TRIALS 4000

typedef struct bench_rtt_place {
    bool measured;
    int client_cpu, daemon_cpu;
    double raw_ns, exec_ns, burst_ns;
    double floor_ns; /* the event loop's system calls alone, echoing (no work) */
} bench_rtt_place;

typedef struct bench_rtt {
    bench_rtt_place same, cross;
} bench_rtt;

int bench_rtt_rows(bench_rtt *out, bool exec, bool burst);

#endif
