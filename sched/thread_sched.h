/* SPDX-License-Identifier: Apache-2.0 */
/* thread_sched: how the kernel schedules the scheduler's threads and its owner's (the
 * daemon's event loop). docs/threads.md says what each thread runs at and why.
 *
 * Contract:
 * - Both stay SCHED_OTHER at the process's nice value unless configured otherwise, so that
 *   computation keeps the share of the CPUs an in-process library would have against the
 *   machine's other programs.
 * - qos_thread_sched_nice(): raises the calling thread's nice value by delta (0 leaves it);
 *   threads it starts later inherit it. Raising needs no privilege; lowering it back would.
 * - qos_thread_sched_slice(): asks the kernel to schedule the calling thread in slices of
 *   slice_us (sched_attr.sched_runtime of a SCHED_OTHER thread; 0 leaves it): the same
 *   weight, so the same share, but an earlier deadline each time it wakes, so that a
 *   thread whose turns are short preempts a busy one on waking instead of waiting out that
 *   one's slice. No privilege is needed. Kernels that do not take a slice for
 *   SCHED_OTHER threads (before Linux 6.12) refuse or ignore it: returns whether the
 *   kernel holds the value asked for.
 */
#ifndef QOS_THREAD_SCHED_H
#define QOS_THREAD_SCHED_H

#include <stdbool.h>
#include <stdint.h>

void qos_thread_sched_nice(int delta);
bool qos_thread_sched_slice(uint32_t slice_us);

#endif
