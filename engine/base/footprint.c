/* SPDX-License-Identifier: Apache-2.0 */
/* footprint.c: see footprint.h. */
#include "engine/base/footprint.h"

#include <malloc.h>

static _Thread_local size_t *account;

void eng_footprint_begin(size_t *a) {
    account = a;
}

void eng_footprint_end(void) {
    account = NULL;
}

void eng_footprint_add(ssize_t bytes) {
    if (!account) return;
    if (bytes >= 0)
        *account += (size_t)bytes;
    else
        *account -= (size_t)-bytes < *account ? (size_t)-bytes : *account;
}

void eng_footprint_add_block(void *p) {
    if (p && account) *account += malloc_usable_size(p);
}
