/* SPDX-License-Identifier: Apache-2.0 */
/* client_internal: the libnnd connection, shared by the files of libnnd only.
 *
 * Contract (nnd_conn.c):
 * - A connection carries many requests at once. Each request in flight is an cli_pending
 *   registered under its id before it is sent; whichever thread reads a reply hands it to
 *   the pending of the same id and wakes that thread alone (a condition variable per
 *   request). Replies for unknown ids (abandoned calls, a Cancel's answer) are dropped.
 * - Reading is a role, not a thread: a waiting thread takes it when nobody holds it, reads
 *   frames until its own reply is there or it gives up, and passes the role on to another
 *   waiting thread when it leaves. No thread waits for another thread's reply.
 * - A transport failure (hang-up, bad frame, a send that fails) marks the connection dead
 *   and wakes every waiter with that error; later calls fail at once with -ENOTCONN.
 * - Every wait is bounded: a pending carries the absolute CLOCK_MONOTONIC time past which
 *   its wait returns -ETIMEDOUT (the connection stays usable; a late reply is dropped).
 *   A reader looks at the clock at least every CLI_CONN_TICK_MS.
 * - Messages name the daemon's socket path.
 *
 * Lanes (nnd_conn.c; docs/threads.md): a thread's synchronous calls go on a connection of
 * its own, a lane, that joined the client's session (Hello.join_session), so that the
 * kernel wakes the caller itself when its reply comes, as it would a process of its own.
 * - cli_lane_for_thread() gives the calling thread its lane, opening it on first use (a
 *   connect and a Hello), or NULL: the thread is the one that connected (a single-threaded
 *   client keeps one connection), lanes are off (max_lanes 0, $NND_CLIENT_LANES), all
 *   taken (the first max_lanes threads to call keep theirs until close), refused once
 *   (quota, or a daemon that does not know sessions: then never again), or this process
 *   is a fork()ed child of the one that opened them. NULL means: use the shared socket.
 * - A lane carries one call at a time, its thread's; replies of calls that gave up (and
 *   of their Cancels) are dropped there. Tickets stay on the shared socket, and so do the
 *   calls of a thread with a ticket not yet settled: requests of one thread reach the
 *   daemon in the order it made them, whichever connection carries them.
 * - A lane that fails (hang-up, bad frame) marks the whole client dead, as the shared
 *   socket would. cli_conn_free() closes the lanes with the rest.
 */
#ifndef CLI_CLIENT_INTERNAL_H
#define CLI_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "proto/frame.h"
#include "nnd/nnd_wire.h"

#define CLI_CONN_TICK_MS 100
#define CLI_CONN_LANES   16 /* the most a client opens; $NND_CLIENT_LANES may lower it */

/* A thread's own connection, joined to the client's session. */
typedef struct cli_lane {
    pthread_t thread;
    int sock;         /* -1: opening, or refused */
    uint8_t *buf;     /* PROTO_FRAME_RECV_BUF bytes, its thread's */
    unsigned tickets; /* its thread's tickets not yet settled, under the client's lock */
} cli_lane;

/* A memory registered on the connection while recording ($NND_RECORD set): the recorder
 * reads a registered pool's bytes through fd (a duplicate, the client's own). */
typedef struct cli_registered {
    uint64_t token;
    int fd;
    uint64_t offset; /* where the registered memory starts in fd */
} cli_registered;

/* One request in flight. */
typedef struct cli_pending {
    uint64_t id;
    uint64_t bound_ns; /* absolute CLOCK_MONOTONIC: the wait gives up here (0: never) */
    pthread_cond_t cond;
    bool ticket;  /* an asynchronous ticket: stays registered until collected */
    bool waiting; /* a thread sleeps on cond */
    bool arrived;
    proto_frame_in in;     /* the reply and its fds, once arrived */
    struct cli_lane *lane; /* a ticket's: the lane of the thread that sent it, counted there */
    struct cli_pending *prev, *next;
} cli_pending;

struct nnd_client {
    int sock;
    char path[108];       /* the socket connected to, for messages */
    pthread_mutex_t lock; /* guards everything below; never held across a system call that
                             waits */
    uint64_t next_id;
    bool dead; /* the transport failed; every later call fails fast */
    int dead_rc;
    char dead_msg[224];
    bool reading;         /* a thread holds the reader role */
    cli_pending *pending; /* requests in flight */
    uint8_t *buf;         /* PROTO_FRAME_RECV_BUF bytes, the reader's */
    atomic_uint call_timeout_ms;
    char daemon_version[128];
    char name[64];                   /* given at connect; its lanes say it too */
    char *daemon_state_dir;          /* from Hello; "" when the daemon did not say */
    unsigned daemon_operation_types; /* from Hello; 0 when the daemon did not say */
    /* GetNumberOfCacheFilesNeeded's answer, fixed for a daemon's life: asked once */
    bool cache_files_known;
    uint32_t cache_model_files, cache_data_files;
    uint64_t cache_save_max_bytes; /* 0: no limit */
    cli_registered *registered;    /* kept while recording only; under lock */
    size_t n_registered;
    uint64_t session_token;      /* from Hello; 0 when the daemon has no shared sessions */
    unsigned fork_generation;    /* lanes serve only the process that opened them */
    pthread_t connecting_thread; /* uses the first connection, never a lane */
    unsigned max_lanes;
    unsigned n_lanes; /* lanes[0..n_lanes) are taken, under lock */
    bool lanes_off;   /* a lane was refused: no more */
    cli_lane lanes[CLI_CONN_LANES];
};

