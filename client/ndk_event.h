/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_event: ANeuralNetworksEvent as executions make and signal it.
 *
 * Contract: an event is reference counted (ndk_event_new(refs) starts with refs, e.g. the
 * caller's and a computing thread's; ndk_event_unref() drops one, the last frees it).
 * ndk_event_signal() completes it with an NDK code once; ndk_event_wait() blocks until
 * then and returns that code. An event made from a sync fence fd (createFromSyncFenceFd)
 * is waited for by polling the fence instead. A deferred event (a fenced execution's)
 * owns a sync fence and completes on its first wait, whoever waits: finish(ctx) runs once
 * and its NDK code is the event's status; ANeuralNetworksEvent_free waits for it too.
 * ndk_event_fence() is an event's sync fence (borrowed), -1 for none. */
#ifndef CLI_NDK_EVENT_H
#define CLI_NDK_EVENT_H

#include "client/ndk_shared.h"

NDK_HIDDEN ANeuralNetworksEvent *ndk_event_new(int refs);
NDK_HIDDEN void ndk_event_unref(ANeuralNetworksEvent *ev);
NDK_HIDDEN void ndk_event_signal(ANeuralNetworksEvent *ev, int status);
NDK_HIDDEN int ndk_event_wait(ANeuralNetworksEvent *ev);
NDK_HIDDEN ANeuralNetworksEvent *ndk_event_new_deferred(int fence, int (*finish)(void *ctx),
                                                        void *ctx);
NDK_HIDDEN int ndk_event_fence(const ANeuralNetworksEvent *ev);

#endif
