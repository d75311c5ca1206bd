/* SPDX-License-Identifier: Apache-2.0 */
/* rate: how fast each app (uid) may make the daemon do work that costs other clients.
 *
 * Contract:
 * - Some work costs every other client while it runs and no quota holds it: copying and
 *   hashing a model into the content cache (its bytes: the daemon's CPU, on the loop for
 *   small models), and writing a token row to the index (an fsync'd transaction on the
 *   loop). Each uid has a token bucket per kind: it may spend
 *   up to `burst` at once and `per_second` on average; one piece of work larger than the
 *   burst is done from a full bucket, which it leaves in debt. Work over the bucket is not done
 *   (the caller has a way around it: prepare in place, skip the client-cache save),
 *   never refused.
 * - Buckets are kept per uid in a fixed table (SRV_RATE_UIDS) independent of the quota
 *   table, so that closing every connection and connecting again does not refill them;
 *   when the table is full the fullest bucket gives way (a full bucket is the same as
 *   none).
 * - Loop thread only.
 */
#ifndef SRV_CLIENTS_RATE_H
#define SRV_CLIENTS_RATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum srv_rate_kind {
    SRV_RATE_CACHE_COPY,  /* bytes copied and hashed into the content cache */
    SRV_RATE_INDEX_WRITE, /* token rows written to the index */
    SRV_RATE_KINDS
} srv_rate_kind;

#define SRV_RATE_UIDS 256

/* Whether uid may spend cost now (then it is spent). now_ns: CLOCK_MONOTONIC. */
bool srv_rate_take(uid_t uid, srv_rate_kind k, double cost, uint64_t now_ns);

#endif
