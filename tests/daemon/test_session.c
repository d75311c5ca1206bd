/* SPDX-License-Identifier: Apache-2.0 */
/* test_session (unit): the per-connection handle table. Handles are unique, non-zero and
 * only find objects of the kind asked for; release frees exactly once and keeps every
 * other handle findable; clearing the session frees the rest. Objects count against the
 * session's and its app's quotas, and give them back when freed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/clients/session.h"

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
    srv_session s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < N; i++) {
        ids[i] = i;
        srv_obj_kind kind = i % 3 ? SRV_OBJ_PREPARED : SRV_OBJ_BUFFER;
        assert_int_equal(srv_session_add(&s, kind, &ids[i], free_obj, &handles[i]), 0);
        assert_true(handles[i] != 0);
    }
    assert_int_equal(srv_session_count(&s, SRV_OBJ_ANY), N);
    assert_int_equal(srv_session_count(&s, SRV_OBJ_BUFFER), (N + 2) / 3);
    for (int i = 0; i < N; i++) {
        srv_obj_kind kind = i % 3 ? SRV_OBJ_PREPARED : SRV_OBJ_BUFFER;
        srv_obj_kind other = i % 3 ? SRV_OBJ_BUFFER : SRV_OBJ_PREPARED;
        assert_ptr_equal(srv_session_find(&s, handles[i], kind), &ids[i]);
        assert_ptr_equal(srv_session_find(&s, handles[i], SRV_OBJ_ANY), &ids[i]);
        assert_null(srv_session_find(&s, handles[i], other));
    }
    assert_null(srv_session_find(&s, 0, SRV_OBJ_ANY));
    /* Release every other one; the rest must stay reachable. */
    for (int i = 0; i < N; i += 2)
        assert_int_equal(srv_session_release(&s, handles[i]), 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(freed[i], i % 2 == 0);
        if (i % 2)
            assert_ptr_equal(srv_session_find(&s, handles[i], SRV_OBJ_ANY), &ids[i]);
        else
            assert_null(srv_session_find(&s, handles[i], SRV_OBJ_ANY));
    }
    assert_int_equal(srv_session_release(&s, handles[0]), -1);
    assert_int_equal(srv_session_count(&s, SRV_OBJ_ANY), N / 2);
    srv_session_clear(&s);
    for (int i = 0; i < N; i++)
        assert_int_equal(freed[i], 1);
    assert_true(s.closing);
    assert_int_equal(srv_session_count(&s, SRV_OBJ_ANY), 0);
}

static void test_object_cap(void **state) {
    (void)state;
    srv_session s;
    memset(&s, 0, sizeof s);
    uint64_t h;
    for (int i = 0; i < SRV_SESSION_MAX_OBJECTS; i++)
        assert_int_equal(srv_session_add(&s, SRV_OBJ_BURST, NULL, NULL, &h), 0);
    assert_int_equal(srv_session_add(&s, SRV_OBJ_BURST, NULL, NULL, &h), -1);
    srv_session_clear(&s);
}

