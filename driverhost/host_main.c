/* SPDX-License-Identifier: Apache-2.0 */
/* nnd-driver-host: one driver plugin in a process of its own (host.h, drvhost.h).
 * Usage: nnd-driver-host --plugin PATH --fd N --parent PID [--data-limit BYTES]
 *        [--plugin-fd M] (load the open file M, which the daemon checked; PATH names it)
 * The daemon's proxy starts it with the control socket as fd N; it exits when that socket
 * ends or when the daemon dies. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "driverhost/host.h"

#if defined(__SANITIZE_ADDRESS__)
/* A driver's fault is the host's death by its signal, which the proxy reads and restarts
 * it for: under AddressSanitizer too, not a report and an exit status. */
const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void) {
    return "handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0:handle_sigill=0";
}
#endif

/* The daemon's sandbox or tighter: no privilege gained by exec, no capability, no core
 * dump, not traceable by others of the uid, only the control socket and stdio open. */
static void sandbox(int ctl, int plugin_fd, uint64_t data_limit) {
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    struct rlimit core = {0, 0};
    setrlimit(RLIMIT_CORE, &core);
#if defined(__SANITIZE_ADDRESS__)
    /* AddressSanitizer's shadow is private writable address space: no data limit under it
     * (the proxy's RSS check still holds). */
    data_limit = 0;
#endif
    if (data_limit) {
        struct rlimit d = {data_limit, data_limit};
        setrlimit(RLIMIT_DATA, &d);
    }
    long max = sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        if (fd != ctl && fd != plugin_fd) close(fd);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    if (syscall(SYS_capget, &hdr, data) == 0 &&
        (data[0].effective || data[0].permitted || data[1].effective || data[1].permitted)) {
        memset(data, 0, sizeof data);
        syscall(SYS_capset, &hdr, data);
    }
}

/* Loads the plugin and says hello: open()'s devices, or why it cannot serve. */
static int load(dhh_host *h, const char *path, int plugin_fd) {
    char err[DH_ERR_MAX] = "";
    int status = NND_DRIVER_GENERAL_FAILURE;
    char by_fd[32];
    snprintf(by_fd, sizeof by_fd, "/proc/self/fd/%d", plugin_fd);
    void *so = dlopen(plugin_fd >= 0 ? by_fd : path, RTLD_NOW | RTLD_LOCAL);
    if (plugin_fd >= 0) close(plugin_fd); /* loaded: the mapping keeps the file */
    const nnd_driver *d = so ? dlsym(so, NND_DRIVER_SYMBOL) : NULL;
    if (!so)
        snprintf(err, sizeof err, "%s", dlerror());
    else if (!d)
        snprintf(err, sizeof err, "%s: no symbol %s", path, NND_DRIVER_SYMBOL);
    else if (d->abi_version != NND_DRIVER_ABI_VERSION)
        snprintf(err, sizeof err,
                 "%s: driver ABI version %u: rebuild it against nnd/driver.h "
                 "(version %d)",
                 path, d->abi_version, NND_DRIVER_ABI_VERSION);
    else if (d->struct_size != sizeof(nnd_driver))
        snprintf(err, sizeof err, "%s: struct_size %u, not %zu: rebuild it against nnd/driver.h",
                 path, d->struct_size, sizeof(nnd_driver));
    else if (!d->open || !d->close || !d->supported_operations || !d->prepare || !d->release ||
             !(d->execute || (d->start && d->cancel)))
        snprintf(err, sizeof err, "%s: a required callback is missing", path);
    else if ((d->allocate || d->memory_free || d->memory_read || d->memory_write) &&
             !(d->allocate && d->memory_free && d->memory_read && d->memory_write))
        snprintf(err, sizeof err, "%s: device memory needs all four callbacks", path);
    else if ((d->cache_save != NULL) != (d->cache_load != NULL))
        snprintf(err, sizeof err, "%s: cache needs both callbacks", path);
    else {
        int n = d->open(h->devices, NND_DRIVER_MAX_DEVICES, err, sizeof err);
        if (n < 0 || n > NND_DRIVER_MAX_DEVICES) {
            if (!err[0]) snprintf(err, sizeof err, "%s: open() failed (%d)", path, n);
        } else
            h->n_devices = (uint32_t)n, h->drv = d, status = NND_DRIVER_OK;
    }
    dh_wbuf w = {0};
    dh_hello hello = {0};
    if (h->drv)
        hello.has = (d->execute ? DH_HAS_EXECUTE : 0) | (d->start ? DH_HAS_START : 0) |
                    (d->allocate ? DH_HAS_MEMORY : 0) | (d->cache_save ? DH_HAS_CACHE : 0);
    hello.n_devices = h->n_devices;
    memcpy(hello.devices, h->devices, sizeof hello.devices);
    dh_hello_put(&w, &hello);
    dhh_reply(h, 0, status, err, &w);
    dh_wbuf_free(&w);
    return status;
}

