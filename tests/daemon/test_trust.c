/* SPDX-License-Identifier: Apache-2.0 */
/* test_trust (integration): the daemon trusts only paths that no other user can change
 * (daemon/clients/trust.h). Each case runs the real daemon on a prepared directory:
 * - refused at start with exit status 2 and a message naming the path and why: a state
 *   directory owned by another uid (mode 0777, cache.db a link to a root file, whose mode
 *   must stay as it was), a group-writable state directory, a socket directory, an
 *   allowlist and a config file owned by another uid, an extensions directory under a
 *   directory others may write;
 * - started, but refusing what is planted: cache.db a symbolic link inside a good state
 *   directory (caching off, the link's target untouched), a plugin owned by another uid
 *   (refused with a log line, not loaded).
 * The cases that need another owner need root (chown to uid 65534); as another user they
 * are skipped, the rest run. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/support/harness.h"

#define OTHER_UID 65534

static char root[256];

static void need_root(void) {
    if (geteuid() != 0) {
        print_message("# needs root to give a file to uid %d\n", OTHER_UID);
        skip();
    }
}

static void path_of(char *out, size_t len, const char *name) {
    snprintf(out, len, "%s/%s", root, name);
}

static void make_dir(const char *name, mode_t mode) {
    char p[512];
    path_of(p, sizeof p, name);
    assert_int_equal(mkdir(p, mode), 0);
    assert_int_equal(chmod(p, mode), 0); /* whatever the umask */
}

static void write_file(const char *name, const char *text, mode_t mode) {
    char p[512];
    path_of(p, sizeof p, name);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(chmod(p, mode), 0);
}

static void give(const char *name) {
    char p[512];
    path_of(p, sizeof p, name);
    assert_int_equal(lchown(p, OTHER_UID, OTHER_UID), 0);
}

static mode_t mode_of(const char *name) {
    char p[512];
    struct stat st;
    path_of(p, sizeof p, name);
    assert_int_equal(lstat(p, &st), 0);
    return st.st_mode & 07777;
}

/* Runs the daemon with args (relative names under root/ are made absolute) for at most
 * run_ms; SIGTERM then. Its exit status, and its log in log[]. */
