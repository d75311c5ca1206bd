/* SPDX-License-Identifier: Apache-2.0 */
/* burst_take.c: a request copied once out of a burst channel and checked. See
 * burst_take.h. */
#include "daemon/binding/burst_take.h"

#include <string.h>

bool srv_burst_take(srv_burst_take_state *t, Nnd__Request **req, schema_status *st, char *err,
                    size_t errlen) {
    *req = NULL;
    *st = SCHEMA_OK;
    uint32_t seq = __atomic_load_n(&t->h->req_seq, __ATOMIC_ACQUIRE);
    if (seq == t->taken) return false; /* a spurious ring */
    t->taken = seq;
    /* Read once: the client may change it, and the bytes, while we copy. */
    uint32_t len = __atomic_load_n(&t->h->req_len, __ATOMIC_ACQUIRE);
    if (len <= PROTO_CHAN_AREA) memcpy(t->copy, t->req_area, len);
    uint32_t expected = t->expected;
    t->expected = proto_chan_next(seq);
    if (len > PROTO_CHAN_AREA) {
        *st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                           "a request of %u bytes is over the burst channel's %u", len,
                           PROTO_CHAN_AREA);
        return true;
    }
    if (seq != expected) {
        *st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                           "burst channel request number %u out of order (expected %u)", seq,
                           expected);
        return true;
    }
    Nnd__Request *r =
        (Nnd__Request *)protobuf_c_message_unpack(&nnd__request__descriptor, NULL, len, t->copy);
    if (!r) {
        *st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                           "a malformed request (%u bytes) in the burst channel", len);
        return true;
    }
    *req = r;
    if (r->call_case != NND__REQUEST__CALL_BURST_EXECUTE || !r->burst_execute) {
        *st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                           "a burst channel carries BurstExecute only (this request's call is %d)",
                           (int)r->call_case);
    } else if (r->burst_execute->burst != t->handle) {
        *st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT,
                           "the request names burst 0x%016llx; this channel is burst 0x%016llx's",
                           (unsigned long long)r->burst_execute->burst,
                           (unsigned long long)t->handle);
    } else if (!r->burst_execute->request) {
        *st = schema_failf(err, errlen, SCHEMA_INVALID_ARGUMENT, "BurstExecute names no request");
    }
    return true;
}
