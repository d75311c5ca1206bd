/* SPDX-License-Identifier: Apache-2.0 */
/* sched_model.c: the scheduler's models, names and figures. See scheduler.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/sched_internal.h"
#include "sched/scheduler.h"

const char *qos_prio_name(qos_prio p) {
    static const char *names[QOS_PRIOS] = {"low", "medium", "high"};
    return (unsigned)p < QOS_PRIOS ? names[p] : "?";
}

const char *qos_refusal_name(qos_refusal r) {
    static const char *names[QOS_REFUSALS] = {
        "none", "invalid_argument", "deadline_passed", "too_slow",
        "busy", "queue_full",       "memory_quota",    "device_limit"};
    return (unsigned)r < QOS_REFUSALS ? names[r] : "?";
}

void qos_sched_config_default(qos_sched_config *c) {
    memset(c, 0, sizeof *c);
    c->workers = 1;
    c->lanes = 1;
    c->lane_workers = 1;
    c->app_queue = 64;
    c->app_memory = 1ull << 30;
    c->device_memory = 4ull << 30;
    c->inline_ns = 100000;
    c->worker_nice = 0;
    c->owner_slice_us = 100;
}

/* ---- models -------------------------------------------------------------------------- */

schema_status qos_sched_model_new(qos_sched *s, const eng_prepared *p, qos_prio priority,
                                  void (*release)(void *), void *release_ctx, qos_sched_model **out,
                                  char *err, size_t errlen) {
    *out = NULL;
    size_t bytes = eng_prepared_arena_bytes(p);
    if (bytes > s->cfg.device_memory) {
        snprintf(err, errlen,
                 "one execution of this model needs %zu bytes of temporaries; the device "
                 "allows %llu",
                 bytes, (unsigned long long)s->cfg.device_memory);
        qos_sched_note_refusal(s, QOS_REFUSE_DEVICE_LIMIT);
        return SCHEMA_RESOURCE_EXHAUSTED_PERSISTENT;
    }
    qos_sched_model *m = calloc(1, sizeof *m);
    uint32_t n = eng_prepared_num_operations(p);
    float *frac = malloc(sizeof(float) * (n + 1));
    if (!m || !frac) {
        free(m);
        free(frac);
        snprintf(err, errlen, "out of memory");
        return SCHEMA_GENERAL_FAILURE;
    }
    double total = 0;
    for (uint32_t k = 0; k < n; k++) {
        frac[k] = (float)total; /* cumulative cost before k; normalized below */
        total += qos_cost_step_ns(&s->tp, p, k);
    }
    for (uint32_t k = 0; k < n; k++)
        frac[k] = total > 0 ? (float)(frac[k] / total) : 0.0f;
    frac[n] = 1.0f;
    m->prepared = p;
    m->loops = eng_prepared_loops(p);
    m->priority = priority;
    m->exec_bytes = bytes;
    m->seed_ns = (uint64_t)total + 1;
    m->s = s;
    m->done_frac = frac;
    m->n_ops = n;
    qos_est_init(&m->est, m->seed_ns);
    m->refs = 1;
    m->release = release;
    m->release_ctx = release_ctx;
    *out = m;
    return SCHEMA_OK;
}

schema_status qos_sched_model_set_lanes(qos_sched_model *m, const uint8_t *lanes) {
    bool all_first = true;
    for (uint32_t k = 0; k < m->n_ops; k++)
        all_first &= lanes[k] == 0 || lanes[k] >= m->s->cfg.lanes;
    free(m->lane);
    m->lane = NULL;
    m->first_lane = 0;
    /* NULL when every operation runs on lane 0: the checkpoint then never looks. One extra
     * entry, so that lane[n_ops] (after the last operation) is readable. */
    if (all_first) return SCHEMA_OK;
    if (!(m->lane = malloc(m->n_ops + 1))) return SCHEMA_GENERAL_FAILURE;
    for (uint32_t k = 0; k < m->n_ops; k++)
        m->lane[k] = lanes[k] < m->s->cfg.lanes ? lanes[k] : 0;
    m->lane[m->n_ops] = m->n_ops ? m->lane[m->n_ops - 1] : 0;
    m->first_lane = m->lane[0];
    return SCHEMA_OK;
}

void qos_sched_model_estimate(qos_sched_model *m, uint64_t *typical, uint64_t *tail) {
    pthread_mutex_lock(&m->s->lock);
    *typical = qos_est_typical(&m->est);
    *tail = qos_est_tail(&m->est);
    pthread_mutex_unlock(&m->s->lock);
}

/* ---- figures --------------------------------------------------------------------------- */

void qos_sched_note_refusal(qos_sched *s, qos_refusal why) {
    if ((unsigned)why >= QOS_REFUSALS) return;
    pthread_mutex_lock(&s->lock);
    s->refused[why]++;
    pthread_mutex_unlock(&s->lock);
}

void qos_sched_stats_get(qos_sched *s, qos_sched_stats *o) {
    memset(o, 0, sizeof *o);
    pthread_mutex_lock(&s->lock);
    o->cfg = s->cfg;
    o->throughput = s->tp;
    o->owner_slice = s->owner_slice;
    for (unsigned l = 0; l < s->cfg.lanes; l++) {
        const sched_lane *ln = &s->lanes[l];
        o->running += ln->busy;
        o->lane[l].workers = ln->workers;
        o->lane[l].running = ln->busy;
        o->lane[l].queued = qos_queue_len(ln->q);
        o->lane[l].segments = ln->segments;
        o->lane[l].arrived = ln->arrived;
        for (unsigned p = 0; p < QOS_PRIOS; p++)
            o->queued[p] += qos_queue_depth(ln->q, p);
    }
    for (unsigned p = 0; p < QOS_PRIOS; p++) {
        o->latency_ns[p][0] = qos_hist_quantile(&s->latency[p], 0.50);
        o->latency_ns[p][1] = qos_hist_quantile(&s->latency[p], 0.90);
        o->latency_ns[p][2] = qos_hist_quantile(&s->latency[p], 0.99);
        o->latency_count[p] = s->latency[p].count;
        o->latency_sum_ns[p] = s->latency[p].sum_ns;
        for (unsigned i = 0; i < QOS_LATENCY_BOUNDS; i++)
            o->latency_below[p][i] = qos_hist_count_below(&s->latency[p], QOS_LATENCY_BOUND_NS(i));
    }
    o->submitted = s->submitted;
    o->completed = s->completed;
    o->failed = s->failed;
    o->cancelled = s->cancelled;
    o->preempted = s->preempted;
    o->aborted_deadline = s->aborted;
    o->deadline_met = s->met;
    o->deadline_missed = s->missed;
    memcpy(o->refused, s->refused, sizeof o->refused);
    o->refused_at_dispatch = s->refused_at_dispatch;
    pthread_mutex_unlock(&s->lock);
}

void qos_sched_throughput(qos_sched *s, qos_throughput *out) {
    pthread_mutex_lock(&s->lock);
    *out = s->tp;
    pthread_mutex_unlock(&s->lock);
}
