/* SPDX-License-Identifier: Apache-2.0 */
/* burst_take: one request taken out of a burst channel's shared memory, which the client
 * may be rewriting while the daemon reads it (burst_chan.h).
 *
 * Contract:
 * - srv_burst_take() reads req_seq once (acquire); when it equals t->taken there is nothing
 *   new and it returns false. Otherwise the seq is taken (t->taken), req_len is read once
 *   and, when it fits the area, that many bytes are copied once into t->copy; every check
 *   and the unpacking look at the copy only, never at the shared bytes again. Then, in
 *   order: the length fits PROTO_CHAN_AREA, the seq is the one expected (the next one is
 *   expected after it either way), the copy unpacks as an Nnd__Request, that request is a
 *   BurstExecute of burst t->handle naming a request. *st is SCHEMA_OK, or INVALID_ARGUMENT
 *   with err saying which check failed; *req is the unpacked request whenever it unpacked
 *   (also when a later check failed, so that the answer can carry its id), else NULL; the
 *   caller frees it with protobuf_c_message_free_unpacked().
 * - Nothing the client writes can make it read outside the channel, loop, or block.
 */
#ifndef SRV_BINDING_BURST_TAKE_H
#define SRV_BINDING_BURST_TAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/burst_chan.h"
#include "engine/engine.h"
#include "nnd.pb-c.h"

typedef struct srv_burst_take_state {
    proto_chan_hdr *h;       /* the shared header */
    const uint8_t *req_area; /* the shared request area, PROTO_CHAN_AREA bytes */
    uint8_t *copy;           /* PROTO_CHAN_AREA private bytes */
    uint64_t handle;         /* the burst the channel serves */
    uint32_t taken;          /* the seq of the last request taken (0: none yet) */
    uint32_t expected;       /* the next seq in order (1 at the start) */
} srv_burst_take_state;

bool srv_burst_take(srv_burst_take_state *t, Nnd__Request **req, schema_status *st, char *err,
                    size_t errlen);

#endif
