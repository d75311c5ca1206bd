/* SPDX-License-Identifier: Apache-2.0 */
/* cli_burst_chan.c: the client's side of a burst's shared-memory channel
 * (proto/burst_chan.h): one BurstExecute at a time written to the request area, its Reply
 * read from the result area. See client_internal.h, "burst channels". */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/burst_chan.h"
#include "client/client_internal.h"

/* High bit set: ids of the channel's requests never meet the connection's own. */
#define CHANNEL_ID_BIT (1ull << 63)
/* How often a waiting caller looks at the connection and the clock. */
#define CHECK_NS 100000000ull

struct cli_burst_chan {
    pthread_mutex_t lock; /* held by the one call in the channel */
    proto_chan_hdr *h;
    uint8_t *req_area, *res_area;
    int bell;     /* the daemon's doorbell eventfd */
    uint32_t seq; /* the last request sent */
    bool broken;  /* an answer went missing: every later call takes the socket */
    proto_chan_poll poll;
};

cli_burst_chan *cli_burst_chan_attach(int fd, int bell) {
    struct stat sb;
    cli_burst_chan *ch = NULL;
    if (fstat(fd, &sb) == 0 && (uint64_t)sb.st_size == PROTO_CHAN_SIZE) {
        void *p = mmap(NULL, PROTO_CHAN_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED && proto_chan_valid(p, PROTO_CHAN_SIZE) &&
            (ch = calloc(1, sizeof *ch))) {
            ch->h = p;
            ch->bell = bell;
            bell = -1;
            ch->req_area = (uint8_t *)p + PROTO_CHAN_HEADER;
            ch->res_area = ch->req_area + PROTO_CHAN_AREA;
            pthread_mutex_init(&ch->lock, NULL);
            proto_chan_poll_init(&ch->poll);
        } else if (p != MAP_FAILED) {
            munmap(p, PROTO_CHAN_SIZE);
        }
    }
    close(fd);
    if (bell >= 0) close(bell);
    return ch;
}

void cli_burst_chan_detach(cli_burst_chan *ch) {
    if (!ch) return;
    munmap(ch->h, PROTO_CHAN_SIZE);
    close(ch->bell);
    pthread_mutex_destroy(&ch->lock);
    free(ch);
}

bool cli_burst_chan_usable(cli_burst_chan *ch) {
    return ch && !__atomic_load_n(&ch->broken, __ATOMIC_RELAXED);
}

/* Waits for the answer to seq until bound_ns; the reply, or NULL with *rc set. */
static Nnd__Reply *await(cli_burst_chan *ch, nnd_client *c, uint32_t seq, uint32_t before,
                         uint64_t bound_ns, int *rc) {
    proto_chan_hdr *h = ch->h;
    uint32_t seen = before;
    for (;;) {
        uint64_t now = cli_conn_now_ns();
        if (now >= bound_ns) {
            *rc = -ETIMEDOUT;
            return NULL;
        }
        uint64_t slice = bound_ns - now < CHECK_NS ? bound_ns - now : CHECK_NS;
        uint32_t v = proto_chan_wait(&ch->poll, &h->res_seq, seen, &h->client_sleeping,
                                     &h->daemon_cpu, &h->client_cpu, NULL, slice);
        if (v == seq) break;
        seen = v;
        if (!nnd_client_alive(c)) {
            *rc = -ENOTCONN;
            return NULL;
        }
    }
    uint32_t len = __atomic_load_n(&h->res_len, __ATOMIC_ACQUIRE);
    Nnd__Reply *r = len <= PROTO_CHAN_AREA ? nnd__reply__unpack(NULL, len, ch->res_area) : NULL;
    if (!r || r->id != (CHANNEL_ID_BIT | seq)) {
        if (r) nnd__reply__free_unpacked(r, NULL);
        *rc = -EPROTO;
        return NULL;
    }
    return r;
}

int cli_burst_chan_call(cli_burst_chan *ch, nnd_client *c, Nnd__Request *req, uint64_t bound_ns,
                        Nnd__Reply **reply, char *err, size_t errlen) {
    *reply = NULL;
    if (pthread_mutex_trylock(&ch->lock) != 0) return -EBUSY;
    if (ch->broken) {
        pthread_mutex_unlock(&ch->lock);
        return -EBUSY;
    }
    uint32_t seq = proto_chan_next(ch->seq);
    req->id = CHANNEL_ID_BIT | seq;
    size_t n = protobuf_c_message_get_packed_size(&req->base);
    if (n > PROTO_CHAN_AREA) {
        pthread_mutex_unlock(&ch->lock);
        return -EBUSY; /* too big for the channel: the socket carries it */
    }
    proto_chan_hdr *h = ch->h;
    uint32_t before = __atomic_load_n(&h->res_seq, __ATOMIC_ACQUIRE);
    protobuf_c_message_pack(&req->base, ch->req_area);
    __atomic_store_n(&h->req_len, (uint32_t)n, __ATOMIC_RELAXED);
    if (proto_chan_publish(&h->req_seq, seq, &h->daemon_sleeping)) {
        uint64_t one = 1;
        if (write(ch->bell, &one, sizeof one) < 0) {
            /* A full counter has a ring pending already; anything else: nobody listens. */
        }
    }
    ch->seq = seq;
    int rc = 0;
    *reply = await(ch, c, seq, before, bound_ns, &rc);
    if (!*reply) {
        /* A late answer could still land: the channel is done with. */
        __atomic_store_n(&ch->broken, true, __ATOMIC_RELAXED);
        cli_set_err(err, errlen, "burst channel: %s",
                    rc == -ETIMEDOUT ? "no answer in time"
                    : rc == -EPROTO  ? "a malformed answer"
                                     : "the connection is gone");
    }
    pthread_mutex_unlock(&ch->lock);
    return rc;
}
