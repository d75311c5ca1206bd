/* SPDX-License-Identifier: Apache-2.0 */
/* subprocess: run a program the way an operator would, from a test: its output captured,
 * optionally as another user, never for longer than a timeout.
 * tst_spawn() starts path with args (argv[1..], NULL-terminated; argv[0] is path),
 * its stdout (and stderr too when merge_stderr) into a pipe; uid > 0 runs it as that uid
 * and gid (the test must be root). tst_finish() collects the output into out (NUL-
 * terminated, cut at outlen - 1) and returns the exit status: 128 after a signal, -1 when
 * it outlived timeout_ms (it is then killed). tst_run() is both. */
#ifndef TST_SUPPORT_SUBPROCESS_H
#define TST_SUPPORT_SUBPROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct tst_child {
    pid_t pid;
    int out; /* read end of the child's stdout */
} tst_child;

tst_child tst_spawn(const char *path, const char *const *args, int uid, bool merge_stderr);
int tst_finish(tst_child ch, char *out, size_t outlen, int timeout_ms);
int tst_run(const char *path, const char *const *args, int uid, bool merge_stderr, char *out,
            size_t outlen, int timeout_ms);

#endif
