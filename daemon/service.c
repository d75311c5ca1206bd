/* SPDX-License-Identifier: Apache-2.0 */
/* service.c: readiness, status and watchdog for systemd. See service.h. */
#include "daemon/service.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-daemon.h>

#include "daemon/base/log.h"
#include "daemon/clients/session.h"
#include "daemon/net/server.h"

static uv_timer_t status_timer, watchdog_timer;
static bool status_on, watchdog_on;
static char last_status[160];

static void count_models(srv_session *s, void *ctx) {
    *(size_t *)ctx += srv_session_count(s, SRV_OBJ_PREPARED);
}

/* The status line, sent only when it changed (or when forced, after READY=1). */
static void send_status(srv_daemon *d, bool force) {
    if (!d->server) return;
    size_t models = 0;
    srv_server_foreach(d->server, count_models, &models);
    size_t clients = srv_server_connections(d->server);
    char line[sizeof last_status];
    snprintf(line, sizeof line, "serving %zu client%s, %zu prepared model%s, %llu executions run",
             clients, clients == 1 ? "" : "s", models, models == 1 ? "" : "s",
             (unsigned long long)d->executions);
    if (!force && !strcmp(line, last_status)) return;
    snprintf(last_status, sizeof last_status, "%s", line);
    sd_notifyf(0, "STATUS=%s", line);
}

static void on_status(uv_timer_t *t) {
    send_status(t->data, false);
}

static void on_watchdog(uv_timer_t *t) {
    (void)t;
    sd_notify(0, "WATCHDOG=1");
}

void srv_service_start(srv_daemon *d) {
    if (!getenv("NOTIFY_SOCKET")) return;
    sd_notify(0, "READY=1");
    send_status(d, true);
    uv_timer_init(d->loop, &status_timer);
    status_timer.data = d;
    uv_timer_start(&status_timer, on_status, SRV_SERVICE_STATUS_MS, SRV_SERVICE_STATUS_MS);
    status_on = true;
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
        /* Half the interval, as sd_watchdog_enabled(3) advises; at least 1 ms. */
        uint64_t ms = usec / 2000 ? usec / 2000 : 1;
        uv_timer_init(d->loop, &watchdog_timer);
        uv_timer_start(&watchdog_timer, on_watchdog, 0, ms);
        watchdog_on = true;
        srv_log_info("systemd watchdog: a ping every %llu ms", (unsigned long long)ms);
    }
}

void srv_service_reloading(srv_daemon *d) {
    (void)d;
    sd_notify(0, "RELOADING=1\nSTATUS=reloading the configuration");
}

void srv_service_ready(srv_daemon *d) {
    sd_notify(0, "READY=1");
    send_status(d, true);
}

void srv_service_stop(srv_daemon *d) {
    (void)d;
    sd_notify(0, "STOPPING=1\nSTATUS=shutting down");
    if (status_on) uv_close((uv_handle_t *)&status_timer, NULL);
    if (watchdog_on) uv_close((uv_handle_t *)&watchdog_timer, NULL);
    status_on = watchdog_on = false;
}
