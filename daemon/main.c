/* SPDX-License-Identifier: Apache-2.0 */
/* main.c: the nnd daemon. Parses the command line and the config files, prepares
 * directories, opens the client socket and the bus, and runs the libuv loop until SIGINT
 * or SIGTERM, then shuts down cleanly: stop accepting, close every connection (releasing
 * what it owns), remove the socket file, close the bus, exit 0. SIGHUP reads the
 * configuration again (reload.h). Started by systemd with its socket (activation.h), it
 * serves that one and leaves it to systemd, and tells systemd when it is ready, what it
 * is doing and that its loop turns (service.h).
 * A state directory that is full, read-only or missing costs what lives there (the cache,
 * the admin and event bus), with a warning each, never the service to clients. */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/net/activation.h"
#include "daemon/admin/admin.h"
#include "daemon/calls/burst_channel.h"
#include "daemon/base/bus.h"
#include "daemon/cache/cache.h"
#include "daemon/config.h"
#include "daemon/base/daemon.h"
#include "daemon/devices/devices.h"
#include "daemon/devices/extensions.h"
#include "daemon/base/log.h"
#include "proto/paths.h"
#include "daemon/clients/pool.h"
#include "daemon/calls/execution.h"
#include "daemon/clients/quota.h"
#include "daemon/clients/trust.h"
#include "daemon/net/server.h"
#include "daemon/reload.h"
#include "daemon/service.h"

static void usage(FILE *f, const char *extensions_dir, const char *drivers_dir) {
    fprintf(
        f,
        "usage: nnd [options]\n"
        "The neural-network accelerator service: serves libnnd clients on a socket.\n"
        "  --socket PATH       client socket (default $NND_SOCKET, $XDG_RUNTIME_DIR/nnd.sock,\n"
        "                      or /run/nnd/nnd.sock)\n"
        "  --state-dir DIR     state directory, created 0700 (default $NND_STATE_DIR, ...)\n"
        "  --log-level LEVEL   error, warn, info (default) or debug\n"
        "  --cache-max-bytes N content cache cap, in bytes or with K, M, G (default 256M;\n"
        "                      0 turns the content cache off)\n"
        "  --cache-save-max-bytes N  models with more constants are not saved to client\n"
        "                      cache files (default 4M; 0: no limit)\n"
        "  --driver-build-id ID  the build id that scopes cache entries (default: this\n"
        "                      build's, " SRV_DRIVER_BUILD_ID ")\n"
        "  --extensions-dir DIR  vendor extension plugins, *.so (default\n"
        "                      %s)\n"
        "  --extensions-allowlist FILE  who may use extensions: one executable path or\n"
        "                      user a line (default: nobody)\n"
        "  --drivers-dir DIR   device driver plugins, *.so (default\n"
        "                      %s)\n"
        "  --drivers-in-process N  1: load the driver plugins into the daemon, not each\n"
        "                      into a driver host process of its own (default 0)\n"
        "  --workers N         executions nnd-cpu runs at once (default 1: one at a time,\n"
        "                      for predictable latency)\n"
        "  --device-workers N  executions each other device (nnd-reference, each driver)\n"
        "                      runs at once, each device its own queue (default 1)\n"
        "  --preempt MODE      preempted executions resume (default) or restart\n"
        "  --app-queue N       queued executions per app (uid) (default 64)\n"
        "  --app-memory N      execution memory per app, queued and running, bytes or\n"
        "                      with K, M, G (default 1G)\n"
        "  --device-memory N   most memory one execution may need (default 4G)\n"
        "  --worker-nice N     workers' nice value above the loop's, 0..19 (default 0)\n"
        "  --config FILE       settings and quotas, one \"key = value\" a line (default\n"
        "                      " SRV_CONFIG_DEFAULT_PATH " when it exists), then FILE.d/*.conf in\n"
        "                      name order; the keys are the options above with '_' for '-'\n"
        "                      (options win over the files), quota.app.* and quota.connection.*\n"
        "                      (see nnd.conf(5))\n"
        "  --print-config-template  print every key with its default, commented out, and exit\n"
        "  -V, --version       print the version and exit\n"
        "  -h, --help          print this and exit\n"
        "SIGHUP reads the config files again and applies log_level, extensions_allowlist\n"
        "and the quotas; SIGINT and SIGTERM stop the daemon. Started by systemd socket\n"
        "activation (LISTEN_FDS), nnd serves the socket it is given; --socket then only\n"
        "names it.\n",
        extensions_dir, drivers_dir);
}

/* The plugins' default home: lib/nnd/extensions (SRV_EXTENSIONS_FROM_BIN) beside the bin
 * folder this executable is in, so that it follows the prefix given at install time. */
