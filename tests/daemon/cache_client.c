/* SPDX-License-Identifier: Apache-2.0 */
/* cache_client: a one-shot client for test_cache, run as another uid (setpriv). Prepares
 * the cache model with caching, runs it, checks the outputs, prints "from_cache=0|1".
 * usage: cache_client SOCKET CACHE_DIR TOKEN_HEX(64) N SEED
 * Exit status: 0 outputs right, 1 wrong or failed, 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/cache_model.h"

int main(int argc, char **argv) {
    if (argc != 6 || strlen(argv[3]) != 2 * NND_CACHE_TOKEN_BYTES) {
        fprintf(stderr, "usage: cache_client SOCKET CACHE_DIR TOKEN_HEX N SEED\n");
        return 2;
    }
    uint8_t token[NND_CACHE_TOKEN_BYTES];
    for (int i = 0; i < NND_CACHE_TOKEN_BYTES; i++) {
        unsigned v;
        if (sscanf(argv[3] + 2 * i, "%2x", &v) != 1) return 2;
        token[i] = (uint8_t)v;
    }
    char err[512];
    nnd_client *c = nnd_client_connect(argv[1], "cache_client", err, sizeof err);
    if (!c) {
        fprintf(stderr, "cache_client: %s\n", err);
        return 1;
    }
    cache_model m;
    if (cache_model_init(&m, (uint32_t)atoi(argv[4]), (float)atof(argv[5])) < 0) return 1;
    uint64_t h = 0;
    bool from_cache = false;
    int st = nnd_client_prepare_cached(c, &m.add.model, &m.pool_fd, 1, 0, 0, 0, argv[2], token, &h,
                                       &from_cache, err, sizeof err);
    int rc = 1;
    if (st != 0)
        fprintf(stderr, "cache_client: prepare: %s\n", err);
    else if (cache_model_run(c, &m, h, NULL) == 0)
        rc = 0;
    printf("from_cache=%d\n", from_cache ? 1 : 0);
    cache_model_clear(&m);
    nnd_client_close(c);
    return rc;
}
