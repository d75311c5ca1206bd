/* SPDX-License-Identifier: Apache-2.0 */
/* xnn_alloc: the allocator XNNPACK is initialized with (xnn.c), for the packed weights
 * its operators hold.
 *
 * Why: creating an operator packs its weights into fresh memory, and a fresh block of a
 * MiB or more is mapped anew (the daemon sets glibc's mmap threshold to 1 MiB so that
 * what clients' objects held goes back to the system). Its first touch costs a page fault
 * per 4 KiB and the kernel's zeroing, and its release an munmap: for the 17 MB of a
 * MobileNet that was more than the packing itself. So:
 * - Blocks of ENG_XNN_BIG_BLOCK bytes or more are anonymous mappings advised for huge
 *   pages (madvise mode THP: one fault per 2 MiB); smaller ones come from posix_memalign.
 * - A freed big block is kept, up to ENG_XNN_KEEP_BYTES in all (those kept longest are
 *   unmapped to make room), for the next operator that asks for a block of its size
 *   (between the size and a quarter more), so that
 *   preparing a model again, or one of the same shapes, touches no fresh page. Kept blocks
 *   are not counted as allocated (no live object owns them).
 * - eng_trim() (engine.h) unmaps every kept block; the daemon calls it where it
 *   trims the allocator (after clients leave). eng_mapped_bytes() counts the live
 *   big blocks (the daemon's memory.allocated_bytes adds them), eng_kept_bytes()
 *   the kept ones (memory.engine_kept_bytes).
 * - Every block handed out or freed while a preparation counts its model's footprint on
 *   this thread (footprint.h) adds or takes back its size there.
 * - Built with AddressSanitizer, every block comes from the heap (LeakSanitizer sees it).
 * - Thread-safe: operators are created on the loop and on preparation workers. */
#ifndef ENG_BACKENDS_XNNPACK_XNN_ALLOC_H
#define ENG_BACKENDS_XNNPACK_XNN_ALLOC_H

#include <stddef.h>

#define ENG_XNN_BIG_BLOCK  (256u << 10)
#define ENG_XNN_KEEP_BYTES (48ull << 20)

/* ENG_XNN_MAPS_BLOCKS: 1 when big blocks are mapped and kept, 0 under AddressSanitizer
 * (every block from the heap, so that LeakSanitizer still sees packed weights never freed). */
#if defined(__SANITIZE_ADDRESS__)
#define ENG_XNN_MAPS_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ENG_XNN_MAPS_BLOCKS 0
#endif
#endif
#ifndef ENG_XNN_MAPS_BLOCKS
#define ENG_XNN_MAPS_BLOCKS 1
#endif

struct xnn_allocator;
const struct xnn_allocator *eng_xnn_allocator(void);

#endif
