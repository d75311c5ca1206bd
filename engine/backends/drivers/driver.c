/* SPDX-License-Identifier: Apache-2.0 */
/* driver.c: loading device driver plugins and the registry of loaded ones. See driver.h.
 * A driver's constructors run at dlopen, before any descriptor can be checked: they run
 * first in a forked child, so a driver that crashes at load is refused without leaving the
 * daemon's dynamic loader half way through an object (a fault guard around dlopen itself
 * would jump out of the loader with its lock held). */
#include "engine/plugins/refusals.h"
#include "engine/backends/drivers/driver.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/plugins/extension_plugin.h"
#include "engine/plugins/fault_guard.h"

static eng_driver_rec *loaded[NND_DRIVERS_MAX];
static uint32_t n_loaded;
static eng_refusals refused;

void eng_driver_logf(int level, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    eng_ext_logf(level, "%s", msg);
}

static void refuse(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void refuse(const char *path, const char *fmt, ...) {
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    eng_driver_logf(0, "driver %s refused: %s", path, why);
    eng_refusals_add(&refused, path, why);
}

static bool valid_name(const char *s) {
    size_t n = strnlen(s, NND_DRIVER_MAX_NAME + 1);
    if (n == 0 || n > NND_DRIVER_MAX_NAME) return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

typedef struct check_args {
    const nnd_driver *d;
    char *why;
    size_t whylen;
} check_args;

/* Checks the descriptor; runs under the fault guard (wild pointers refuse the driver). */
static int check_descriptor(void *arg) {
    check_args *a = arg;
    const nnd_driver *d = a->d;
    if (d->abi_version != NND_DRIVER_ABI_VERSION) {
        snprintf(a->why, a->whylen, "built for driver ABI %u, this daemon speaks ABI %u",
                 d->abi_version, NND_DRIVER_ABI_VERSION);
        return -1;
    }
    if (d->struct_size != sizeof(nnd_driver) && d->struct_size != NND_DRIVER_SIZE_BASE) {
        snprintf(a->why, a->whylen,
                 "ABI mismatch: descriptor of %u bytes, ABI %u has %zu (or %zu without the "
                 "optional callbacks)",
                 d->struct_size, NND_DRIVER_ABI_VERSION, sizeof(nnd_driver),
                 (size_t)NND_DRIVER_SIZE_BASE);
        return -1;
    }
    if (!d->name || !valid_name(d->name)) {
        snprintf(a->why, a->whylen, "bad device name \"%.*s\" (want 1 to %d of [a-z0-9-])",
                 NND_DRIVER_MAX_NAME, d->name ? d->name : "", NND_DRIVER_MAX_NAME);
        return -1;
    }
    if (d->type < NND_DRIVER_TYPE_OTHER || d->type > NND_DRIVER_TYPE_ACCELERATOR) {
        snprintf(a->why, a->whylen, "unknown device type %d", d->type);
        return -1;
    }
    if (!isfinite(d->exec_time) || d->exec_time <= 0) {
        snprintf(a->why, a->whylen, "exec_time %g is not a finite number above 0",
                 (double)d->exec_time);
        return -1;
    }
    if (!d->supports || !d->prepare || !d->execute || !d->release) {
        snprintf(a->why, a->whylen, "lacks supports, prepare, execute or release");
        return -1;
    }
    if (d->struct_size == sizeof(nnd_driver)) {
        int memory = !!d->memory_allocate + !!d->memory_free + !!d->memory_read + !!d->memory_write;
        if (memory != 0 && memory != 4) {
            snprintf(a->why, a->whylen, "has %d of the 4 device memory callbacks", memory);
            return -1;
        }
        if (!d->serialize != !d->deserialize) {
            snprintf(a->why, a->whylen, "has one of serialize and deserialize");
            return -1;
        }
    }
    if (d->version) (void)strlen(d->version); /* a bad pointer faults here, not later */
    return 0;
}

/* Runs the driver's constructors and descriptor check in a child: 0 when they pass. */
static int probe_in_child(const char *path, char *why, size_t whylen) {
    pid_t pid = fork();
    if (pid < 0) return snprintf(why, whylen, "fork: %s", strerror(errno)), -1;
    if (pid == 0) {
        /* Die of a fault as a plain process does: no guard or sanitizer handler inherited. */
        static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
        for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
            signal(faults[i], SIG_DFL);
        void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        const nnd_driver *d = dl ? dlsym(dl, NND_DRIVER_SYMBOL) : NULL;
        char ignored[8];
        check_args a = {.d = d, .why = ignored, .whylen = sizeof ignored};
        _exit(d && check_descriptor(&a) == 0 ? 0 : 1);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return snprintf(why, whylen, "waitpid: %s", strerror(errno)), -1;
    if (WIFSIGNALED(st)) {
        snprintf(why, whylen, "crashed while loading (%s in its constructor or descriptor)",
                 eng_fault_signal_name(WTERMSIG(st)));
        return -1;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) > 1) { /* exit() from a constructor, a sanitizer */
        snprintf(why, whylen, "crashed while loading (exit status %d)",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return -1;
    }
    return 0; /* a failed check is found again, with its reason, in the daemon */
}

static int default_check(int fd, const char *path, char *why, size_t whylen) {
    (void)path;
    struct stat st;
    if (fstat(fd, &st) < 0) return snprintf(why, whylen, "%s", strerror(errno)), -1;
    if (!S_ISREG(st.st_mode)) return snprintf(why, whylen, "not a regular file"), -1;
    if (st.st_mode & S_IWOTH) return snprintf(why, whylen, "writable by everyone"), -1;
    return 0;
}

static bool name_taken(const char *name, const char *const *reserved, size_t n_reserved,
                       const char **by) {
    for (size_t i = 0; i < n_reserved; i++)
        if (!strcmp(reserved[i], name)) return *by = "a built-in device", true;
    for (uint32_t i = 0; i < n_loaded; i++)
        if (!strcmp(loaded[i]->name, name)) return *by = loaded[i]->path, true;
    return false;
}

static void load_one(const char *path, eng_ext_file_check_fn check, const char *const *reserved,
                     size_t n_reserved) {
    /* Judged on an open descriptor, loaded by path, and the two must be one file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return refuse(path, "%s", strerror(errno));
    char why[300] = "";
    struct stat judged, now;
    if ((check ? check : default_check)(fd, path, why, sizeof why) < 0 || fstat(fd, &judged) < 0) {
        close(fd);
        return refuse(path, "%s", why[0] ? why : strerror(errno));
    }
    close(fd);
    if (n_loaded == NND_DRIVERS_MAX) return refuse(path, "too many drivers loaded");
    if (probe_in_child(path, why, sizeof why) < 0) return refuse(path, "%s", why);
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *e = dlerror();
        return refuse(path, "dlopen: %s", e ? e : "failed");
    }
    if (stat(path, &now) < 0 || now.st_dev != judged.st_dev || now.st_ino != judged.st_ino) {
        dlclose(dl);
        return refuse(path, "replaced while it was being loaded");
    }
    const nnd_driver *d = dlsym(dl, NND_DRIVER_SYMBOL);
    if (!d) {
        dlclose(dl);
        return refuse(path, "exports no %s", NND_DRIVER_SYMBOL);
    }
    check_args a = {.d = d, .why = why, .whylen = sizeof why};
    int sig = 0;
    if (eng_fault_guarded(check_descriptor, &a, &sig) != 0) {
        if (sig)
            snprintf(why, sizeof why, "%s while reading its descriptor",
                     eng_fault_signal_name(sig));
        dlclose(dl);
        return refuse(path, "%s", why);
    }
    const char *by;
    if (name_taken(d->name, reserved, n_reserved, &by)) {
        dlclose(dl);
        return refuse(path, "device name %s is taken by %s", d->name, by);
    }
    eng_driver_rec *r = calloc(1, sizeof *r);
    if (r) r->path = strdup(path);
    if (!r || !r->path) {
        free(r);
        dlclose(dl);
        return refuse(path, "out of memory");
    }
    r->d = d;
    r->dl = dl;
    if (d->struct_size == sizeof(nnd_driver)) { /* else the optional callbacks stay NULL */
        r->has_memory = d->memory_allocate != NULL;
        r->has_blobs = d->serialize != NULL;
    }
    snprintf(r->name, sizeof r->name, "%s", d->name);
    snprintf(r->version, sizeof r->version, "%s", d->version ? d->version : "");
    eng_driver_backend_init(r);
    loaded[n_loaded++] = r;
    eng_driver_logf(2, "driver %s%s%s loaded from %s: device type %d, exec_time %g", r->name,
                    *r->version ? " " : "", r->version, path, d->type, (double)d->exec_time);
}

static int so_file(const struct dirent *e) {
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 3 && !strcmp(e->d_name + n - 3, ".so");
}

int eng_drivers_load_dir(const char *dir, eng_ext_file_check_fn check, const char *const *reserved,
                         size_t n_reserved, char *err, size_t errlen) {
    eng_ext_guard_once(); /* one set of handlers for extensions and drivers */
    struct dirent **names = NULL;
    int n = scandir(dir, &names, so_file, alphasort);
    if (n < 0) {
        schema_errf(err, errlen, "cannot read drivers directory %s: %s", dir, strerror(errno));
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]->d_name) < (int)sizeof path)
            load_one(path, check, reserved, n_reserved);
        free(names[i]);
    }
    free(names);
    return (int)n_loaded;
}

void eng_drivers_unload_all(void) {
    for (uint32_t i = 0; i < n_loaded; i++) {
        dlclose(loaded[i]->dl);
        free(loaded[i]->path);
        free(loaded[i]);
    }
    n_loaded = 0;
    eng_refusals_clear(&refused);
}

uint32_t eng_drivers_count(void) {
    return n_loaded;
}

bool eng_drivers_get(uint32_t i, eng_driver_info_view *out) {
    if (i >= n_loaded) return false;
    const eng_driver_rec *r = loaded[i];
    *out = (eng_driver_info_view){.name = r->name,
                                  .version = r->version,
                                  .path = r->path,
                                  .type = r->d->type,
                                  .exec_time = r->d->exec_time,
                                  .backend = &r->backend,
                                  .faulted = r->faulted};
    return true;
}

uint32_t eng_drivers_refused_count(void) {
    return refused.n;
}

bool eng_drivers_refused(uint32_t i, const char **path, const char **reason) {
    return eng_refusals_get(&refused, i, path, reason);
}
