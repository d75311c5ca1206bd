/* SPDX-License-Identifier: Apache-2.0 */
/* thread_sched.c: nice values and slices of the calling thread. See thread_sched.h. */
#include "sched/thread_sched.h"

#include <linux/sched.h>
#include <linux/sched/types.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

void qos_thread_sched_nice(int delta) {
    if (!delta) return;
    int now = getpriority(PRIO_PROCESS, (id_t)gettid());
    setpriority(PRIO_PROCESS, (id_t)gettid(), now + delta);
}

bool qos_thread_sched_slice(uint32_t slice_us) {
    if (!slice_us) return false;
    struct sched_attr a;
    memset(&a, 0, sizeof a);
    if (syscall(SYS_sched_getattr, 0, &a, sizeof a, 0) < 0 || a.sched_policy != SCHED_NORMAL)
        return false;
    a.size = sizeof a;
    a.sched_flags = 0;
    a.sched_runtime = (uint64_t)slice_us * 1000u;
    if (syscall(SYS_sched_setattr, 0, &a, 0) < 0) return false;
    struct sched_attr back;
    memset(&back, 0, sizeof back);
    return syscall(SYS_sched_getattr, 0, &back, sizeof back, 0) == 0 &&
           back.sched_runtime == a.sched_runtime;
}