static bool device_at(dhh_host *h, uint32_t dev, void **device) {
    if (dev >= h->n_devices) return false;
    *device = h->devices[dev].device;
    return true;
}

/* The device a call names; false for an index open() did not give (a driver's own device
 * pointer may well be NULL). */
static bool device_of(dhh_host *h, dh_rbuf *r, void **device) {
    uint32_t dev = dh_get_u32(r);
    return !r->bad && device_at(h, dev, device);
}

static void supported(dhh_host *h, dh_msg *m) {
    char err[DH_ERR_MAX] = "";
    dh_rbuf r = {m->body, m->body_len, 0, false};
    void *dev = NULL;
    bool dev_ok = device_of(h, &r, &dev);
    nnd_driver_model model;
    void *block = NULL;
    if (!dev_ok ||
        dh_get_model(&r, &model, &block, dhh_region_resolve, NULL, err, sizeof err) < 0) {
        dhh_reply(h, m->h.call, NND_DRIVER_GENERAL_FAILURE, err[0] ? err : "bad device", NULL);
        return;
    }
    bool *sup = calloc(model.n_operations + 1, sizeof(bool));
    int status = sup ? h->drv->supported_operations(dev, &model, sup, err, sizeof err)
                     : NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    dh_wbuf w = {0};
    dh_supported_put(&w, sup, sup ? model.n_operations : 0);
    dhh_reply(h, m->h.call, status, err, &w);
    dh_wbuf_free(&w);
    free(sup);
    free(block);
}

/* prepare() or cache_load(): the partition's body is kept while the partition lives. */
static void prepare(dhh_host *h, dh_msg *m) {
    char err[DH_ERR_MAX] = "";
    dh_rbuf r = {m->body, m->body_len, 0, false};
    void *dev = NULL;
    nnd_driver_prepare_args args;
    bool load = m->h.type == DH_MSG_CACHE_LOAD;
    uint32_t dev_index = 0, n_blobs = 0;
    nnd_driver_blob blobs[DH_MAX_BLOBS];
    bool dev_ok = dh_prepare_req_get(&r, load, &dev_index, &args, blobs, &n_blobs) == 0 &&
                  device_at(h, dev_index, &dev);
    nnd_driver_model model;
    nnd_driver_prepared_info out = {0};
    int status = NND_DRIVER_GENERAL_FAILURE;
    dhh_prepared *p = calloc(1, sizeof *p);
    if (!p) {
        status = NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
        snprintf(err, sizeof err, "driver host out of memory");
    } else if (!dev_ok || r.bad) {
        snprintf(err, sizeof err, "malformed prepare message");
    } else if (dh_get_model(&r, &model, &p->model_block, dhh_region_resolve, NULL, err,
                            sizeof err) == 0) {
        uint64_t faults = dhh_faults_total();
        status = load
                     ? h->drv->cache_load(dev, &model, &args, blobs, n_blobs, &out, err, sizeof err)
                     : h->drv->prepare(dev, &model, &args, &out, err, sizeof err);
        if (dhh_faults_total() != faults) {
            if (status == NND_DRIVER_OK) h->drv->release(out.prepared);
            status = NND_DRIVER_INVALID_ARGUMENT;
            snprintf(err, sizeof err,
                     "memory pool shrank while the driver read a constant: "
                     "the client's error");
        }
    }
    dh_wbuf w = {0};
    if (status == NND_DRIVER_OK) {
        p->prepared = out.prepared;
        p->body = m->body, m->body = NULL; /* constants may point into it */
    } else if (p) {
        free(p->model_block);
        free(p);
        p = NULL;
    }
    dh_prepared_put(&w, (uint64_t)(uintptr_t)p, out.held_bytes);
    dhh_reply(h, m->h.call, status, err, &w);
    dh_wbuf_free(&w);
}

static void release(dhh_host *h, dh_msg *m) {
    dh_rbuf r = {m->body, m->body_len, 0, false};
    dhh_prepared *p = (dhh_prepared *)(uintptr_t)dh_get_u64(&r);
    if (r.bad || !p) return;
    h->drv->release(p->prepared);
    free(p->model_block);
    free(p->body);
    free(p);
}

