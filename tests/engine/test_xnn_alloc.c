/* SPDX-License-Identifier: Apache-2.0 */
/* test_xnn_alloc (unit): the allocator XNNPACK's packed weights come from
 * (engine/backends/xnnpack/xnn_alloc.h). Blocks are aligned as asked; a big block is mapped and
 * counted live (eng_mapped_bytes), kept when freed (eng_kept_bytes) and handed back to the next
 * request of its size; the keep never exceeds ENG_XNN_KEEP_BYTES however many blocks are freed, and
 * eng_trim() empties it. Small blocks are never mapped. Built with AddressSanitizer every block
 * comes from the heap: nothing is mapped or kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <xnnpack.h>

#include "engine/engine.h"
#include "engine/backends/xnnpack/xnn_alloc.h"

static const bool mapped = ENG_XNN_MAPS_BLOCKS;

#define MIB (1u << 20)

static void *get(size_t alignment, size_t size) {
    void *p = eng_xnn_allocator()->aligned_allocate(NULL, alignment, size);
    assert_non_null(p);
    assert_int_equal((uintptr_t)p % alignment, 0);
    memset(p, 0x5a, size); /* every byte is ours */
    return p;
}

static void put(void *p) {
    eng_xnn_allocator()->aligned_deallocate(NULL, p);
}

static void test_small_blocks_not_mapped(void **state) {
    (void)state;
    size_t live = eng_mapped_bytes(), kept = eng_kept_bytes();
    void *p = get(64, 1000), *q = get(4096, 100);
    assert_int_equal(eng_mapped_bytes(), live);
    put(p), put(q);
    put(NULL);
    assert_int_equal(eng_kept_bytes(), kept);
}

static void test_big_block_kept_and_reused(void **state) {
    (void)state;
    eng_trim();
    size_t live = eng_mapped_bytes();
    void *p = get(64, 3 * MIB);
    assert_int_equal(eng_mapped_bytes(), live + (mapped ? 3 * MIB + 4096 : 0));
    put(p);
    assert_int_equal(eng_mapped_bytes(), live);
    assert_int_equal(eng_kept_bytes(), mapped ? 3 * MIB + 4096 : 0);
    void *q = get(64, 3 * MIB - 100); /* within a quarter: the kept block serves it */
    if (mapped) assert_ptr_equal(q, p);
    assert_int_equal(eng_kept_bytes(), 0);
    void *r = get(64, 5 * MIB); /* too big for nothing kept: a fresh block */
    put(q), put(r);
    void *s = get(64, MIB); /* kept blocks of 3 and 5 MiB are more than a quarter over */
    assert_ptr_not_equal(s, q);
    assert_ptr_not_equal(s, r);
    put(s);
    eng_trim();
    assert_int_equal(eng_kept_bytes(), 0);
    assert_int_equal(eng_mapped_bytes(), live);
}

static void test_keep_bounded(void **state) {
    (void)state;
    enum { N = 10 };
    void *p[N];
    for (int i = 0; i < N; i++)
        p[i] = get(64, 8 * MIB);
    for (int i = 0; i < N; i++) {
        put(p[i]);
        assert_true(eng_kept_bytes() <= ENG_XNN_KEEP_BYTES);
    }
    if (mapped) assert_true(eng_kept_bytes() >= ENG_XNN_KEEP_BYTES - 8 * MIB - 4096 * N);
    /* A kept block serves the next request of its size. */
    void *q = get(64, 8 * MIB);
    bool among = false;
    for (int i = 0; i < N; i++)
        among |= q == p[i];
    assert_true(among || !mapped);
    put(q);
    eng_trim();
    assert_int_equal(eng_kept_bytes(), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_blocks_not_mapped),
        cmocka_unit_test(test_big_block_kept_and_reused),
        cmocka_unit_test(test_keep_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