static const char *default_extensions_dir(char *buf, size_t len) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? memrchr(exe, '/', (size_t)n) : NULL;
    if (!slash) return SRV_EXTENSIONS_FROM_BIN; /* relative to the working directory */
    *slash = '\0';
    if ((size_t)snprintf(buf, len, "%s/%s", exe, SRV_EXTENSIONS_FROM_BIN) >= len)
        return SRV_EXTENSIONS_FROM_BIN;
    char *real = realpath(buf, NULL); /* tidy when it exists */
    if (real && strlen(real) < len) strcpy(buf, real);
    free(real);
    return buf;
}

/* The drivers' default home: this build tree's drivers folder when this executable is the
 * build tree's (so that `make run` lists the example driver), else lib/nnd/drivers
 * (SRV_DRIVERS_FROM_BIN) beside the bin folder this executable is in. */
static const char *default_drivers_dir(char *buf, size_t len) {
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? memrchr(exe, '/', (size_t)n) : NULL;
    if (!slash) return SRV_DRIVERS_FROM_BIN;
    *slash = '\0';
    char *build = realpath(SRV_BUILD_DIR, NULL);
    bool in_build = build && !strcmp(build, exe);
    free(build);
    if (in_build) {
        snprintf(buf, len, "%s/drivers", SRV_BUILD_DIR);
        return buf;
    }
    if ((size_t)snprintf(buf, len, "%s/%s", exe, SRV_DRIVERS_FROM_BIN) >= len)
        return SRV_DRIVERS_FROM_BIN;
    char *real = realpath(buf, NULL);
    if (real && strlen(real) < len) strcpy(buf, real);
    free(real);
    return buf;
}

/* mkdir -p: missing parents get 0755, the directory itself gets mode. */
static int mkdir_p(const char *path, mode_t mode) {
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return -ENAMETOOLONG;
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        if (mkdir(buf, c == '\0' ? mode : 0755) < 0 && errno != EEXIST) return -errno;
        *p = c;
        if (c == '\0') break;
    }
    struct stat st;
    if (stat(path, &st) < 0) return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int make_socket_dir(const char *socket_path) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", socket_path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return 0;
    *slash = '\0';
    return mkdir_p(dir, 0755);
}

/* Every client costs a socket and a few transient pool fds: allow as many as we may. */
static void raise_fd_limit(void) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0) return;
    rlim_t want = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
    if (rl.rlim_cur >= want) return;
    rl.rlim_cur = want;
    setrlimit(RLIMIT_NOFILE, &rl);
}

/* One line each for the app and the connection limits in force. */
static void log_quotas(const srv_quota_limits *l) {
    for (int scope = 0; scope < 2; scope++) {
        const uint64_t *v = scope ? l->conn : l->app;
        char line[512] = "";
        size_t at = 0;
        for (int r = 0; r < SRV_QUOTA_RES && at < sizeof line; r++) {
            if (scope && srv_quota_app_only((srv_quota_res)r)) continue;
            char n[24];
            snprintf(n, sizeof n, "%llu", (unsigned long long)v[r]);
            at += (size_t)snprintf(line + at, sizeof line - at, "%s %s %s", at ? "," : "",
                                   srv_quota_res_name((srv_quota_res)r), v[r] ? n : "unlimited");
        }
        srv_log_info("quotas per %s:%s", scope ? "connection" : "app (uid)", line);
    }
}

#define SRV_MMAP_THRESHOLD (1 << 20)
#define SRV_TRIM_THRESHOLD (4 << 20)

static srv_daemon daemon_state;
static uv_signal_t sig_int, sig_term, sig_hup;

static void shutdown_daemon(srv_daemon *d) {
    d->stopping = true;
    srv_service_stop(d);
    srv_server_stop(d->server);
    d->server = NULL;
    srv_executions_stop(d);     /* after the connections, which cancelled their work */
    srv_burst_channels_stop(d); /* after the executions, which held channels */
    srv_bus_close(d->bus);
    d->bus = NULL;
    uv_close((uv_handle_t *)&sig_int, NULL);
    uv_close((uv_handle_t *)&sig_term, NULL);
    uv_close((uv_handle_t *)&sig_hup, NULL);
}

static void on_hangup(uv_signal_t *h, int signum) {
    (void)signum;
    srv_daemon *d = h->data;
    if (d->stopping) return;
    srv_log_info("SIGHUP: reloading the configuration");
    char err[512];
    d->reload(d, err, sizeof err); /* it logs what it did, or why not */
}

