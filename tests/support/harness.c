/* SPDX-License-Identifier: Apache-2.0 */
/* harness.c: start and stop a real nnd for integration tests. See harness.h.
 * The daemon dies with the test: the child asks for SIGTERM when its parent exits
 * (PR_SET_PDEATHSIG), and an atexit hook kills and cleans up any daemon still running. */
#include "tests/support/harness.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nanomsg/nn.h>
#include <nanomsg/reqrep.h>

#include "proto/paths.h"

#ifndef TST_DAEMON_PATH
#error "TST_DAEMON_PATH must name the built daemon"
#endif

#define START_TIMEOUT_MS 10000
#define STOP_TIMEOUT_MS  10000
#define MAX_LIVE         16

/* Daemons started and not yet stopped, for the atexit hook. */
static struct {
    pid_t pid;
    char dir[256];
} live[MAX_LIVE];
static int hook_installed;

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void rm_rf(const char *dir) {
    if (dir[0]) nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void sleep_ms(long ms) {
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Waits up to timeout_ms for pid; returns its exit status (128 + signal when killed),
 * or -1 on timeout. */
static int wait_exit(pid_t pid, long timeout_ms) {
    long end = now_ms() + timeout_ms;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (r < 0 && errno != EINTR) return -1;
        if (now_ms() >= end) return -1;
        sleep_ms(5);
    }
}

static void forget(pid_t pid) {
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i].pid == pid) live[i].pid = 0;
}

static void kill_all_live(void) {
    for (int i = 0; i < MAX_LIVE; i++) {
        if (live[i].pid <= 0) continue;
        /* Only a child we have not reaped is still ours to kill. */
        if (waitpid(live[i].pid, NULL, WNOHANG) == 0) {
            kill(live[i].pid, SIGKILL);
            waitpid(live[i].pid, NULL, 0);
        }
        rm_rf(live[i].dir);
        live[i].pid = 0;
    }
}

static void remember(const tst_daemon *d) {
    if (!hook_installed) hook_installed = atexit(kill_all_live) == 0;
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i].pid == 0) {
            live[i].pid = d->pid;
            snprintf(live[i].dir, sizeof live[i].dir, "%s", d->dir);
            return;
        }
}

static int try_connect(const char *path) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path) return -1;
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int tst_copy_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY | O_CLOEXEC);
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    char buf[65536];
    ssize_t n = in >= 0 && out >= 0 ? 0 : -1;
    while (n == 0 && (n = read(in, buf, sizeof buf)) > 0)
        n = write(out, buf, (size_t)n) == n ? 0 : -1;
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    return n == 0 ? 0 : -1;
}

bool tst_machine_busy(void) {
    double load = 0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &load) != 1) load = 0;
        fclose(f);
    }
    return load > (double)sysconf(_SC_NPROCESSORS_ONLN);
}

uint8_t *tst_read_file(const char *path, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    off_t n = lseek(fd, 0, SEEK_END);
    uint8_t *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (p && pread(fd, p, (size_t)n, 0) != n) {
        free(p);
        p = NULL;
    }
    close(fd);
    if (p) {
        p[n] = '\0'; /* a text file reads as a string */
        *len = (size_t)n;
    }
    return p;
}

long tst_flip_each_byte(const char *model_path, const char *data_path,
                        void (*after)(void *ctx, int file, size_t at), void *ctx, size_t lens[2]) {
    const char *paths[2] = {model_path, data_path};
    uint8_t *good[2] = {tst_read_file(model_path, &lens[0]), tst_read_file(data_path, &lens[1])};
    long flips = good[0] && good[1] ? 0 : -1;
    for (int f = 0; f < 2 && flips >= 0; f++)
        for (size_t i = 0; i < lens[f] && flips >= 0; i++, flips++) {
            /* By path each time: the daemon replaces a refused file with a new one. */
            int fd = open(paths[f], O_WRONLY | O_CLOEXEC);
            uint8_t v = (uint8_t)(good[f][i] ^ (1u << (i % 8)));
            bool written = fd >= 0 && pwrite(fd, &v, 1, (off_t)i) == 1;
            if (fd >= 0) close(fd);
            if (!written) {
                flips = -1;
                break;
            }
            after(ctx, f, i);
        }
    free(good[0]);
    free(good[1]);
    return flips;
}

int tst_connect_raw(const tst_daemon *d) {
    return try_connect(d->socket_path);
}

int tst_daemon_start(tst_daemon *d, const char *const *extra_args) {
    tst_daemon_opts o = {.extra_args = extra_args};
    return tst_daemon_start_opts(d, &o);
}

