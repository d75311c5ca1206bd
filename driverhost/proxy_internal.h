/* SPDX-License-Identifier: Apache-2.0 */
/* proxy_internal: what the proxy's files share (drvhost.h is the contract). Files, each
 * calling only those before it: region.c (the shared-region registry), proxy.c (hosts'
 * lives: spawn, the supervisor thread, faults, restarts, calls in flight), proxy_place.c
 * (where a tensor crosses), proxy_prepared.c (prepared partitions), proxy_memory.c (device
 * memory), proxy_exec.c (executions), proxy_table.c (the table and drvhost_start()).
 * Locks: drvhost.mu (state, calls in flight), then drvhost.send_mu (the socket, the
 * regions this host knows); never the other way round. */
#ifndef DHP_PROXY_INTERNAL_H
#define DHP_PROXY_INTERNAL_H

#include <limits.h>
#include <pthread.h>

#include "driverhost/drvhost.h"
#include "driverhost/wire.h"
#include "driverhost/wire_reply.h"
#include "driverhost/wire_request.h"

enum { DHP_DOWN, DHP_UP, DHP_DISABLED, DHP_STOPPED };

typedef struct dhp_device {
    drvhost *h;
    uint32_t index;
} dhp_device;

typedef struct dhp_call dhp_call;
struct dhp_call {
    dhp_call *next;
    uint32_t id, gen;
    uint64_t bound_ns;  /* the supervisor kills the host past it */
    uint32_t bound_ms;  /* for the message */
    int timeout_status; /* MISSED_DEADLINE_TRANSIENT (a deadline) or GENERAL_FAILURE */
    bool done;
    int status;
    char err[DH_ERR_MAX];
    dh_rbuf rest; /* the reply after status and message */
    dh_msg reply;
    /* Asynchronous calls: finish() runs on the supervisor thread, no lock held, and frees. */
    void (*finish)(dhp_call *c);
    void *ctx;
};

/* Regions a call's body names, for their introduction to the host before the call. */
typedef struct dhp_regions {
    uint32_t ids[64];
    uint32_t n;
    bool overflow; /* more than fit: every region is checked */
} dhp_regions;

#define DHP_RESTART_RING 64u

struct drvhost {
    int slot;
    nnd_driver table;
    char *plugin;
    drvhost_limits lim;
    char host_path[PATH_MAX];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_mutex_t send_mu;
    int state;
    bool stopping, ended, first_done;
    char first_err[DH_ERR_MAX];
    pid_t pid;
    int sock;
    uint32_t gen; /* counts hosts started: a prepared partition's remote id is this one's */
    int wake[2];
    pthread_t sup;
    dhp_call *pending;
    uint32_t next_call;
    uint32_t has, n_devices;
    nnd_driver_device_info devices[NND_DRIVER_MAX_DEVICES];
    dhp_device dev[NND_DRIVER_MAX_DEVICES];
    uint32_t *known; /* region ids this host has mapped (send_mu) */
    size_t n_known, cap_known;
    uint64_t restart_ns[DHP_RESTART_RING];
    uint32_t n_restart_ns;
    uint64_t last_mem_check_ns;
    uint64_t sup_wakes_ns; /* when the supervisor looks next at the latest (h->mu) */
    drvhost_stats stats;
};

/* ---- proxy.c ---- */
/* Waits for the host to be up (at most until bound_ns); 0, or a status with err set. */
int dhp_wait_up(drvhost *h, uint64_t bound_ns, char *err, size_t errlen);
/* Sends body as a call of type and, unless c->finish, waits for the reply. c is filled
 * by the caller with bound_ns, bound_ms, timeout_status (and finish, ctx). Returns the
 * status (c->err, c->rest hold the rest). staging_fd may be -1. For finish calls, a
 * status other than NND_DRIVER_STARTED means finish() will not run. */
int dhp_call_run(drvhost *h, uint32_t type, const dh_wbuf *body, const dhp_regions *regions,
                 int staging_fd, dhp_call *c);
void dhp_call_free(dhp_call *c);
/* A message that needs no reply. */
void dhp_send_oneway(drvhost *h, uint32_t type, const dh_wbuf *body, uint32_t gen);
uint32_t dhp_gen(drvhost *h);
void dhp_count_shrink(drvhost *h);
void dhp_count_staged(drvhost *h, uint64_t bytes);
uint64_t dhp_bound(uint32_t ms);
/* A host started (drvhost_start() without its table), or NULL with err. */
drvhost *dhp_host_start(const char *plugin_path, const drvhost_limits *limits, char *err,
                        size_t errlen);
