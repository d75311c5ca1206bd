/* SPDX-License-Identifier: Apache-2.0 */
/* daemon: the state every module of the daemon shares, owned by main().
 * Everything here is touched only from the libuv loop thread. */
#ifndef SRV_BASE_DAEMON_H
#define SRV_BASE_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <uv.h>

#ifndef SRV_VERSION
#define SRV_VERSION "0.0.0"
#endif
#ifndef SRV_DRIVER_BUILD_ID /* from CMake: scopes cache entries to one build */
#define SRV_DRIVER_BUILD_ID "dev"
#endif

struct srv_server;
struct srv_bus;
struct srv_cache;
struct srv_allowlist;
struct srv_executions;
struct srv_quota;

typedef struct srv_daemon {
    uv_loop_t *loop;
    const char *socket_path;
    const char *state_dir;
    uint64_t start_ns;               /* CLOCK_MONOTONIC at startup */
    struct srv_server *server;       /* client connections */
    struct srv_bus *bus;             /* admin REP and event PUB; NULL when not open */
    struct srv_cache *cache;         /* compilation caching; NULL when off */
    const char *cache_off;           /* why cache is NULL (status shows it), or NULL */
    const char *extensions_dir;      /* vendor extension plugins (extensions.h) */
    const char *allowlist_path;      /* --extensions-allowlist; NULL: nobody allowed */
    struct srv_allowlist *allowlist; /* parsed allowlist; NULL: nobody allowed */
    struct srv_executions *exec;     /* the scheduler, its workers, executions (execution.h) */
    struct qos_sched *sched; /* exec's scheduler, for the views of prepared models (model_obj.h) */
    struct srv_quota *quota; /* per-app and per-connection limits (quota.h) */
    uint64_t executions;     /* executions run since startup */
    /* Reads the configuration afresh and applies what may change (reload.h): set by main(),
     * called for SIGHUP and the admin "reload". 0, or -1 with err. */
    int (*reload)(struct srv_daemon *d, char *err, size_t errlen);
    bool stopping; /* shutdown has begun */
} srv_daemon;

static inline uint64_t srv_clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static inline uint64_t srv_now_ns(void) {
    return srv_clock_ns(CLOCK_MONOTONIC);
}

#endif