int tst_daemon_start_opts(tst_daemon *d, const tst_daemon_opts *o) {
    const char *const *extra_args = o->extra_args;
    memset(d, 0, sizeof *d);
    const char *tmp = getenv("TMPDIR");
    snprintf(d->dir, sizeof d->dir, "%s/nnd-test-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(d->dir)) {
        fprintf(stderr, "harness: mkdtemp %s: %s\n", d->dir, strerror(errno));
        d->dir[0] = '\0';
        return -1;
    }
    snprintf(d->socket_path, sizeof d->socket_path, "%s/nnd.sock", d->dir);
    snprintf(d->state_dir, sizeof d->state_dir, "%s/state", d->dir);

    const char *argv[72];
    char uid_arg[32], gid_arg[32];
    int argc = 0;
    if (o->uid > 0) {
        /* setpriv changes credentials, which clears PR_SET_PDEATHSIG: the atexit hook and
         * tst_daemon_stop() still end it. */
        if (chown(d->dir, (uid_t)o->uid, (gid_t)o->uid) < 0) {
            fprintf(stderr, "harness: chown %s: %s\n", d->dir, strerror(errno));
            rm_rf(d->dir);
            return -1;
        }
        snprintf(uid_arg, sizeof uid_arg, "--reuid=%d", o->uid);
        snprintf(gid_arg, sizeof gid_arg, "--regid=%d", o->uid);
        argv[argc++] = "/usr/bin/setpriv";
        argv[argc++] = uid_arg;
        argv[argc++] = gid_arg;
        argv[argc++] = "--clear-groups";
    }
    argv[argc++] = TST_DAEMON_PATH;
    argv[argc++] = "--socket";
    argv[argc++] = d->socket_path;
    argv[argc++] = "--state-dir";
    argv[argc++] = d->state_dir;
    /* No device drivers unless the test names a directory (a later option wins). */
    snprintf(d->no_drivers, sizeof d->no_drivers, "%s/no-drivers", d->dir);
    argv[argc++] = "--drivers-dir";
    argv[argc++] = d->no_drivers;
    for (int i = 0; extra_args && extra_args[i] && argc < 71; i++)
        argv[argc++] = extra_args[i];
    argv[argc] = NULL;

    pid_t parent = getpid();
    d->pid = fork();
    if (d->pid < 0) {
        fprintf(stderr, "harness: fork: %s\n", strerror(errno));
        rm_rf(d->dir);
        return -1;
    }
    if (d->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) _exit(127); /* the parent died before prctl */
        if (o->log_path) {
            int log = open(o->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (log < 0 || dup2(log, STDERR_FILENO) < 0) _exit(127);
        }
        if (o->max_file_bytes) {
            struct rlimit rl;
            getrlimit(RLIMIT_FSIZE, &rl);
            rl.rlim_cur = (rlim_t)o->max_file_bytes;
            if (setrlimit(RLIMIT_FSIZE, &rl) < 0) _exit(127);
        }
        if (o->max_fds) {
            struct rlimit rl = {o->max_fds, o->max_fds};
            if (setrlimit(RLIMIT_NOFILE, &rl) < 0) _exit(127);
        }
        execv(argv[0], (char *const *)argv);
        fprintf(stderr, "harness: exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    remember(d);

    long end = now_ms() + START_TIMEOUT_MS;
    while (now_ms() < end) {
        int fd = try_connect(d->socket_path);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        int st;
        if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
            fprintf(stderr, "harness: daemon exited during startup (status %d)\n",
                    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
            forget(d->pid);
            d->pid = 0;
            rm_rf(d->dir);
            return -1;
        }
        sleep_ms(10);
    }
    fprintf(stderr, "harness: daemon did not accept connections within %d ms\n", START_TIMEOUT_MS);
    kill(d->pid, SIGKILL);
    waitpid(d->pid, NULL, 0);
    forget(d->pid);
    d->pid = 0;
    rm_rf(d->dir);
    return -1;
}

int tst_daemon_stop(tst_daemon *d) {
    int status = -1;
    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        status = wait_exit(d->pid, STOP_TIMEOUT_MS);
        if (status < 0) {
            fprintf(stderr, "harness: daemon ignored SIGTERM for %d ms; killing it\n",
                    STOP_TIMEOUT_MS);
            kill(d->pid, SIGKILL);
            waitpid(d->pid, NULL, 0);
            status = 128 + SIGKILL;
        }
        forget(d->pid);
        if (status == TST_SANITIZER_STATUS) {
            fprintf(stderr,
                    "harness: daemon %d exited with status %d: a sanitizer report (a leak or "
                    "an error, in its log); failing the test\n",
                    (int)d->pid, status);
            rm_rf(d->dir);
            exit(1);
        }
        d->pid = 0;
    }
    rm_rf(d->dir);
    return status;
}

cJSON *tst_admin(const char *state_dir, const char *cmd) {
    char url[600], req[160];
    char *buf = NULL;
    int sock = nn_socket(AF_SP, NN_REQ), timeout = 10000, n = -1;
    snprintf(req, sizeof req, "{\"cmd\":\"%s\"}", cmd);
    if (sock >= 0 && proto_admin_url(state_dir, url, sizeof url)) {
        nn_setsockopt(sock, NN_SOL_SOCKET, NN_RCVTIMEO, &timeout, sizeof timeout);
        nn_setsockopt(sock, NN_SOL_SOCKET, NN_SNDTIMEO, &timeout, sizeof timeout);
        if (nn_connect(sock, url) >= 0 && nn_send(sock, req, strlen(req), 0) >= 0)
            n = nn_recv(sock, &buf, NN_MSG, 0);
    }
    cJSON *root = n > 0 ? cJSON_ParseWithLength(buf, (size_t)n) : NULL;
    if (buf) nn_freemsg(buf);
    if (sock >= 0) nn_close(sock);
    if (!root)
        fprintf(stderr, "harness: no answer to %s from the admin bus of %s\n", cmd, state_dir);
    return root;
}

cJSON *tst_admin_status(const tst_daemon *d) {
    cJSON *root = tst_admin(d->state_dir, "status");
    if (!root) abort(); /* fails the test, whichever framework runs it */
    return root;
}

double tst_status_device_figure(const cJSON *status, const char *device, const char *field) {
    const cJSON *d;
    cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(status, "devices")) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "name");
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(d, field);
        if (cJSON_IsString(n) && !strcmp(n->valuestring, device) && cJSON_IsNumber(f))
            return f->valuedouble;
    }
    return -1;
}
