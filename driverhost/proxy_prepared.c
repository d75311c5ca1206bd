/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_prepared: prepared partitions through a driver host (proxy_internal.h): each keeps
 * what preparing it again after a restart needs (the partition as sent, or the blobs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driverhost/proxy_internal.h"

typedef struct dhp_prepared {
    drvhost *h;
    uint32_t dev;
    pthread_mutex_t mu;
    uint32_t gen; /* the host generation remote belongs to */
    uint64_t remote;
    uint32_t type; /* DH_MSG_PREPARE or DH_MSG_CACHE_LOAD: how to make it again */
    dh_wbuf body;
    dhp_regions regions;
    uint64_t deadline_ns;
} dhp_prepared;

drvhost *dhp_prepared_host(void *prepared) {
    return ((dhp_prepared *)prepared)->h;
}

static dhp_device *device(void *d) {
    return d;
}

static bool place_constant(void *ctx, const void *data, size_t length, uint32_t *region,
                           uint64_t *offset) {
    if (!dhp_region_find(data, length, region, offset)) return false;
    dhp_regions_note(ctx, *region);
    return true;
}

static int copy_err(const dhp_call *c, int status, char *err, size_t errlen) {
    if (status != NND_DRIVER_OK && err && errlen) snprintf(err, errlen, "%s", c->err);
    return status;
}

int dhp_supported(void *dev, const nnd_driver_model *model, bool *supported, char *err,
                  size_t errlen) {
    dhp_device *d = device(dev);
    dh_wbuf w = {0};
    dhp_regions regs = {0};
    dh_put_u32(&w, d->index);
    dh_put_model(&w, model, place_constant, &regs);
    dhp_call c = {0};
    dhp_bound_for(d->h, &c, NND_DRIVER_NO_DEADLINE, d->h->lim.prepare_timeout_ms);
    int status = dhp_call_run(d->h, DH_MSG_SUPPORTED, &w, &regs, -1, &c);
    dh_wbuf_free(&w);
    if (status == NND_DRIVER_OK) {
        if (dh_supported_get(&c.rest, model->n_operations, supported) < 0) {
            status = NND_DRIVER_GENERAL_FAILURE;
            snprintf(c.err, sizeof c.err, "malformed supported_operations reply");
        }
    }
    dhp_call_free(&c);
    return copy_err(&c, status, err, errlen);
}

/* Sends p's body and takes the remote id from the reply (p->mu held). */
static int make_remote(dhp_prepared *p, uint64_t *held, char *err, size_t errlen) {
    dhp_call c = {0};
    dhp_bound_for(p->h, &c, p->deadline_ns, p->h->lim.prepare_timeout_ms);
    int status = dhp_call_run(p->h, p->type, &p->body, &p->regions, -1, &c);
    if (status == NND_DRIVER_OK) {
        uint64_t bytes = 0;
        int rc = dh_prepared_get(&c.rest, &p->remote, &bytes);
        if (held) *held = bytes;
        p->gen = c.gen;
        if (rc < 0) {
            status = NND_DRIVER_GENERAL_FAILURE;
            snprintf(c.err, sizeof c.err, "malformed prepare reply");
            p->gen = 0;
        }
    }
    dhp_call_free(&c);
    return copy_err(&c, status, err, errlen);
}

static int prepare_like(void *dev, uint32_t type, const nnd_driver_model *model,
                        const nnd_driver_prepare_args *args, const nnd_driver_blob *blobs,
                        uint32_t n_blobs, nnd_driver_prepared_info *out, char *err, size_t errlen) {
    dhp_device *d = device(dev);
    dhp_prepared *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory preparing for %s", d->h->plugin);
        return NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    p->h = d->h, p->dev = d->index, p->type = type;
    pthread_mutex_init(&p->mu, NULL);
    dh_prepare_req_put(&p->body, d->index, args, type == DH_MSG_CACHE_LOAD, blobs, n_blobs);
    dh_put_model(&p->body, model, place_constant, &p->regions);
    /* Preparing again after a restart is bound by the prepare limit, not a passed deadline. */
    p->deadline_ns = args->deadline_ns;
    uint64_t held = 0;
    pthread_mutex_lock(&p->mu);
    int status = make_remote(p, &held, err, errlen);
    p->deadline_ns = NND_DRIVER_NO_DEADLINE;
    pthread_mutex_unlock(&p->mu);
    if (status != NND_DRIVER_OK) {
        dh_wbuf_free(&p->body);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return status;
    }
    out->prepared = p;
    out->held_bytes = held;
    return NND_DRIVER_OK;
}

int dhp_prepare(void *dev, const nnd_driver_model *partition, const nnd_driver_prepare_args *args,
                nnd_driver_prepared_info *out, char *err, size_t errlen) {
    return prepare_like(dev, DH_MSG_PREPARE, partition, args, NULL, 0, out, err, errlen);
}

int dhp_cache_load(void *dev, const nnd_driver_model *partition,
                   const nnd_driver_prepare_args *args, const nnd_driver_blob *blobs,
                   uint32_t n_blobs, nnd_driver_prepared_info *out, char *err, size_t errlen) {
    if (n_blobs > 16) {
        snprintf(err, errlen, "%u cache blobs: at most 16 cross to a driver host", n_blobs);
        return NND_DRIVER_GENERAL_FAILURE;
    }
    return prepare_like(dev, DH_MSG_CACHE_LOAD, partition, args, blobs, n_blobs, out, err, errlen);
}

int dhp_prepared_remote(void *prepared, uint64_t *remote, uint32_t *gen, char *err, size_t errlen) {
    dhp_prepared *p = prepared;
    pthread_mutex_lock(&p->mu);
    int status = NND_DRIVER_OK;
    if (p->gen != dhp_gen(p->h)) {
        char why[DH_ERR_MAX] = "";
        status = make_remote(p, NULL, why, sizeof why);
        if (status) snprintf(err, errlen, "preparing again after a driver host restart: %s", why);
    }
    *remote = p->remote, *gen = p->gen;
    pthread_mutex_unlock(&p->mu);
    return status;
}

int dhp_start_ready(void *prepared) {
    dhp_prepared *p = prepared;
    if (pthread_mutex_trylock(&p->mu) != 0) return 0; /* being prepared again */
    uint32_t gen = p->gen;
    pthread_mutex_unlock(&p->mu);
    return dhp_host_ready(p->h, gen);
}

void dhp_release(void *prepared) {
    dhp_prepared *p = prepared;
    dh_wbuf w = {0};
    dh_put_u64(&w, p->remote);
    if (p->gen) dhp_send_oneway(p->h, DH_MSG_RELEASE, &w, p->gen);
    dh_wbuf_free(&w);
    dh_wbuf_free(&p->body);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

size_t dhp_cache_save(void *prepared, uint32_t blob, void *buf, size_t cap) {
    dhp_prepared *p = prepared;
    char err[DH_ERR_MAX];
    dhp_call c = {0};
    uint64_t remote = 0;
    if (dhp_prepared_remote(p, &remote, &c.gen, err, sizeof err)) return 0;
    dh_arg a = {.length = buf ? cap : 0};
    dhp_regions regs = {0};
    uint64_t staging_len = 0;
    if (buf && cap) dhp_place(buf, cap, &a, &regs, &staging_len);
    dhp_staging st = {.fd = -1};
    if (staging_len && dhp_staging_make(&st, staging_len) < 0) return 0;
    dh_wbuf w = {0};
    dh_save_req_put(&w, remote, blob, buf ? cap : 0, &a);
    dhp_bound_for(p->h, &c, NND_DRIVER_NO_DEADLINE, p->h->lim.call_timeout_ms);
    size_t size = 0;
    if (dhp_call_run(p->h, DH_MSG_CACHE_SAVE, &w, &regs, st.fd, &c) == NND_DRIVER_OK) {
        uint64_t saved = 0;
        size = dh_saved_get(&c.rest, &saved) < 0 || saved > SIZE_MAX ? 0 : (size_t)saved;
        if (st.base && size <= cap) memcpy(buf, st.base + a.offset, size);
    }
    dh_wbuf_free(&w);
    dhp_staging_drop(&st);
    dhp_call_free(&c);
    return size;
}
