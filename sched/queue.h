/* SPDX-License-Identifier: Apache-2.0 */
/* queue: the waiting room of the scheduler. One queue per (app, priority).
 *
 * Contract:
 * - Apps take turns (round robin, in the order they first had work); inside an app HIGH
 *   before MEDIUM before LOW; inside a priority earliest deadline first (no deadline
 *   sorts last), then arrival order. An app's record lives while it has entries.
 * - Entries are intrusive (an qos_qentry inside the caller's job); the queue allocates
 *   per app, never per entry. Not thread-safe: the scheduler calls it under its lock.
 * - qos_queue_pop(q, &app) serves that app next if it has work, without using up a turn
 *   of another app: the scheduler uses it to hand the device to the work that preempted
 *   a job of the same app.
 * - qos_queue_ahead() estimates the work (sum of cost_ns) served before an entry that is
 *   not queued yet, were it pushed now, with one server: the app's own entries ahead of
 *   it, plus, from every other app, as many entries as the app's turns before it.
 */
#ifndef QOS_QUEUE_H
#define QOS_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#define QOS_QUEUE_PRIOS 3 /* 0 LOW, 1 MEDIUM, 2 HIGH */

typedef struct qos_qentry {
    uint32_t app;      /* a uid */
    uint8_t prio;      /* 0 LOW .. 2 HIGH */
    uint64_t deadline; /* absolute ns, 0 = none */
    uint64_t seq;      /* arrival order: push assigns one when 0; a requeued entry keeps its own */
    uint64_t cost_ns;  /* estimated work left, for qos_queue_ahead() */
    /* queue-private */
    struct qos_qapp *qapp;
    uint32_t pos; /* index in its heap */
} qos_qentry;

typedef struct qos_queue qos_queue;

qos_queue *qos_queue_new(void);
/* Frees the queue and its app records; entries still queued are simply forgotten. */
void qos_queue_free(qos_queue *q);
/* Returns 0, or -1 when out of memory (the entry is then not queued). */
int qos_queue_push(qos_queue *q, qos_qentry *e);
/* The next entry by the policy above, removed; NULL when empty. prefer may be NULL. */
qos_qentry *qos_queue_pop(qos_queue *q, const uint32_t *prefer);
/* Removes a queued entry. */
void qos_queue_remove(qos_queue *q, qos_qentry *e);

size_t qos_queue_len(const qos_queue *q);
size_t qos_queue_depth(const qos_queue *q, unsigned prio);
size_t qos_queue_app_len(const qos_queue *q, uint32_t app);
uint64_t qos_queue_ahead(const qos_queue *q, const qos_qentry *e);

#endif
