/* SPDX-License-Identifier: Apache-2.0 */
/* observe.c: the admin bus, events and /proc figures of a daemon. See observe.h. */
#include "tests/support/observe.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nanomsg/nn.h>
#include <nanomsg/pubsub.h>
#include <nanomsg/reqrep.h>

#include "proto/paths.h"

double obs_num(const cJSON *status, const char *path) {
    char key[128];
    const cJSON *v = status;
    for (const char *p = path; v && *p;) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof key) return NAN;
        memcpy(key, p, n);
        key[n] = '\0';
        v = cJSON_GetObjectItemCaseSensitive(v, key);
        p += n + (p[n] == '.');
    }
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

double obs_status_num(const char *state_dir, const char *path) {
    cJSON *j = tst_admin(state_dir, "status");
    double x = obs_num(j, path);
    cJSON_Delete(j);
    return x;
}

/* A subscriber that has already seen one event, so that none published later is lost. */
static int subscribe(const tst_daemon *d) {
    char url[600];
    if (!proto_events_url(d->state_dir, url, sizeof url)) return -1;
    int sub = nn_socket(AF_SP, NN_SUB);
    if (sub < 0) return -1;
    nn_setsockopt(sub, NN_SUB, NN_SUB_SUBSCRIBE, "", 0);
    int timeout = 100;
    nn_setsockopt(sub, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout, sizeof timeout);
    if (nn_connect(sub, url) < 0) {
        nn_close(sub);
        return -1;
    }
    for (int i = 0; i < 100; i++) {
        int fd = tst_connect_raw(d); /* a connect event */
        if (fd >= 0) close(fd);
        char *buf = NULL;
        if (nn_recv(sub, &buf, NN_MSG, 0) >= 0) {
            nn_freemsg(buf);
            return sub;
        }
    }
    nn_close(sub);
    return -1;
}

struct obs_events {
    int sub;
    char prefix[128];
    size_t plen;
    pthread_t t;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_bool stop;
    uint64_t last_seq; /* the collector's own */
    atomic_ulong lost; /* gaps in seq */
    cJSON *head;       /* events kept, oldest first, chained through ->next */
};

/* Every event ends with "seq":N (bus.c); a jump past the last one seen is a loss. */
static void count_gap(obs_events *e, const char *buf, size_t n) {
    static const char key[] = "\"seq\":";
    const char *at = memmem(buf, n, key, sizeof key - 1);
    if (!at) return;
    uint64_t seq = 0;
    for (const char *c = at + sizeof key - 1; c < buf + n && *c >= '0' && *c <= '9'; c++)
        seq = seq * 10 + (uint64_t)(*c - '0');
    if (e->last_seq && seq > e->last_seq + 1) atomic_fetch_add(&e->lost, seq - e->last_seq - 1);
    if (seq > e->last_seq) e->last_seq = seq;
}

static void *collect(void *arg) {
    obs_events *e = arg;
    while (!e->stop) {
        char *buf = NULL;
        int n = nn_recv(e->sub, &buf, NN_MSG, 0);
        if (n < 0) continue;
        count_gap(e, buf, (size_t)n);
        /* Events start {"event":"<name>", (bus.c): the others go unparsed. */
        cJSON *j = (size_t)n >= e->plen && !memcmp(buf, e->prefix, e->plen)
                       ? cJSON_ParseWithLength(buf, (size_t)n)
                       : NULL;
        nn_freemsg(buf);
        if (!j) continue;
        pthread_mutex_lock(&e->mu);
        cJSON **tail = &e->head;
        while (*tail)
            tail = &(*tail)->next;
        *tail = j;
        pthread_cond_signal(&e->cv);
        pthread_mutex_unlock(&e->mu);
    }
    return NULL;
}

unsigned long obs_events_lost(obs_events *e) {
    return atomic_load(&e->lost);
}

obs_events *obs_events_start(const tst_daemon *d, const char *name) {
    obs_events *e = calloc(1, sizeof *e);
    if (!e) return NULL;
    e->plen = (size_t)snprintf(e->prefix, sizeof e->prefix, "{\"event\":\"%s\"", name);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->cv, NULL);
    e->sub = subscribe(d);
    if (e->sub < 0 || pthread_create(&e->t, NULL, collect, e) != 0) {
        if (e->sub >= 0) nn_close(e->sub);
        free(e);
        return NULL;
    }
    return e;
}

cJSON *obs_events_next(obs_events *e, int timeout_ms) {
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    end.tv_sec += timeout_ms / 1000;
    end.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (end.tv_nsec >= 1000000000L) end.tv_sec++, end.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&e->mu);
    while (!e->head && pthread_cond_timedwait(&e->cv, &e->mu, &end) == 0)
        ;
    cJSON *j = e->head;
    if (j) {
        e->head = j->next;
        j->next = NULL;
    }
    pthread_mutex_unlock(&e->mu);
    return j;
}

void obs_events_stop(obs_events *e) {
    if (!e) return;
    e->stop = true;
    pthread_join(e->t, NULL);
    nn_close(e->sub);
    while (e->head) {
        cJSON *j = e->head;
        e->head = j->next;
        j->next = NULL;
        cJSON_Delete(j);
    }
    pthread_mutex_destroy(&e->mu);
    pthread_cond_destroy(&e->cv);
    free(e);
}

/* One "<field>: N kB" line of /proc/<pid>/status, or -1. */
static long status_kib(pid_t pid, const char *field) {
    char path[64], line[256], fmt[64];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    snprintf(fmt, sizeof fmt, "%s: %%ld kB", field);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, fmt, &kib) == 1) break;
    fclose(f);
    return kib;
}

long obs_rss_kib(pid_t pid) {
    return status_kib(pid, "VmRSS");
}

long obs_rss_anon_kib(pid_t pid) {
    return status_kib(pid, "RssAnon");
}

int obs_memfd_maps(pid_t pid) {
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "/memfd:")) n++;
    fclose(f);
    return n;
}
