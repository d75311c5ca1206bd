/* SPDX-License-Identifier: Apache-2.0 */
/* pool_place: keeps XNNPACK's pool threads on CPUs of their own, off the CPU of the thread
 * that hands them an operator (xnn.c).
 *
 * Why: the pool's threads and their caller wait for each other by spinning. The kernel puts
 * a woken thread on its waker's CPU or the one it last ran on, and moves a running thread
 * only when periodic balancing gets to it; where the CPUs share no cache it never looks
 * for an idle CPU at a wake-up. A pool thread woken onto its caller's CPU then takes turns
 * with it a tick at a time while another CPU idles: on the 2-CPU test machine (4 ms ticks)
 * caller and pool thread shared one CPU for 17 ms, and one 1.2 ms execution took that
 * long. The kernel cannot stack threads pinned to different CPUs.
 *
 * Contract:
 * - eng_pool_place_init(pool): once, after the pool is made and before it runs anything
 *   else. Learns the pool's threads (each records its thread id in a task that waits for all
 *   of them) and pins pool thread k to the k-th CPU of the process's affinity mask, leaving
 *   the first to callers. Placement stays off (the kernel places every thread, as before)
 *   when the threads cannot be told apart within ENG_POOL_PLACE_WAIT_NS, when a pin fails,
 *   or with NND_ENGINE_PLACE=0 in the environment.
 * - eng_pool_place_caller(): before an operator runs on the pool. When the calling thread is
 *   on a CPU a pool thread is pinned to, that pool thread moves to the CPU none of them
 *   holds. Otherwise it costs one sched_getcpu(). Thread-safe; a pin that fails turns
 *   placement off and gives every pool thread the process's whole mask again.
 * - The caller itself is never pinned: the kernel keeps balancing it, and the daemon's other
 *   threads, as it would.
 * - Made for one caller at a time (nnd-cpu's default of one worker). Two callers on two
 *   CPUs at once (`--workers 2`) may move a pool thread back and forth, one system call a
 *   move; the pool itself runs one operator at a time either way. */
#ifndef ENG_BACKENDS_XNNPACK_POOL_PLACE_H
#define ENG_BACKENDS_XNNPACK_POOL_PLACE_H

#include <pthreadpool.h>
#include <stdbool.h>

#define ENG_POOL_PLACE_WAIT_NS 200000000ull

void eng_pool_place_init(pthreadpool_t pool);
void eng_pool_place_caller(void);
/* Whether placement is on (test_pool_place asks). */
bool eng_pool_place_active(void);

#endif
