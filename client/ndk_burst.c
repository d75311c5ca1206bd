/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_burst.c: ANeuralNetworksBurst, a daemon burst through libnnd, which sends each
 * memory's fd once and its slot number after that. burstCompute runs an execution's
 * compute through it. Public API only: nothing else of libnnd calls in here. */
#include <stdlib.h>

#include "client/ndk_execution.h"
#include "client/ndk_keys.h"

struct ANeuralNetworksBurst {
    const ANeuralNetworksCompilation *compilation;
    ndk_burst_link link; /* the compilation's session (one reference) and the daemon burst */
    atomic_flag busy;    /* one burstCompute at a time */
};

int ANeuralNetworksBurst_create(ANeuralNetworksCompilation *compilation,
                                ANeuralNetworksBurst **burst) {
    if (!compilation || !burst) return ANEURALNETWORKS_UNEXPECTED_NULL;
    *burst = NULL;
    if (!compilation->finished || !compilation->valid) return ANEURALNETWORKS_BAD_STATE;
    ndk_session *s = compilation->session;
    if (atomic_load(&s->dead)) return ANEURALNETWORKS_DEAD_OBJECT;
    ANeuralNetworksBurst *b = calloc(1, sizeof *b);
    if (!b) return ANEURALNETWORKS_OUT_OF_MEMORY;
    /* A compilation the daemon did not prepare has no daemon burst: its computations fail
     * before they would use one. */
    int rc = compilation->fails_at_execution
                 ? ANEURALNETWORKS_NO_ERROR
                 : ndk_session_code(s, nnd_client_burst_configure(s->client, compilation->handle,
                                                                  &b->link.nb, NULL, 0));
    if (rc) {
        free(b);
        return rc;
    }
    b->compilation = compilation;
    b->link.session = s;
    atomic_fetch_add(&s->refs, 1);
    atomic_flag_clear(&b->busy);
    if (b->link.nb) ndk_bursts_add(&b->link);
    *burst = b;
    return ANEURALNETWORKS_NO_ERROR;
}

void ANeuralNetworksBurst_free(ANeuralNetworksBurst *b) {
    if (!b) return;
    if (b->link.nb) ndk_bursts_remove(&b->link);
    /* Release unmaps every slot in the daemon; a dead connection took them with it. */
    ndk_session_code(b->link.session, nnd_client_burst_free(b->link.nb));
    ndk_session_put(b->link.session);
    free(b);
}

int ANeuralNetworksExecution_burstCompute(ANeuralNetworksExecution *execution,
                                          ANeuralNetworksBurst *burst) {
    if (!execution || !burst) return ANEURALNETWORKS_UNEXPECTED_NULL;
    if (execution->c != burst->compilation) return ANEURALNETWORKS_BAD_DATA;
    if (atomic_flag_test_and_set(&burst->busy)) return ANEURALNETWORKS_BAD_STATE;
    int rc = ndk_execution_compute_burst(execution, burst->link.nb);
    atomic_flag_clear(&burst->busy);
    return rc;
}
