/* SPDX-License-Identifier: Apache-2.0 */
/* test_shared_session (integration): one session, several connections, against a real
 * daemon. The threads of a libnnd client each get a connection of their own (a lane)
 * joined to the client's session: a model prepared on one thread's is executed and
 * released on others'. A join names another connection's token and only works from the
 * same process: a forked child's join gets a session of its own, whose handles are not the
 * parent's. The owner's going closes its members. A process that exits without closing
 * leaves nothing behind. Quotas per uid bound the objects and connections of a shared
 * session as they bound one connection's; a lane the connection quota refuses leaves the
 * thread on the shared connection, and its calls still work. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proto/frame.h"
#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/qos_models.h"
#include "tests/support/wire.h"

static double status_num(const tst_daemon *d, const char *key) {
    cJSON *st = tst_admin_status(d);
    assert_non_null(st);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(st, key);
    assert_non_null(v);
    double x = v->valuedouble;
    cJSON_Delete(st);
    return x;
}

/* Waits (10 s at most) for status key to read want; returns what it read last. */
static double await_num(const tst_daemon *d, const char *key, double want) {
    double x = status_num(d, key);
    for (int i = 0; i < 1000 && x != want; i++) {
        struct timespec ts = {0, 10 * 1000000};
        nanosleep(&ts, NULL);
        x = status_num(d, key);
    }
    return x;
}

/* ---- threads of one client ------------------------------------------------------------- */

typedef enum { PREPARE, EXECUTE, RELEASE } step_kind;

typedef struct step {
    nnd_client *c;
    step_kind kind;
    qos_chain *m;
    uint64_t *handle;
    int status;
    char err[256];
    bool keep; /* the thread stays until `leave`: a later thread cannot reuse its lane */
    sem_t done, leave;
} step;

static void *run_step(void *p) {
    step *s = p;
    if (s->kind == PREPARE) {
        s->status = nnd_client_prepare(s->c, &s->m->model, NULL, 0, 0, 0, 0, s->handle, s->err,
                                       sizeof s->err);
    } else if (s->kind == RELEASE) {
        s->status = nnd_client_release(s->c, *s->handle);
    } else {
        size_t bytes = (size_t)s->m->len * sizeof(float);
        void *map;
        int fd = nnd_memfd_create("test-shared", 3 * bytes, &map);
        float *f = map;
        for (uint32_t i = 0; i < s->m->len; i++)
            f[i] = (float)i, f[s->m->len + i] = 1.0f;
        qos_req r;
        qos_req_init(&r, s->m->len, 3 * bytes, 0, bytes, 2 * bytes);
        s->status = nnd_client_execute(s->c, *s->handle, &r.req, &fd, 1, false, 0, NULL, s->err,
                                       sizeof s->err);
        for (uint32_t i = 0; i < s->m->len && !s->status; i++)
            if (f[2 * s->m->len + i] != (float)i + (float)s->m->n) s->status = -1;
        munmap(map, 3 * bytes);
        close(fd);
    }
    if (s->keep) {
        sem_post(&s->done);
        sem_wait(&s->leave);
    }
    return NULL;
}

/* One step on a thread that stays until end_kept(); its status. */
static int start_kept(step *s, pthread_t *t, nnd_client *c, step_kind kind, qos_chain *m,
                      uint64_t *handle) {
    *s = (step){.c = c, .kind = kind, .m = m, .handle = handle, .keep = true};
    sem_init(&s->done, 0, 0);
    sem_init(&s->leave, 0, 0);
    assert_int_equal(pthread_create(t, NULL, run_step, s), 0);
    sem_wait(&s->done);
    if (s->status) print_message("# step %d: %d: %s\n", (int)kind, s->status, s->err);
    return s->status;
}

static void end_kept(step *s, pthread_t t) {
    sem_post(&s->leave);
    pthread_join(t, NULL);
    sem_destroy(&s->done);
    sem_destroy(&s->leave);
}

