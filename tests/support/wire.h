/* SPDX-License-Identifier: Apache-2.0 */
/* wire: raw-protocol helpers for tests that talk to the daemon without libnnd.
 * Calls block with a 10 s limit; a missing reply returns NULL. Messages built here live
 * in caller-provided structs, so nothing needs freeing but the replies. */
#ifndef TST_SUPPORT_WIRE_H
#define TST_SUPPORT_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tests/support/harness.h"
#include "nnd.pb-c.h"

#define WIRE_TIMEOUT_MS 10000

int wire_send(int sock, const Nnd__Request *req, const int *fds, size_t nfds);
/* Next reply, or NULL on timeout, EOF or a bad frame. Any fds that came with it are closed. */
Nnd__Reply *wire_recv(int sock, int timeout_ms);
Nnd__Reply *wire_call(int sock, const Nnd__Request *req, const int *fds, size_t nfds);
void wire_free(Nnd__Reply *r);

/* Hello on sock; returns 0 when the daemon answered it correctly. */
int wire_hello(int sock, uint64_t id);
/* Hello on a fresh connection; returns 0 when the daemon answered it correctly. */
int wire_hello_fresh(const tst_daemon *d);

/* A memfd of size bytes starting with len bytes of data; -1 on failure. */
int wire_memfd(const void *data, size_t len, size_t size);
/* Open fds of a process (ours: 0), from /proc/<pid>/fd. */
int wire_count_fds(pid_t pid);

/* out = a + b on two TENSOR_FLOAT32 [n] inputs (n = 0: unknown), fused activation NONE;
 * wire_add_model_init() makes n = 2. With const_b_pool >= 0, b is instead a
 * CONSTANT_REFERENCE of n floats at offset 0 of model pool 0, a memfd of n floats whose fd
 * index is const_b_pool (set m->pool's kind, offset or size after, for other pools), and
 * the model has one input. */
typedef struct wire_add_model {
    Nnd__Model model;
    Nnd__Subgraph main;
    Nnd__Operand operands[4];
    Nnd__Operand *operand_ptrs[4];
    Nnd__DataLocation locs[4];
    Nnd__Operation op;
    Nnd__Operation *op_ptr;
    uint32_t dims[2];
    uint32_t op_inputs[3];
    uint32_t op_outputs[1];
    uint32_t inputs[2];
    uint32_t outputs[1];
    uint8_t values[4];
    Nnd__MemoryPool pool;
    Nnd__MemoryPool *pool_ptr;
} wire_add_model;
void wire_add_model_init(wire_add_model *m, int const_b_pool);
void wire_add_model_init_n(wire_add_model *m, uint32_t n, int const_b_pool);

/* Prepares m on sock (fds as given); returns the handle, or 0 (and prints why). */
uint64_t wire_prepare(int sock, const Nnd__Model *m, const int *fds, size_t nfds);
/* Release(handle) as request id; the reply (free it with wire_free), NULL when none came. */
Nnd__Reply *wire_release(int sock, uint64_t id, uint64_t handle);

/* An ExecutionRequest over one memfd pool (fd index 0): inputs at 0, 8, outputs at 16,
 * each 8 bytes (two floats). n_inputs is 1 or 2. */
typedef struct wire_exec {
    Nnd__Execute exec;
    Nnd__ExecutionRequest req;
    Nnd__RequestArgument args[3];
    Nnd__RequestArgument *in_ptrs[2];
    Nnd__RequestArgument *out_ptrs[1];
    Nnd__DataLocation locs[3];
    Nnd__MemoryPool pool;
    Nnd__MemoryPool *pool_ptr;
} wire_exec;
void wire_exec_init(wire_exec *e, uint64_t handle, int n_inputs, uint64_t pool_size);

#endif
