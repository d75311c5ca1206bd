/* SPDX-License-Identifier: Apache-2.0 */
/* engine/backends/drivers/driver_abi1.h: the version 1 driver ABI, kept here only until the engine
 * and the drivers move to version 2 (include/nnd/driver.h). What follows is its former contract. */
/* Version 1: the device driver plugin ABI (with nnd/extension.h for the operand view).
 *
 * A driver is a shared object in the daemon's drivers directory (--drivers-dir) that
 * exports one object, `nnd_driver_info` (NND_DRIVER_SYMBOL), of type nnd_driver. Export it
 * with NND_DRIVER_EXPORT. Each loaded driver is one device of the daemon, listed by
 * GetDevices (NNAPI's ANeuralNetworks_getDevice) under its name.
 *
 * Contract:
 * - Versioning: abi_version must equal NND_DRIVER_ABI_VERSION and struct_size must be
 *   sizeof(nnd_driver) of this header or NND_DRIVER_SIZE_BASE (a descriptor that ends at
 *   release(), as the first drivers were built: no optional callbacks); anything else is
 *   refused at load with a log line. The optional callbacks come in groups, each all or
 *   none: device memory (memory_*) and cache blobs (serialize, deserialize).
 * - Identity: name is the device name, 1 to 31 characters of [a-z0-9-], unique among the
 *   daemon's devices (the built-in "nnd-cpu" and "nnd-reference" included). type is an
 *   NNAPI device type (NND_DRIVER_TYPE_*). exec_time is the relative cost of one operation
 *   on this device, a finite number > 0: nnd-cpu is 0.1, nnd-reference 1.0. A compilation
 *   offers each operation to its devices from the lowest exec_time up, so a driver only
 *   gets operations if it ranks before nnd-cpu, or when the client named it without nnd-cpu.
 * - Steps: the daemon partitions each model; a step is one operation of it, with every
 *   operand's type and shape known (nnd_ext_operand, base types only: extension == NULL).
 *   Operation codes are NNAPI's OperationCode. Control flow (IF, WHILE) and the subgraphs
 *   it runs are never offered to drivers, nor are steps whose shapes are only known at
 *   execution.
 * - supports(): whether the driver can run this step. data is set for constants only.
 *   Cheap, no side effects; it answers GetSupportedOperations too.
 * - prepare(): builds the step's state, once per compiled model, or returns NULL to decline
 *   (the step then goes to the next device). data is set for constants only, and is only
 *   valid during the call: copy (or pack) the weights into the driver's own memory. The
 *   state lives until release().
 * - execute(): computes the step's outputs from its inputs. Inputs are read-only, each
 *   output holds exactly the bytes its shape needs. An operand is either in daemon memory
 *   (data set) or, only for a driver with device memory, in this driver's memory: then
 *   data is NULL and input_memory[j] (output_memory[j]) is the handle memory_allocate()
 *   gave, the operand's bytes starting at offset 0. Temporaries between steps live in the
 *   daemon's memory, whichever device produced them. Return 0, or NND_EXT_FAILED with a
 *   message in err: that fails this one execution only. execute() may run concurrently
 *   on several threads, on the same state too.
 * - Device memory (optional): memory_allocate(bytes) returns a handle other than 0 to
 *   `bytes` bytes of the driver's memory, zeroed (0: cannot). The daemon puts a client's
 *   driver-managed buffer (NNAPI's ANeuralNetworksMemory_createFromDesc, the HAL's
 *   IDevice::allocate) there when its shape is fully known and every prepared model it was
 *   allocated for runs at least one step on this driver (the first such driver in device
 *   order); else in daemon memory. A step of this driver then gets the handle, no copy.
 *   Anything else that reads or writes the buffer (a step on the CPU or another driver,
 *   the client's copies) goes through memory_read() and memory_write(), which copy bytes
 *   out of and into [offset, offset + bytes) of a handle's memory (always in range) and
 *   return 0 or NND_EXT_FAILED. memory_free() frees a handle once no execution uses it.
 *   These calls may come from any thread, concurrently, for different handles or for
 *   reads of the same handle.
 * - Cache blobs (optional): serialize(state, buf, cap) writes the prepared state of a step
 *   into buf when it fits in cap bytes, and returns the blob's size in any case (0:
 *   cannot serialize this state). The daemon asks with cap 0 first. With them, a
 *   compilation whose steps run on this driver is cached like any other (the client's
 *   cache files and the daemon's own store; the blobs are hashed and checked with the rest,
 *   so a tampered blob is refused before the driver sees it). deserialize(step, blob,
 *   size) rebuilds the state from a blob this driver's serialize() made for a step of the
 *   same operation and operand shapes, instead of prepare() (step as prepare() gets it),
 *   or returns NULL to refuse it: the compilation then fails. Blobs outlive the daemon:
 *   put what the state needs in them (the constants copied, a format version), no
 *   pointers. A driver without these callbacks keeps its compilations out of the cache.
 * - release(): frees a state, when its compiled model goes.
 * - Callbacks must not keep the operand pointers they get, nor call exit(), abort() or
 *   change signal dispositions. A SIGSEGV, SIGBUS, SIGFPE or SIGILL inside a callback (or
 *   in the driver's constructor or descriptor at load) fails that call and disables the
 *   driver until the daemon restarts: damage control, not a sandbox. A disabled driver is
 *   never called again, release() included: the states it made are left where they are.
 * - Deadlines, priorities, preemption and cancellation act between steps: a long
 *   execute() delays them by its own length.
 */