/* One step on a thread of its own; its status. */
static int on_new_thread(nnd_client *c, step_kind kind, qos_chain *m, uint64_t *handle) {
    step s = {.c = c, .kind = kind, .m = m, .handle = handle};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_step, &s), 0);
    pthread_join(t, NULL);
    if (s.status) print_message("# step %d: %d: %s\n", (int)kind, s.status, s.err);
    return s.status;
}

static void test_threads_share_objects(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-shared", err, sizeof err);
    assert_non_null(c);
    qos_chain m;
    qos_chain_init(&m, 3, 64);
    uint64_t handle = 0;
    step a, b;
    pthread_t ta, tb;
    assert_int_equal(start_kept(&a, &ta, c, PREPARE, &m, &handle), 0);
    assert_int_equal(start_kept(&b, &tb, c, EXECUTE, &m, &handle), 0);
    /* The connecting thread keeps the first connection; each other thread has a lane. */
    assert_int_equal((int)status_num(&d, "connections"), 3);
    assert_int_equal((int)status_num(&d, "prepared_models"), 1);
    /* From this thread too, on the first connection. */
    qos_req r;
    size_t bytes = (size_t)m.len * sizeof(float);
    int fd = nnd_memfd_create("test-shared", 3 * bytes, NULL);
    qos_req_init(&r, m.len, 3 * bytes, 0, bytes, 2 * bytes);
    assert_int_equal(nnd_client_execute(c, handle, &r.req, &fd, 1, false, 0, NULL, err, sizeof err),
                     0);
    close(fd);
    assert_int_equal(on_new_thread(c, RELEASE, &m, &handle), 0);
    assert_int_equal((int)status_num(&d, "prepared_models"), 0);
    assert_int_equal((int)status_num(&d, "connections"), 4);
    end_kept(&a, ta);
    end_kept(&b, tb);
    nnd_client_close(c);
    assert_int_equal((int)await_num(&d, "connections", 0), 0);
    qos_chain_free(&m);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- joining on the wire ----------------------------------------------------------------- */

/* Hello on sock with join_session (0: none); the session token of its reply. */
static uint64_t hello(int sock, uint64_t join) {
    Nnd__Hello h = NND__HELLO__INIT;
    h.protocol_version = PROTO_PROTOCOL_VERSION;
    h.client_name = (char *)"test-join";
    h.join_session = join;
    Nnd__Request req = NND__REQUEST__INIT;
    req.id = 1;
    req.call_case = NND__REQUEST__CALL_HELLO;
    req.hello = &h;
    Nnd__Reply *r = wire_call(sock, &req, NULL, 0);
    assert_non_null(r);
    assert_int_equal(r->result_case, NND__REPLY__RESULT_HELLO);
    uint64_t token = r->hello->session_token;
    wire_free(r);
    assert_true(token != 0);
    return token;
}

static int release_status(int sock, uint64_t handle) {
    Nnd__Reply *r = wire_release(sock, 7, handle);
    assert_non_null(r);
    assert_int_equal(r->id, 7);
    int st = r->status;
    wire_free(r);
    return st;
}

static void test_join_same_process_only(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    int owner = tst_connect_raw(&d), member = tst_connect_raw(&d), other = tst_connect_raw(&d);
    uint64_t token = hello(owner, 0);
    assert_int_equal(hello(member, token), token);
    assert_true(hello(other, 0) != token);
    pid_t pid = fork();
    if (pid == 0) { /* another process with the token: a session of its own */
        int s = tst_connect_raw(&d);
        _exit(s >= 0 && hello(s, token) != token ? 0 : 1);
    }
    int wst;
    assert_int_equal(waitpid(pid, &wst, 0), pid);
    assert_true(WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
    /* Made on the member, the model is the owner's session's: not the other connection's. */
    wire_add_model m;
    wire_add_model_init(&m, -1);
    uint64_t h = wire_prepare(member, &m.model, NULL, 0);
    assert_true(h != 0);
    assert_int_equal(release_status(other, h), NND__ERROR_STATUS__INVALID_ARGUMENT);
    assert_int_equal(release_status(owner, h), NND__ERROR_STATUS__NONE);
    assert_int_equal(release_status(member, h), NND__ERROR_STATUS__INVALID_ARGUMENT);
    /* The owner's going closes its member. */
    close(owner);
    assert_null(wire_recv(member, WIRE_TIMEOUT_MS));
    char b;
    assert_int_equal(recv(member, &b, 1, MSG_DONTWAIT), 0); /* EOF, not a timeout */
    close(member);
    close(other);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- a process that goes ---------------------------------------------------------------- */

static void test_exit_frees_everything(void **state) {
    (void)state;
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, NULL), 0);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) { /* two models made on two lanes, then gone without a close */
        nnd_client *c = nnd_client_connect(d.socket_path, "test-leaver", NULL, 0);
        qos_chain m;
        qos_chain_init(&m, 3, 64);
        uint64_t h1 = 0, h2 = 0;
        step a, b;
        pthread_t ta, tb;
        int ok = c && !start_kept(&a, &ta, c, PREPARE, &m, &h1) &&
                 !start_kept(&b, &tb, c, PREPARE, &m, &h2);
        char x = ok ? 'y' : 'n';
        if (write(ready[1], &x, 1) != 1) _exit(2);
        pause(); /* killed */
        _exit(0);
    }
    char x = 0;
    assert_int_equal(read(ready[0], &x, 1), 1);
    assert_int_equal(x, 'y');
    assert_int_equal((int)status_num(&d, "prepared_models"), 2);
    assert_int_equal((int)status_num(&d, "connections"), 3);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal((int)await_num(&d, "connections", 0), 0);
    assert_int_equal((int)await_num(&d, "prepared_models", 0), 0);
    close(ready[0]);
    close(ready[1]);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

/* ---- quotas -------------------------------------------------------------------------------- */

static void test_quotas_bind_the_session(void **state) {
    (void)state;
    char path[] = "/tmp/nnd-shared-XXXXXX";
    int cfd = mkstemp(path);
    assert_true(cfd >= 0);
    static const char conf[] = "quota.app.connections = 2\nquota.app.prepared_models = 2\n";
    assert_int_equal(write(cfd, conf, sizeof conf - 1), (ssize_t)sizeof conf - 1);
    close(cfd);
    const char *args[] = {"--config", path, NULL};
    tst_daemon d;
    assert_int_equal(tst_daemon_start(&d, args), 0);
    unlink(path);
    char err[256];
    nnd_client *c = nnd_client_connect(d.socket_path, "test-quota", err, sizeof err);
    assert_non_null(c);
    qos_chain m;
    qos_chain_init(&m, 3, 64);
    uint64_t h[3] = {0};
    step a;
    pthread_t ta;
    assert_int_equal(start_kept(&a, &ta, c, PREPARE, &m, &h[0]), 0); /* on a lane */
    assert_int_equal((int)status_num(&d, "connections"), 2);
    /* A third connection is over the quota: this thread stays on the first one. */
    assert_int_equal(on_new_thread(c, PREPARE, &m, &h[1]), 0);
    assert_int_equal((int)await_num(&d, "connections", 2), 2);
    assert_int_equal(on_new_thread(c, EXECUTE, &m, &h[1]), 0);
    /* Two models for the uid, whichever connection made them. */
    step s = {.c = c, .kind = PREPARE, .m = &m, .handle = &h[2]};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, run_step, &s), 0);
    pthread_join(t, NULL);
    assert_int_equal(s.status, NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT);
    assert_non_null(strstr(s.err, "prepared_models"));
    end_kept(&a, ta);
    assert_int_equal(nnd_client_release(c, h[0]), 0);
    assert_int_equal(nnd_client_release(c, h[1]), 0);
    nnd_client_close(c);
    qos_chain_free(&m);
    assert_int_equal(tst_daemon_stop(&d), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_share_objects),
        cmocka_unit_test(test_join_same_process_only),
        cmocka_unit_test(test_exit_frees_everything),
        cmocka_unit_test(test_quotas_bind_the_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
