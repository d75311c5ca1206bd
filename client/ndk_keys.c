/* SPDX-License-Identifier: Apache-2.0 */
/* ndk_keys.c: memory keys and the list of live bursts that forget them. See ndk_keys.h. */
#include "client/ndk_keys.h"

/* Every live burst, so that memory about to be closed can be forgotten by those that
 * cached it (ndk_bursts_forget_key). */
static pthread_mutex_t bursts_lock = PTHREAD_MUTEX_INITIALIZER;
static ndk_burst_link *bursts;

uint64_t ndk_memory_key(void) {
    static atomic_uint_fast64_t last;
    return atomic_fetch_add(&last, 1) + 1;
}

void ndk_bursts_add(ndk_burst_link *l) {
    pthread_mutex_lock(&bursts_lock);
    l->prev = NULL;
    l->next = bursts;
    if (bursts) bursts->prev = l;
    bursts = l;
    pthread_mutex_unlock(&bursts_lock);
}

void ndk_bursts_remove(ndk_burst_link *l) {
    pthread_mutex_lock(&bursts_lock);
    if (l->prev)
        l->prev->next = l->next;
    else
        bursts = l->next;
    if (l->next) l->next->prev = l->prev;
    pthread_mutex_unlock(&bursts_lock);
}

void ndk_bursts_forget_key(uint64_t key) {
    pthread_mutex_lock(&bursts_lock);
    for (ndk_burst_link *l = bursts; l; l = l->next)
        if (!atomic_load(&l->session->dead))
            ndk_session_code(l->session, nnd_client_burst_forget_key(l->nb, key, NULL, NULL, 0));
    pthread_mutex_unlock(&bursts_lock);
}