/* The fd (borrowed, -1 when unknown) and offset of registered memory token, known only when
 * it was registered while recording. */
int cli_registered_fd(nnd_client *c, uint64_t token, uint64_t *offset);

/* err <- the formatted message (nothing when err is NULL or errlen 0). */
void cli_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- nnd_conn.c ---------------------------------------------------------------------- */

/* Absolute CLOCK_MONOTONIC nanoseconds now. */
uint64_t cli_conn_now_ns(void);
/* The bound of a call with this deadline (0: none): the deadline plus
 * NND_DEADLINE_MARGIN_MS, else now plus the client's call timeout. */
uint64_t cli_conn_bound(nnd_client *c, uint64_t deadline_ns);
/* Registers p (ticket or not, with bound_ns) under a fresh id, written to req->id, and
 * sends req with fds. 0, or -errno with err set and p not registered. p == NULL sends
 * without waiting for any reply (it is dropped when it comes). */
int cli_conn_send(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds, cli_pending *p,
                  uint64_t bound_ns, bool ticket, char *err, size_t errlen);
/* Waits for the reply of p (not a ticket), sent by cli_conn_send(). 0 with the frame moved
 * to *in; else -errno with err set. p is unregistered either way. */
int cli_conn_wait(nnd_client *c, cli_pending *p, proto_frame_in *in, char *err, size_t errlen);
/* Waits for the reply of ticket id until min(until_ns, its bound) (until_ns 0: its bound).
 * 0 with the frame in *in and the ticket freed; -ETIMEDOUT leaves it open unless its own
 * bound passed; -EINVAL for an id that is no open ticket, -EBUSY when another thread waits
 * for it. */
int cli_conn_wait_ticket(nnd_client *c, uint64_t id, uint64_t until_ns, proto_frame_in *in,
                         char *err, size_t errlen);
/* Frees every pending left (tickets nobody collected) and closes the lanes, at close. */
void cli_conn_free(nnd_client *c);

/* Lanes (see the contract above). cli_lanes_init() at connect, before any call. */
void cli_lanes_init(nnd_client *c, unsigned max_lanes);
cli_lane *cli_lane_for_thread(nnd_client *c);
/* One call on lane l until bound_ns: 0 with its reply in *in, or -errno with err set. */
int cli_lane_call(nnd_client *c, cli_lane *l, Nnd__Request *req, const int *fds, size_t nfds,
                  uint64_t bound_ns, proto_frame_in *in, char *err, size_t errlen);
/* Sends req (its id set here) on l without waiting: its reply is dropped there later. */
void cli_lane_send(nnd_client *c, cli_lane *l, Nnd__Request *req, uint64_t bound_ns);

/* connect() without blocking past `bound` (CLOCK_MONOTONIC ns): a listener whose backlog
 * is full (a daemon that stopped accepting) is retried until then. 0 or -errno. */
struct sockaddr_un;
int cli_connect_bounded(int sock, const struct sockaddr_un *sa, uint64_t bound);

/* ---- nnd_client.c ---------------------------------------------------------------------- */

/* Settles a reply: its status, with err set to its message when not NONE; r goes to *out
 * (when out is not NULL) if the status is NONE or keep_failed, and is freed otherwise. */
int cli_take_reply(Nnd__Reply *r, bool keep_failed, Nnd__Reply **out, char *err, size_t errlen);

/* One call whose reply must carry `want` (unless NOT_SET) on success. Returns the status
 * or -errno; on NONE *out (may be NULL) is the reply to free, else err holds its message. */
int cli_simple_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                    Nnd__Reply__ResultCase want, Nnd__Reply **out, char *err, size_t errlen);
/* The same, taking up to *n_reply_fds of the reply's fds into reply_fds (on any status;
 * *n_reply_fds says how many, the caller closes them). */
int cli_simple_call_fds(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                        Nnd__Reply__ResultCase want, Nnd__Reply **out, int *reply_fds,
                        size_t *n_reply_fds, char *err, size_t errlen);

/* One call whose whole reply goes to *reply (may be NULL) whatever its status, as
 * nnd_client_execute() answers. Returns the status or -errno; err holds the message. */
int cli_reply_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                   Nnd__Reply **reply, char *err, size_t errlen);

/* ---- cli_burst_chan.c: burst channels (proto/burst_chan.h) -------------------------------
 * cli_burst_chan_attach() maps the channel memfd of a ConfigureBurst reply (closing fd),
 * checks its layout and keeps bell, the doorbell: NULL when it is not a layout this build
 * knows (both fds closed). cli_burst_chan_call() sends
 * req (a BurstExecute without fds; its id is set here) through the channel and waits for
 * its Reply until bound_ns: 0 with *reply; -EBUSY when the channel cannot take it (another
 * thread's call is in it, it is broken, req is too big): nothing was sent, use the socket;
 * -ETIMEDOUT, -ENOTCONN or -EPROTO when it was sent and no proper answer came (err says
 * which): the channel is broken from then on. */
typedef struct cli_burst_chan cli_burst_chan;
cli_burst_chan *cli_burst_chan_attach(int fd, int bell);
void cli_burst_chan_detach(cli_burst_chan *ch);
bool cli_burst_chan_usable(cli_burst_chan *ch);
int cli_burst_chan_call(cli_burst_chan *ch, nnd_client *c, Nnd__Request *req, uint64_t bound_ns,
                        Nnd__Reply **reply, char *err, size_t errlen);

#endif
