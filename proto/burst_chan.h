/* SPDX-License-Identifier: Apache-2.0 */
/* burst_chan: the layout and wait protocol of a burst's shared-memory channel, used by the
 * client (client/cli_burst_chan.c) and the daemon (daemon/burst_chan.c).
 *
 * Contract:
 * - The daemon creates the channel at ConfigureBurst (channel = true): a memfd of
 *   PROTO_CHAN_SIZE bytes, sealed against shrinking and growing, its header filled in, and a
 *   doorbell eventfd, both sent with the reply. One request at a time: the client writes
 *   a packed Nnd__Request (BurstExecute, no fds) into the request area, then req_len, then
 *   req_seq (release); the daemon copies req_len bytes out once, answers with a packed
 *   Nnd__Reply in the result area, then res_len, then res_seq = the request's seq.
 * - Sequence numbers start at 1 and go up by one per request (wrapping, never 0). The
 *   daemon answers a number out of order with INVALID_ARGUMENT and takes it as the new
 *   start; a result carries the seq it answers, so that a client never takes an old answer.
 * - Waking the daemon: while daemon_sleeping is set the client, after publishing req_seq
 *   (sequentially consistent store, then load of the flag), writes 1 to the doorbell (the daemon's
 * loop watches it: no loop ever waits on a futex). While it is clear a daemon thread is polling
 * req_seq. The daemon sets it (the same way) and looks at req_seq once more before it stops
 * polling.
 * - Waking the client: a client that waits sets client_sleeping, rechecks res_seq and
 *   FUTEX_WAITs on it (a shared futex: the memfd's page is the key); the daemon, after
 *   publishing res_seq, FUTEX_WAKEs it when client_sleeping is set. Waits are
 *   bounded, so that a peer that scribbles over the words costs a wake-up, never a hang.
 * - Polling: before sleeping, a side polls for at most its window, and not at all when
 *   the machine has one CPU online or the peer's last published CPU (daemon_cpu,
 *   client_cpu) is the one this side runs on (polling would only delay the peer). The
 *   window adapts: it halves after a wait that the peer took longer than the configured
 *   window to end, and doubles (up to the configured window) after one it ended within
 *   it. The configured window is $NND_BURST_POLL_US (default PROTO_CHAN_POLL_US_DEFAULT, at
 *   most PROTO_CHAN_POLL_US_MAX; 0 turns polling off), read once per process.
 * - Everything in the header may be written by the client: the daemon reads each word it
 *   needs once, checks it before any use, and never reads the layout words back.
 */
#ifndef PROTO_BURST_CHAN_H
#define PROTO_BURST_CHAN_H

#include <stdbool.h>
#include <stdint.h>

#define PROTO_CHAN_MAGIC           0x6e6e6463u /* "nndc" */
#define PROTO_CHAN_VERSION         1u
#define PROTO_CHAN_SIZE            (64u * 1024u)
#define PROTO_CHAN_HEADER          256u
#define PROTO_CHAN_AREA            ((PROTO_CHAN_SIZE - PROTO_CHAN_HEADER) / 2u)
#define PROTO_CHAN_POLL_US_DEFAULT 50u
#define PROTO_CHAN_POLL_US_MAX     1000u

typedef struct proto_chan_hdr {
    /* Written by the daemon at setup. */
    uint32_t magic, version, size, req_off, res_off, area, pad0, pad1;
    /* Request side: the client's words, the daemon's sleeping flag and CPU. */
    uint32_t req_seq, req_len, daemon_sleeping;
    int32_t daemon_cpu;
    uint8_t pad2[64 - 16];
    /* Result side: the daemon's words, the client's sleeping flag and CPU. */
    uint32_t res_seq, res_len, client_sleeping;
    int32_t client_cpu;
} proto_chan_hdr;

/* Fills a fresh channel's header. */
void proto_chan_init(proto_chan_hdr *h);
/* Whether a mapped channel of size bytes has the layout this build knows. */
bool proto_chan_valid(const proto_chan_hdr *h, uint64_t size);

/* One side's polling state. */
typedef struct proto_chan_poll {
    uint32_t window_us; /* now; adapts between 0 and max_us */
    uint32_t max_us;    /* configured */
    bool one_cpu;       /* the machine has one CPU online */
} proto_chan_poll;
void proto_chan_poll_init(proto_chan_poll *p);

/* Waits until *word != old, or stop (may be NULL) becomes non-zero, or timeout_ns passes
 * (0: wait for good). Polls first as the contract says, then sleeps with sleeping set.
 * peer_cpu: the peer's published CPU word; my_cpu: where this side publishes its own.
 * Returns the word's new value; old when it timed out or was stopped. */
uint32_t proto_chan_wait(proto_chan_poll *p, uint32_t *word, uint32_t old, uint32_t *sleeping,
                         const int32_t *peer_cpu, int32_t *my_cpu, const int *stop,
                         uint64_t timeout_ns);
/* Publishes seq in *word (sequentially consistent), and tells whether the peer's sleeping flag is
 * set: then the caller wakes it (its futex, or the doorbell). */
bool proto_chan_publish(uint32_t *word, uint32_t seq, const uint32_t *peer_sleeping);
/* The polling window after a wait that took took_us: doubled (at least 1) when the peer
 * answered within the configured window, halved otherwise. */
void proto_chan_adapt(proto_chan_poll *p, uint64_t took_us);
/* Whether to poll for a peer last seen on peer_cpu, running on my_cpu. */
bool proto_chan_should_poll(const proto_chan_poll *p, int32_t peer_cpu, int32_t my_cpu);
/* Spins until *word != old, stop (may be NULL) is set or the window passes; whether it
 * changed. */
bool proto_chan_spin(const proto_chan_poll *p, const uint32_t *word, uint32_t old, const int *stop);
/* Sets *sleeping and returns *word as read after it: a side about to sleep compares that
 * with what it waits to see change (the other half of proto_chan_publish()). */
uint32_t proto_chan_sleeping(uint32_t *sleeping, const uint32_t *word);
/* Wakes every waiter on word (a side stopping). */
void proto_chan_wake(uint32_t *word);
/* The seq after seq (never 0). */
uint32_t proto_chan_next(uint32_t seq);

#endif
