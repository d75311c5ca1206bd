/* SPDX-License-Identifier: Apache-2.0 */
/* hold_client: one connection that stays up across a reload of the daemon, for
 * scripts/systemd-test.sh. Prepares models on it until the daemon refuses one (a quota),
 * prints "held N", waits for GO_FILE to exist (at most 60 s), then prepares more on the
 * same connection until refused again and prints "held M" (M counts all it holds).
 * usage: hold_client SOCKET GO_FILE
 * Exit status: 0, 1 when the connection failed or the wait ran out, 2 usage. */
#include <stdio.h>
#include <unistd.h>

#include "nnd/nnd_wire.h"
#include "tests/support/qos_models.h"

/* Prepares until a refusal; the count held, or -1 when a call failed otherwise. */
static int fill(nnd_client *c, int held) {
    for (;; held++) {
        qos_chain m;
        qos_chain_init(&m, 1, (uint32_t)(4 + 4 * held)); /* each model its own */
        uint64_t h;
        char err[256];
        int st = nnd_client_prepare(c, &m.model, NULL, 0, 0, 0, 0, &h, err, sizeof err);
        qos_chain_free(&m);
        if (st == NND__ERROR_STATUS__RESOURCE_EXHAUSTED_TRANSIENT) {
            fprintf(stderr, "hold_client: %s\n", err);
            return held;
        }
        if (st != 0 || held > 10000) {
            fprintf(stderr, "hold_client: prepare: %s\n", err);
            return -1;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: hold_client SOCKET GO_FILE\n");
        return 2;
    }
    char err[256];
    nnd_client *c = nnd_client_connect(argv[1], "hold_client", err, sizeof err);
    if (!c) {
        fprintf(stderr, "hold_client: %s\n", err);
        return 1;
    }
    int held = fill(c, 0);
    if (held < 0) return 1;
    printf("held %d\n", held);
    fflush(stdout);
    int waited = 0;
    while (access(argv[2], F_OK) != 0 && waited++ < 600)
        usleep(100000);
    held = waited > 600 ? -1 : fill(c, held);
    if (held < 0) return 1;
    printf("held %d\n", held);
    nnd_client_close(c);
    return 0;
}