static void on_signal(uv_signal_t *h, int signum) {
    srv_daemon *d = h->data;
    if (d->stopping) return;
    srv_log_info("%s: shutting down", strsignal(signum));
    shutdown_daemon(d);
}

static void close_any(uv_handle_t *h, void *arg) {
    (void)arg;
    if (!uv_is_closing(h)) uv_close(h, NULL);
}

/* Every option but config, version and help is a config key (config.h). */
enum { OPT_SETTING = 1000, OPT_CONFIG, OPT_TEMPLATE };
static const struct option opts[] = {{"socket", required_argument, NULL, OPT_SETTING},
                                     {"state-dir", required_argument, NULL, OPT_SETTING},
                                     {"log-level", required_argument, NULL, OPT_SETTING},
                                     {"cache-max-bytes", required_argument, NULL, OPT_SETTING},
                                     {"cache-save-max-bytes", required_argument, NULL, OPT_SETTING},
                                     {"driver-build-id", required_argument, NULL, OPT_SETTING},
                                     {"extensions-dir", required_argument, NULL, OPT_SETTING},
                                     {"extensions-allowlist", required_argument, NULL, OPT_SETTING},
                                     {"drivers-dir", required_argument, NULL, OPT_SETTING},
                                     {"drivers-in-process", required_argument, NULL, OPT_SETTING},
                                     {"workers", required_argument, NULL, OPT_SETTING},
                                     {"device-workers", required_argument, NULL, OPT_SETTING},
                                     {"preempt", required_argument, NULL, OPT_SETTING},
                                     {"app-queue", required_argument, NULL, OPT_SETTING},
                                     {"app-memory", required_argument, NULL, OPT_SETTING},
                                     {"device-memory", required_argument, NULL, OPT_SETTING},
                                     {"worker-nice", required_argument, NULL, OPT_SETTING},
                                     {"config", required_argument, NULL, OPT_CONFIG},
                                     {"print-config-template", no_argument, NULL, OPT_TEMPLATE},
                                     {"version", no_argument, NULL, 'V'},
                                     {"help", no_argument, NULL, 'h'},
                                     {NULL, 0, NULL, 0}};

/* Where the daemon serves: the socket (systemd's when activated) and the state directory. */
typedef struct serve_paths {
    int listen_fd; /* systemd's listening socket, or -1 */
    const char *socket_path, *state_dir;
} serve_paths;

static char socket_buf[4096], state_buf[4096], extensions_buf[4096], drivers_buf[4096];
static char activated_path[sizeof socket_buf];

/* The command line's settings, read again at each reload with the files (config.h). */
#define MAX_SETTINGS 64
static const char *set_options[MAX_SETTINGS], *set_keys[MAX_SETTINGS], *set_values[MAX_SETTINGS];
static char key_bufs[MAX_SETTINGS][32];
static srv_config_source source = {.options = set_options, .keys = set_keys, .values = set_values};

/* Reads the command line and the config files into cfg; the command line wins.
 * Returns -1 to go on, or the exit status (0 after --help or --version, 2 for a mistake). */
static int parse(int argc, char **argv, srv_config *cfg) {
    const char *extensions_dir = default_extensions_dir(extensions_buf, sizeof extensions_buf);
    const char *drivers_dir = default_drivers_dir(drivers_buf, sizeof drivers_buf);
    source.extensions_dir = extensions_dir;
    source.drivers_dir = drivers_dir;
    int o, at;
    while ((o = getopt_long(argc, argv, "hV", opts, &at)) != -1) {
        switch (o) {
        case OPT_SETTING:
            if (source.n_settings == MAX_SETTINGS) {
                fprintf(stderr, "nnd: more than %d options\n", MAX_SETTINGS);
                return 2;
            }
            /* The key is the option's name with '_' for '-'. */
            char *key = key_bufs[source.n_settings];
            snprintf(key, sizeof key_bufs[0], "%s", opts[at].name);
            for (char *p = key; *p; p++)
                if (*p == '-') *p = '_';
            set_options[source.n_settings] = opts[at].name;
            set_keys[source.n_settings] = key;
            set_values[source.n_settings++] = optarg;
            break;
        case OPT_CONFIG: source.path = optarg; break;
        case OPT_TEMPLATE: srv_config_print_template(stdout); return 0;
        case 'V': printf("nnd %s (driver build %s)\n", SRV_VERSION, SRV_DRIVER_BUILD_ID); return 0;
        case 'h': usage(stdout, extensions_dir, drivers_dir); return 0;
        default: usage(stderr, extensions_dir, drivers_dir); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "nnd: unexpected argument \"%s\"\n", argv[optind]);
        usage(stderr, extensions_dir, drivers_dir);
        return 2;
    }
    char err[512];
    if (srv_config_read(cfg, &source, err, sizeof err) < 0) {
        fprintf(stderr, "%snnd: %s\n", srv_log_prefix(SRV_LOG_ERROR), err);
        return 2;
    }
    return -1;
}

