/* SPDX-License-Identifier: Apache-2.0 */
/* case_guard: memory that ends where an inaccessible page begins, for the guard-page mode
 * of nnd-conformance-local (--guard-pages): every input, constant and output of a case is
 * placed so that its last byte is the last readable one, and a kernel that reads or writes
 * past it faults at once (SIGSEGV, or ASan's report of it) instead of reading a neighbour's
 * bytes. Under ASan the bytes of the mapping before the tensor are poisoned too, so that the
 * engine's own reads before a tensor are reported (XNNPACK is not instrumented).
 *
 * Contract:
 * - tool_guard_alloc(n) returns n writable bytes (zeroed) whose end is page aligned and is
 *   followed by a PROT_NONE page; n = 0 gives a pointer to that page. NULL when out of
 *   memory. tool_guard_free(p) unmaps what tool_guard_alloc() returned (NULL: nothing); it
 *   has the signature of eng_memory_view.release, p being its ctx.
 * - tool_case_guarded_model() makes a copy of c->model in which every CONSTANT_COPY operand
 *   with bytes, of every graph, is a CONSTANT_REFERENCE at offset 0 of a pool of its own
 *   (pool k: POOL_MEMFD, fd index k, the operand's length), and sets (*regions)[k] to
 *   guarded memory (tool_guard_alloc) holding those bytes; *n_regions is the copy's pool
 *   count. The caller owns the copy (nnd__model__free_unpacked(copy, NULL)), the array
 *   (free) and each region (tool_guard_free). NULL when out of memory (nothing to free) or
 *   when c->model already names pools.
 */
#ifndef TOOL_CONFORMANCE_CASE_GUARD_H
#define TOOL_CONFORMANCE_CASE_GUARD_H

#include <stddef.h>
#include <stdint.h>

#include "tools/conformance/case_record.h"

void *tool_guard_alloc(size_t n);
void tool_guard_free(void *p);
Nnd__Model *tool_case_guarded_model(const tool_case *c, uint8_t ***regions, size_t *n_regions);

#endif
