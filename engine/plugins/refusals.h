/* SPDX-License-Identifier: Apache-2.0 */
/* refusals: the plugins a loader refused, each with why (the extension loader and the driver
 * loader keep one each, for status). Contract:
 * - eng_refusals_add() keeps copies of path and why; when memory runs out the entry is
 *   dropped (the refusal itself was logged by the caller).
 * - eng_refusals_get() gives entry i, valid until the list is cleared.
 * - No locking: each loader guards its own list. */
#ifndef ENG_PLUGINS_REFUSALS_H
#define ENG_PLUGINS_REFUSALS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct eng_refusals {
    char **pairs; /* path, reason, path, reason, ... */
    uint32_t n;
} eng_refusals;

void eng_refusals_add(eng_refusals *r, const char *path, const char *why);
bool eng_refusals_get(const eng_refusals *r, uint32_t i, const char **path, const char **why);
void eng_refusals_clear(eng_refusals *r);

#endif
