/* SPDX-License-Identifier: Apache-2.0 */
/* backend: kernel backends behind one small interface. The reference backend is the
 * operation table (ops/registry.c): every step gets its reference kernel at prepare. A
 * fast backend is then offered each step whose shapes are all known; when it claims one,
 * the step runs the backend's run() with the claim's state in c->state, and the
 * reference kernel stays the oracle it must agree with (the conformance vectors, run
 * both ways). One fast backend: XNNPACK (xnn.c and the files it names); and one backend
 * per loaded device driver (driver.h), offered steps before XNNPACK as the compilation's
 * device set says (eng_model_desc.drivers).
 *
 * - claim(): at prepare, with the step's tensors as the plan holds them (shapes known,
 *   constants bound, other data NULL). Returns the step's state (operators built,
 *   weights packed), or NULL to leave the step on the reference kernel. Steps are offered
 *   from the plan's last to its first; `last` is true until one is claimed, so the
 *   backend knows after which step of an execution its worker threads may rest. During
 *   claim(), c->state is the backend's `impl` (which driver a driver backend stands for);
 *   claim() returns the step's own state, which replaces it.
 * - run(): an operation kernel (op.h). It may fall back to the reference kernel for a
 *   call it cannot take.
 * - release(): frees a state, with the prepared model.
 * - float32_operand(): for a step of TENSOR_FLOAT16 operands that the backend computes in
 *   float: whether its input j (output j when `output`) may instead be bound to a
 *   TENSOR_FLOAT32 tensor of the same shape, which run() then reads (writes) as float.
 *   Prepare gives such storage to the temporaries between such steps (engine/core/rewrites.h), so
 *   an FP16 region converts only at its boundaries. NULL: never.
 * - Driver backends (driver.h): `driver` is the device record (driver_call.h); the
 *   engine partitions a model among them (partition.h) instead of offering them steps:
 *   claim() and supports() are NULL, run() runs a whole partition from its first step.
 * - Device memory (driver backends whose driver has it, driver.h; NULL otherwise):
 *   mem_alloc() gives a handle (0: none) to zeroed bytes in the device's memory for an
 *   operand of that type and shape (operand may be NULL: bytes only) and the roles its
 *   partitions will use it in (nnd/driver.h; engine.h eng_buffer_alloc() finds them);
 *   mem_read() and mem_write() copy out of and into it at an offset (SCHEMA_OK, or
 *   GENERAL_FAILURE with err); mem_free() gives it back. A model input or output bound to
 *   device memory (eng_io.device) is used there by the steps of that backend (run() finds
 *   it in the tensor's device fields); before any other step reads it, the run copies it
 *   to a host copy (once per run), and what other steps write there is copied back to the
 *   device when the run ends.
 * - Cache blobs: a driver backend's partitions are cached as its driver's blobs
 *   (partition.h, engine.h eng_prepared_blobs()); cache_blobs is how many per partition
 *   (0: its compilations are not cached).
 * - A prepared model is shared: run() may be called on one state from several threads.
 * - NND_REFERENCE_KERNELS=1 in the environment keeps every step of the models prepared
 *   from then on on the reference kernels (CI runs the conformance vectors both ways).
 */
#ifndef ENG_BACKEND_H
#define ENG_BACKEND_H

#include "engine/op.h"

struct nnd_driver_buffer_role;

typedef struct eng_backend eng_backend;
struct eng_backend {
    const char *name;
    void *(*claim)(eng_op_ctx *c, bool last);
    eng_op_fn run;
    void (*release)(void *state);
    bool (*float32_operand)(const void *state, bool output, uint32_t j);
    void *impl; /* the backend's own record, handed to claim() in c->state; may be NULL */
    /* Whether claim() could take the step, without preparing it (GetSupportedOperations);
     * c->state is impl. NULL: not asked. */
    bool (*supports)(eng_op_ctx *c);
    uint64_t (*mem_alloc)(const eng_backend *b, const eng_operand_desc *operand, uint64_t bytes,
                          const struct nnd_driver_buffer_role *roles, uint32_t n_roles);
    void (*mem_free)(const eng_backend *b, uint64_t handle);
    schema_status (*mem_read)(const eng_backend *b, uint64_t handle, uint64_t offset, void *dst,
                              size_t bytes, char *err, size_t errlen);
    schema_status (*mem_write)(const eng_backend *b, uint64_t handle, uint64_t offset,
                               const void *src, size_t bytes, char *err, size_t errlen);
    uint32_t cache_blobs;
    struct eng_driver_dev *driver; /* a driver backend's device; NULL for the CPU's */
};

extern const eng_backend eng_backend_xnnpack;

#endif