/* c's bound: deadline_ns plus the grace (MISSED_DEADLINE_TRANSIENT past it), or ms. */
void dhp_bound_for(drvhost *h, dhp_call *c, uint64_t deadline_ns, uint32_t ms);
/* The table's close(): ends the host (drvhost_stop frees it). */
void dhp_table_close(drvhost *h);
drvhost *dhp_slot_host(int slot);
/* proxy_table.c: sets up the table's functions for h->slot and what the driver has. */
void dhp_table_init(drvhost *h);

/* ---- region.c ---- */
/* Whether [p, p + len) lies in one registered region: *id and *offset. */
bool dhp_region_find(const void *p, size_t len, uint32_t *id, uint64_t *offset);
/* Sends the intros of regions h does not know yet (send_mu held). */
int dhp_regions_introduce(drvhost *h, const dhp_regions *r, uint64_t deadline_ns);
void dhp_regions_note(dhp_regions *r, uint32_t id);
/* When a region goes, fn(id) (proxy.c's: the hosts that mapped it forget it). */
void dhp_regions_on_forget(void (*fn)(uint32_t id));
void dhp_hosts_forget_region(uint32_t id);
bool dhp_known(drvhost *h, uint32_t id);
void dhp_known_add(drvhost *h, uint32_t id);
void dhp_known_remove(drvhost *h, uint32_t id);

/* 1: up, and gen is its generation; 0: a wait is needed (restarting, or a partition of
 * an earlier host); -1: disabled or closed (a call fails at once). */
int dhp_host_ready(drvhost *h, uint32_t gen);
/* proxy_prepared.c: dhp_host_ready() for a prepared partition (0 while it is prepared again). */
int dhp_start_ready(void *prepared);
/* A call id chosen before the call is made (dhp_call_run keeps a c->id set). */
uint32_t dhp_next_call_id(drvhost *h);
/* Whether call id is still in flight. */
bool dhp_call_pending(drvhost *h, uint32_t id);

/* ---- proxy_place.c ---- */
/* A call's staging memfd, for the tensors that lie in no region. */
typedef struct dhp_staging {
    int fd;
    uint8_t *base;
    uint64_t length;
} dhp_staging;
/* Places [data, data + len): in a region (noted in regs), else at *staging_len, which grows. */
void dhp_place(const void *data, size_t len, dh_arg *a, dhp_regions *regs, uint64_t *staging_len);
int dhp_staging_make(dhp_staging *s, uint64_t length);
void dhp_staging_drop(dhp_staging *s);

/* ---- proxy_prepared.c ---- */
int dhp_supported(void *dev, const nnd_driver_model *model, bool *supported, char *err,
                  size_t errlen);
int dhp_prepare(void *dev, const nnd_driver_model *partition, const nnd_driver_prepare_args *args,
                nnd_driver_prepared_info *out, char *err, size_t errlen);
int dhp_cache_load(void *dev, const nnd_driver_model *partition,
                   const nnd_driver_prepare_args *args, const nnd_driver_blob *blobs,
                   uint32_t n_blobs, nnd_driver_prepared_info *out, char *err, size_t errlen);
void dhp_release(void *prepared);
size_t dhp_cache_save(void *prepared, uint32_t blob, void *buf, size_t cap);

/* ---- proxy_memory.c ---- */
/* A device-memory handle's id in the host of generation gen. */
int dhp_memory_remote(drvhost *h, uint64_t handle, uint32_t gen, uint64_t *remote);
int dhp_allocate(void *dev, const nnd_driver_buffer_desc *desc, uint64_t *handle, char *err,
                 size_t errlen);
void dhp_memory_free(void *dev, uint64_t handle);
int dhp_memory_read(void *dev, uint64_t handle, uint64_t offset, void *dst, size_t bytes);
int dhp_memory_write(void *dev, uint64_t handle, uint64_t offset, const void *src, size_t bytes);

/* ---- proxy_exec.c ---- */
int dhp_execute(nnd_driver_execution *x);
int dhp_start(nnd_driver_execution *x);
void dhp_cancel(nnd_driver_execution *x);
/* proxy_prepared.c: the remote id of a prepared partition for the host now, preparing it
 * again after a restart; 0 or a status with err set. */
int dhp_prepared_remote(void *prepared, uint64_t *remote, uint32_t *gen, char *err, size_t errlen);
drvhost *dhp_prepared_host(void *prepared);

#endif
