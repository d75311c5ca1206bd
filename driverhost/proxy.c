/* SPDX-License-Identifier: Apache-2.0 */
/* proxy: driver hosts' lives: spawn, the supervisor thread that reads replies and enforces
 * bounds, faults and restarts, the calls in flight (drvhost.h, proxy_internal.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driverhost/proxy_internal.h"

#ifndef DHP_DRIVER_HOST_INSTALLED
#define DHP_DRIVER_HOST_INSTALLED "/usr/libexec/nnd/nnd-driver-host"
#endif

extern char **environ;

static pthread_mutex_t g_hosts_lock = PTHREAD_MUTEX_INITIALIZER;
static drvhost *g_hosts[DRVHOST_MAX_HOSTS];
static _Atomic bool g_active;

bool drvhost_active(void) {
    return atomic_load(&g_active);
}

/* The bound of a call: its deadline (plus the grace) when it has one, else ms from now. */
void dhp_bound_for(drvhost *h, dhp_call *c, uint64_t deadline_ns, uint32_t ms) {
    if (deadline_ns != NND_DRIVER_NO_DEADLINE) {
        uint64_t now = dh_now_ns();
        c->bound_ns = deadline_ns + (uint64_t)h->lim.deadline_grace_ms * 1000000ull;
        c->bound_ms = c->bound_ns > now ? (uint32_t)((c->bound_ns - now) / 1000000u) : 0;
        c->timeout_status = NND_DRIVER_MISSED_DEADLINE_TRANSIENT;
    } else {
        c->bound_ns = dhp_bound(ms), c->bound_ms = ms;
        c->timeout_status = NND_DRIVER_GENERAL_FAILURE;
    }
}

uint64_t dhp_bound(uint32_t ms) {
    return dh_now_ns() + (uint64_t)ms * 1000000ull;
}

static void say(drvhost *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(drvhost *h, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (h->lim.log)
        h->lim.log(h->lim.log_ctx, msg);
    else
        fprintf(stderr, "nnd: driver host: %s\n", msg);
}

static void wake(drvhost *h) {
    char b = 1;
    if (write(h->wake[1], &b, 1) < 0) { /* full: it is awake anyway */
    }
}

/* ---- spawn ---- */

static void host_path(drvhost *h) {
    if (h->lim.host_path) {
        snprintf(h->host_path, sizeof h->host_path, "%s", h->lim.host_path);
        return;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            int dir = (int)(slash - self);
            /* A build tree keeps it beside the daemon; an install under a prefix keeps it in
             * the prefix's libexec/nnd/, beside bin/. */
            snprintf(h->host_path, sizeof h->host_path, "%.*s/nnd-driver-host", dir, self);
            if (access(h->host_path, X_OK) == 0) return;
            snprintf(h->host_path, sizeof h->host_path, "%.*s/../libexec/nnd/nnd-driver-host", dir,
                     self);
            if (access(h->host_path, X_OK) == 0) return;
        }
    }
    snprintf(h->host_path, sizeof h->host_path, "%s", DHP_DRIVER_HOST_INSTALLED);
}

