/* burst_chan: the layout and wait protocol of a burst's shared-memory channel, used by the
 * client (client/nnd_burst_chan.c) and the daemon (daemon/burst_chan.c).
 *
 * Contract:
 * - The daemon creates the channel at ConfigureBurst (channel = true): a memfd of
 *   NND_CHAN_SIZE bytes, sealed against shrinking and growing, its header filled in, sent
 *   in the reply. One request at a time: the client writes a packed Nnd__Request
 *   (BurstExecute, no fds) into the request area, then req_len, then req_seq (release);
 *   the daemon copies req_len bytes out once, answers with a packed Nnd__Reply in the
 *   result area, then res_len, then res_seq = the request's seq (release).
 * - Sequence numbers start at 1 and go up by one per request (wrapping, never 0). The
 *   daemon answers a number out of order with INVALID_ARGUMENT and takes it as the new
 *   start; a result carries the seq it answers, so that a client never takes an old answer.
 * - Sleeping: a side that waits sets its *_sleeping word, fences, rechecks the seq word and
 *   FUTEX_WAITs on it (shared futex: the memfd's page is the key); a side that publishes
 *   a seq fences and FUTEX_WAKEs when the peer's *_sleeping word is set. Both sides wait
 *   with a timeout, so a peer that scribbles over the words costs a wake-up, never a hang.
 * - Polling (nnd_chan_wait): before sleeping, a side polls the word for at most its
 *   window, and not at all when the machine has one CPU online or the peer's last
 *   published CPU is the one this side runs on (polling would only delay the peer). The window
 *   adapts: it halves after a poll that timed out and doubles (up to the configured
 *   window) after an answer that came within the configured window. The configured window
 *   is $NND_BURST_POLL_US (default NND_CHAN_POLL_US_DEFAULT, at most NND_CHAN_POLL_US_MAX;
 *   0 turns polling off), read once per process.
 * - Everything in the header after the first eight words may be written by the client:
 *   the daemon reads each such word once and checks it before any use.
 */
#ifndef NND_BURST_CHAN_H
#define NND_BURST_CHAN_H

#include <stdbool.h>
#include <stdint.h>

#define NND_CHAN_MAGIC           0x6e6e6463u /* "nndc" */
#define NND_CHAN_VERSION         1u
#define NND_CHAN_SIZE            (64u * 1024u)
#define NND_CHAN_HEADER          256u
#define NND_CHAN_AREA            ((NND_CHAN_SIZE - NND_CHAN_HEADER) / 2u)
#define NND_CHAN_POLL_US_DEFAULT 50u
#define NND_CHAN_POLL_US_MAX     1000u

typedef struct nnd_chan_hdr {
    /* Written by the daemon at setup. */
    uint32_t magic, version, size, req_off, res_off, area, pad0, pad1;
    /* Request side: the client's words, the daemon's sleeping flag and CPU. */
    uint32_t req_seq, req_len, daemon_sleeping;
    int32_t daemon_cpu;
    uint8_t pad2[64 - 16];
    /* Result side: the daemon's words, the client's sleeping flag and CPU. */
    uint32_t res_seq, res_len, client_sleeping;
    int32_t client_cpu;
} nnd_chan_hdr;

/* Fills a fresh channel's header. */
void nnd_chan_init(nnd_chan_hdr *h);
/* Whether a mapped channel of size bytes has the layout this build knows. */
bool nnd_chan_valid(const nnd_chan_hdr *h, uint64_t size);

/* One side's polling state. */
typedef struct nnd_chan_poll {
    uint32_t window_us; /* now; adapts between 0 and max_us */
    uint32_t max_us;    /* configured */
    bool one_cpu;       /* the machine has one CPU online */
} nnd_chan_poll;
void nnd_chan_poll_init(nnd_chan_poll *p);

/* Waits until *word != old, or stop (may be NULL) becomes non-zero, or timeout_ns passes
 * (0: wait for good). Polls first as the contract says, then sleeps with sleeping set.
 * peer_cpu: the peer's published CPU word; my_cpu: where this side publishes its own.
 * Returns the word's new value; old when it timed out or was stopped. */
uint32_t nnd_chan_wait(nnd_chan_poll *p, uint32_t *word, uint32_t old, uint32_t *sleeping,
                       const int32_t *peer_cpu, int32_t *my_cpu, const int *stop,
                       uint64_t timeout_ns);
/* Publishes seq in *word (release) and wakes the peer if its sleeping flag is set. */
void nnd_chan_publish(uint32_t *word, uint32_t seq, const uint32_t *peer_sleeping);
/* Wakes every waiter on word (a side stopping). */
void nnd_chan_wake(uint32_t *word);
/* The seq after seq (never 0). */
uint32_t nnd_chan_next(uint32_t seq);

#endif
