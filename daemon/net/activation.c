/* SPDX-License-Identifier: Apache-2.0 */
/* activation.c: the socket systemd passes. See activation.h. */
#include "daemon/net/activation.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

static int sockopt(int fd, int opt) {
    int v = -1;
    socklen_t len = sizeof v;
    return getsockopt(fd, SOL_SOCKET, opt, &v, &len) < 0 ? -1 : v;
}

int srv_activation_socket(char *path, size_t pathlen, char *err, size_t errlen) {
    /* LISTEN_PID must name this process; the variables are removed either way. */
    const char *fds = getenv("LISTEN_FDS");
    char given[32];
    snprintf(given, sizeof given, "%s", fds ? fds : "");
    int n = sd_listen_fds(1);
    unsetenv("LISTEN_FDNAMES");
    if (n == 0) return -1;
    if (n < 0) {
        snprintf(err, errlen, "socket activation: LISTEN_FDS=%s: %s", given, strerror(-n));
        return -2;
    }
    if (n != 1) {
        snprintf(err, errlen, "socket activation: LISTEN_FDS=%s; nnd takes exactly one socket",
                 given);
        return -2;
    }
    int fd = SRV_ACTIVATION_FD;
    struct sockaddr_un sa;
    socklen_t len = sizeof sa;
    memset(&sa, 0, sizeof sa);
    if (sockopt(fd, SO_DOMAIN) != AF_UNIX || sockopt(fd, SO_TYPE) != SOCK_SEQPACKET ||
        sockopt(fd, SO_ACCEPTCONN) != 1) {
        snprintf(err, errlen,
                 "socket activation: fd %d is not a listening AF_UNIX SOCK_SEQPACKET socket "
                 "(ListenSequentialPacket= in the .socket unit)",
                 fd);
        return -2;
    }
    if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || len <= sizeof(sa_family_t) ||
        !sa.sun_path[0]) {
        snprintf(err, errlen, "socket activation: fd %d has no socket path%s%s", fd,
                 errno ? ": " : "", errno ? strerror(errno) : "");
        return -2;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
        snprintf(err, errlen, "socket activation: fd %d: %s", fd, strerror(errno));
        return -2;
    }
    snprintf(path, pathlen, "%.*s", (int)sizeof sa.sun_path, sa.sun_path);
    return fd;
}
