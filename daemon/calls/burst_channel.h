/* SPDX-License-Identifier: Apache-2.0 */
/* burst_channel: the daemon's side of a burst's shared-memory channel (proto/burst_chan.h),
 * through which BurstExecute travels without the socket.
 *
 * Contract:
 * - srv_burst_channel_open() (loop, during ConfigureBurst) makes the sealed memfd and the
 *   doorbell eventfd, maps the memfd as the session's app's client memory (pool.h: it
 *   counts against quota.app.mappings and the daemon's mapping budget), takes one of
 *   quota.*.descriptors for the doorbell it keeps, starts the channel's thread, ties the
 *   channel to burst b (burst.h) and returns 0 with fds[0] the memfd and fds[1] the
 *   doorbell for the reply (the caller closes them). -1 when no channel can be had (a
 *   quota or budget, SRV_SESSION_MAX_BURST_CHANNELS per connection, SRV_MAX_BURST_CHANNELS
 *   in the daemon, out of memory): the burst then works over the socket alone.
 * - Requests reach the loop two ways, never through a wait of the loop's: the doorbell
 *   (watched by the loop) when the client rings it, and the channel's thread, which after
 *   each answer polls req_seq for the adaptive window when the client last ran on another
 *   CPU (burst_chan.h) and hands what it sees to the loop through one wake-up handle
 *   (wakeup.h) shared by every channel. One request at a time: one rung or polled while another is
 * in flight is taken once that one is answered.
 * - On the loop a request is copied out of the shared memory once and checked
 *   (burst_take.h: its length, its sequence number, that it unpacks, that it is a
 *   BurstExecute of this burst), then runs exactly as a socket BurstExecute does:
 *   srv_execution_make() (quota, binding through the burst's slots), the compilation's
 *   priority, the request's deadline and loop timeout, the scheduler's admission. Its
 *   Reply (as the socket would carry it) goes to the result area. A request refused
 *   before it runs is answered there with its status and a message. fds cannot travel in
 *   the channel: a pool naming one is refused as the socket refuses a missing fd.
 * - srv_burst_channel_close() (loop; burst.c, when the burst is freed) stops the thread,
 *   gives back the doorbell's descriptor and lets the channel go once its thread has
 *   ended, its doorbell's handle closed and no execution holds it; no result is written
 *   after it. Nothing the client writes in the channel can make the
 *   daemon wait on it: every wait is bounded or on the channel's own thread.
 * - srv_burst_channels_stop() (shutdown, after the executions stopped) ends every thread
 *   left and frees what remains.
 * - Counters (daemon-wide, admin status bursts.*): channels live, requests run through
 *   channels, requests refused in channels, channels asked for but not set up.
 */
#ifndef SRV_CALLS_BURST_CHANNEL_H
#define SRV_CALLS_BURST_CHANNEL_H

#include <stdint.h>

#include "daemon/base/daemon.h"
#include "daemon/clients/session.h"

#define SRV_SESSION_MAX_BURST_CHANNELS 16
#define SRV_MAX_BURST_CHANNELS         256

struct srv_burst_obj;
typedef struct srv_burst_channel srv_burst_channel;

int srv_burst_channel_open(srv_daemon *d, srv_session *s, struct srv_burst_obj *b, uint64_t handle,
                           int fds[2]);
void srv_burst_channels_stop(srv_daemon *d);

typedef struct srv_burst_channel_stats {
    uint64_t channels, executions, refused, not_set_up;
} srv_burst_channel_stats;
void srv_burst_channel_stats_get(srv_burst_channel_stats *out);

#endif
