/* client_internal: the libnnd connection, shared by the files of libnnd only. */
#ifndef NND_CLIENT_INTERNAL_H
#define NND_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "frame.h"
#include "nnd/nnd.h"

struct nnd_async;

struct nnd_client {
    int sock;
    pthread_mutex_t lock; /* one call at a time: a call owns the socket until its reply */
    uint64_t next_id;
    bool dead;    /* the transport failed; every later call fails fast */
    uint8_t *buf; /* NND_FRAME_RECV_BUF bytes for nnd_frame_recv */
    char daemon_version[128];
    char *daemon_state_dir;          /* from Hello; "" when the daemon did not say */
    unsigned daemon_operation_types; /* from Hello; 0 when the daemon did not say */
    struct nnd_async *async;         /* asynchronous tickets, and their replies that came early */
};

/* err <- the formatted message (nothing when err is NULL or errlen 0). */
void nnd_client_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Settles a reply: its status, with err set to its message when not NONE; r goes to *out
 * (when out is not NULL) if the status is NONE or keep_failed, and is freed otherwise. */
int nnd_client_take_reply(Nnd__Reply *r, bool keep_failed, Nnd__Reply **out, char *err,
                          size_t errlen);

/* One call whose reply must carry `want` (unless NOT_SET) on success. Returns the status
 * or -errno; on NONE *out (may be NULL) is the reply to free, else err holds its message. */
int nnd_client_simple_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                           Nnd__Reply__ResultCase want, Nnd__Reply **out, char *err, size_t errlen);

/* One call whose whole reply goes to *reply (may be NULL) whatever its status, as
 * nnd_client_execute() answers. Returns the status or -errno; err holds the message. */
int nnd_client_reply_call(nnd_client *c, Nnd__Request *req, const int *fds, size_t nfds,
                          Nnd__Reply **reply, char *err, size_t errlen);

/* nnd_qos.c. With the lock held: keeps a frame that answers an open asynchronous ticket
 * (true: it took the frame), so that a call waiting for another reply does not drop it. */
bool nnd_async_keep(nnd_client *c, nnd_frame_in *in);
/* Frees the tickets and kept replies (at close). */
void nnd_async_free(nnd_client *c);

#endif
