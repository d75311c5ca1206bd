/* SPDX-License-Identifier: Apache-2.0 */
#include "engine/plugins/refusals.h"

#include <stdlib.h>
#include <string.h>

void eng_refusals_add(eng_refusals *r, const char *path, const char *why) {
    char **p = realloc(r->pairs, sizeof *p * (2 * (size_t)r->n + 2));
    if (!p) return;
    r->pairs = p;
    p[2 * r->n] = strdup(path);
    p[2 * r->n + 1] = strdup(why);
    if (p[2 * r->n] && p[2 * r->n + 1]) {
        r->n++;
    } else {
        free(p[2 * r->n]);
        free(p[2 * r->n + 1]);
    }
}

bool eng_refusals_get(const eng_refusals *r, uint32_t i, const char **path, const char **why) {
    if (i >= r->n) return false;
    *path = r->pairs[2 * i];
    *why = r->pairs[2 * i + 1];
    return true;
}

void eng_refusals_clear(eng_refusals *r) {
    for (uint32_t i = 0; i < 2 * r->n; i++)
        free(r->pairs[i]);
    free(r->pairs);
    *r = (eng_refusals){0};
}