static void allocate(dhh_host *h, dh_msg *m) {
    char err[DH_ERR_MAX] = "";
    dh_rbuf r = {m->body, m->body_len, 0, false};
    void *dev = NULL;
    uint32_t dev_index = 0;
    nnd_driver_buffer_desc desc;
    uint64_t *remotes = NULL;
    bool ok =
        dh_allocate_req_get(&r, &dev_index, &desc, &remotes) == 0 && device_at(h, dev_index, &dev);
    nnd_driver_buffer_role *roles = (nnd_driver_buffer_role *)desc.roles;
    for (uint32_t i = 0; ok && i < desc.n_roles; i++) {
        dhh_prepared *p = (dhh_prepared *)(uintptr_t)remotes[i];
        roles[i].prepared = p ? p->prepared : NULL;
    }
    uint64_t handle = 0;
    int status = NND_DRIVER_GENERAL_FAILURE;
    if (!ok || !h->drv->allocate)
        snprintf(err, sizeof err, "malformed allocate message");
    else
        status = h->drv->allocate(dev, &desc, &handle, err, sizeof err);
    dh_wbuf w = {0};
    dh_allocated_put(&w, handle);
    dhh_reply(h, m->h.call, status, err, &w);
    dh_wbuf_free(&w);
    free(roles);
    free(remotes);
}

static void memory_free(dhh_host *h, dh_msg *m) {
    dh_rbuf r = {m->body, m->body_len, 0, false};
    void *dev = NULL;
    bool dev_ok = device_of(h, &r, &dev);
    uint64_t handle = dh_get_u64(&r);
    if (dev_ok && !r.bad && h->drv->memory_free) h->drv->memory_free(dev, handle);
}

static void regions(dh_msg *m) {
    uint32_t n = (uint32_t)(m->body_len / sizeof(dh_region_intro));
    for (uint32_t i = 0; i < n && i < m->n_fds; i++) {
        dh_region_intro in;
        memcpy(&in, m->body + i * sizeof in, sizeof in);
        int fd = m->fds[i];
        m->fds[i] = -1;
        /* A region that cannot be mapped fails the calls that use it, by name. */
        if (dhh_region_add(&in, fd) < 0)
            fprintf(stderr, "nnd-driver-host: region %u not mapped\n", in.id);
    }
}

static void serve(dhh_host *h) {
    for (;;) {
        dh_msg m;
        int rc = dh_recv(h->sock, &m);
        if (rc == 0) return;
        if (rc < 0) {
            if (rc == -EPROTO || rc == -ENOMEM) continue;
            return;
        }
        dh_rbuf r = {m.body, m.body_len, 0, false};
        switch (m.h.type) {
        case DH_MSG_REGIONS: regions(&m); break;
        case DH_MSG_FORGET_REGION: dhh_region_forget(dh_get_u32(&r)); break;
        case DH_MSG_SUPPORTED: supported(h, &m); break;
        case DH_MSG_PREPARE:
        case DH_MSG_CACHE_LOAD: prepare(h, &m); break;
        case DH_MSG_RELEASE: release(h, &m); break;
        case DH_MSG_EXECUTE: dhh_execute(h, &m); break;
        case DH_MSG_CANCEL: dhh_cancel(h, dh_get_u32(&r)); break;
        case DH_MSG_ALLOCATE: allocate(h, &m); break;
        case DH_MSG_MEM_FREE: memory_free(h, &m); break;
        case DH_MSG_MEM_READ:
        case DH_MSG_MEM_WRITE: dhh_memory_copy(h, &m); break;
        case DH_MSG_CACHE_SAVE: dhh_cache_save(h, &m); break;
        default: dhh_reply(h, m.h.call, NND_DRIVER_GENERAL_FAILURE, "unknown message", NULL);
        }
        dh_msg_free(&m);
    }
}

int main(int argc, char **argv) {
    const char *plugin = NULL;
    int fd = -1, plugin_fd = -1;
    long parent = 0;
    unsigned long long data_limit = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--plugin"))
            plugin = argv[i + 1];
        else if (!strcmp(argv[i], "--fd"))
            fd = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--plugin-fd"))
            plugin_fd = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--parent"))
            parent = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--data-limit"))
            data_limit = strtoull(argv[i + 1], NULL, 10);
    }
    if (!plugin || fd < 0) {
        fprintf(stderr, "usage: nnd-driver-host --plugin PATH --fd N --parent PID "
                        "[--data-limit BYTES] (started by nnd)\n");
        return 2;
    }
    /* Die with the daemon, even if it is killed. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (parent && getppid() != parent) return 1;
    sandbox(fd, plugin_fd, data_limit);
    signal(SIGPIPE, SIG_IGN);
    dhh_guard_install();
    dhh_host h = {.sock = fd};
    if (load(&h, plugin, plugin_fd) != NND_DRIVER_OK) return 1;
    serve(&h);
    h.drv->close();
    return 0;
}
