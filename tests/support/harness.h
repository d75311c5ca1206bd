/* SPDX-License-Identifier: Apache-2.0 */
/* harness: start and stop a real nnd for integration tests.
 * tst_daemon_start() makes a fresh temporary directory, runs the built daemon
 * (TST_DAEMON_PATH, baked in by CMake) with --socket <dir>/nnd.sock,
 * --state-dir <dir>/state and --drivers-dir <dir>/no-drivers (none: extra arguments may
 * name another), and returns once the socket accepts connections (or fails the
 * test after 10 s). Extra arguments are appended to the daemon's command line.
 * tst_daemon_stop() sends SIGTERM, waits, and returns the daemon's exit status
 * (0 for a clean shutdown); it also removes the directory. A daemon that exits with
 * TST_SANITIZER_STATUS made a sanitizer report (a leak found at exit, say): stop then
 * ends the test process with status 1, so the report fails the test even where the caller
 * does not look at the status.
 * In harness_group.c (library nnd_test_group, which links cmocka; the rest does not):
 * tst_group_setup() and tst_group_teardown() are the cmocka group fixtures of a
 * test program whose tests share one daemon, tst_group_daemon: setup starts it with
 * tst_group_args (NULL: none); teardown stops it unless a test already did, and fails
 * the group when it did not shut down cleanly.
 * tst_expect_reply() checks a reply's status and, when given, a piece of its message,
 * failing the running cmocka test otherwise (also for no reply at all), and frees it.
 * tst_admin() sends one command ({"cmd":cmd}) to the admin bus of the daemon with
 * that state directory and returns the parsed reply (the caller cJSON_Delete()s it), or
 * NULL (with a message on stderr) after 10 s without one. tst_admin_status() asks
 * for "status" and fails the test when no answer comes. */
#ifndef TST_SUPPORT_HARNESS_H
#define TST_SUPPORT_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cjson/cJSON.h>

#include "nnd.pb-c.h"

/* The exit status scripts/leakcheck.sh (`make leakcheck`) gives every ASan, LSan and UBSan
 * report, told apart from the daemon's own statuses (0, 1, 2). */
#define TST_SANITIZER_STATUS 23

typedef struct tst_daemon {
    pid_t pid;
    char dir[256];
    char socket_path[300];
    char state_dir[300];
    char no_drivers[300];
} tst_daemon;

int tst_daemon_start(tst_daemon *d, const char *const *extra_args);

/* The same with more control over how the daemon runs. */
typedef struct tst_daemon_opts {
    const char *const *extra_args; /* appended to the command line */
    const char *log_path;          /* the daemon's stderr is appended to this file; NULL: ours */
    int uid;                       /* > 0: run as this uid and gid through /usr/bin/setpriv, the
                                      test directory given to it (needs root) */
    unsigned long long max_file_bytes; /* > 0: the daemon's RLIMIT_FSIZE (a "full disk") */
    unsigned max_fds;                  /* > 0: the daemon's RLIMIT_NOFILE, soft and hard */
} tst_daemon_opts;
int tst_daemon_start_opts(tst_daemon *d, const tst_daemon_opts *o);
int tst_daemon_stop(tst_daemon *d);
/* Copies file `from` to `to` (created 0755: plugins); 0, or -1. */
int tst_copy_file(const char *from, const char *to);
/* Reads the whole file at path into a malloc()ed buffer (*len bytes, then a NUL), or NULL. */
uint8_t *tst_read_file(const char *path, size_t *len);
/* Tampering with a pair of cache files, one byte at a time: for each byte of the model
 * file, then of the data file, writes that byte with one bit flipped into the file (the
 * rest as it is then: the daemon's fallback rewrites a refused file whole) and calls
 * after(ctx, file, at) (file 0: model, 1: data). Returns the number of flips, with the
 * files' sizes in lens, or -1 when a file cannot be read or written. */
long tst_flip_each_byte(const char *model_path, const char *data_path,
                        void (*after)(void *ctx, int file, size_t at), void *ctx, size_t lens[2]);
/* More runnable work than CPUs in the 1-minute load average: a timing bound measured now
 * says more about the machine than about nnd, so a test reports it instead of judging. */
bool tst_machine_busy(void);
/* A connected raw SOCK_SEQPACKET socket to the daemon, or -1. */
int tst_connect_raw(const tst_daemon *d);
extern tst_daemon tst_group_daemon;
extern const char *const *tst_group_args;
int tst_group_setup(void **state);
int tst_group_teardown(void **state);

void tst_expect_reply(Nnd__Reply *r, int status, const char *needle);
/* `promtool check metrics` accepts the Prometheus text metrics; the test is skipped where
 * promtool is missing. */
void tst_expect_promtool_ok(const char *metrics);

cJSON *tst_admin(const char *state_dir, const char *cmd);
cJSON *tst_admin_status(const tst_daemon *d);
/* Number `field` of the device called `device` in a status reply's devices[]; -1 when the
 * device or the number is missing. */
double tst_status_device_figure(const cJSON *status, const char *device, const char *field);

#endif
