/* SPDX-License-Identifier: Apache-2.0 */
/* memory_common: what test_memory_pools and test_memory_domains share. One daemon per test
 * program, started without content cache (constants are used in place, straight from the
 * client's pages); the add model (out = a + b on TENSOR_FLOAT32 [n], wire.h); execution
 * requests built by hand, pool by pool and argument by argument; expectations on statuses,
 * messages and float contents; the daemon's admin status. A failed expectation fails the
 * running cmocka test. */
#ifndef TST_CLIENT_MEMORY_COMMON_H
#define TST_CLIENT_MEMORY_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "tests/support/harness.h"
#include "nnd/nnd_wire.h"
#include "tests/support/wire.h"

#define N 256 /* floats in the test tensors */

extern tst_daemon *const dmn; /* harness.h's tst_group_daemon */

/* cmocka group setup: tst_group_setup() with the content cache off (teardown:
 * tst_group_teardown()). */
int memory_group_setup(void **state);
/* Last test of a program: the daemon stops cleanly. */
void test_clean_stop(void **state);

nnd_client *connect_client(const char *name);

/* ---- the model ---- */

uint64_t prepare(nnd_client *c, const wire_add_model *m, const int *fds, size_t nfds);
/* out = in + 1, the ones from a sealed memfd. */
uint64_t prepare_plus_one(nnd_client *c, uint32_t n);

/* ---- an execution request ---- */

typedef struct req {
    Nnd__ExecutionRequest r;
    Nnd__RequestArgument args[4], *in[2], *out[2];
    Nnd__DataLocation locs[4];
    Nnd__MemoryPool pools[4], *poolp[4];
} req;

void req_init(req *q);
/* Adds a pool; returns its index. fd pools name fd index `fd_index`. */
uint32_t req_pool(req *q, int kind, uint32_t fd_index, uint64_t offset, uint64_t size,
                  uint64_t token);
/* Adds a driver-buffer pool. */
uint32_t req_buffer(req *q, uint64_t token);
void req_arg(req *q, bool output, uint32_t pool, uint64_t offset, uint64_t length, uint32_t *dims,
             size_t rank);
/* Executes and expects `want`, with `needle` in the message when given. Returns the
 * reply's first output shape's first dimension (0 when none). */
uint32_t execute_expect(nnd_client *c, uint64_t h, const req *q, const int *fds, size_t nfds,
                        int want, const char *needle);

/* ---- expectations ---- */

void expect_status(int st, const char *err, int want, const char *needle, const char *what);
uint64_t allocate_ok(nnd_client *c, const uint64_t *models, size_t n_models,
                     const nnd_buffer_role *in, size_t n_in, const nnd_buffer_role *out,
                     size_t n_out, uint64_t *token);
/* A memfd holding n floats v[i] = base + i * step. */
int float_memfd(uint32_t n, float base, float step);
/* fd holds n floats base + i * step at offset. */
void expect_floats(int fd, uint64_t offset, uint32_t n, float base, float step);

/* ---- admin status ---- */

cJSON *status(void);
double status_number(const char *key);
/* Waits up to 10 s for the daemon to hold `count` buffers. */
void wait_buffers(double count);

#endif
