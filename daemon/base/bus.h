/* SPDX-License-Identifier: Apache-2.0 */
/* bus: the daemon's nanomsg side, driven by the libuv loop.
 *
 * Contract:
 * - Admin: an NN_REP socket at proto_admin_url(state_dir). Each request is one JSON object
 *   ({"cmd":"status"}); the handler given at open returns the JSON reply, sent back as
 *   text. Events: an NN_PUB socket at proto_events_url(state_dir), one JSON object per
 *   message. Both socket files are chmod 0600 after bind.
 * - The REP socket is polled through its NN_RCVFD with a uv_poll_t; publishing uses
 *   NN_DONTWAIT, so a slow subscriber loses events rather than stalling the daemon.
 * - srv_bus_event() starts an event object {"event":name,"time_ns":CLOCK_REALTIME ns}, or
 *   returns NULL when no subscriber is connected (or the bus is NULL): an event nobody
 *   can receive is not built, which keeps JSON off the hot path. srv_bus_publish() adds
 *   "seq", 1 for the first event published and one more for each after, so a subscriber
 *   that finds a gap knows it lost events; it sends the event and frees it, and accepts
 *   a NULL bus or event.
 * - srv_bus_close() stops polling and closes both sockets; the bus is freed once libuv
 *   has closed its handle.
 */
#ifndef SRV_BASE_BUS_H
#define SRV_BASE_BUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <uv.h>

typedef struct srv_bus srv_bus;

/* Builds the reply to one admin request (req is NULL when the text was not JSON). */
typedef cJSON *(*srv_admin_fn)(void *ctx, const cJSON *req);

/* NULL on failure with err and errno set (EADDRINUSE: another daemon's bus is bound there). */
srv_bus *srv_bus_open(uv_loop_t *loop, const char *state_dir, srv_admin_fn admin, void *ctx,
                      char *err, size_t errlen);
void srv_bus_close(srv_bus *b);

cJSON *srv_bus_event(const srv_bus *b, const char *name);
void srv_bus_publish(srv_bus *b, cJSON *event);

/* JSON numbers are doubles: 64-bit values go in as exact integer text, handles as
 * "0x%016llx" strings. */
void srv_json_add_u64(cJSON *o, const char *key, uint64_t v);
void srv_json_add_handle(cJSON *o, const char *key, uint64_t handle);
/* Names the client an event is about: "client" (the id of the log lines and of status),
 * "pid" (0 for a process outside the daemon's pid namespace) and "uid". */
void srv_json_add_client(cJSON *o, uint64_t client, int pid, unsigned uid);

#endif