/* Two sessions of one app under small limits (quota.h). */
static void test_quota_counts(void **state) {
    (void)state;
    srv_quota_limits l;
    srv_quota_limits_default(&l);
    l.app[SRV_QUOTA_CONNECTIONS] = 2;
    l.app[SRV_QUOTA_PREPARED_MODELS] = 3;
    l.conn[SRV_QUOTA_PREPARED_MODELS] = 2;
    srv_quota *q = srv_quota_new(&l, NULL);
    assert_non_null(q);
    srv_session a, b, c;
    memset(&a, 0, sizeof a);
    a.uid = a.quota.uid = 1234;
    b = c = a;
    char err[256];
    assert_int_equal(srv_quota_connect(q, &a.quota, err, sizeof err), SCHEMA_OK);
    assert_int_equal(srv_quota_connect(q, &b.quota, err, sizeof err), SCHEMA_OK);
    assert_int_equal(srv_quota_connect(q, &c.quota, err, sizeof err),
                     SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT);
    assert_string_equal(err, "quota.app.connections (2) reached for uid 1234");
    assert_null(c.quota.app);
    assert_ptr_equal(a.quota.app, b.quota.app);

    uint64_t h[3];
    static int obj;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(srv_session_check_quota(&a, SRV_OBJ_PREPARED, err, sizeof err), SCHEMA_OK);
        assert_int_equal(srv_session_add(&a, SRV_OBJ_PREPARED, &obj, NULL, &h[i]), 0);
    }
    assert_int_equal(srv_session_check_quota(&a, SRV_OBJ_PREPARED, err, sizeof err),
                     SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT);
    assert_string_equal(err, "quota.connection.prepared_models (2) reached on this connection "
                             "(uid 1234)");
    /* Other kinds are not limited by it. */
    assert_int_equal(srv_session_check_quota(&a, SRV_OBJ_BURST, err, sizeof err), SCHEMA_OK);
    assert_int_equal(srv_session_add(&b, SRV_OBJ_PREPARED, &obj, NULL, &h[2]), 0);
    assert_int_equal(srv_session_check_quota(&b, SRV_OBJ_PREPARED, err, sizeof err),
                     SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT);
    assert_string_equal(err, "quota.app.prepared_models (3) reached for uid 1234");
    assert_int_equal(a.quota.app->used[SRV_QUOTA_PREPARED_MODELS], 3);
    assert_int_equal(a.quota.app->refused[SRV_QUOTA_PREPARED_MODELS], 2);
    /* Released or cleared, the room comes back. */
    assert_int_equal(srv_session_release(&a, h[0]), 0);
    assert_int_equal(srv_session_check_quota(&b, SRV_OBJ_PREPARED, err, sizeof err), SCHEMA_OK);
    srv_session_clear(&a);
    srv_quota_disconnect(&a.quota);
    assert_int_equal(b.quota.app->used[SRV_QUOTA_PREPARED_MODELS], 1);
    assert_int_equal(b.quota.app->used[SRV_QUOTA_CONNECTIONS], 1);
    srv_session_clear(&b);
    srv_quota_disconnect(&b.quota);
    srv_quota_free(q);
}

/* A byte quota refuses without taking anything, and never overflows. */
static void test_quota_bytes(void **state) {
    (void)state;
    srv_quota_limits l;
    srv_quota_limits_default(&l);
    l.app[SRV_QUOTA_BUFFER_BYTES] = 100;
    l.conn[SRV_QUOTA_BUFFER_BYTES] = 0; /* unlimited */
    srv_quota *q = srv_quota_new(&l, NULL);
    srv_session s;
    memset(&s, 0, sizeof s);
    s.uid = s.quota.uid = 7;
    char err[256];
    assert_int_equal(srv_quota_connect(q, &s.quota, err, sizeof err), SCHEMA_OK);
    assert_int_equal(srv_quota_take(&s.quota, SRV_QUOTA_BUFFER_BYTES, 60, err, sizeof err),
                     SCHEMA_OK);
    assert_int_equal(srv_quota_take(&s.quota, SRV_QUOTA_BUFFER_BYTES, 41, err, sizeof err),
                     SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT);
    assert_string_equal(err, "quota.app.buffer_bytes (100) reached for uid 7: 60 bytes held, 41 "
                             "more asked");
    assert_int_equal(srv_quota_take(&s.quota, SRV_QUOTA_BUFFER_BYTES, UINT64_MAX, err, sizeof err),
                     SCHEMA_RESOURCE_EXHAUSTED_TRANSIENT); /* no overflow */
    assert_int_equal(s.quota.used[SRV_QUOTA_BUFFER_BYTES], 60);
    assert_int_equal(srv_quota_take(&s.quota, SRV_QUOTA_BUFFER_BYTES, 40, err, sizeof err),
                     SCHEMA_OK);
    srv_quota_add(&s.quota, SRV_QUOTA_BUFFER_BYTES, -100);
    assert_int_equal(s.quota.app->used[SRV_QUOTA_BUFFER_BYTES], 0);
    srv_quota_disconnect(&s.quota);
    srv_quota_free(q);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_find_release_clear),
        cmocka_unit_test(test_object_cap),
        cmocka_unit_test(test_quota_counts),
        cmocka_unit_test(test_quota_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
