/* SPDX-License-Identifier: Apache-2.0 */
/* buffer: driver-owned buffers, the HAL's memory domains: Allocate, BufferCopyTo and
 * BufferCopyFrom, and POOL_DRIVER_BUFFER pools in execution requests.
 *
 * Contract:
 * - srv_buffer_allocate() checks an Allocate as the HAL does: at least one prepared model
 *   and one role; each role names an existing input or output of one of the given models
 *   (which the caller has found in its own session), once, with a probability in (0, 1]
 *   (0: not given); all roles' operands share type, scale, zero point and channel
 *   quantization, and their dimensions are compatible with each other's and with the
 *   descriptor's (0, or no dimensions on a tensor, meaning unknown). Anything else is
 *   INVALID_ARGUMENT naming the role.
 * - Shape: the combined dimensions. All known: a fixed buffer, its bytes allocated at
 *   Allocate (zeroed, pages given lazily by the kernel). Otherwise flexible: capacity grows
 *   when a write needs more, and the shape is that of the last write (an output or
 *   BufferCopyTo). At most SRV_BUFFER_MAX_BYTES each.
 * - Where: a fixed buffer whose every role is an input or output of a partition of one
 *   driver with device memory (srv_device_memory_for()) lives there, allocated at Allocate
 *   with those roles as its partitions play them (eng_buffer_alloc(); charged first; a
 *   driver that refuses or is out of room leaves it in daemon memory, as does a role that
 *   only CPU steps or another device touch). Executions get its handle (eng_io
 *   device fields; the engine copies for the steps of other devices), the copies go
 *   through a daemon buffer and the driver's read and write, and the driver frees it with
 *   the last reference. Flexible buffers always live in daemon memory.
 * - Identity: the caller stores the buffer under a handle in its owner's session, with
 *   srv_buffer_drop() as the free function. Its token is random, never 0 and unique among
 *   live buffers daemon-wide; it is found only for its owner, for anyone else it is as
 *   unknown as a made-up number.
 * - Lifetime: reference counted. srv_buffer_drop() (Release, or the owner disconnecting)
 *   retires the token at once; the bytes go when the last execution using them ends.
 * - Access: any number of readers (execution inputs, BufferCopyFrom) or one writer (an
 *   execution output, BufferCopyTo). A conflicting access fails at once with
 *   GENERAL_FAILURE ("busy"); nothing ever waits. Every call is safe from any thread.
 * - Contents: a buffer never written, or whose last write failed, is uninitialized;
 *   reading it is GENERAL_FAILURE.
 * - Executions: srv_buffers_bind() once the request's arguments are bound
 *   (srv_request_from_proto() over pools from pool.c, which maps driver-buffer pools to
 *   empty views); when the run answers OUTPUT_INSUFFICIENT_SIZE, srv_buffers_regrow() may
 *   grow flexible buffers and ask for one more run; srv_buffers_finish() after the run
 *   (or instead of it) records what was written, adjusts the status and lets go. These
 *   three bind a whole request (buffer_binding.c); buffer.c is the buffers themselves.
 * - srv_buffer_stats(): live buffers and their bytes, daemon-wide, for nndctl status.
 * - Accounting (quota.h): with an srv_buffer_account, every growth of a buffer's memory
 *   is charged first (at Allocate for a fixed buffer, at a write for a flexible one); a
 *   refused charge fails that call with the charge's status and message. Dropping the
 *   buffer refunds all it was charged at once, even while executions still hold it.
 *   Charges and the drop happen on the caller's thread (the daemon's loop).
 */
#ifndef SRV_BINDING_BUFFER_H
#define SRV_BINDING_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "nnd.pb-c.h"
#include "daemon/clients/pool.h"

#define SRV_BUFFER_MAX_BYTES (1ull << 34)

struct srv_session;
typedef struct srv_buffer srv_buffer;
typedef struct srv_buffer_binding srv_buffer_binding;

/* One entry of Allocate.prepared_models, found in the caller's session. */
typedef struct srv_buffer_model {
    uint64_t handle; /* the prepared model's handle: roles are checked against it */
    const eng_prepared *prepared;
} srv_buffer_model;

/* Who pays for a buffer's bytes: charge() before they grow by bytes (SCHEMA_OK, or a refusal
 * with err set), refund() of every byte charged when the buffer is dropped. */
typedef struct srv_buffer_account {
    schema_status (*charge)(void *ctx, uint64_t bytes, char *err, size_t errlen);
    void (*refund)(void *ctx, uint64_t bytes);
    void *ctx;
} srv_buffer_account;

/* models has a->n_prepared_models entries; acct may be NULL (nobody pays). *out holds one
 * reference (the session's). */
schema_status srv_buffer_allocate(const struct srv_session *owner, const Nnd__Allocate *a,
                                  const srv_buffer_model *models, const srv_buffer_account *acct,
                                  srv_buffer **out, char *err, size_t errlen);
uint64_t srv_buffer_token(const srv_buffer *b);
/* The session table's free function: retires the token, drops the session's reference. */
void srv_buffer_drop(void *b);
srv_buffer *srv_buffer_ref(srv_buffer *b);
void srv_buffer_unref(srv_buffer *b);

/* BufferCopyTo: src (mapped by the caller) into b. dims/rank: the data's shape, rank 0
 * meaning the buffer's own. */
schema_status srv_buffer_copy_in(srv_buffer *b, const srv_pool *src, const uint32_t *dims,
                                 size_t rank, char *err, size_t errlen);
/* BufferCopyFrom: b into dst, which must be writable and exactly as large as the contents;
 * dims (rank 0: none) must be compatible with them. *shape receives the shape copied. */
schema_status srv_buffer_copy_out(srv_buffer *b, const srv_pool *dst, const uint32_t *dims,
                                  size_t rank, eng_output_shape *shape, char *err, size_t errlen);

/* Binds the arguments of r that name driver-buffer pools: each pool's token must be a
 * buffer of owner (else INVALID_ARGUMENT), each argument an allocated role of prepared
 * model `model` (else INVALID_ARGUMENT); inputs must be initialized, and the accesses
 * must not conflict with other work (else GENERAL_FAILURE). Patches inputs[] and
 * outputs[] to the buffers' bytes (and inputs' dimensions to their shapes). *out is NULL
 * when r names no driver buffer; otherwise it holds the accesses until
 * srv_buffers_finish(). */
schema_status srv_buffers_bind(const struct srv_session *owner, uint64_t model,
                               const eng_prepared *p, const Nnd__ExecutionRequest *r,
                               eng_io *inputs, eng_io *outputs, srv_buffer_binding **out, char *err,
                               size_t errlen);
/* After a run that returned OUTPUT_INSUFFICIENT_SIZE: when every insufficient output is a
 * flexible buffer whose needed shape is known, grows them, re-points outputs[] and
 * returns true (run again, once). bb may be NULL. A growth its account refused is what
 * srv_buffers_finish() then reports. */
bool srv_buffers_regrow(srv_buffer_binding *bb, const eng_output_shape *shapes, eng_io *outputs);
/* Ends the accesses and frees bb (may be NULL). With ran, written buffers take their new
 * shapes (*st SCHEMA_OK) or become uninitialized (any failure); a driver buffer too small for
 * its output turns *st into GENERAL_FAILURE, as the HAL asks, with err set. */
void srv_buffers_finish(srv_buffer_binding *bb, bool ran, schema_status *st,
                        const eng_output_shape *shapes, char *err, size_t errlen);

/* Live buffers and the bytes they hold, daemon-wide. */
void srv_buffer_stats(uint64_t *count, uint64_t *bytes);

#endif