static void describe_exit(int ws, char *out, size_t cap) {
    if (WIFSIGNALED(ws))
        snprintf(out, cap, "killed by signal %d (%s)", WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    else if (WIFEXITED(ws))
        snprintf(out, cap, "exited with status %d", WEXITSTATUS(ws));
    else
        snprintf(out, cap, "ended");
}

/* Starts a host and reads its hello; 0, or -1 with err set (nothing left running). */
static int spawn(drvhost *h, bool first, char *err, size_t errlen) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(err, errlen, "socketpair: %s", strerror(errno));
        return -1;
    }
    int child = sv[1];
    if (child == 3 || child == 4) { /* onto itself keeps close-on-exec; 4 is the plugin's */
        child = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
        close(sv[1]);
    }
    char fd_s[16], parent_s[24], data_s[24];
    snprintf(fd_s, sizeof fd_s, "3");
    snprintf(parent_s, sizeof parent_s, "%ld", (long)getpid());
    snprintf(data_s, sizeof data_s, "%llu", (unsigned long long)h->lim.memory_limit_bytes * 2);
    char *argv[] = {h->host_path, "--plugin",     h->plugin, "--fd", fd_s, "--parent",
                    parent_s,     "--data-limit", data_s,    NULL,   NULL, NULL};
    /* The checked plugin file goes as fd 4: moved out of the way of fd 3 first. */
    int plugin = h->lim.plugin_fd > 0 ? fcntl(h->lim.plugin_fd, F_DUPFD_CLOEXEC, 10) : -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, child, 3);
    if (plugin >= 0) {
        posix_spawn_file_actions_adddup2(&fa, plugin, 4);
        argv[9] = "--plugin-fd", argv[10] = "4";
    }
    pid_t pid;
    int rc = posix_spawn(&pid, h->host_path, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(child);
    if (plugin >= 0) close(plugin);
    if (rc != 0) {
        close(sv[0]);
        snprintf(err, errlen, "cannot start %.160s: %s", h->host_path, strerror(rc));
        return -1;
    }
    int sock = sv[0];
    struct pollfd p = {.fd = sock, .events = POLLIN};
    dh_msg m = {.staging_fd = -1};
    rc = poll(&p, 1, DRVHOST_OPEN_TIMEOUT_MS);
    int got = rc > 0 ? dh_recv(sock, &m) : 0;
    dh_rbuf r = {m.body, m.body_len, 0, false};
    int status = -1;
    char msg[DH_ERR_MAX] = "";
    dh_hello hello = {0}; /* the host is not trusted: wire_reply.c reads it */
    bool bad = got <= 0 || m.h.type != DH_MSG_REPLY ||
               dh_reply_head_get(&r, &status, msg, sizeof msg) < 0 || dh_hello_get(&r, &hello) < 0;
    if (bad) status = -1;
    uint32_t has = hello.has, n = hello.n_devices;
    const nnd_driver_device_info *devs = hello.devices;
    if (rc == 0)
        snprintf(err, errlen, "%s: open() did not finish within %u ms", h->plugin,
                 DRVHOST_OPEN_TIMEOUT_MS);
    else if (status < 0) {
        /* Died loading the plugin (a constructor's fault, say): say of what. */
        int ws = 0;
        char how[96] = "ended";
        for (int i = 0; i < 100; i++) {
            if (waitpid(pid, &ws, WNOHANG) == pid) {
                describe_exit(ws, how, sizeof how);
                pid = 0;
                break;
            }
            usleep(10000);
        }
        snprintf(err, errlen, "%s: the driver host %s before it said hello", h->plugin, how);
    } else if (status != NND_DRIVER_OK)
        snprintf(err, errlen, "%s", msg);
    else if (!first && (n != h->n_devices || has != h->has))
        snprintf(err, errlen, "%s: its devices changed across a restart", h->plugin);
    for (uint32_t i = 0; !err[0] && !first && i < n; i++)
        if (strcmp(devs[i].name, h->devices[i].name))
            snprintf(err, errlen, "%s: its devices changed across a restart", h->plugin);
    dh_msg_free(&m);
    if (err[0]) {
        if (pid) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
        }
        close(sock);
        return -1;
    }
    pthread_mutex_lock(&h->mu);
    if (first) {
        h->has = has, h->n_devices = n;
        for (uint32_t i = 0; i < n; i++) {
            h->devices[i] = devs[i];
            h->dev[i] = (dhp_device){h, i};
            h->devices[i].device = &h->dev[i];
        }
    }
    h->pid = pid, h->sock = sock, h->gen++, h->state = DHP_UP;
    h->stats.pid = pid;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return 0;
}

/* ---- faults ---- */

