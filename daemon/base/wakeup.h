/* SPDX-License-Identifier: Apache-2.0 */
/* wakeup: another thread's call to the event loop to come and look, without libuv's
 * uv_async_t.
 *
 * Why: libuv's uv_async_send() marks its handle busy, writes the loop's eventfd and only
 * then marks the handle done; the loop, woken by that write, spins until the sender has
 * marked it done, calling sched_yield() between spins. The loop thread runs in short slices
 * so that it preempts a worker when it wakes (docs/threads.md): it preempted the sending
 * worker inside that window, on the worker's own CPU, and spun there until the kernel ran
 * the worker again. Traced in `nnd-bench high_p99`: HIGH replies held 0.5 to 4 ms that way,
 * behind LOW work that had meanwhile taken the other CPU. Here the sender's last step is the
 * write: the loop never waits for it.
 *
 * Contract:
 * - srv_wakeup_init(): on the loop's thread; an eventfd watched by a uv_poll_t. -1 when
 *   either cannot be made.
 * - srv_wakeup_signal(): any thread, lock-free. One write(2) when no wake-up is pending,
 *   nothing otherwise. cb(w) then runs on the loop's thread: at least once after every
 *   signal (signals that come together are served by one call), so whatever the sender
 *   published before signalling is visible to that cb.
 * - srv_wakeup_close(): on the loop's thread; closed(w) (may be NULL) once libuv has let go of
 *   the handle, after which w may be freed. No signal may come after it.
 */
#ifndef SRV_BASE_WAKEUP_H
#define SRV_BASE_WAKEUP_H

#include <stdatomic.h>
#include <stdbool.h>

#include <uv.h>

typedef struct srv_wakeup srv_wakeup;
typedef void (*srv_wakeup_fn)(srv_wakeup *w);

struct srv_wakeup {
    uv_poll_t poll;
    int fd;
    atomic_bool pending;
    srv_wakeup_fn cb, closed;
    void *data; /* the owner's */
};

int srv_wakeup_init(srv_wakeup *w, uv_loop_t *loop, srv_wakeup_fn cb, void *data);
void srv_wakeup_signal(srv_wakeup *w);
void srv_wakeup_close(srv_wakeup *w, srv_wakeup_fn closed);

#endif