static int run_daemon(const char *const *args, int run_ms, char *log, size_t loglen) {
    char logpath[512], sock[512], abs[8][512];
    path_of(logpath, sizeof logpath, "daemon.log");
    path_of(sock, sizeof sock, "run/nnd.sock");
    char *argv[24] = {TST_DAEMON_PATH, "--socket", sock, "--log-level", "debug"};
    int n = 5;
    for (int i = 0; args[i] && n < 22; i++, n++) {
        if (args[i][0] == '-') {
            argv[n] = (char *)args[i];
        } else {
            path_of(abs[i % 8], sizeof abs[0], args[i]);
            argv[n] = abs[i % 8];
        }
    }
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        dup2(fd, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = -1;
    for (int waited = 0; waited < run_ms; waited += 10) {
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        status = -1;
        usleep(10000);
    }
    if (status == -1) {
        kill(pid, SIGTERM);
        assert_int_equal(waitpid(pid, &status, 0), pid);
    }
    FILE *f = fopen(logpath, "re");
    size_t got = f ? fread(log, 1, loglen - 1, f) : 0;
    log[got] = '\0';
    if (f) fclose(f);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The daemon refuses to start, saying `why` about `what`. */
static void refused(const char *const *args, const char *what, const char *why) {
    char log[8192];
    int st = run_daemon(args, 5000, log, sizeof log);
    if (st != 2 || !strstr(log, what) || !strstr(log, why))
        fail_msg("wanted exit 2 naming \"%s\" and \"%s\", got %d:\n%s", what, why, st, log);
}

static int unlink_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(p);
}

static int setup(void **state) {
    (void)state;
    snprintf(root, sizeof root, "/tmp/nnd-trust-XXXXXX");
    if (!mkdtemp(root)) return -1;
    char p[512];
    path_of(p, sizeof p, "run");
    return mkdir(p, 0755);
}

static int teardown(void **state) {
    (void)state;
    nftw(root, unlink_one, 16, FTW_DEPTH | FTW_PHYS);
    return setup(state);
}

static int teardown_last(void **state) {
    (void)state;
    return nftw(root, unlink_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- refused at start -------------------------------------------------------------------- */

static void test_state_dir_of_another_user(void **state) {
    (void)state;
    need_root();
    make_dir("state", 0777);
    write_file("root-file", "root's\n", 0644);
    char target[512], link[512];
    path_of(target, sizeof target, "root-file");
    path_of(link, sizeof link, "state/cache.db");
    assert_int_equal(symlink(target, link), 0);
    give("state");
    give("state/cache.db");
    const char *args[] = {"--state-dir", "state", NULL};
    refused(args, "state directory", "owned by uid 65534");
    assert_int_equal(mode_of("root-file"), 0644);
}

static void test_group_writable_state_dir(void **state) {
    (void)state;
    make_dir("state", 0770);
    const char *args[] = {"--state-dir", "state", NULL};
    refused(args, "state directory", "writable by its group");
}

static void test_socket_dir_of_another_user(void **state) {
    (void)state;
    need_root();
    make_dir("state", 0700);
    give("run");
    const char *args[] = {"--state-dir", "state", NULL};
    refused(args, "socket directory", "owned by uid 65534");
}

static void test_allowlist_of_another_user(void **state) {
    (void)state;
    need_root();
    make_dir("state", 0700);
    write_file("allow", "0\n", 0644);
    give("allow");
    const char *args[] = {"--state-dir", "state", "--extensions-allowlist", "allow", NULL};
    refused(args, "extensions allowlist", "owned by uid 65534");
}

static void test_config_of_another_user(void **state) {
    (void)state;
    need_root();
    make_dir("state", 0700);
    write_file("nnd.conf", "workers = 1\n", 0644);
    give("nnd.conf");
    const char *args[] = {"--state-dir", "state", "--config", "nnd.conf", NULL};
    refused(args, "config file", "owned by uid 65534");
}

static void test_extensions_under_open_dir(void **state) {
    (void)state;
    make_dir("state", 0700);
    make_dir("open", 0777); /* no sticky bit: anyone may replace what is inside */
    make_dir("open/ext", 0755);
    const char *args[] = {"--state-dir", "state", "--extensions-dir", "open/ext", NULL};
    refused(args, "extensions directory", "writable by others");
}

/* ---- started, refusing what was planted -------------------------------------------------- */

static void test_link_planted_in_state_dir(void **state) {
    (void)state;
    make_dir("state", 0700);
    write_file("target", "not a database\n", 0644);
    char target[512], link[512];
    path_of(target, sizeof target, "target");
    path_of(link, sizeof link, "state/cache.db");
    assert_int_equal(symlink(target, link), 0);
    const char *args[] = {"--state-dir", "state", NULL};
    char log[16384];
    int st = run_daemon(args, 1500, log, sizeof log);
    if (st != 0 || !strstr(log, "symbolic link"))
        fail_msg("wanted a clean run with caching off for the link, got %d:\n%s", st, log);
    assert_int_equal(mode_of("target"), 0644);
    char text[64] = "";
    FILE *f = fopen(target, "re");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof text, f));
    fclose(f);
    assert_string_equal(text, "not a database\n");
}

static void test_plugin_of_another_user(void **state) {
    (void)state;
    need_root();
    make_dir("state", 0700);
    make_dir("ext", 0755);
    char to[512];
    path_of(to, sizeof to, "ext/libnnd_fibonacci.so");
    assert_int_equal(tst_copy_file(FIBONACCI_SO, to), 0);
    give("ext/libnnd_fibonacci.so");
    const char *args[] = {"--state-dir", "state", "--extensions-dir", "ext", NULL};
    char log[16384];
    int st = run_daemon(args, 1500, log, sizeof log);
    if (st != 0 || !strstr(log, "libnnd_fibonacci.so refused") ||
        !strstr(log, "owned by uid 65534") || strstr(log, "com.example.fibonacci loaded"))
        fail_msg("wanted the plugin refused for its owner, got %d:\n%s", st, log);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_state_dir_of_another_user, teardown),
        cmocka_unit_test_teardown(test_group_writable_state_dir, teardown),
        cmocka_unit_test_teardown(test_socket_dir_of_another_user, teardown),
        cmocka_unit_test_teardown(test_allowlist_of_another_user, teardown),
        cmocka_unit_test_teardown(test_config_of_another_user, teardown),
        cmocka_unit_test_teardown(test_extensions_under_open_dir, teardown),
        cmocka_unit_test_teardown(test_link_planted_in_state_dir, teardown),
        cmocka_unit_test_teardown(test_plugin_of_another_user, teardown),
    };
    return cmocka_run_group_tests(tests, setup, teardown_last);
}