/* Counts a restart (h->mu held); true when that disables the driver. */
static bool note_restart(drvhost *h, const char *reason) {
    uint64_t now = dh_now_ns(), window = (uint64_t)h->lim.restart_window_ms * 1000000ull;
    h->stats.restarts++;
    snprintf(h->stats.last_fault, sizeof h->stats.last_fault, "%s", reason);
    h->restart_ns[h->n_restart_ns++ % DHP_RESTART_RING] = now;
    uint32_t recent = 0;
    uint32_t kept = h->n_restart_ns < DHP_RESTART_RING ? h->n_restart_ns : DHP_RESTART_RING;
    for (uint32_t i = 0; i < kept; i++)
        if (now - h->restart_ns[i] < window) recent++;
    if (recent <= h->lim.max_restarts) return false;
    h->state = DHP_DISABLED;
    h->stats.disabled = true;
    pthread_cond_broadcast(&h->cv);
    return true;
}

/* The host is gone or must go (h->mu held, released and taken again inside): kill and reap
 * it, end the calls it held (culprit with its own status), count the restart. */
static void host_down(drvhost *h, const char *why, dhp_call *culprit, bool count) {
    if (h->state != DHP_UP) return;
    kill(h->pid, SIGKILL);
    shutdown(h->sock, SHUT_RDWR);
    int ws = 0;
    while (waitpid(h->pid, &ws, 0) < 0 && errno == EINTR) {
    }
    char how[96];
    describe_exit(ws, how, sizeof how);
    pthread_mutex_lock(&h->send_mu);
    close(h->sock);
    h->sock = -1;
    h->n_known = 0;
    pthread_mutex_unlock(&h->send_mu);
    h->state = DHP_DOWN;
    h->gen++; /* what the old host held is gone, even before a new one starts */
    h->pid = 0, h->stats.pid = 0;
    char reason[160];
    snprintf(reason, sizeof reason, "%s (%s)", why ? why : "driver host ended", how);
    if (count && note_restart(h, reason))
        say(h, "%s disabled: restarted more than %u times within %u ms (last: %s)", h->plugin,
            h->lim.max_restarts, h->lim.restart_window_ms, reason);
    else if (count)
        say(h, "%s: %s; restarting it", h->plugin, reason);
    dhp_call *list = h->pending, *async = NULL;
    h->pending = NULL;
    while (list) {
        dhp_call *c = list;
        list = c->next;
        c->done = true;
        if (c == culprit) {
            c->status = c->timeout_status;
            if (c->timeout_status == NND_DRIVER_MISSED_DEADLINE_TRANSIENT)
                snprintf(c->err, sizeof c->err,
                         "deadline passed inside the driver; its host "
                         "was killed %u ms past it and restarted",
                         h->lim.deadline_grace_ms);
            else
                snprintf(c->err, sizeof c->err,
                         "driver did not answer within %u ms; its host "
                         "was killed and restarted",
                         c->bound_ms);
        } else {
            c->status = NND_DRIVER_DEVICE_UNAVAILABLE;
            snprintf(c->err, sizeof c->err, "%s: %s", h->plugin, reason);
        }
        if (c->finish) c->next = async, async = c;
    }
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    for (dhp_call *c = async; c;) {
        dhp_call *n = c->next;
        c->finish(c);
        c = n;
    }
    pthread_mutex_lock(&h->mu);
}