#ifndef ENG_DRIVER_ABI1_H
#define ENG_DRIVER_ABI1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnd/extension.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NND_DRIVER_ABI_VERSION      1
#define NND_DRIVER_SYMBOL           "nnd_driver_info"
#define NND_DRIVER_MAX_NAME         31
#define NND_DRIVER_TYPE_OTHER       1
#define NND_DRIVER_TYPE_CPU         2
#define NND_DRIVER_TYPE_GPU         3
#define NND_DRIVER_TYPE_ACCELERATOR 4

/* One step of a compiled model, as a driver sees it. */
typedef struct nnd_driver_step {
    int32_t operation; /* NNAPI OperationCode */
    uint32_t index;    /* the operation's index in the model, for messages */
    uint32_t n_inputs, n_outputs;
    const nnd_ext_operand *inputs;
    const nnd_ext_operand *outputs; /* execute(): data is where the results go */
    bool relaxed;                   /* FLOAT32 may be computed with FLOAT16 range and precision */
    char *err;                      /* a failure's message goes here (snprintf), errlen bytes */
    size_t errlen;
    /* execute(): per input (output), the handle of the device memory holding it, or 0 when
     * it is at data. Always 0 for a driver without device memory. */
    const uint64_t *input_memory;
    const uint64_t *output_memory;
} nnd_driver_step;

typedef struct nnd_driver {
    uint32_t abi_version; /* NND_DRIVER_ABI_VERSION */
    uint32_t struct_size; /* sizeof(nnd_driver) */
    const char *name;     /* the device name */
    const char *version;  /* free text for GetDevices and logs; may be NULL */
    int32_t type;         /* NND_DRIVER_TYPE_* */
    float exec_time;      /* relative cost of one operation; lower wins */
    bool (*supports)(const nnd_driver_step *s);
    void *(*prepare)(const nnd_driver_step *s);
    int (*execute)(void *state, nnd_driver_step *s);
    void (*release)(void *state);
    /* Optional (may be NULL; all four or none): device memory. */
    uint64_t (*memory_allocate)(uint64_t bytes);
    void (*memory_free)(uint64_t handle);
    int (*memory_read)(uint64_t handle, uint64_t offset, void *dst, size_t bytes);
    int (*memory_write)(uint64_t handle, uint64_t offset, const void *src, size_t bytes);
    /* Optional (may be NULL; both or none): cache blobs. */
    size_t (*serialize)(const void *state, void *buf, size_t cap);
    void *(*deserialize)(const nnd_driver_step *s, const void *blob, size_t size);
} nnd_driver;

/* The size of a descriptor without the optional callbacks. */
#define NND_DRIVER_SIZE_BASE offsetof(nnd_driver, memory_allocate)

#define NND_DRIVER_EXPORT                                                                          \
    __attribute__((visibility("default"))) extern const nnd_driver nnd_driver_info;                \
    __attribute__((visibility("default"))) const nnd_driver nnd_driver_info

#ifdef __cplusplus
}
#endif

#endif
