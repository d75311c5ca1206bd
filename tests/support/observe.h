/* SPDX-License-Identifier: Apache-2.0 */
/* observe: watching a running daemon from outside, for the fault, load and guessing tests.
 * - The admin bus (tst_admin() of harness.h for the reply itself): obs_num() reads a
 *   number at a dotted path ("scheduler.queued.low") of a status reply, NAN when absent.
 * - Events: obs_events_start() subscribes (once the subscription provably works, so no
 *   event published afterwards is missed) and keeps, from a thread that reads all along
 *   (nanomsg's PUB drops what a subscriber does not read in time), every event called
 *   `name`; obs_events_next() takes the oldest kept one, waiting up to timeout_ms (NULL:
 *   none; the caller deletes it).
 * - /proc: the resident set (VmRSS, KiB) and the memfd mappings of a pid, -1 when
 *   unreadable (open fds: wire_count_fds()). */
#ifndef TST_SUPPORT_OBSERVE_H
#define TST_SUPPORT_OBSERVE_H

#include <sys/types.h>

#include <cjson/cJSON.h>

#include "tests/support/harness.h"

/* Whether RSS tells leaks: not under AddressSanitizer, whose quarantine keeps freed memory
 * resident (the daemon is built as the tests are). */
#if defined(__SANITIZE_ADDRESS__)
#define OBS_RSS_MEANINGFUL 0
#else
#define OBS_RSS_MEANINGFUL 1
#endif

double obs_num(const cJSON *status, const char *path);
/* obs_num() of a fresh status; NAN when the daemon does not answer. */
double obs_status_num(const char *state_dir, const char *path);

typedef struct obs_events obs_events;
obs_events *obs_events_start(const tst_daemon *d, const char *name);
cJSON *obs_events_next(obs_events *e, int timeout_ms);
/* Events of any name this subscriber missed so far: the gaps in their "seq" numbers. The
 * daemon drops events for a subscriber that does not keep up (nanomsg PUB), so a test may
 * miss an event only when this says some were lost. */
unsigned long obs_events_lost(obs_events *e);
void obs_events_stop(obs_events *e);

long obs_rss_kib(pid_t pid);
/* Its anonymous resident memory (RssAnon: heap, anonymous mappings; not shared memfds). */
long obs_rss_anon_kib(pid_t pid);
int obs_memfd_maps(pid_t pid);

#endif
