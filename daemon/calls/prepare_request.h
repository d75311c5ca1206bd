/* SPDX-License-Identifier: Apache-2.0 */
/* prepare_request: a PrepareModel whose request was spilled (over PROTO_FRAME_INLINE_MAX on
 * the wire: thousands of operations, or constants inline) prepared with nothing on the
 * event loop that grows with the model. The loop admits it and maps its pools; the request
 * message itself goes to the job, which converts it (convert.h), makes the content cache's
 * sighting of it (cache.h) and measures it on libuv's worker threads; the loop decides
 * from those figures (content cache or in place, quotas), a worker prepares (eng_plan and
 * srv_cache_encode, or eng_prepare), and the loop answers.
 *
 * Contract:
 * - PrepareModel (prepare.c) sends a request this way when its message is malloc'd (a
 *   spilled request, proto_frame_take_msg()) and the session can answer later.
 * - srv_prepare_request(): takes the request's message from c->in (c->req is not to be
 *   used after), o, the mapped pool views (n_views) and, when token is not NULL, a
 *   duplicate of each cache fd. While the job holds the message its bytes (the request's
 *   size on the wire) are counted against the session's prepared_bytes (quota.h), given
 *   back before the answer. The session is held (session.h) until the answer; a session
 *   closed meanwhile gets none, and everything the job holds is freed on the loop when
 *   its worker step ends. Every path answers through done (prepare_off_loop.h) or drops.
 */
#ifndef SRV_CALLS_PREPARE_REQUEST_H
#define SRV_CALLS_PREPARE_REQUEST_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/calls/call.h"
#include "daemon/calls/model_obj.h"
#include "daemon/calls/prepare_off_loop.h"
#include "daemon/devices/devices.h"
#include "engine/engine.h"

void srv_prepare_request(srv_call *c, srv_model_obj *o, const srv_device_plan *plan,
                         eng_memory_view *views, size_t n_views, const uint8_t *token, int model_fd,
                         int data_fd, srv_prepare_done_fn done);

#endif
