/* SPDX-License-Identifier: Apache-2.0 */
/* loader.c: opening plugin files, the log sink and the fault guard every loader shares.
 * See loader.h. */
#include "engine/plugins/loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/plugins/fault_guard.h"
#include "schema/status.h"

static eng_plugin_log_fn log_fn;

void eng_plugin_set_log(eng_plugin_log_fn fn) {
    log_fn = fn;
}

void eng_plugin_logf(int level, const char *fmt, ...) {
    if (!log_fn) return;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    log_fn(level, msg);
}

static pthread_once_t guard_once = PTHREAD_ONCE_INIT;

static void guard_failed(int sig, int err) {
    eng_plugin_logf(0, "plugins: cannot guard signal %d: %s", sig, strerror(err));
}

static void guard_install(void) {
    eng_fault_guard_install(guard_failed);
}

void eng_plugin_guard_once(void) {
    pthread_once(&guard_once, guard_install);
}

int eng_plugin_guarded(int (*fn)(void *), void *arg, const char *doing, char *why, size_t whylen) {
    int sig = 0;
    int rc = eng_fault_guarded(fn, arg, &sig);
    if (sig) snprintf(why, whylen, "%s while %s", eng_fault_signal_name(sig), doing);
    return rc;
}

static int so_file(const struct dirent *e) {
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 3 && !strcmp(e->d_name + n - 3, ".so");
}

int eng_plugin_scan_dir(const char *dir, const char *what,
                        void (*each)(const char *path, void *ctx), void *ctx, char *err,
                        size_t errlen) {
    struct dirent **names = NULL;
    int n = scandir(dir, &names, so_file, alphasort);
    if (n < 0) {
        schema_errf(err, errlen, "cannot read %s directory %s: %s", what, dir, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name) < (int)sizeof path)
            each(path, ctx);
        free(names[i]);
    }
    free(names);
    return n;
}

int eng_plugin_check_abi(const void *descriptor, const char *abi, uint32_t version, size_t size,
                         char *why, size_t whylen) {
    uint32_t head[2]; /* abi_version, struct_size: the first two words of every descriptor */
    memcpy(head, descriptor, sizeof head);
    if (head[0] != version) {
        snprintf(why, whylen, "built for %s ABI %u, this daemon speaks ABI %u", abi, head[0],
                 version);
        return -1;
    }
    if (head[1] != size) {
        snprintf(why, whylen, "ABI mismatch: descriptor of %u bytes, %s ABI %u has %zu", head[1],
                 abi, version, size);
        return -1;
    }
    return 0;
}

int eng_plugin_default_check(int fd, const char *path, char *why, size_t whylen) {
    (void)path;
    struct stat st;
    if (fstat(fd, &st) < 0) return snprintf(why, whylen, "%s", strerror(errno)), -1;
    if (!S_ISREG(st.st_mode)) return snprintf(why, whylen, "not a regular file"), -1;
    if (st.st_mode & S_IWOTH) return snprintf(why, whylen, "writable by everyone"), -1;
    return 0;
}

/* Runs the file's constructors and probe in a child: 0 when they pass. A failed probe is
 * found again, with its reason, by the loader in this process. */
static int probe_in_child(const char *path, int (*probe)(void *dl), char *why, size_t whylen) {
    pid_t pid = fork();
    if (pid < 0) return snprintf(why, whylen, "fork: %s", strerror(errno)), -1;
    if (pid == 0) {
        /* Die of a fault as a plain process does: no guard or sanitizer handler inherited. */
        static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
        for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
            signal(faults[i], SIG_DFL);
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        _exit(dl && probe(dl) == 0 ? 0 : 1);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return snprintf(why, whylen, "waitpid: %s", strerror(errno)), -1;
    if (WIFSIGNALED(st))
        return snprintf(why, whylen, "crashed while loading (%s in its constructor or descriptor)",
                        eng_fault_signal_name(WTERMSIG(st))),
               -1;
    if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) /* exit() from a constructor, a sanitizer */
        return snprintf(why, whylen, "crashed while loading (exit status %d)",
                        WIFEXITED(st) ? WEXITSTATUS(st) : -1),
               -1;
    return 0;
}

void *eng_plugin_open(const char *path, eng_plugin_file_check_fn check, int (*probe)(void *dl),
                      char *why, size_t whylen) {
    /* Whatever is in the directory runs inside this process: judge the file on an open
     * descriptor, then load it by path and check that the same file was loaded. (dlopen
     * through /proc/self/fd would do, but glibc tells objects apart by that name, and fd
     * numbers are reused.) Only the directory's owners could swap it in between. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return snprintf(why, whylen, "%s", strerror(errno)), NULL;
    struct stat judged, loaded;
    why[0] = '\0';
    if ((check ? check : eng_plugin_default_check)(fd, path, why, whylen) < 0 ||
        fstat(fd, &judged) < 0) {
        if (!why[0]) snprintf(why, whylen, "%s", strerror(errno));
        close(fd);
        return NULL;
    }
    close(fd);
    if (probe && probe_in_child(path, probe, why, whylen) < 0) return NULL;
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        return snprintf(why, whylen, "dlopen: %s", e ? e : "failed"), NULL;
    }
    if (stat(path, &loaded) < 0 || loaded.st_dev != judged.st_dev ||
        loaded.st_ino != judged.st_ino) {
        dlclose(dl);
        return snprintf(why, whylen, "replaced while it was being loaded"), NULL;
    }
    return dl;
}

const void *eng_plugin_symbol(void *dl, const char *symbol, char *why, size_t whylen) {
    const void *s = dlsym(dl, symbol);
    if (!s) snprintf(why, whylen, "exports no %s", symbol);
    return s;
}