/* The socket (systemd's, the configured one or the default) and the state directory.
 * Returns 0, or the exit status. */
static int resolve_paths(const srv_config *cfg, serve_paths *p) {
    char err[512];
    p->socket_path = cfg->socket_path;
    p->state_dir = cfg->state_dir;
    p->listen_fd = srv_activation_socket(activated_path, sizeof activated_path, err, sizeof err);
    if (p->listen_fd == -2) {
        srv_log_error("%s", err);
        return 1;
    }
    if (p->listen_fd >= 0) {
        if (p->socket_path && strcmp(p->socket_path, activated_path))
            srv_log_warn("serving systemd's socket %s, not %s", activated_path, p->socket_path);
        p->socket_path = activated_path;
    }
    if (!p->socket_path) p->socket_path = nnd_default_socket_path(socket_buf, sizeof socket_buf);
    if (!p->state_dir) p->state_dir = proto_default_state_dir(state_buf, sizeof state_buf);
    if (!p->socket_path || !p->state_dir) {
        srv_log_error("default socket or state path too long");
        return 1;
    }
    return 0;
}

/* The process's settings (signals, allocator, descriptors), the directories it needs and
 * their trust, and the SIGBUS guard. Returns 0, or the exit status. */
static int configure(const srv_config *cfg, const serve_paths *p) {
    signal(SIGPIPE, SIG_IGN); /* sends use MSG_NOSIGNAL; this covers everything else */
    signal(SIGXFSZ, SIG_IGN); /* a file size limit fails the write (EFBIG), not the daemon */
    /* What clients' objects held goes back to the system when they go: blocks of a MiB or
     * more (buffers, tensors, serialized models) are mapped and unmapped, never kept by
     * glibc's adaptive threshold, which would keep a freed buffer's size in the heap. */
    mallopt(M_MMAP_THRESHOLD, SRV_MMAP_THRESHOLD);
    /* A heap's free top goes back in pieces of 4 MiB or more: at glibc's 128 KiB, freeing a
     * large prepared model (thousands of small blocks, last allocated first freed) made one
     * madvise and one TLB shootdown per block, all on the thread that freed it. */
    mallopt(M_TRIM_THRESHOLD, SRV_TRIM_THRESHOLD);
    raise_fd_limit();
    int rc = p->listen_fd >= 0 ? 0 : make_socket_dir(p->socket_path);
    if (rc < 0) {
        srv_log_error("cannot create the directory of %s: %s", p->socket_path, strerror(-rc));
        return 1;
    }
    rc = mkdir_p(p->state_dir, 0700);
    if (rc < 0)
        srv_log_warn("cannot create state directory %s: %s; serving without it", p->state_dir,
                     strerror(-rc));
    /* Paths another user could change are refused, as sshd's StrictModes does (trust.h). */
    char err[512];
    if (srv_trust_daemon_paths(rc < 0 ? NULL : p->state_dir, p->socket_path, cfg->extensions_dir,
                               cfg->allowlist, err, sizeof err) < 0) {
        srv_log_error("%s", err);
        return 2;
    }
    rc = srv_pool_guard_install();
    if (rc < 0) {
        srv_log_error("cannot install the SIGBUS handler: %s", strerror(-rc));
        return 1;
    }
    return 0;
}

/* Starts what serves clients on d's loop: the cache, quotas, the scheduler's workers, the
 * server, the bus and the signal handlers. Returns 0, or the exit status once the loop has
 * closed what was started. */
