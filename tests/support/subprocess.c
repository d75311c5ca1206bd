/* SPDX-License-Identifier: Apache-2.0 */
/* subprocess.c: see subprocess.h. */
#include "tests/support/subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

tst_child tst_spawn(const char *path, const char *const *args, int uid, bool merge_stderr) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) return (tst_child){-1, -1};
    pid_t pid = fork();
    if (pid == 0) {
        const char *argv[32] = {path};
        for (int i = 0; args[i] && i < 30; i++)
            argv[i + 1] = args[i];
        dup2(p[1], 1);
        if (merge_stderr) dup2(p[1], 2);
        if (uid > 0 && (setgroups(0, NULL) < 0 || setgid((gid_t)uid) < 0 || setuid((uid_t)uid) < 0))
            _exit(126);
        execv(path, (char **)argv);
        _exit(127);
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        return (tst_child){-1, -1};
    }
    return (tst_child){pid, p[0]};
}

int tst_finish(tst_child ch, char *out, size_t outlen, int timeout_ms) {
    if (ch.pid < 0) return -1;
    size_t n = 0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    bool timed_out = false;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t);
        long left =
            timeout_ms - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0) {
            timed_out = true;
            kill(ch.pid, SIGKILL);
            break;
        }
        struct pollfd p = {.fd = ch.out, .events = POLLIN};
        if (poll(&p, 1, (int)left) <= 0) continue;
        char buf[4096];
        ssize_t k = read(ch.out, buf, sizeof buf);
        if (k <= 0) break;
        size_t take = (size_t)k < outlen - 1 - n ? (size_t)k : outlen - 1 - n;
        memcpy(out + n, buf, take);
        n += take;
    }
    out[n] = 0;
    close(ch.out);
    int status;
    waitpid(ch.pid, &status, 0);
    if (timed_out) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int tst_run(const char *path, const char *const *args, int uid, bool merge_stderr, char *out,
            size_t outlen, int timeout_ms) {
    return tst_finish(tst_spawn(path, args, uid, merge_stderr), out, outlen, timeout_ms);
}
