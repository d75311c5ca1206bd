/* SPDX-License-Identifier: Apache-2.0 */
/* nnd-exporter: the daemon's metrics over HTTP for a Prometheus server to scrape, so that
 * the daemon itself keeps to AF_UNIX (no network, PrivateNetwork= in its unit).
 *
 * It listens on --listen (default 127.0.0.1:9464), or on the one socket systemd passes
 * (LISTEN_PID/LISTEN_FDS: nnd-exporter.socket), and answers GET /metrics with the
 * daemon's status as `nndctl metrics` renders it, read from the admin bus at each scrape
 * (http.h says what else it answers). Options: see usage(). */
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tools/exporter/http.h"
#include "tools/exporter/scrape.h"

#define DEFAULT_LISTEN "127.0.0.1:9464"

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: nnd-exporter [--listen HOST:PORT] [--socket PATH] [--state-dir DIR]\n"
            "                    [--timeout-ms N]\n"
            "       nnd-exporter --help | --version\n"
            "Serves the nnd daemon's metrics (Prometheus text) at http://HOST:PORT/metrics.\n"
            "  --listen HOST:PORT  where to listen (default %s); a socket passed by\n"
            "                      systemd (LISTEN_FDS) is used instead when there is one\n"
            "  --socket PATH       the daemon's socket, asked for its state directory\n"
            "                      (default: $NND_SOCKET, else /run/nnd/nnd.sock)\n"
            "  --state-dir DIR     the daemon's state directory, home of its admin bus\n"
            "                      (default: the one the daemon names; then nothing starts\n"
            "                      a socket-activated daemon)\n"
            "  --timeout-ms N      how long a scrape waits for the daemon (default 5000)\n",
            DEFAULT_LISTEN);
}

/* The socket systemd passed (sd_listen_fds(3): LISTEN_PID is us, LISTEN_FDS 1, fd 3), or
 * -1 when none was passed. */
static int passed_socket(void) {
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    if (!pid || !fds || strtol(pid, NULL, 10) != (long)getpid()) return -1;
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    if (strcmp(fds, "1")) {
        fprintf(stderr, "nnd-exporter: systemd passed %s sockets; expected one\n", fds);
        exit(1);
    }
    int type = 0;
    socklen_t len = sizeof type;
    if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_STREAM) {
        fprintf(stderr, "nnd-exporter: the socket systemd passed is not a stream socket\n");
        exit(1);
    }
    return 3;
}

/* The address bound (port 0 asks the kernel for a free one: the log line names it). */
static void say_address(int fd) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
        getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV))
        return;
    fprintf(stderr,
            ss.ss_family == AF_INET6 ? "nnd-exporter: serving http://[%s]:%s/metrics\n"
                                     : "nnd-exporter: serving http://%s:%s/metrics\n",
            host, port);
}

static char *page(void *ctx, char *err, size_t errlen) {
    return exp_scrape(ctx, err, errlen);
}

int main(int argc, char **argv) {
    const char *listen_addr = DEFAULT_LISTEN;
    exp_target t = {.timeout_ms = 5000};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
            printf("nnd-exporter %s\n", TOOL_VERSION);
            return 0;
        } else if (v && !strcmp(a, "--listen")) {
            listen_addr = argv[++i];
        } else if (v && !strcmp(a, "--socket")) {
            t.socket_path = argv[++i];
        } else if (v && !strcmp(a, "--state-dir")) {
            t.state_dir = argv[++i];
        } else if (v && !strcmp(a, "--timeout-ms")) {
            char *end;
            long ms = strtol(argv[++i], &end, 10);
            if (*end || ms < 1 || ms > 600000) {
                fprintf(stderr, "nnd-exporter: --timeout-ms %s: 1 to 600000\n", argv[i]);
                return 2;
            }
            t.timeout_ms = (int)ms;
        } else {
            fprintf(stderr, "nnd-exporter: unknown option or missing value: %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int fd = passed_socket();
    if (fd < 0) {
        char err[512];
        fd = exp_http_listen(listen_addr, err, sizeof err);
        if (fd < 0) {
            fprintf(stderr, "nnd-exporter: %s\n", err);
            return 1;
        }
        say_address(fd);
    }
    int rc = exp_http_serve(fd, page, &t, &stop);
    if (rc < 0) fprintf(stderr, "nnd-exporter: accept: %s\n", strerror(-rc));
    close(fd);
    return rc < 0 ? 1 : 0;
}