static int start(srv_daemon *d, const srv_config *cfg, const serve_paths *p) {
    char err[512];
    /* A cache that cannot open costs speed, not service: run without it. */
    static char cache_off[sizeof err];
    d->cache = srv_cache_open(d, cfg->build_id, cfg->cache_max_bytes, cache_off, sizeof cache_off);
    srv_cache_set_save_max(d->cache, cfg->cache_save_max_bytes);
    if (!d->cache) {
        srv_log_warn("compilation caching is off: %s", cache_off);
        d->cache_off = cache_off;
    }
    d->quota = srv_quota_new(&cfg->quota, d);
    if (!d->quota) {
        srv_log_error("out of memory");
        return 1;
    }
    if (cfg->files[0]) srv_log_info("settings from %s", cfg->files);
    log_quotas(&cfg->quota);
    /* Before the socket accepts: whoever sees it serve may signal (a SIGHUP's default
     * would end the daemon); the loop handles them once it runs. */
    uv_signal_init(d->loop, &sig_int);
    uv_signal_init(d->loop, &sig_term);
    uv_signal_init(d->loop, &sig_hup);
    sig_int.data = sig_term.data = sig_hup.data = d;
    uv_signal_start(&sig_int, on_signal, SIGINT);
    uv_signal_start(&sig_term, on_signal, SIGTERM);
    uv_signal_start(&sig_hup, on_hangup, SIGHUP);
    if (srv_executions_start(d, &cfg->sched, err, sizeof err) < 0) {
        srv_log_error("%s", err);
        return 1;
    }
    d->server = srv_server_start(d, p->listen_fd, err, sizeof err);
    if (!d->server) {
        srv_log_error("%s", err);
        srv_executions_stop(d);
        return 1;
    }
    d->bus = srv_bus_open(d->loop, p->state_dir, srv_admin_handle, d, err, sizeof err);
    if (!d->bus && errno != EADDRINUSE) {
        /* An unwritable state directory: clients are served without admin and events. */
        srv_log_warn("admin and event bus off: %s", err);
    } else if (!d->bus) {
        srv_log_error("%s (another daemon on this state directory?)", err);
        srv_server_stop(d->server);
        d->server = NULL;
        srv_executions_stop(d);
        return 1;
    }
    srv_log_info("nnd %s listening on %s%s (state %s, pid %d)", SRV_VERSION, p->socket_path,
                 p->listen_fd >= 0 ? " (from systemd)" : "", p->state_dir, (int)getpid());
    srv_service_start(d); /* READY=1: the socket serves */
    return 0;
}

/* Runs the loop until a signal has stopped everything, then closes whatever is left. */
static void run(uv_loop_t *loop) {
    uv_run(loop, UV_RUN_DEFAULT);
    if (uv_loop_close(loop) == UV_EBUSY) {
        uv_walk(loop, close_any, NULL);
        uv_run(loop, UV_RUN_DEFAULT);
        uv_loop_close(loop);
    }
}

/* Frees what outlived the loop, in the order its users went. */
static void shut_down(srv_daemon *d) {
    srv_cache_close(d->cache); /* every session has released its models by now */
    d->cache = NULL;
    srv_extensions_close(d); /* likewise the models that held plugins */
    srv_devices_unload_drivers();
    srv_quota_free(d->quota); /* every connection has left its app */
    d->quota = NULL;
}

int main(int argc, char **argv) {
    static srv_config cfg;
    srv_log_init(); /* the journal's line format when stderr is the journal */
    int status = parse(argc, argv, &cfg);
    if (status >= 0) return status;
    srv_log_set_level(cfg.log_level);
    serve_paths p;
    if ((status = resolve_paths(&cfg, &p)) != 0 || (status = configure(&cfg, &p)) != 0)
        return status;

    uv_loop_t loop;
    uv_loop_init(&loop);
    srv_daemon *d = &daemon_state;
    d->loop = &loop;
    d->socket_path = p.socket_path;
    d->state_dir = p.state_dir;
    d->start_ns = srv_now_ns();
    d->extensions_dir = cfg.extensions_dir;
    d->allowlist_path = cfg.allowlist;
    d->reload = srv_reload;
    /* After the pool guard: the extension fault guard chains to its SIGBUS handler. */
    char err[512];
    if (srv_extensions_load(d, err, sizeof err) < 0) {
        srv_log_error("%s", err);
        srv_extensions_close(d);
        return 1;
    }
    /* Drivers (their hosts inherit the environment) keep what they cache across restarts
     * under the daemon's own state directory: nnd-opencl its program binaries. */
    setenv("NND_STATE_DIR", p.state_dir, 1);
    /* After the extensions: drivers share their fault guard and log sink. */
    drvhost_limits host_limits = {.call_timeout_ms = cfg.drivers.call_timeout_ms,
                                  .memory_limit_bytes = cfg.drivers.memory_limit_bytes,
                                  .max_restarts = cfg.drivers.max_restarts,
                                  .restart_window_ms = cfg.drivers.restart_window_ms};
    srv_devices_load_drivers(cfg.drivers_dir, cfg.drivers_in_process != 0, &host_limits);
    status = start(d, &cfg, &p);
    if (status != 0) uv_walk(&loop, close_any, NULL); /* the signals, so that run() ends */
    srv_reload_init(&cfg, &source); /* it owns the settings' strings from now on */
    run(&loop);
    shut_down(d);
    if (status == 0) srv_log_info("stopped");
    srv_reload_free();
    return status;
}