static long rss_anon_kib(pid_t pid) {
    char path[64], line[128];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    FILE *f = fopen(path, "re");
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %ld kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

/* Memory past the limit costs a restart: checked at most every 10 ms (h->mu held). */
static void check_memory(drvhost *h, bool force) {
    uint64_t now = dh_now_ns();
    if (h->state != DHP_UP || (!force && now - h->last_mem_check_ns < 10000000ull)) return;
    h->last_mem_check_ns = now;
    long kib = rss_anon_kib(h->pid);
    if (kib < 0 || (uint64_t)kib * 1024u <= h->lim.memory_limit_bytes) return;
    char why[128];
    snprintf(why, sizeof why, "its host used %ld MiB, over its limit of %llu MiB", kib / 1024,
             (unsigned long long)(h->lim.memory_limit_bytes >> 20));
    host_down(h, why, NULL, true);
}

static void on_reply(drvhost *h, dh_msg *m) {
    pthread_mutex_lock(&h->mu);
    dhp_call *c = NULL;
    for (dhp_call **p = &h->pending; *p; p = &(*p)->next)
        if ((*p)->id == m->h.call) {
            c = *p;
            *p = c->next;
            break;
        }
    if (!c) {
        pthread_mutex_unlock(&h->mu);
        dh_msg_free(m);
        return;
    }
    c->reply = *m;
    c->rest = (dh_rbuf){c->reply.body, c->reply.body_len, 0, false};
    if (dh_reply_head_get(&c->rest, &c->status, c->err, sizeof c->err) < 0) {
        c->status = NND_DRIVER_GENERAL_FAILURE;
        snprintf(c->err, sizeof c->err, "%s: malformed reply from the driver host", h->plugin);
    }
    if (c->status == NND_DRIVER_INVALID_ARGUMENT && strstr(c->err, "memory pool shrank"))
        h->stats.pool_shrinks++;
    /* A waiting caller may return (its call on its stack) as soon as done is seen. */
    void (*finish)(dhp_call *) = c->finish;
    c->done = true;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    if (finish) finish(c);
}

static void *supervise(void *arg) {
    drvhost *h = arg;
    pthread_mutex_lock(&h->mu);
    while (!h->stopping) {
        if (h->state == DHP_DOWN) {
            bool first = !h->first_done;
            pthread_mutex_unlock(&h->mu);
            char err[DH_ERR_MAX] = "";
            int rc = spawn(h, first, err, sizeof err);
            pthread_mutex_lock(&h->mu);
            if (first) {
                h->first_done = true;
                snprintf(h->first_err, sizeof h->first_err, "%s", err);
                if (rc < 0) h->state = DHP_STOPPED, h->stopping = true;
                pthread_cond_broadcast(&h->cv);
            } else if (rc < 0) {
                /* A failed restart counts as one; back off before the next. */
                if (note_restart(h, err)) {
                    say(h, "%s disabled: its host does not start again: %s", h->plugin, err);
                } else {
                    pthread_mutex_unlock(&h->mu);
                    usleep(100000u);
                    pthread_mutex_lock(&h->mu);
                }
            }
            continue;
        }
        int timeout = h->state == DHP_UP ? 1000 : -1;
        uint64_t now = dh_now_ns();
        for (dhp_call *c = h->pending; c; c = c->next) {
            int ms = c->bound_ns <= now ? 0 : (int)((c->bound_ns - now) / 1000000u) + 1;
            if (timeout < 0 || ms < timeout) timeout = ms;
        }
        struct pollfd p[2] = {{.fd = h->wake[0], .events = POLLIN},
                              {.fd = h->state == DHP_UP ? h->sock : -1, .events = POLLIN}};
        h->sup_wakes_ns = timeout < 0 ? UINT64_MAX : now + (uint64_t)timeout * 1000000ull;
        pthread_mutex_unlock(&h->mu);
        poll(p, 2, timeout);
        if (p[0].revents & POLLIN) {
            char b[64];
            while (read(h->wake[0], b, sizeof b) > 0) {
            }
        }
        bool gone = false;
        if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            dh_msg m;
            int rc = dh_recv(p[1].fd, &m);
            if (rc > 0)
                on_reply(h, &m);
            else if (rc != -EPROTO)
                gone = true;
        }
        pthread_mutex_lock(&h->mu);
        if (gone && !h->stopping) host_down(h, "its host ended", NULL, true);
        now = dh_now_ns();
        for (dhp_call *c = h->pending; c; c = c->next)
            if (c->bound_ns && c->bound_ns <= now && !h->stopping) {
                host_down(h, "a call passed its bound", c, true);
                break;
            }
        if (!h->stopping) check_memory(h, false);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

/* ---- calls ---- */

uint32_t dhp_gen(drvhost *h) {
    pthread_mutex_lock(&h->mu);
    uint32_t g = h->gen;
    pthread_mutex_unlock(&h->mu);
    return g;
}

void dhp_count_shrink(drvhost *h) {
    pthread_mutex_lock(&h->mu);
    h->stats.pool_shrinks++;
    pthread_mutex_unlock(&h->mu);
}

void dhp_count_staged(drvhost *h, uint64_t bytes) {
    pthread_mutex_lock(&h->mu);
    h->stats.staged_calls++;
    h->stats.staged_bytes += bytes;
    pthread_mutex_unlock(&h->mu);
}

static int unavailable(drvhost *h, char *err, size_t errlen) {
    if (h->state == DHP_DISABLED)
        snprintf(err, errlen,
                 "driver %s is disabled: its host restarted more than %u times "
                 "within %u ms (last: %s)",
                 h->plugin, h->lim.max_restarts, h->lim.restart_window_ms, h->stats.last_fault);
    else if (h->state == DHP_STOPPED)
        snprintf(err, errlen, "driver %s is closed", h->plugin);
    else
        snprintf(err, errlen, "driver %s: its host is restarting", h->plugin);
    return NND_DRIVER_DEVICE_UNAVAILABLE;
}

int dhp_wait_up(drvhost *h, uint64_t bound_ns, char *err, size_t errlen) {
    pthread_mutex_lock(&h->mu);
    while (h->state == DHP_DOWN && !h->stopping && dh_now_ns() < bound_ns) {
        uint64_t b = bound_ns;
        struct timespec ts = {(time_t)(b / 1000000000ull), (long)(b % 1000000000ull)};
        pthread_cond_timedwait(&h->cv, &h->mu, &ts);
    }
    int rc = h->state == DHP_UP ? 0 : unavailable(h, err, errlen);
    pthread_mutex_unlock(&h->mu);
    return rc;
}

int dhp_host_ready(drvhost *h, uint32_t gen) {
    pthread_mutex_lock(&h->mu);
    int r = h->state == DHP_UP ? (h->gen == gen ? 1 : 0) : h->state == DHP_DOWN ? 0 : -1;
    pthread_mutex_unlock(&h->mu);
    return r;
}

uint32_t dhp_next_call_id(drvhost *h) {
    pthread_mutex_lock(&h->mu);
    uint32_t id = ++h->next_call ? h->next_call : ++h->next_call;
    pthread_mutex_unlock(&h->mu);
    return id;
}

bool dhp_call_pending(drvhost *h, uint32_t id) {
    bool found = false;
    pthread_mutex_lock(&h->mu);
    for (dhp_call *c = h->pending; c && !found; c = c->next)
        found = c->id == id;
    pthread_mutex_unlock(&h->mu);
    return found;
}

void dhp_call_free(dhp_call *c) {
    dh_msg_free(&c->reply);
}

int dhp_call_run(drvhost *h, uint32_t type, const dh_wbuf *body, const dhp_regions *regions,
                 int staging_fd, dhp_call *c) {
    c->reply = (dh_msg){.staging_fd = -1};
    if (body->oom) {
        snprintf(c->err, sizeof c->err, "out of memory for a driver call");
        return c->status = NND_DRIVER_RESOURCE_EXHAUSTED_TRANSIENT;
    }
    int rc = dhp_wait_up(h, c->bound_ns, c->err, sizeof c->err);
    if (rc) return c->status = rc;
    pthread_mutex_lock(&h->mu);
    if (h->state != DHP_UP || (c->gen && c->gen != h->gen)) {
        rc = h->state == DHP_UP ? NND_DRIVER_DEVICE_UNAVAILABLE
                                : unavailable(h, c->err, sizeof c->err);
        if (h->state == DHP_UP)
            snprintf(c->err, sizeof c->err, "driver %s: its host restarted", h->plugin);
        pthread_mutex_unlock(&h->mu);
        return c->status = rc;
    }
    bool async = c->finish != NULL;
    c->gen = h->gen;
    if (!c->id) c->id = ++h->next_call ? h->next_call : ++h->next_call;
    c->done = false;
    c->next = h->pending, h->pending = c;
    h->stats.calls++;
    /* The supervisor is woken only when this bound comes before its next look: a wake-up
     * per call would cost a context switch on every round trip. */
    bool sooner = c->bound_ns < h->sup_wakes_ns;
    pthread_mutex_unlock(&h->mu);
    if (sooner) wake(h);

    pthread_mutex_lock(&h->send_mu);
    int sent = -EPIPE;
    if (h->sock >= 0 && dhp_gen(h) == c->gen) {
        sent = regions ? dhp_regions_introduce(h, regions, c->bound_ns) : 0;
        dh_msg_header hd = {.type = type, .call = c->id};
        if (sent == 0)
            sent = dh_send(h->sock, &hd, body->p, body->len, NULL, 0, staging_fd, c->bound_ns);
    }
    pthread_mutex_unlock(&h->send_mu);

    pthread_mutex_lock(&h->mu);
    /* A started call may be finished and freed by now: only its presence is looked at. */
    bool still = false;
    for (dhp_call **p = &h->pending; *p && !still; p = &(*p)->next)
        if (*p == c && sent < 0) {
            *p = c->next;
            still = true;
        }
    if (still) {
        /* Not sent: the host is ending (the supervisor sees it) or not reading (its bound
         * passes and it is killed). Either way this call ends now. */
        c->done = true;
        c->status = sent == -ETIMEDOUT ? c->timeout_status : NND_DRIVER_DEVICE_UNAVAILABLE;
        snprintf(c->err, sizeof c->err, "driver %s: its host did not take the call (%s)", h->plugin,
                 strerror(-sent));
        pthread_mutex_unlock(&h->mu);
        return c->status;
    }
    if (async) {
        pthread_mutex_unlock(&h->mu);
        return NND_DRIVER_STARTED;
    }
    /* The supervisor ends the call at its bound; the margin here only guards against a
     * supervisor that could not. */
    uint64_t last = c->bound_ns + 2000000000ull;
    while (!c->done) {
        struct timespec ts = {(time_t)(last / 1000000000ull), (long)(last % 1000000000ull)};
        if (pthread_cond_timedwait(&h->cv, &h->mu, &ts) == ETIMEDOUT && !c->done) {
            for (dhp_call **p = &h->pending; *p; p = &(*p)->next)
                if (*p == c) {
                    *p = c->next;
                    break;
                }
            c->done = true;
            c->status = c->timeout_status;
            snprintf(c->err, sizeof c->err, "driver did not answer within %u ms", c->bound_ms);
        }
    }
    pthread_mutex_unlock(&h->mu);
    return c->status;
}

void dhp_send_oneway(drvhost *h, uint32_t type, const dh_wbuf *body, uint32_t gen) {
    if (body->oom) return;
    pthread_mutex_lock(&h->send_mu);
    if (h->sock >= 0 && dhp_gen(h) == gen) {
        dh_msg_header hd = {.type = type};
        dh_send(h->sock, &hd, body->p, body->len, NULL, 0, -1, dhp_bound(h->lim.call_timeout_ms));
    }
    pthread_mutex_unlock(&h->send_mu);
}

/* ---- start and stop ---- */

drvhost *dhp_host_start(const char *plugin_path, const drvhost_limits *limits, char *err,
                        size_t errlen) {
    drvhost *h = calloc(1, sizeof *h);
    if (!h || !(h->plugin = strdup(plugin_path)) || pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "out of memory starting a driver host");
        if (h) free(h->plugin);
        free(h);
        return NULL;
    }
    if (limits) h->lim = *limits;
    /* Every restart loads the checked file again: the proxy keeps a descriptor of its own. */
    if (h->lim.plugin_fd > 0 &&
        (h->lim.plugin_fd = fcntl(h->lim.plugin_fd, F_DUPFD_CLOEXEC, 10)) < 0) {
        snprintf(err, errlen, "%s: keeping the plugin file open: %s", plugin_path, strerror(errno));
        close(h->wake[0]);
        close(h->wake[1]);
        free(h->plugin);
        free(h);
        return NULL;
    }
    if (!h->lim.call_timeout_ms) h->lim.call_timeout_ms = DRVHOST_CALL_TIMEOUT_MS;
    if (!h->lim.prepare_timeout_ms) h->lim.prepare_timeout_ms = DRVHOST_PREPARE_TIMEOUT_MS;
    if (!h->lim.deadline_grace_ms) h->lim.deadline_grace_ms = DRVHOST_DEADLINE_GRACE_MS;
    if (!h->lim.memory_limit_bytes) h->lim.memory_limit_bytes = DRVHOST_MEMORY_LIMIT;
    if (!h->lim.max_restarts) h->lim.max_restarts = DRVHOST_MAX_RESTARTS;
    if (!h->lim.restart_window_ms) h->lim.restart_window_ms = DRVHOST_RESTART_WINDOW_MS;
    host_path(h);
    h->sock = -1, h->state = DHP_DOWN;
    pthread_mutex_init(&h->mu, NULL);
    pthread_mutex_init(&h->send_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->cv, &ca);
    h->slot = -1;
    pthread_mutex_lock(&g_hosts_lock);
    for (int i = 0; i < (int)DRVHOST_MAX_HOSTS && h->slot < 0; i++)
        if (!g_hosts[i]) g_hosts[i] = h, h->slot = i;
    pthread_mutex_unlock(&g_hosts_lock);
    if (h->slot < 0) {
        snprintf(err, errlen, "more than %u driver hosts", DRVHOST_MAX_HOSTS);
        drvhost_stop(h);
        return NULL;
    }
    if (pthread_create(&h->sup, NULL, supervise, h) != 0) {
        snprintf(err, errlen, "cannot start the driver host's supervisor thread");
        h->sup = 0;
        drvhost_stop(h);
        return NULL;
    }
    pthread_mutex_lock(&h->mu);
    while (!h->first_done)
        pthread_cond_wait(&h->cv, &h->mu);
    bool ok = h->state == DHP_UP;
    pthread_mutex_unlock(&h->mu);
    if (!ok) {
        snprintf(err, errlen, "%s", h->first_err);
        drvhost_stop(h);
        return NULL;
    }
    dhp_regions_on_forget(dhp_hosts_forget_region);
    atomic_store(&g_active, true);
    return h;
}

/* Ends the host: the driver's close() when it still answers, SIGKILL after a second. */
static void end_host(drvhost *h) {
    pthread_mutex_lock(&h->mu);
    bool again = h->ended;
    h->ended = h->stopping = true;
    pthread_mutex_unlock(&h->mu);
    if (again) return;
    /* The supervisor goes first: nothing reads the socket while it is closed below. */
    wake(h);
    if (h->sup) pthread_join(h->sup, NULL);
    h->sup = 0;
    pthread_mutex_lock(&h->mu);
    if (h->state == DHP_UP) {
        pthread_mutex_lock(&h->send_mu);
        shutdown(h->sock, SHUT_WR); /* EOF: the host calls close() and exits */
        pthread_mutex_unlock(&h->send_mu);
        for (int i = 0; i < 100; i++) {
            siginfo_t si = {0};
            if (waitid(P_PID, (id_t)h->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                si.si_pid == h->pid)
                break; /* exited; host_down reaps it (a zombie's pid is not reused) */
            pthread_mutex_unlock(&h->mu);
            usleep(10000);
            pthread_mutex_lock(&h->mu);
        }
        host_down(h, "closed", NULL, false);
    }
    h->state = DHP_STOPPED;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

void dhp_table_close(drvhost *h) {
    end_host(h);
}

void drvhost_stop(drvhost *h) {
    if (!h) return;
    end_host(h);
    pthread_mutex_lock(&g_hosts_lock);
    if (h->slot >= 0) g_hosts[h->slot] = NULL;
    pthread_mutex_unlock(&g_hosts_lock);
    close(h->wake[0]);
    close(h->wake[1]);
    if (h->lim.plugin_fd > 0) close(h->lim.plugin_fd);
    free(h->known);
    free(h->plugin);
    pthread_mutex_destroy(&h->mu);
    pthread_mutex_destroy(&h->send_mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}

void drvhost_stop_all(void) {
    for (uint32_t i = 0; i < DRVHOST_MAX_HOSTS; i++) {
        pthread_mutex_lock(&g_hosts_lock);
        drvhost *h = g_hosts[i];
        pthread_mutex_unlock(&g_hosts_lock);
        if (h) drvhost_stop(h);
    }
}

bool drvhost_disabled(const drvhost *h) {
    drvhost *m = (drvhost *)h;
    pthread_mutex_lock(&m->mu);
    bool d = m->state == DHP_DISABLED;
    pthread_mutex_unlock(&m->mu);
    return d;
}

bool drvhost_device_stats(const void *device, drvhost_stats *out) {
    bool found = false;
    pthread_mutex_lock(&g_hosts_lock);
    for (uint32_t i = 0; i < DRVHOST_MAX_HOSTS && !found; i++) {
        drvhost *h = g_hosts[i];
        if (h && (const char *)device >= (const char *)h->dev &&
            (const char *)device < (const char *)(h->dev + NND_DRIVER_MAX_DEVICES)) {
            drvhost_get_stats(h, out);
            out->disabled = drvhost_disabled(h);
            found = true;
        }
    }
    pthread_mutex_unlock(&g_hosts_lock);
    return found;
}

bool drvhost_device_disabled(const void *device) {
    drvhost_stats st;
    return drvhost_device_stats(device, &st) && st.disabled;
}

void drvhost_get_stats(drvhost *h, drvhost_stats *out) {
    pthread_mutex_lock(&h->mu);
    *out = h->stats;
    pthread_mutex_unlock(&h->mu);
}

drvhost *dhp_slot_host(int slot) {
    pthread_mutex_lock(&g_hosts_lock);
    drvhost *h = slot >= 0 && slot < (int)DRVHOST_MAX_HOSTS ? g_hosts[slot] : NULL;
    pthread_mutex_unlock(&g_hosts_lock);
    return h;
}

void dhp_hosts_forget_region(uint32_t id) {
    pthread_mutex_lock(&g_hosts_lock);
    for (uint32_t i = 0; i < DRVHOST_MAX_HOSTS; i++) {
        drvhost *h = g_hosts[i];
        if (!h) continue;
        pthread_mutex_lock(&h->send_mu);
        if (h->sock >= 0 && dhp_known(h, id)) {
            dh_wbuf w = {0};
            dh_put_u32(&w, id);
            dh_msg_header hd = {.type = DH_MSG_FORGET_REGION};
            if (!w.oom) dh_send(h->sock, &hd, w.p, w.len, NULL, 0, -1, dhp_bound(100));
            dh_wbuf_free(&w);
            dhp_known_remove(h, id);
        }
        pthread_mutex_unlock(&h->send_mu);
    }
    pthread_mutex_unlock(&g_hosts_lock);
}
