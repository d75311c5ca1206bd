/* SPDX-License-Identifier: Apache-2.0 */
/* app_memory.c: execution memory held per app, for admission. See sched_internal.h. */
#include <stdlib.h>

#include "sched/sched_internal.h"

static app_mem *mem_find(struct qos_sched *s, uint32_t app) {
    for (size_t i = 0; i < s->n_mem; i++)
        if (s->mem[i].app == app) return &s->mem[i];
    return NULL;
}

uint64_t qos_sched_mem_of(struct qos_sched *s, uint32_t app) {
    app_mem *m = mem_find(s, app);
    return m ? m->bytes : 0;
}

int qos_sched_mem_add(struct qos_sched *s, uint32_t app, uint64_t bytes) {
    app_mem *m = mem_find(s, app);
    if (!m) {
        if (s->n_mem == s->cap_mem) {
            size_t cap = s->cap_mem ? 2 * s->cap_mem : 8;
            app_mem *v = realloc(s->mem, cap * sizeof *v);
            if (!v) return -1;
            s->mem = v;
            s->cap_mem = cap;
        }
        m = &s->mem[s->n_mem++];
        m->app = app;
        m->bytes = 0;
    }
    m->bytes += bytes;
    return 0;
}

void qos_sched_mem_sub(struct qos_sched *s, uint32_t app, uint64_t bytes) {
    app_mem *m = mem_find(s, app);
    if (!m) return;
    m->bytes -= bytes < m->bytes ? bytes : m->bytes;
    if (!m->bytes) *m = s->mem[--s->n_mem];
}
