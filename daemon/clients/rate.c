/* SPDX-License-Identifier: Apache-2.0 */
/* rate.c: token buckets per uid. See rate.h. */
#include "daemon/clients/rate.h"

#include <stddef.h>

/* Per kind: tokens added a second, and the most a bucket holds. */
typedef struct rate_limit {
    double per_second, burst;
} rate_limit;

static const rate_limit limits[SRV_RATE_KINDS] = {
    /* Copying and hashing 64 MiB costs tens of milliseconds of CPU (on a worker thread
     * for a large model, on the loop for a small one): at this rate one uid takes a few
     * percent of the machine at most. */
    [SRV_RATE_CACHE_COPY] = {64.0 * 1048576, 128.0 * 1048576},
    /* Each row is an fsync (1 to 10 ms); an app saves one per model it compiles. */
    [SRV_RATE_INDEX_WRITE] = {8, 32},
};

typedef struct bucket {
    bool used;
    uid_t uid;
    double tokens[SRV_RATE_KINDS];
    uint64_t at_ns[SRV_RATE_KINDS];
} bucket;

static bucket table[SRV_RATE_UIDS];

static void refill(bucket *b, srv_rate_kind k, uint64_t now_ns) {
    double t = b->tokens[k] + (double)(now_ns - b->at_ns[k]) / 1e9 * limits[k].per_second;
    b->tokens[k] = t < limits[k].burst ? t : limits[k].burst;
    b->at_ns[k] = now_ns;
}

/* How full b is, over every kind (1: full, as good as unused). */
static double fullness(bucket *b, uint64_t now_ns) {
    double least = 1;
    for (int k = 0; k < SRV_RATE_KINDS; k++) {
        refill(b, (srv_rate_kind)k, now_ns);
        double f = b->tokens[k] / limits[k].burst;
        if (f < least) least = f;
    }
    return least;
}

static bucket *bucket_of(uid_t uid, uint64_t now_ns) {
    bucket *spare = NULL;
    double spare_full = -1;
    for (int i = 0; i < SRV_RATE_UIDS; i++) {
        bucket *b = &table[i];
        if (b->used && b->uid == uid) return b;
        double f = b->used ? fullness(b, now_ns) : 2;
        if (f > spare_full) spare = b, spare_full = f;
    }
    *spare = (bucket){.used = true, .uid = uid};
    for (int k = 0; k < SRV_RATE_KINDS; k++) {
        spare->tokens[k] = limits[k].burst;
        spare->at_ns[k] = now_ns;
    }
    return spare;
}

bool srv_rate_take(uid_t uid, srv_rate_kind k, double cost, uint64_t now_ns) {
    bucket *b = bucket_of(uid, now_ns);
    refill(b, k, now_ns);
    /* Work larger than the burst is done from a full bucket, which it leaves in debt. */
    if (b->tokens[k] < (cost < limits[k].burst ? cost : limits[k].burst)) return false;
    b->tokens[k] -= cost;
    return true;
}
