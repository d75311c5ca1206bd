/* test_session (unit): the per-connection handle table. Handles are unique, non-zero and
 * only find objects of the kind asked for; release frees exactly once and keeps every
 * other handle findable; clearing the session frees the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "session.h"

#define N 5000

static int freed[N];

static void free_obj(void *obj) {
    freed[*(int *)obj]++;
}

static void test_add_find_release_clear(void **state) {
    (void)state;
    static int ids[N];
    static uint64_t handles[N];
    memset(freed, 0, sizeof freed);
    nnd_session s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < N; i++) {
        ids[i] = i;
        nnd_obj_kind kind = i % 3 ? NND_OBJ_PREPARED : NND_OBJ_BUFFER;
        assert_int_equal(nnd_session_add(&s, kind, &ids[i], free_obj, &handles[i]), 0);
        assert_true(handles[i] != 0);
    }
    assert_int_equal(nnd_session_count(&s, NND_OBJ_ANY), N);
    assert_int_equal(nnd_session_count(&s, NND_OBJ_BUFFER), (N + 2) / 3);
    for (int i = 0; i < N; i++) {
        nnd_obj_kind kind = i % 3 ? NND_OBJ_PREPARED : NND_OBJ_BUFFER;
        nnd_obj_kind other = i % 3 ? NND_OBJ_BUFFER : NND_OBJ_PREPARED;
        assert_ptr_equal(nnd_session_find(&s, handles[i], kind), &ids[i]);
        assert_ptr_equal(nnd_session_find(&s, handles[i], NND_OBJ_ANY), &ids[i]);
        assert_null(nnd_session_find(&s, handles[i], other));
    }
    assert_null(nnd_session_find(&s, 0, NND_OBJ_ANY));
    /* Release every other one; the rest must stay reachable. */
    for (int i = 0; i < N; i += 2)
        assert_int_equal(nnd_session_release(&s, handles[i]), 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(freed[i], i % 2 == 0);
        if (i % 2)
            assert_ptr_equal(nnd_session_find(&s, handles[i], NND_OBJ_ANY), &ids[i]);
        else
            assert_null(nnd_session_find(&s, handles[i], NND_OBJ_ANY));
    }
    assert_int_equal(nnd_session_release(&s, handles[0]), -1);
    assert_int_equal(nnd_session_count(&s, NND_OBJ_ANY), N / 2);
    nnd_session_clear(&s);
    for (int i = 0; i < N; i++)
        assert_int_equal(freed[i], 1);
    assert_true(s.closing);
    assert_int_equal(nnd_session_count(&s, NND_OBJ_ANY), 0);
}

static void test_object_cap(void **state) {
    (void)state;
    nnd_session s;
    memset(&s, 0, sizeof s);
    uint64_t h;
    for (int i = 0; i < NND_SESSION_MAX_OBJECTS; i++)
        assert_int_equal(nnd_session_add(&s, NND_OBJ_BURST, NULL, NULL, &h), 0);
    assert_int_equal(nnd_session_add(&s, NND_OBJ_BURST, NULL, NULL, &h), -1);
    nnd_session_clear(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_find_release_clear),
        cmocka_unit_test(test_object_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
