/* SPDX-License-Identifier: Apache-2.0 */
/* partitions.c: the example driver's live prepared partitions. See partitions.h. */
#include "partitions.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct ex_live {
    const void *prepared; /* NULL: a free slot */
    uint32_t n_inputs, n_outputs;
} ex_live;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ex_live *live;
static size_t n_live;

bool ex_partitions_add(const void *prepared, uint32_t n_inputs, uint32_t n_outputs) {
    ex_live e = {prepared, n_inputs, n_outputs};
    bool ok = false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_live && !ok; i++)
        if (!live[i].prepared) live[i] = e, ok = true;
    if (!ok) {
        ex_live *grown = realloc(live, (n_live + 1) * sizeof *grown);
        if (grown) live = grown, live[n_live++] = e, ok = true;
    }
    pthread_mutex_unlock(&lock);
    return ok;
}

void ex_partitions_drop(const void *prepared) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n_live; i++)
        if (live[i].prepared == prepared) live[i].prepared = NULL;
    pthread_mutex_unlock(&lock);
}

bool ex_partitions_has_io(const void *prepared, bool output, uint32_t index) {
    bool ok = false;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; prepared && i < n_live && !ok; i++)
        if (live[i].prepared == prepared)
            ok = index < (output ? live[i].n_outputs : live[i].n_inputs);
    pthread_mutex_unlock(&lock);
    return ok;
}

void ex_partitions_clear(void) {
    pthread_mutex_lock(&lock);
    free(live);
    live = NULL;
    n_live = 0;
    pthread_mutex_unlock(&lock);
}
